"""Warm start and the candidate's own directories: what the supervisor preloads, which
modules it refuses (their import starts a thread), its sealed home, and the pure parts
(addopts neutralising, causes in words)."""

from __future__ import annotations

import json
import logging
import shutil
import textwrap
from pathlib import Path

import pytest

from dlbench.config import EvaluateConfig
from dlbench.harness.evaluate import evaluate_repo
from dlbench.harness.local import LocalSession
from dlbench.harness.run import Candidate, preload_for
from dlbench.harness.shipped.plugin import neutralise
from dlbench.harness.verdict import describe
from dlbench.records import BenchmarkTask, CloneRecord, CloneStatus, EvalStatus, Evaluation, Generation
from tests.test_mine_callgraph import write_tree

SLUG = "warm__lib"
# Imports that start a thread: one parks (TensorFlow's and jax's do), one keeps working.
THREADY = """\
import threading

threading.Thread(target=threading.Event().wait, daemon=True).start()
"""
BUSY = """\
import hashlib
import threading


def churn():
    block = bytes(1 << 20)
    while True:
        hashlib.sha256(block).digest()


threading.Thread(target=churn, daemon=True).start()
"""
FILES = {
    "lib/__init__.py": "",
    "lib/ops.py": "import numpy as np\nimport thready\nimport busy\n\n\ndef double(x):\n    return np.asarray(x) * 2\n",
    "tests/test_ops.py": "from lib.ops import double\n\n\ndef test_double():\n    assert double([1, 2]).tolist() == [2, 4]\n",
}
GOLD = "def double(x):\n    return np.asarray(x) * 2\n"
CFG = EvaluateConfig(timeout_s=20, memory_mb=512, pids=64, screen=False)
TASK = BenchmarkTask(
    task_id=f"{SLUG}:lib/ops.py:double", repo="warm/lib", sha="0" * 40, path="lib/ops.py", function="double",
    class_name=None, signature="def double(x)", prompt="", ground_truth=GOLD, tests=["tests/test_ops.py::test_double"],
    stage=None, task=None, data=None, first_added=None, last_modified=None, qualname="double", slug=SLUG,
    start_line=5, end_line=6,
)  # fmt: skip


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("lib"), FILES)


@pytest.fixture
def thready_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Third-party modules whose imports start threads, importable by the supervisor."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "thready.py").write_text(THREADY)
    (site / "busy.py").write_text(BUSY)
    monkeypatch.setenv("PYTHONPATH", str(site))


def test_preload_imports_the_projects_modules_and_refuses_imports_whose_threads_stay_busy(
    checkout: Path, thready_installed: None
) -> None:
    with LocalSession(checkout, CFG, preload_for(checkout)) as session:
        ready = session.start()
        result = session.run(Candidate.make(TASK.task_id, {}, TASK.tests))
    assert "numpy" in ready["preloaded"]  # found in the project's sources, installed
    assert "thready" in ready["preloaded"]  # its thread parks: a fork copies no lock it holds
    assert "busy" not in ready["preloaded"] and "busy" in ready["not_preloaded"]
    reports = [e for e in map(json.loads, result.events) if e["ev"] == "report" and e["nodeid"] == TASK.tests[0]]
    assert [e["outcome"] for e in reports] == ["passed"] * 3, result.output  # setup, call, teardown in a child
    later = LocalSession(checkout, CFG, preload_for(checkout))
    assert later.learned_skip() == ("busy",)  # the next supervisor of this project starts without it
    with LocalSession(checkout, CFG.model_copy(update={"preload": False}), ()) as session:
        assert session.start()["preloaded"] == []


# A library with a worker pool started at import, parked between jobs, whose before-fork
# hook warns as JAX's does once its XLA backend runs: in a forked child the worker is gone.
POOLED = """\
import os
import queue
import threading
import warnings

jobs = queue.Queue()


def _serve():
    while True:
        job, done = jobs.get()
        done.put(job())


threading.Thread(target=_serve, daemon=True).start()
os.register_at_fork(before=lambda: warnings.warn(
    "os.fork() was called. os.fork() is incompatible with multithreaded code, and pooled is multithreaded",
    RuntimeWarning))


def run(job):
    done = queue.Queue()
    jobs.put((job, done))
    return done.get()
"""


def test_a_library_whose_fork_hook_warns_is_not_preloaded_so_a_child_does_not_wait_for_its_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """numpyro: a preloaded library started jax's XLA backend, whose threads park; every
    child's first compilation waited for them forever. A library whose before-fork hook
    warns is refused, and the child starts its pool itself."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "pooled.py").write_text(POOLED)
    monkeypatch.setenv("PYTHONPATH", str(site))
    ops = "import numpy as np\nimport pooled\n\n\ndef double(x):\n    return pooled.run(lambda: np.asarray(x) * 2)\n"
    checkout = write_tree(tmp_path / "lib", {**FILES, "lib/ops.py": ops})
    with LocalSession(checkout, CFG, preload_for(checkout)) as session:
        ready = session.start()
        result = session.run(Candidate.make(TASK.task_id, {}, TASK.tests))
    assert "numpy" in ready["preloaded"] and "pooled" in ready["not_preloaded"]
    reports = [e for e in map(json.loads, result.events) if e["ev"] == "report" and e["nodeid"] == TASK.tests[0]]
    assert [e["outcome"] for e in reports] == ["passed"] * 3, result.output


def test_a_library_whose_import_changes_the_environment_is_not_preloaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    """nncf: sentence-transformers sets ``TF_USE_LEGACY_KERAS=1`` when imported; preloaded, it
    set it for TensorFlow tests that never import it. A test that does not import such a
    library sees the environment a plain run gives it."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "setter.py").write_text("import os\n\nos.environ['LEGACY_MODE'] = '1'\n")
    (site / "dependent.py").write_text("import setter\n")  # preloaded after setter: unchanged then, not alone
    monkeypatch.setenv("PYTHONPATH", str(site))
    files = {
        **FILES, "lib/ops.py": "import numpy as np\n\n\ndef double(x):\n    return np.asarray(x) * 2\n",
        "lib/extra.py": "import setter\nimport dependent\n",  # what other tests of the project use
        "tests/test_ops.py": "import os\n\nfrom lib.ops import double\n\n\ndef test_double():\n"
        "    assert 'LEGACY_MODE' not in os.environ and double([1]).tolist() == [2]\n",
    }  # fmt: skip
    checkout = write_tree(tmp_path / "lib", files)
    caplog.set_level(logging.INFO, logger="dlbench.harness.run")
    with LocalSession(checkout, CFG, preload_for(checkout)) as session:  # found in the project's sources
        ready = session.start()
        result = session.run(Candidate.make(TASK.task_id, {}, TASK.tests))
    assert "numpy" in ready["preloaded"] and {"setter", "dependent"} <= set(ready["not_preloaded"])
    reports = [e for e in map(json.loads, result.events) if e["ev"] == "report" and e["nodeid"] == TASK.tests[0]]
    assert [e["outcome"] for e in reports] == ["passed"] * 3, result.output
    # the run's log says what every candidate imports again
    assert any(
        "not preloaded (threads or environment): " in r.message and "setter" in r.message for r in caplog.records
    )


def clone_of(checkout: Path) -> CloneRecord:
    return CloneRecord(
        full_name="warm/lib", slug=SLUG, clone_url="", path=str(checkout), sha="0" * 40, status=CloneStatus.OK
    )


def test_the_supervisors_home_is_restored_after_each_candidate_and_its_pristine_copy_is_guarded(
    checkout: Path, thready_installed: None, tmp_path: Path
) -> None:
    """Preloaded libraries keep paths in the supervisor's home (numba's cache): a candidate
    writes there as a real run does, and the next one finds the home as preloading left it.
    The sealed copy it is restored from is not to be touched: a violation, and a fresh supervisor."""
    writes, reads, tampers = (
        textwrap.dedent(f"""\
            def double(x):
                import pathlib
                home = pathlib.Path("../{home}")
                {action}
                return np.asarray(x) * 2
            """)
        for home, action in (
            (".home", '(home / "cache.bin").write_text("x")'),
            (".home", 'assert not (home / "cache.bin").exists(), "the previous candidate\'s file"'),
            (".home-pristine", 'home.chmod(0o755); (home / "poison").write_text("x")'),
        )
    )  # fmt: skip
    codes = [writes, reads, tampers, GOLD]
    gens = [Generation(task_id=TASK.task_id, model="m", technique="t", sample=k, code=c) for k, c in enumerate(codes)]
    wrote, read, tampered, after = evaluate_repo(
        clone_of(checkout), {TASK.task_id: TASK}, gens, None, "local", CFG, 1, tmp_path
    )
    assert wrote.status == EvalStatus.PASS and read.status == EvalStatus.PASS, (wrote.detail, read.detail)
    assert tampered.status == EvalStatus.SANDBOX_VIOLATION, tampered.detail
    assert "changed the supervisor's pristine home: poison" in tampered.detail
    assert after.status == EvalStatus.PASS, after.detail


@pytest.mark.parametrize(
    ("args", "kept", "dropped"),
    [
        (["-v", "--color=yes", "tests"], ["tests"], ["-v", "--color=yes"]),
        (["--color", "yes", "-ra", "-n", "auto", "--cov"], [], ["--color yes", "-ra", "-n auto", "--cov"]),
        (["-vs", "-x", "-m", "not slow", "-p", "no:randomly"], ["-s", "-m", "not slow", "-p", "no:randomly"], ["-v", "-x"]),
        (["--strict-markers", "--cov=src", "--cov-report", "term", "--capture=no"], ["--capture=no"], ["--strict-markers", "--cov=src", "--cov-report term"]),
        (["-vv", "-rA", "--tb=short", "--lf", "-k", "relu"], ["-k", "relu"], ["-vv", "-rA", "--tb=short", "--lf"]),
        (["--durations", "--capture=no"], ["--capture=no"], ["--durations"]),  # a value never eats the next option
    ],
)  # fmt: skip
def test_neutralise_drops_conflicting_options_with_their_values(
    args: list[str], kept: list[str], dropped: list[str]
) -> None:
    assert neutralise(args) == (kept, dropped)


@pytest.mark.parametrize(
    ("text", "summary", "cause"),
    [
        ("E   ModuleNotFoundError: No module named 'kornia_rs'", None, "missing module kornia_rs"),
        ("file t.py, line 3\n  def test_speed(benchmark):\nE       fixture 'benchmark' not found", None, "fixture benchmark not found"),
        (
            "E   FileNotFoundError: Couldn't find any data file at /tmp/c9/SetFit/TREC-QC. Couldn't find 'SetFit/TREC-QC' "
            "on the Hugging Face Hub either: FileNotFoundError", None,
            "needs network: FileNotFoundError: Couldn't find any data file at /tmp/c9/SetFit/TREC-QC. Couldn't find "
            "'SetFit/TREC-QC' on the Hugging Face Hub either: FileNotFoundError",
        ),
        ("urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>", None,
         "needs network: urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"),
        (
            (
                "Traceback\nE   requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): "
                "Max retries exceeded with url: /x\nE   assert False"
            ),
            None,
            (
                "needs network: requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): "
                "Max retries exceeded with url: /x"
            ),
        ),
        (
            "E   OSError: Can't load the configuration of 'sshleifer/tiny-distilroberta-base'. If you were trying to "
            "load it from 'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
            None,
            "needs network: OSError: Can't load the configuration of 'sshleifer/tiny-distilroberta-base'. If you were "
            "trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory with the "
            "same name.",
        ),
        (
            "    raise RuntimeError(\"Cannot send a request, as the client has been closed.\")\n"
            "E   RuntimeError: Cannot send a request, as the client has been closed.",
            None,
            "needs network: RuntimeError: Cannot send a request, as the client has been closed.",
        ),
        ("    assert relu(x) == 1\nE   AssertionError: assert 0 == 1", "AssertionError: assert 0 == 1", "AssertionError: assert 0 == 1"),
        ("Traceback\nE   ValueError: shapes differ", None, "ValueError: shapes differ"),
        (None, None, None),
    ],
)  # fmt: skip
def test_causes_in_words(text: str | None, summary: str | None, cause: str | None) -> None:
    assert describe(text, summary) == cause


REGISTRY = """\
registered = set()


def register(name):
    if name in registered:  # jax's pytree registry: a C-level table no module removal resets
        raise ValueError(f"Duplicate registration for {name}")
    registered.add(name)
"""
PLUGIN_OF_PROJECT = "import registry\nimport reglib.ops  # a plugin of the project imports it\n"
REGLIB = {
    "requirements.txt": "numpy\nreglib-plugin\n",
    "reglib/__init__.py": "import registry\n\nregistry.register('reglib')\n",
    "reglib/ops.py": "import numpy as np\nimport reglib_plugin\n\n\ndef double(x):\n    return np.asarray(x) * 2\n",
    "tests/test_ops.py": "from reglib.ops import double\n\n\ndef test_double():\n    assert double([1, 2]).tolist() == [2, 4]\n",
}


def test_a_library_that_imports_the_project_is_not_preloaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PennyLane: a library its sources import (a plugin of it) imports PennyLane, whose import
    registers its types with jax. Preloaded in the warm parent, the project's module code ran
    there; its modules were removed before the child, the registration was not, and the
    child's own import of the project failed on the duplicate: every gold run, at collection."""
    site = write_tree(tmp_path / "site", {"registry.py": REGISTRY, "reglib_plugin.py": PLUGIN_OF_PROJECT})
    checkout = write_tree(tmp_path / "reglib", REGLIB)
    monkeypatch.setenv("PYTHONPATH", f"{site}:{checkout}")  # as the image's PYTHONPATH has /work/repo
    task = TASK.model_copy(update={"task_id": "reg__lib:reglib/ops.py:double", "path": "reglib/ops.py", "slug": "reg__lib"})  # fmt: skip
    with LocalSession(checkout, CFG, preload_for(checkout)) as session:
        ready = session.start()
    assert "numpy" in ready["preloaded"] and "reglib_plugin" not in ready["preloaded"]
    clone = clone_of(checkout).model_copy(update={"slug": "reg__lib"})
    gens = [Generation(task_id=task.task_id, model="gold", technique="t", sample=k, code=GOLD) for k in range(2)]
    runs = evaluate_repo(clone, {task.task_id: task}, gens, None, "local", CFG, 1, tmp_path / "out")
    assert all(r.status == EvalStatus.PASS for r in runs), [(r.status, r.detail, r.causes) for r in runs]


def test_children_may_set_the_start_method_a_preloaded_library_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library that asks for multiprocessing's start method fixes it; preloaded in the warm
    parent, a test module's ``set_start_method("spawn")`` then failed in every child ("context
    has already been set": PennyLane's default_qubit tests). Children start unset, as a fresh
    interpreter does."""
    test_module = (
        "from multiprocessing import set_start_method\n\nfrom lib.ops import double\n\n"
        'set_start_method("spawn")\n\n\ndef test_double():\n    assert double([1, 2]) == [2, 4]\n'
    )
    site = {"mpask.py": "import multiprocessing\n\nmultiprocessing.get_start_method()\n"}
    [run] = gold_runs_beside(tmp_path, monkeypatch, site, "mpask", test_module, TASK.tests)
    assert run.status == EvalStatus.PASS, (run.status, run.detail, run.causes)


STAND_IN = """\
import sys
import types


class _Missing(types.ModuleType):
    def __getattr__(self, name):
        raise ImportError("these features require flax to be installed")


sys.modules["standin.flax"] = _Missing("standin.flax")  # haiku's no_flax stand-in, as deepchem's image has it
"""


def test_a_module_that_raises_for_every_missing_name_does_not_stop_the_supervisor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """haiku registers a stand-in module whose ``__getattr__`` raises ImportError for any name
    it lacks, ``__file__`` included: asked for it, every supervisor of deepchem died at start."""
    test_module = "from lib.ops import double\n\n\ndef test_double():\n    assert double([1, 2]) == [2, 4]\n"
    [run] = gold_runs_beside(tmp_path, monkeypatch, {"standin.py": STAND_IN}, "standin", test_module, TASK.tests)
    assert run.status == EvalStatus.PASS, (run.status, run.detail, run.causes)


def test_a_file_a_preloaded_library_holds_open_stays_readable_and_closing_it_costs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torchgeo: pyproj keeps its database open from import on. The child closed every
    inherited descriptor, its own files reused the numbers, and the library, closing its
    handle, closed the report pipe (every session ended at collection, EBADF). The library's
    read-only file stays readable in the child, and closing it there costs nothing."""
    test_module = (
        "import dbheld\n\nfrom lib.ops import double\n\n\ndef test_read_then_close():\n"
        "    dbheld.HANDLE.seek(0)\n    assert dbheld.HANDLE.read() == b'rows'\n    dbheld.HANDLE.close()\n\n\n"
        "def test_double():\n    assert double([1, 2]) == [2, 4]\n"
    )
    tests = ["tests/test_ops.py::test_read_then_close", "tests/test_ops.py::test_double"]
    site = {"dbheld.py": DBHELD, "rows.db": "rows"}
    runs = gold_runs_beside(tmp_path, monkeypatch, site, "dbheld", test_module, tests, runs=2)
    assert [r.status for r in runs] == [EvalStatus.PASS] * 2, [(r.status, r.detail, r.causes) for r in runs]


DOUBLE = "def double(x):\n    return [2 * v for v in x]\n"


def gold_runs_beside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, site: dict[str, str], library: str, test_module: str,
    tests: list[str], runs: int = 1,
) -> list[Evaluation]:  # fmt: skip
    """Gold runs of ``double`` in a project that requires ``library`` (from ``site``, preloaded
    by the warm supervisor), tested by ``test_module``."""
    monkeypatch.setenv("PYTHONPATH", str(write_tree(tmp_path / "site", site)))
    files = {"requirements.txt": f"{library}\n", "lib/__init__.py": "", "lib/ops.py": DOUBLE, "tests/test_ops.py": test_module}  # fmt: skip
    checkout = write_tree(tmp_path / library, files)
    slug = f"{library}__lib"
    task = TASK.model_copy(update={"task_id": f"{slug}:lib/ops.py:double", "slug": slug, "ground_truth": DOUBLE, "tests": tests})  # fmt: skip
    with LocalSession(checkout, CFG, preload_for(checkout)) as session:
        assert library in session.start()["preloaded"]
    clone = clone_of(checkout).model_copy(update={"slug": slug})
    gens = [Generation(task_id=task.task_id, model="gold", technique="t", sample=k, code=DOUBLE) for k in range(runs)]
    return evaluate_repo(clone, {task.task_id: task}, gens, None, "local", CFG, 1, tmp_path / "out")


DBHELD = """\
import os

HANDLE = open(os.path.join(os.path.dirname(__file__), "rows.db"), "rb")
"""


PARKED_OR_BUSY = """\
import ctypes, hashlib, sys, threading
sys.path.insert(0, "/opt/dlbench")
import supervisor
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # not dumpable, as the supervisor makes itself
threading.Thread(target=threading.Event().wait, daemon=True).start()
print("parked", supervisor._threads_idle(3.0))
def churn():
    block = bytes(1 << 20)
    while True:
        hashlib.sha256(block).digest()
threading.Thread(target=churn, daemon=True).start()
print("busy", supervisor._threads_idle(1.0))
"""


@pytest.mark.docker
def test_the_sandboxed_supervisor_tells_a_parked_thread_from_a_busy_one(require_docker: None, tmp_path: Path) -> None:
    """In the sandbox the supervisor is a non-root, non-dumpable process without capabilities:
    what it reads of its threads there must still tell TensorFlow's parked thread from work."""
    import docker
    from dlbench.harness.code import support_files
    from dlbench.harness.sandbox import container_options

    for name, data in support_files().items():
        (tmp_path / name).write_bytes(data)
    tmp_path.chmod(0o755)  # the sandbox's user reads it
    options = container_options(CFG) | {"detach": False, "remove": True, "labels": {}}
    options["volumes"] = {str(tmp_path): {"bind": "/opt/dlbench", "mode": "ro"}}
    out = docker.from_env().containers.run(CFG.base_image, ["python3", "-c", PARKED_OR_BUSY], **options)
    assert out.decode().split() == ["parked", "True", "busy", "False"], out


def test_a_test_module_the_canaries_joined_reuses_its_cached_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The canaries are appended to a task's test module; its own part keeps the code the warm
    parent rewrote once, the canaries are compiled alone, numbered as the file's lines."""
    from _pytest.assertion import rewrite

    from dlbench.harness.protocol import canary, canary_source

    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "dlbench/harness/shipped"))  # as in the image
    from dlbench.harness.shipped import supervisor

    module = tmp_path / "tests" / "test_ops.py"
    module.parent.mkdir()
    module.write_text("def helper():\n    return 2\n\n\ndef test_two():\n    assert helper() == 2")  # no last newline
    monkeypatch.setattr(rewrite, "_rewrite_test", rewrite._rewrite_test)  # restored after the test
    supervisor._cache_rewrites(str(tmp_path))
    tests = ["tests/test_ops.py::test_two"]
    path, fail, ok = canary("n1", tests)
    supervisor._append_canaries(str(tmp_path / path), canary_source("n1", tests))
    rewrites = []
    monkeypatch.setattr(rewrite, "rewrite_asserts", lambda *a, **k: rewrites.append(a))
    config = type("Config", (), {"getini": lambda self, name: False})()
    _, code = rewrite._rewrite_test(module, config)
    assert rewrites == [], "neither part was rewritten again"
    namespace: dict = {"__name__": "tests.test_ops"}
    exec(code, namespace)
    names = [fail.rpartition("::")[2], ok.rpartition("::")[2]]
    assert namespace["helper"]() == 2 and all(callable(namespace[n]) for n in names)
    lines = module.read_text().splitlines()
    for name in names:
        assert lines[namespace[name].__code__.co_firstlineno - 1] == f"def {name}():"
        assert namespace[name].__code__.co_filename == str(module)
    namespace[names[1]]()
    with pytest.raises(BaseException, match="!="):
        namespace[names[0]]()


def test_the_projects_modules_are_compiled_once_and_the_private_ones_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent gets the repository's modules compiled once (by a throw-away child); a child
    loads an unchanged one from that cache (seen here through a planted marker). A module a
    request may rewrite (private) is never compiled there: its original holds the reference."""
    import importlib.machinery
    import sys
    import types

    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "dlbench/harness/shipped"))
    from dlbench.harness.shipped import supervisor

    loader = importlib.machinery.SourceFileLoader
    monkeypatch.setattr(loader, "source_to_code", loader.source_to_code)  # restored after the test
    monkeypatch.setattr(supervisor, "PROJECT_CODE", {})
    monkeypatch.setattr(supervisor, "PROJECT_KEYS", {})
    repo = tmp_path / "repo"
    files = {
        "cachedpkg/__init__.py": "",
        "cachedpkg/ops.py": "def relu(x):\n    return max(x, 0)\n",
        "cachedpkg/util.py": "def double(x):\n    return 2 * x\n",
        "tests/test_util.py": "from cachedpkg.util import double\n",  # pytest's rewrite cache keeps it
    }
    write_tree(repo, files)
    supervisor._cache_compiled(str(repo), {"cachedpkg/ops.py"})
    assert set(supervisor.PROJECT_KEYS) == {"cachedpkg/__init__.py", "cachedpkg/util.py"}
    names = {
        c.co_name for code in supervisor.PROJECT_CODE.values() for c in code.co_consts if isinstance(c, types.CodeType)
    }
    assert names == {"double"}, "the private module's code is not in the parent"
    key = supervisor.PROJECT_KEYS["cachedpkg/util.py"]
    supervisor.PROJECT_CODE[key] = compile("MARKER = 'cached'\ndef double(x):\n    return 2 * x\n", "x", "exec")
    copy = tmp_path / "c1"
    shutil.copytree(repo, copy)
    monkeypatch.syspath_prepend(str(copy))
    importlib.invalidate_caches()
    try:
        util, ops = importlib.import_module("cachedpkg.util"), importlib.import_module("cachedpkg.ops")
        assert util.MARKER == "cached" and util.double(2) == 4 and ops.relu(-1) == 0
        assert util.double.__code__.co_filename == str(copy / "cachedpkg/util.py"), "numbered as the copy's file"
    finally:
        for module in [m for m in sys.modules if m.startswith("cachedpkg")]:
            del sys.modules[module]


def test_a_request_rewriting_a_module_the_session_did_not_declare_private_does_not_run(tmp_path: Path) -> None:
    checkout = tmp_path / "lib"
    write_tree(
        checkout,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def f():\n    return 1\n",
            "tests/test_a.py": "from pkg.a import f\n\n\ndef test_f():\n    assert f() == 1\n",
        },
    )
    with LocalSession(checkout, CFG, (), private=("pkg/other.py",)) as session:
        run = session.run(Candidate.make("c", {"pkg/a.py": "def f():\n    return 1\n"}, ["tests/test_a.py::test_f"]))
    assert run.infra and "did not declare private" in run.infra


def test_discovery_names_the_third_party_submodules_the_project_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kornia's conftest imports ``torch._dynamo``, which ``import torch`` does not: each child
    paid ~9 s for it. Submodules of installed packages the sources name are preloaded too."""
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "dlbench/harness/shipped"))
    from dlbench.harness.shipped import supervisor

    write_tree(
        tmp_path,
        {
            "conftest.py": "import json.decoder\nimport yaml.constructor\nfrom pydantic.fields import Field\n",
            "pkg/__init__.py": "from pkg.sub import x\nimport pkg.sub.deeper\nimport not_installed.sub\n",
            "pkg/sub.py": "x = 1\n",
        },
    )
    found = supervisor.project_imports(str(tmp_path))
    assert found == ["pydantic", "yaml", "pydantic.fields", "yaml.constructor"], found
