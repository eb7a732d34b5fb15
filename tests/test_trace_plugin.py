"""The tracer plugin on a tiny synthetic project, run with the local Python (no container)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dlbench.config import MineConfig, TraceConfig
from dlbench.mine.cache import load_repo
from dlbench.mine.callgraph import build_calls
from dlbench.mine.tests import find_test_cases
from dlbench.records import TraceRecord
from dlbench.trace.container import PLUGIN_SOURCE
from dlbench.trace.plan import PLUGIN_MODULE, plan_trace, sample_files, tracer_argv
from dlbench.trace.truth import score, trace_records

OPS = """import functools


def helper(x):
    return x + 1


def scale(x, k):
    return helper(x) * k


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


@logged
def shifted(x):
    return x - 1


def spin():
    while True:
        pass


def unused():
    return 0


class Box:
    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value
"""
CONFTEST = """import pytest

from pkg.ops import Box


@pytest.fixture(scope="module")
def box():
    return Box(3)
"""
TESTS = """import pytest

from pkg.ops import scale, shifted, spin


def test_scale():
    assert scale(1, 2) == 4


def test_box(box):
    assert box.get() == 3


def test_box_again(box):
    assert box.get() == 3


def test_shifted():
    assert shifted(2) == 1


@pytest.mark.parametrize("k", [1, 2])
def test_param(k):
    assert scale(0, k) == k


def test_fails():
    assert scale(0, 1) == 2


def test_spin():
    spin()


def test_unhooks():
    import sys

    sys.setprofile(None)


def test_zz_after_unhook():
    assert scale(2, 1) == 3
"""
FILES = {
    "pkg/__init__.py": "",
    "pkg/ops.py": OPS,
    "tests/conftest.py": CONFTEST,
    "tests/test_ops.py": TESTS,
}
OPS_KEY = "pkg/ops.py:"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def traced(project: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, TraceRecord]:
    """The project's tests run once with the tracer, as records by node id."""
    repo = load_repo(project, MineConfig(), tmp_path_factory.mktemp("cache"))
    plan = plan_trace(repo, find_test_cases(repo.table, "acme/proj", repo.layout), TraceConfig())
    work = tmp_path_factory.mktemp("trace")
    (work / f"{PLUGIN_MODULE}.py").write_bytes(PLUGIN_SOURCE.read_bytes())
    (work / "support.json").write_text(json.dumps(plan.support))
    cfg = TraceConfig(timeout_s=1.0)
    argv = tracer_argv(
        sys.executable,
        plan,
        str(project),
        str(work / "out.jsonl"),
        str(work / "support.json"),
        cfg,
    )
    env = {
        **os.environ,
        "PYTHONPATH": f"{work}{os.pathsep}{project}",
        "PYTEST_ADDOPTS": "-p no:randomly -p no:xdist",
    }
    subprocess.run(argv, cwd=project, env=env, capture_output=True, timeout=120, check=False)
    lines = (work / "out.jsonl").read_text().splitlines()
    return {r.node_id: r for r in trace_records(lines, "acme/proj", plan.candidates)}


def keys(*names: str) -> list[str]:
    return sorted(OPS_KEY + n for n in names)


def test_direct_calls_and_their_callees(traced: dict[str, TraceRecord]) -> None:
    record = traced["tests/test_ops.py::test_scale"]
    assert record.outcome == "passed"
    assert record.called == record.direct == keys("scale")
    assert record.executed == keys("scale", "helper")


def test_fixture_calls_count_for_every_test_using_the_cached_fixture(
    traced: dict[str, TraceRecord],
) -> None:
    for name in (
        "test_box",
        "test_box_again",
    ):  # the module-scoped fixture ran once, for the first
        record = traced[f"tests/test_ops.py::{name}"]
        assert record.called == keys("Box.get"), name
        assert record.direct == keys("Box.__init__", "Box.get"), name


def test_decorator_wrappers_are_passed_through(traced: dict[str, TraceRecord]) -> None:
    assert traced["tests/test_ops.py::test_shifted"].direct == keys("shifted")


def test_parametrized_variants_merge(traced: dict[str, TraceRecord]) -> None:
    record = traced["tests/test_ops.py::test_param"]
    assert (record.variants, record.outcome, record.direct) == (
        2,
        "passed",
        keys("scale"),
    )


def test_failures_and_timeouts_are_recorded(traced: dict[str, TraceRecord]) -> None:
    assert traced["tests/test_ops.py::test_fails"].outcome == "failed"
    spun = traced["tests/test_ops.py::test_spin"]
    assert spun.outcome == "timeout" and spun.direct == keys("spin")
    assert not any(OPS_KEY + "unused" in r.executed for r in traced.values())


def test_a_removed_hook_is_installed_again(traced: dict[str, TraceRecord]) -> None:
    assert traced["tests/test_ops.py::test_zz_after_unhook"].executed == keys("scale", "helper")


def test_static_graph_scored_against_the_trace(project: Path, traced: dict[str, TraceRecord], tmp_path: Path) -> None:
    repo = load_repo(project, MineConfig(tested_by="reached"), tmp_path)
    static = build_calls(repo, find_test_cases(repo.table, "acme/proj", repo.layout), "acme/proj")
    result = score(static, list(traced.values()), "direct")
    # passed: test_scale, test_box, test_box_again, test_shifted, test_param, test_unhooks, test_zz_after_unhook
    assert result.tests == 7
    assert (result.false_pos, result.false_neg) == (
        0,
        0,
    ) and result.precision == result.recall == 1.0
    assert (
        score(static, list(traced.values()), "executed").false_neg == 3
    )  # helper, via scale (test_scale, test_param, test_zz_after_unhook)


def test_sample_is_seeded_and_stable() -> None:
    files = [f"tests/test_{i}.py" for i in range(20)]
    first = sample_files(files, 5, seed=1)
    assert first == sample_files(list(reversed(files)), 5, seed=1) and len(first) == 5
    assert first != sample_files(files, 5, seed=2)
    assert sample_files(files, 0, seed=1) == files
