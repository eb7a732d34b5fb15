"""A checkout's own compiled extensions: declared in setup.py, built in place in its image.

imagededup's tests import a Cython module its setup.py builds; the project layer puts the
checkout on the path without installing it, so that module never existed and those tasks
failed gold. The synthetic project here compiles a Cython helper and, as some projects do,
its own Python module too: the helper must import in the sandbox (linked from the image),
a test may load native code it wrote to its temporary folder (torch.compile's kernels), and the compiled copy of the task's module, and the C it
was generated as, must never reach a candidate (imported in place of its source a wrong
answer would pass as gold; read, they hand it the reference).
"""

from __future__ import annotations

import importlib
import os
import uuid
from pathlib import Path

import pytest

import dlbench
import docker
from dlbench.config import EvaluateConfig
from dlbench.harness.evaluate import evaluate_generations
from dlbench.images.extensions import FAILED, ExtensionBuild, build_outcome, build_script, extension_build
from dlbench.records import BenchmarkTask, CloneRecord, CloneStatus, Evaluation, Generation, ImageRecord, ImageStatus
from dlbench.store import read_jsonl, write_json, write_jsonl
from tests.test_mine_callgraph import write_tree

SLUG = "proj__fastcalc"
SETUP = """\
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    name="fastcalc",
    ext_modules=cythonize(
        [Extension("fastcalc._fast", ["fastcalc/_fast.pyx"]), Extension("fastcalc.core", ["fastcalc/core.py"])],
        language_level=3,
    ),
)
"""
PYPROJECT = """\
[build-system]
requires = ["setuptools", "wheel", "cython>=3"]
build-backend = "setuptools.build_meta"
"""
CORE = """\
from fastcalc._fast import add


def total(xs):
    s = 0.0
    for x in xs:
        s = add(s, x)
    return s
"""
TESTS = """\
import importlib.util
import shutil

import fastcalc._fast
from fastcalc.core import total


def test_total():
    assert total([1, 2, 3.5]) == 6.5


def test_empty():
    assert total([]) == 0.0


def test_a_kernel_the_test_compiled(tmp_path):
    # as torch.compile's inductor does: native code written to the temporary folder, then loaded
    shutil.copyfile(fastcalc._fast.__file__, tmp_path / "_fast.so")
    spec = importlib.util.spec_from_file_location("_fast", tmp_path / "_fast.so")
    kernel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernel)
    assert kernel.add(total([1.0]), 2.0) == 3.0
"""
FILES = {
    "setup.py": SETUP,
    "pyproject.toml": PYPROJECT,
    "fastcalc/__init__.py": "",
    "fastcalc/_fast.pyx": "def add(double a, double b):\n    return a + b\n",
    "fastcalc/core.py": CORE,
    "tests/test_core.py": TESTS,
}
GOLD = CORE.split("\n\n\n", 1)[1]
WRONG = "def total(xs):\n    return 0.0\n"
CFG = EvaluateConfig(timeout_s=60, memory_mb=512, pids=64, gold_runs=1, jobs=1)


def test_extensions_are_read_from_setup_py_and_build_requirements_outside_the_lock(tmp_path: Path) -> None:
    write_tree(tmp_path, FILES)
    build = extension_build(tmp_path, locked={"pytest", "setuptools"})
    assert build is not None
    assert build.requirements == ("cython>=3", "wheel")  # setuptools is in the lock; Cython's import is the same one
    torch = write_tree(tmp_path / "t", {"setup.py": "import torch\nfrom torch.utils.cpp_extension import CppExtension\nsetup(ext_modules=[CppExtension('m', ['m.cpp'])])\n"})  # fmt: skip
    assert extension_build(torch, locked={"torch"}).requirements == ("ninja",)  # torch's builds use it when found
    plain = write_tree(tmp_path / "p", {"setup.py": "from setuptools import setup\nsetup(name='p')\n"})
    assert extension_build(plain, locked=set()) is None
    empty = write_tree(tmp_path / "e", {"setup.py": 'from setuptools import setup\nsetup(**{"ext_modules": []})\n'})
    assert extension_build(empty, locked=set()) is None  # umap's: nothing to build
    called = write_tree(
        tmp_path / "c", {"setup.py": "from setuptools import setup\nsetup(ext_modules=get_extensions())\n"}
    )
    assert extension_build(called, locked=set()) is not None  # pytorch3d's
    assert extension_build(tmp_path / "none", locked=set()) is None


def test_objects_can_outlive_the_build_step_in_the_machines_cache() -> None:
    """A rebuild after a repair (a new lock, so a new project layer) finds the objects the
    first build compiled: the build's temporary folder is the cache's, and only its finished
    modules (``lib``) are removed; without one the build is throw-away, as the tag's hash has it."""
    build = ExtensionBuild(("ninja",))
    kept = build_script(build, "/opt/dlbench-cache/extensions/0123")
    assert "--build-temp /opt/dlbench-cache/extensions/0123 --build-lib /opt/dlbench-cache/extensions/0123/lib" in kept
    assert "rm -rf /tmp/dlbench-build-deps /tmp/dlbench-build-temp /tmp/dlbench-build-ext.log /opt/dlbench-cache/extensions/0123/lib;" in kept  # fmt: skip
    assert build_script(build) in build.hash_parts() and "/opt/dlbench-cache" not in build_script(build)


def test_build_outcome_names_what_was_built_or_the_error() -> None:
    assert build_outcome("compiling\nextension modules built: 2\n", 12.3).startswith("built 2 extension module(s)")
    failed = build_outcome("gcc -c x.c\nx.c:1:10: fatal error: Python.h: No such file\nerror: command failed\n" + FAILED, 3)  # fmt: skip
    assert failed == f"{FAILED}: x.c:1:10: fatal error: Python.h: No such file"


def test_copy_links_built_modules_and_drops_one_that_shadows_a_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(Path(dlbench.__file__).parent / "harness/shipped"))  # as in the image
    _copy_tree = importlib.import_module("supervisor")._copy_tree
    repo = write_tree(tmp_path / "repo", {"pkg/core.py": "x = 1\n", "pkg/helper.txt": "h"})
    (repo / "pkg/_fast.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (repo / "pkg/core.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")  # core.py compiled
    linked = _copy_tree(str(repo), str(tmp_path / "copy"), link_large=True)
    copy = tmp_path / "copy/pkg"
    assert os.readlink(copy / "_fast.cpython-311-x86_64-linux-gnu.so") == str(repo / "pkg/_fast.cpython-311-x86_64-linux-gnu.so")  # fmt: skip
    assert linked == [str(repo / "pkg/_fast.cpython-311-x86_64-linux-gnu.so")]
    assert not (copy / "core.cpython-311-x86_64-linux-gnu.so").exists()
    assert (copy / "core.py").read_text() == "x = 1\n"


def _task() -> BenchmarkTask:
    return BenchmarkTask(
        task_id=f"{SLUG}:fastcalc/core.py:total", repo="proj/fastcalc", sha="0" * 40, path="fastcalc/core.py",
        function="total", class_name=None, signature="def total(xs)", prompt="", ground_truth=GOLD,
        tests=["tests/test_core.py::test_total", "tests/test_core.py::test_empty", "tests/test_core.py::test_a_kernel_the_test_compiled"],
        stage=None, task=None, data=None,
        first_added=None, last_modified=None, qualname="total", slug=SLUG, start_line=4, end_line=8,
    )  # fmt: skip


def _evaluate(project: Path, image: ImageRecord, out: Path) -> dict[str, Evaluation]:
    clone, bench, image_file = out / "clone.json", out / "bench.jsonl", out / "image.json"
    write_json(clone, CloneRecord(full_name="proj/fastcalc", slug=SLUG, clone_url="", path=str(project), sha="0" * 40, status=CloneStatus.OK))  # fmt: skip
    write_jsonl(bench, [_task()])
    write_json(image_file, image)
    results = {}
    for model, code in (("gold", GOLD), ("wrong", WRONG)):
        write_jsonl(out / f"{model}.gens.jsonl", [Generation(task_id=_task().task_id, model=model, technique="reference", code=code)])  # fmt: skip
        evaluate_generations(
            out / f"{model}.gens.jsonl", bench, clone, image_file, out / f"{model}.jsonl", "docker", CFG,
            out / "evidence", gold=out / "gold.jsonl" if model != "gold" else None,
        )  # fmt: skip
        results[model] = read_jsonl(out / f"{model}.jsonl", Evaluation)[0]
    return results


def test_docker_extensions_built_in_place_import_in_the_sandbox_and_never_shadow_the_candidate(
    require_docker: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dlbench.harness.code import support_files
    from dlbench.images import build
    from dlbench.images.layers import image_exists

    project = write_tree(tmp_path / "fastcalc", FILES)
    support = support_files() | {"nonce": uuid.uuid4().bytes}  # a tag of its own: built, never reused

    # A build stopped while compiling leaves no image under the tag (the next would reuse it
    # as finished, without its extensions: pytorch3d's, stopped after half an hour).
    def stopped(*args, **kwargs):
        raise RuntimeError("stopped while compiling")

    engine = docker.from_env()
    before = {t for i in engine.images.list(f"dlbench/project-{SLUG}") for t in i.tags}
    with monkeypatch.context() as patch, pytest.raises(RuntimeError, match="stopped while compiling"):
        patch.setattr(build, "_extensions_layer", stopped)
        build.build_project_image(project, SLUG, "0" * 40, CFG.base_image, tmp_path / "halted.log", support)
    [unfinished] = {t for i in engine.images.list(f"dlbench/project-{SLUG}") for t in i.tags} - before
    assert unfinished.endswith("-without-extensions")

    record = build.build_project_image(project, SLUG, "0" * 40, CFG.base_image, tmp_path / "build.log", support)
    assert record.status == ImageStatus.OK and not record.reused, record.error
    assert record.tag == unfinished.removesuffix("-without-extensions") and image_exists(engine, record.tag)
    assert "objects kept in the cache (extensions/" in (tmp_path / "build.log").read_text()
    assert record.extensions and record.extensions.startswith("built 1 extension module(s)"), (
        record.extensions,
        (tmp_path / "build.log").read_text()[-3000:],
    )
    # The module compiled from core.py (the reference, importable as fastcalc.core) and the C
    # Cython generated from it (core.py quoted line by line) are gone; _fast's module stays.
    listing = docker.from_env().containers.run(
        record.tag, ["ls", "/work/repo/fastcalc"], remove=True, network_mode="none"
    )
    names = listing.decode().split()
    assert [n for n in names if n.endswith(".so")] == ["_fast.cpython-311-x86_64-linux-gnu.so"], names
    assert not [n for n in names if n.endswith(".c")], names
    results = _evaluate(project, record, tmp_path)
    assert results["gold"].passed, (results["gold"].status, results["gold"].detail, results["gold"].causes)
    # The compiled core.py is left out of the copy: the wrong total runs, and fails.
    assert not results["wrong"].passed
    assert "tests/test_core.py::test_total" in results["wrong"].causes
    assert "tests/test_core.py::test_empty" not in results["wrong"].causes
