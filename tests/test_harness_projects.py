"""Real pytest projects: the harness runs a project's tests the way its configuration says.

One small project holds what real repositories do to a harness: a plugin writing into the
working directory as it loads, ``addopts`` with
``-v --color=yes`` (and ``-n``, ``--cov``, ``--strict-markers``, ``-m "not slow"``), tests
skipped or xfailed, tests a conftest deselects (through ``pytest_deselected``, and
silently), a test that needs the network, a test module that cannot be collected, and
tests writing to their home and temp directories. Gold decides each task's tests; the
causes of everything dropped or failing are in words.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dlbench.config import EvaluateConfig
from dlbench.harness.evaluate import evaluate_generations, evidence_dir
from dlbench.harness.validate import validate_tasks
from dlbench.records import BenchmarkTask, CloneRecord, CloneStatus, Evaluation, Generation, ImageRecord, ImageStatus
from dlbench.store import read_jsonl, write_json, write_jsonl
from tests.test_mine_callgraph import write_tree

SLUG = "proj__calc"
PYPROJECT = """\
[tool.pytest.ini_options]
addopts = "-v --color=yes -rA --tb=long --strict-markers -m 'not slow' --cov=calc -n 2"
testpaths = ["tests"]
markers = ["slow: long tests"]
"""
OPS = """\
def relu(x):
    return [v if v > 0 else 0 for v in x]


def scale(x, k):
    return [v * k for v in x]
"""
CONFTEST = """\
def pytest_collection_modifyitems(config, items):
    # Like kornia: compiled-mode tests are deselected by default; onnx ones dropped silently.
    dynamo = [item for item in items if "dynamo" in item.name]
    if dynamo:
        config.hook.pytest_deselected(items=dynamo)
    items[:] = [item for item in items if "dynamo" not in item.name and "onnx" not in item.name]
"""
TEST_OPS = """\
import os
import socket
import tempfile
from pathlib import Path

import pytest

from calc.ops import relu, scale


def test_relu_positive():
    assert relu([1, 2]) == [1, 2]


def test_relu_negative():
    assert relu([-1, 3]) == [0, 3]


def test_relu_writes_home_and_tmp():
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "calc"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "table.txt").write_text("x")
    (Path.home() / ".calcrc").write_text("y")
    with tempfile.NamedTemporaryFile() as fh:
        fh.write(b"z")
    assert relu([-2]) == [0]


@pytest.mark.skipif(not os.environ.get("CUDA_VISIBLE_DEVICES"), reason="needs a GPU")
def test_relu_gpu():
    assert relu([1]) == [1]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_relu_devices(device):
    if device == "cuda" and not os.environ.get("CUDA_VISIBLE_DEVICES"):
        pytest.skip("CUDA not available")
    assert relu([-1, 2]) == [0, 2]


@pytest.mark.xfail(reason="known rounding issue")
def test_relu_rounding():
    assert relu([0.5]) == [1]


def test_relu_dynamo():
    assert relu([1]) == [1]


def test_relu_onnx():
    assert relu([1]) == [1]


@pytest.mark.slow
def test_relu_slow():
    assert relu(list(range(10))) == list(range(10))


def test_relu_pretrained():
    socket.getaddrinfo("weights.dlbench-needs-network.invalid", 443)
    assert relu([1]) == [1]


def test_relu_hub_model():
    # A library's own error over the refused lookup, far above the traceback's tail
    def deep(n):
        if n == 0:
            try:
                socket.getaddrinfo("hub.dlbench-needs-network.invalid", 443)
            except OSError as exc:
                raise RuntimeError("Cannot send a request, as the client has been closed.") from exc
        return deep(n - 1)

    deep(100)
    assert relu([1]) == [1]


def test_scale_double():
    assert scale([1, 2], 2) == [2, 4]


def test_scale_zero():
    assert scale([1, 2], 0) == [0, 0]
"""
TEST_BROKEN = """\
import not_installed_pkg  # a dependency the environment lacks

from calc.ops import scale


def test_scale_with_the_missing_dependency():
    assert scale([1], not_installed_pkg.THREE) == [3]
"""
TEST_OPTIONAL = """\
import pytest

pytest.importorskip("not_installed_optional")  # the whole module is skipped, as in the project's own CI

from calc.ops import relu


def test_relu_with_the_optional_backend():
    assert relu([2]) == [2]
"""
# An installed pytest plugin that writes into the working directory as it is imported, as
# pytest-approvaltests does (.approval_tests_temp/): on the image's read-only checkout.
# Found on PYTHONPATH (the checkout) through its dist-info, like any entry-point plugin.
# Before 9.2, pytest.main raises a plugin's import error (small-text resolves such a pytest).
CWD_WRITER = """\
from pathlib import Path

Path(".cwd_writer_temp").mkdir(exist_ok=True)
Path(".cwd_writer_temp", ".gitignore").write_text("*")
"""
FILES = {
    "pyproject.toml": PYPROJECT,
    "cwd_writer.py": CWD_WRITER,
    "requirements-dev.txt": "pytest<9.2\n",
    "cwd_writer-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: cwd-writer\nVersion: 1.0\n",
    "cwd_writer-1.0.dist-info/entry_points.txt": "[pytest11]\ncwd_writer = cwd_writer\n",
    "calc/__init__.py": "",
    "calc/ops.py": OPS,
    "tests/conftest.py": CONFTEST,
    "tests/test_ops.py": TEST_OPS,
    "tests/test_broken.py": TEST_BROKEN,
    "tests/test_optional.py": TEST_OPTIONAL,
}
KEPT = [
    "tests/test_ops.py::test_relu_positive",
    "tests/test_ops.py::test_relu_negative",
    "tests/test_ops.py::test_relu_writes_home_and_tmp",
]
# A parametrized test gold runs in part keeps the case that ran, by its own id.
DEVICES = "tests/test_ops.py::test_relu_devices"
KEPT_CASES = [f"{DEVICES}[cpu]"]
DROPPED = {
    f"{DEVICES}[cuda]": "skipped: Skipped: CUDA not available",
    "tests/test_ops.py::test_relu_gpu": "skipped: Skipped: needs a GPU",
    "tests/test_ops.py::test_relu_rounding": "xfail: known rounding issue",
    "tests/test_ops.py::test_relu_dynamo": "deselected by the project's configuration",
    "tests/test_ops.py::test_relu_onnx": "deselected by the project's configuration",
    "tests/test_ops.py::test_relu_slow": "deselected by the project's configuration",
    "tests/test_ops.py::test_relu_pretrained": "needs network: ",
    "tests/test_ops.py::test_relu_hub_model": "needs network: ",
    "tests/test_optional.py::test_relu_with_the_optional_backend": "skipped: Skipped: could not import 'not_installed_optional'",
}
SCALE_TESTS = [
    "tests/test_ops.py::test_scale_double",
    "tests/test_ops.py::test_scale_zero",
    "tests/test_broken.py::test_scale_with_the_missing_dependency",
]
CFG = EvaluateConfig(timeout_s=30, memory_mb=512, pids=64, gold_runs=2, jobs=1)


def task(name: str, tests: list[str]) -> BenchmarkTask:
    return BenchmarkTask(
        task_id=f"{SLUG}:calc/ops.py:{name}", repo="proj/calc", sha="0" * 40, path="calc/ops.py", function=name,
        class_name=None, signature=f"def {name}(...)", prompt="", ground_truth="", tests=tests, stage=None, task=None,
        data=None, first_added=None, last_modified=None, qualname=name, slug=SLUG, start_line=1, end_line=2,
    )  # fmt: skip


TASKS = [task("relu", KEPT + [DEVICES] + [t for t in DROPPED if "[" not in t]), task("scale", SCALE_TESTS)]
GOLD = {
    "relu": "def relu(x):\n    return [v if v > 0 else 0 for v in x]\n",
    "scale": "def scale(x, k):\n    return [v * k for v in x]\n",
}


def body(name: str, model: str) -> str:
    return GOLD[name] if model == "gold" else GOLD[name].split("\n")[0] + "\n    raise NotImplementedError\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("calc"), FILES)


def run_benchmark(project: Path, out: Path, backend: str, image: ImageRecord | None) -> dict:
    """Gold (two runs), then null on gold's test sets, then validation: every file the rules write."""
    clone = out / "clone.json"
    write_json(
        clone,
        CloneRecord(
            full_name="proj/calc", slug=SLUG, clone_url="", path=str(project), sha="0" * 40, status=CloneStatus.OK
        ),
    )
    bench = out / "bench.jsonl"
    write_jsonl(bench, TASKS)
    image_file = None
    if image is not None:
        image_file = out / "image.json"
        write_json(image_file, image)
    files = {}
    for model in ("gold", "null"):
        gens = [
            Generation(task_id=t.task_id, model=model, technique="reference", code=body(t.function, model))
            for t in TASKS
        ]
        write_jsonl(out / f"{model}.gens.jsonl", gens)
        files[model] = out / f"{model}.jsonl"
        evaluate_generations(
            out / f"{model}.gens.jsonl", bench, clone, image_file, files[model], backend, CFG, out / "evidence",
            gold=files["gold"] if model != "gold" else None,
        )  # fmt: skip
    validate_tasks(bench, [files["gold"]], [files["null"]], out / "validation.csv", min_tests=3, cfg=CFG)
    return {
        "validation": pd.read_csv(out / "validation.csv").set_index("task_id"),
        "gold": read_jsonl(files["gold"], Evaluation),
        "null": read_jsonl(files["null"], Evaluation),
        "evidence": out / "evidence",
    }


def check_benchmark(result: dict) -> None:
    rows = result["validation"]
    relu, scale = rows.loc[TASKS[0].task_id], rows.loc[TASKS[1].task_id]
    assert bool(relu["usable"]), relu["reason"]
    assert relu["tests_kept"] == len(KEPT) + 1 and relu["gold_passes"] == 2
    for node, why in DROPPED.items():
        assert f"{node}: {why}" in relu["dropped"], (node, relu["dropped"])
    # The broken module holds none of relu's tests: relu is untouched (above); scale names
    # one of its tests, so scale says what is missing.
    assert not scale["usable"]
    assert scale["reason"] == (
        "gold fails: fail: tests/test_broken.py::test_scale_with_the_missing_dependency: "
        "tests/test_broken.py cannot be collected: missing module not_installed_pkg"
    )
    relu_null = next(e for e in result["null"] if e.task_id == TASKS[0].task_id)
    assert sorted(relu_null.tests) == sorted(KEPT + KEPT_CASES) and not relu_null.passed  # graded on gold's tests only
    assert relu_null.causes[KEPT_CASES[0]] == "NotImplementedError"
    assert relu_null.causes[KEPT[0]] == "NotImplementedError"
    gold = next(e for e in result["gold"] if e.task_id == TASKS[0].task_id)
    assert gold.causes["tests/test_ops.py::test_relu_gpu"] == "skipped: Skipped: needs a GPU"
    events = (
        evidence_dir(
            result["evidence"], SLUG, Generation(task_id=gold.task_id, model="gold", technique="reference", code="")
        )
        / "events.jsonl"
    )
    config = next(json.loads(line) for line in events.read_text().splitlines() if '"config"' in line)
    assert config["inifile"].endswith("pyproject.toml")
    assert {"-v", "--color=yes", "-rA", "--tb=long", "--strict-markers", "--cov=calc", "-n 2"} <= set(
        config["neutralised"]
    )


def test_project_configuration_would_stop_a_plain_harness_run(project: Path, tmp_path: Path) -> None:
    """The control: without neutralising, this project's addopts stop pytest (kornia's case)."""
    copy = shutil.copytree(project, tmp_path / "calc")  # its plugin writes into the working directory
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:terminal", "-p", "no:cacheprovider", "tests/test_ops.py"],
        cwd=copy, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 4 and "unrecognized arguments" in run.stderr


def test_local_project_configuration_gold_test_sets_and_causes(project: Path, tmp_path: Path) -> None:
    check_benchmark(run_benchmark(project, tmp_path, "local", None))


@pytest.fixture(scope="module")
def project_image(require_docker: None, project: Path, tmp_path_factory: pytest.TempPathFactory) -> ImageRecord:
    from dlbench.harness.code import support_files
    from dlbench.images.build import build_project_image

    log = tmp_path_factory.mktemp("image") / "build.log"
    record = build_project_image(project, SLUG, "0" * 40, CFG.base_image, log, support_files())
    assert record.status == ImageStatus.OK, record.error
    return record


def test_docker_project_configuration_gold_test_sets_and_causes(
    project: Path, project_image: ImageRecord, tmp_path: Path
) -> None:
    check_benchmark(run_benchmark(project, tmp_path, "docker", project_image))
