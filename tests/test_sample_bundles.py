"""The sample bundles: clone, match repos.json, span 2023-2025, equal src/, and pass their suites."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parent.parent / "resources" / "sample"
sys.path.insert(0, str(SAMPLE))  # the sample scripts are plain modules, not a package

import build_sample  # noqa: E402
import check_truth  # noqa: E402
import sample_world as sw  # noqa: E402

ALL_BUNDLES = (*sw.LIBRARIES, *sw.CONTENT_DISTRACTORS)
CUTOFFS = ("2024-01-01", "2024-06-01", "2025-01-01")
DL_IMPORT = re.compile(r"^\s*(import|from)\s+(numpy|torch|tensorflow|keras|jax)\b", re.M)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def clones(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sample-clones")
    return {name: sw.clone_bundle(name, root / name) for name in ALL_BUNDLES}


@pytest.fixture(scope="module")
def heads() -> dict[str, str]:
    return {r["bundle"].removesuffix(".bundle"): r["head_sha"] for r in sw.load_repos() if r["bundle"]}


@pytest.mark.parametrize("name", ALL_BUNDLES)
def test_head_matches_repos_json(clones, heads, name):
    assert git(clones[name], "rev-parse", "HEAD") == heads[name]
    assert git(clones[name], "rev-parse", "--abbrev-ref", "HEAD") == "main"


@pytest.mark.parametrize("name", sw.LIBRARIES)
def test_history_spans_the_cutoffs(clones, name):
    dates = git(clones[name], "log", "--format=%aI").split()
    assert 5 <= len(dates) <= 10
    assert {d[:4] for d in dates} >= {"2023", "2024", "2025"}
    # commits on both sides of, and between, every cutoff
    bounds = ("0000", *CUTOFFS, "9999")
    for low, high in zip(bounds, bounds[1:]):
        assert any(low <= d[:10] < high for d in dates), f"{name}: no commit in [{low}, {high})"
    authors = set(git(clones[name], "log", "--format=%an <%ae>|%cn <%ce>").split("\n"))
    assert authors == {"{0} <{1}>|{0} <{1}>".format(*build_sample.AUTHOR)}


def last_modified(repo: Path, path: str, qualname: str) -> str:
    """Date of the last commit that touched a definition's lines (git log -L)."""
    first, last = build_sample.definition_lines((repo / path).read_text(encoding="utf-8"), qualname)
    return git(repo, "log", "-L", f"{first},{last}:{path}", "-n", "1", "--format=%aI", "-s")[:10]


@pytest.mark.parametrize("name", sw.LIBRARIES)
def test_tasks_last_modified_on_both_sides_of_the_cutoffs(clones, name):
    dates = [
        last_modified(clones[name], path, qualname)
        for (repo, path, qualname), row in check_truth.load_truth().items()
        if repo == f"{sw.OWNER}/{name}" and len(row["tests"]) >= sw.MIN_TESTS_PER_TASK
    ]
    assert min(dates) < CUTOFFS[0] and max(dates) >= CUTOFFS[-1]
    assert any(CUTOFFS[0] <= d < CUTOFFS[-1] for d in dates)


@pytest.mark.parametrize("name", ALL_BUNDLES)
def test_clone_equals_source_tree(clones, name):
    files = git(clones[name], "ls-files").splitlines()
    tree = {f: (clones[name] / f).read_text(encoding="utf-8") for f in files}
    assert tree == build_sample.final_tree(sw.SRC / name)


@pytest.mark.parametrize("name", sw.LIBRARIES)
def test_library_suite_passes_from_clone(clones, name):
    proc = subprocess.run(
        [sys.executable, *sw.SUITE_ARGS, "tests"],
        cwd=clones[name],
        env=dict(os.environ, **sw.SUITE_ENV),
        capture_output=True,
        text=True,
        timeout=120,
    )
    summary = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert re.fullmatch(r"\d+ passed in [\d.]+s", summary), summary


def test_content_distractors(clones):
    snippets = clones["dl-snippets"]
    assert not [p for p in snippets.rglob("*.py") if p.name.startswith("test_") or "tests" in p.parts]
    assert any(DL_IMPORT.search(p.read_text()) for p in snippets.rglob("*.py"))
    linkcheck = clones["linkcheck"]
    assert list((linkcheck / "tests").glob("test_*.py"))
    assert not any(DL_IMPORT.search(p.read_text()) for p in linkcheck.rglob("*.py") if ".git" not in p.parts)


def test_builder_is_deterministic(tmp_path, heads):
    proc = subprocess.run(
        [sys.executable, str(SAMPLE / "build_sample.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    assert json.loads(proc.stdout) == heads
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{n}.bundle" for n in ALL_BUNDLES)
