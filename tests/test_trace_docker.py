"""Rules ``find_tests`` → ``trace_tests`` against the real Docker engine: a tiny numpy
project's image (the one evaluation uses), its tests traced inside it, and the dynamic check."""

from __future__ import annotations

from pathlib import Path

import pytest

import docker
from dlbench.config import ImagesConfig, MineConfig
from dlbench.harness.code import support_files
from dlbench.images.build import build_project_image
from dlbench.mine.tests import find_tests_file
from dlbench.mine.trace_check import dynamic_check
from dlbench.records import CloneRecord, CloneStatus, FunctionRecord, ImageStatus, TraceRecord
from dlbench.store import read_jsonl, write_json
from dlbench.trace.stage import trace_tests_file
from tests.test_image_build import TEST_OPS, base, engine, make_repo  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("image")]

NOT_ROOT = "\n\ndef test_not_root():\n    import os\n\n    assert os.getuid() != 0\n"
SCALE = "pkg/ops.py:scale"


def test_trace_tests_in_the_project_image(engine: docker.DockerClient, base: str, tmp_path: Path) -> None:  # noqa: F811
    repo, sha = make_repo(tmp_path / "tiny", "numpy\n", TEST_OPS + NOT_ROOT)
    image = build_project_image(
        repo, "acme__tiny", sha, base, tmp_path / "build.log", support_files(), images=ImagesConfig()
    )
    assert image.status == ImageStatus.OK, image.error
    clone = CloneRecord(
        full_name="acme/tiny", slug="acme__tiny", clone_url="", path=str(repo), sha=sha, status=CloneStatus.OK
    )
    write_json(tmp_path / "clone.json", clone)
    write_json(tmp_path / "image.json", image)
    cfg, cache = MineConfig(), tmp_path / "cache"
    find_tests_file(tmp_path / "clone.json", tmp_path / "tests.jsonl", cfg, cache)

    trace_tests_file(tmp_path / "clone.json", tmp_path / "image.json", tmp_path / "tests.jsonl", tmp_path / "trace.jsonl", tmp_path / "run.log", cfg, cache)  # fmt: skip

    traces = {t.node_id: t for t in read_jsonl(tmp_path / "trace.jsonl", TraceRecord)}
    scaled = traces["tests/test_ops.py::test_scale"]
    assert (scaled.outcome, scaled.called, scaled.executed) == ("passed", [SCALE], [SCALE])
    assert traces["tests/test_ops.py::test_not_root"].outcome == "passed"  # the runner user, not root
    listed = [task("scale"), task("rescale")]
    kept, dropped = dynamic_check(listed, list(traces.values()))
    assert [k.qualname for k in kept] == ["scale"] and [d.qualname for d in dropped] == ["rescale"]


def task(qualname: str) -> FunctionRecord:
    return FunctionRecord(
        task_id=f"acme__tiny:pkg/ops.py:{qualname}", repo="acme/tiny", sha=None, path="pkg/ops.py", function=qualname,
        class_name=None, qualname=qualname, signature=f"def {qualname}(x, k):", source="", docstring=None,
        class_context=None, start_line=1, end_line=2, tests=["tests/test_ops.py::test_scale"],
    )  # fmt: skip
