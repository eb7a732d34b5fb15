"""Published task files → benchmark records, on a small git repository made for the test."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dlbench.config import MineConfig
from dlbench.records import BenchmarkTask, PublishedTask
from dlbench.store import read_jsonl
from dlbench.tasks import published as px

OPS_THEN = '''def scale(x, factor=2):
    """Multiply."""
    return [v * factor for v in x]


def gone(x):
    return x


def helper(x):
    return x


class Net:
    def forward(self, x):
        def inner(v):
            return v

        return scale(inner(x), 3)
'''
# at HEAD: lines moved (a new function on top), ``gone`` removed
OPS_NOW = """def clip(x, low=0):
    return [max(v, low) for v in x]


""" + OPS_THEN.replace("def gone(x):\n    return x\n\n\n", "")
TESTS = """from tinylib.ops import Net, scale


def test_scale():
    assert scale([1]) == [2]


def test_scale_factor():
    assert scale([1], 3) == [3]


def test_forward():
    assert Net().forward([1]) == [3]
"""
UPSTREAM = "f" * 40  # the commit id the authors linked; the bundle's history was rewritten (shamap)


def commit(root: Path, files: dict[str, str], when: str) -> str:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run([*git, "add", "."], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", when], check=True, env=env)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def task_file(stage: str, data: str, prompt: str, link: str) -> str:
    return f"stage: {stage}\ntask: Classification\ndata: {data}\n\nprompt:\n{prompt}\n\n ground Truth:{link}\n"


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    repos = tmp_path / "repos"
    repo = repos / "tinylib"
    repo.mkdir(parents=True)
    subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True)
    files = {"tinylib/__init__.py": "", "tinylib/ops.py": OPS_THEN, "tests/test_ops.py": TESTS}
    then = commit(repo, files, "2024-06-01T00:00:00Z")
    commit(repo, {"tinylib/ops.py": OPS_NOW}, "2025-01-01T00:00:00Z")
    (repos / "tinylib.shamap.tsv").write_text(f"upstream_sha\tbundle_sha\n{UPSTREAM}\t{then}\n")
    tasks = tmp_path / "dleval"
    tasks.mkdir()
    files = {
        "scale_line.txt": task_file("Pre-Post processing", "Table", "Generate a Python function called scale ...", f"blob/{UPSTREAM}/tinylib/ops.py#L3"),
        "forward_named.txt": task_file("Model Construction", "Image", "Write a method named `forward` of class `Net` that ...", "blob/master/tinylib/tinylib/ops.py"),
        "gone.txt": task_file("Training", "Text", "Create a function called gone ...", "blob/master/tinylib/tinylib/ops.py#L6"),
        "helper.txt": task_file("Evaluating&Metrics", "", "Create a function called helper ...", "blob/master/tinylib/tinylib/ops.py#L10"),
        "elsewhere.txt": task_file("Inference", "Text", "Create a function ...", f"blob/{'e' * 40}/other/mod.py#L1"),
        "nested.txt": task_file("Training", "", "Write the inner function ...", "blob/master/tinylib/tinylib/ops.py#L17"),
        "notes.txt": "no link in this one\n",
    }  # fmt: skip
    for name, text in files.items():
        (tasks / name).write_text(text)
    return {"tasks": tasks, "repos": repos, "work": tmp_path / "work", "out": tmp_path / "out"}


def test_task_files_parse_into_labels_prompt_and_link(world) -> None:
    parsed = {p.source: p for p in px.read_published(world["tasks"])}
    assert sorted(parsed) == [
        "elsewhere.txt",
        "forward_named.txt",
        "gone.txt",
        "helper.txt",
        "nested.txt",
        "scale_line.txt",
    ]
    scale = parsed["scale_line.txt"]
    assert (scale.ref, scale.path, scale.line) == (UPSTREAM, "tinylib/ops.py", 3)
    assert scale.prompt == "Generate a Python function called scale ..."
    assert px.labels_of(scale) == {"stage": "Pre/Post Processing", "task": "Classification", "data": "Structured Array"}
    assert (
        parsed["helper.txt"].labels["data"] == ""
        and px.labels_of(parsed["helper.txt"])["stage"] == "Evaluation & Metrics"
    )


def test_import_resolves_by_line_then_name_and_mines_the_tests(world) -> None:
    out = world["out"]
    cfg = MineConfig(tested_by="reached")
    result = px.import_published_files(
        world["tasks"],
        world["repos"],
        world["work"],
        out / "tasks.jsonl",
        out / "import.jsonl",
        cfg,
        out / "parse",
        min_tests=1,
    )
    rows = {r.source: r for r in read_jsonl(out / "import.jsonl", PublishedTask)}
    assert rows == {r.source: r for r in result.rows}
    # the linked line held ``scale`` at the linked commit (mapped through the shamap); at HEAD it moved
    assert (rows["scale_line.txt"].status, rows["scale_line.txt"].qualname, rows["scale_line.txt"].tests) == (
        "imported",
        "scale",
        2,
    )
    # no line: the name the prompt introduces, at the default branch's commit before the publication date
    assert (rows["forward_named.txt"].status, rows["forward_named.txt"].qualname) == ("imported", "Net.forward")
    assert (rows["gone.txt"].status, rows["gone.txt"].reason) == ("unresolved", "gone gone at the pinned commit")
    assert (rows["helper.txt"].status, rows["helper.txt"].qualname) == ("no_tests", "helper")
    nested = rows["nested.txt"]
    assert (nested.status, nested.qualname) == ("no_tests", "Net.forward.<locals>.inner")
    assert nested.reason.startswith("a nested function")
    assert rows["elsewhere.txt"].status == "unresolved" and rows["elsewhere.txt"].repo is None
    tasks = {t.function: t for t in read_jsonl(out / "tasks.jsonl", BenchmarkTask)}
    assert sorted(tasks) == ["forward", "scale"]
    scale = tasks["scale"]
    assert scale.prompt == "Generate a Python function called scale ..." and scale.prompt_source == "published"
    assert scale.start_line == 5 and scale.ground_truth.startswith("def scale(x, factor=2):")  # HEAD's lines
    assert sorted(scale.tests) == ["tests/test_ops.py::test_scale", "tests/test_ops.py::test_scale_factor"]
    assert (scale.stage, scale.data, scale.repo) == ("Pre/Post Processing", "Structured Array", "tinylib")
    assert (world["work"] / "tinylib").exists() is False  # a checkout on disk is used in place, not cloned


def test_a_bundle_is_cloned_into_the_work_folder(world, tmp_path: Path) -> None:
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    subprocess.run(["git", "-C", str(world["repos"] / "tinylib"), "bundle", "create", "-q", str(bundles / "tinylib.bundle"), "--all"], check=True)  # fmt: skip
    assert px.repository_names(bundles) == ["tinylib"]
    checkout = px.checkout_of(bundles, tmp_path / "work", "tinylib")
    assert checkout == tmp_path / "work" / "tinylib" and (checkout / "tinylib" / "ops.py").read_text() == OPS_NOW
