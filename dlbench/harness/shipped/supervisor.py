"""Trusted test supervisor: runs one candidate per forked child, in a fresh copy of the repo.

Standalone (stdlib + pytest) so it ships into the image as ``/opt/dlbench/supervisor.py``
and also runs on the host for the ``local`` backend. Modes:

``serve``  long-lived: pytest (and ``--preload`` modules) imported once, a warm-up run,
           the repository's test modules assertion-rewritten once; then one JSON request
           a line on stdin, one JSON response a line on stdout. Each candidate runs in a
           ``fork()``ed child, so all of that start-up is paid once.
``once``   one request (``--request``, base64 JSON), one response, exit (the naive mode).

Why the child cannot forge its report: the supervisor makes itself non-dumpable (no
ptrace, no ``/proc/<pid>/fd`` access for same-uid processes), the child's stdio are
fresh pipes, the per-test events travel over a separate pipe, and the host grades them
(duplicate or malformed events, a canary that must fail but passes, watched pytest
internals replaced, files of the repo changed, writes outside the copy: all violations).
"""

from __future__ import annotations

import argparse
import ast
import base64
import ctypes
import fcntl
import gc
import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import marshal
import multiprocessing
import os
import re
import resource
import selectors
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
import traceback
import types
import warnings

import dlbench_guard  # beside this file, in the image and in the package (the script's folder is on sys.path)

try:  # in the image: shipped beside this file (harness/code.py)
    from dlbench_protocol import OWN_DIR, canary, canary_source
except ModuleNotFoundError:  # run from the dlbench package (local backend, tests)
    from dlbench.harness.protocol import OWN_DIR, canary, canary_source

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
COPY_LINK_BYTES = 1 << 20  # sandboxed: larger files are symlinked to the read-only original
EXTENSION_SUFFIXES = (".so", ".pyd")  # compiled modules a project builds in place (images/extensions.py)
EVENT_LIMIT = 16 << 20
TAIL_BYTES = 8192
# Output past the limit is not kept (its head and tail are); only a flood this many times the
# limit ends the run as a violation: a project's verbose tests print a few MB (pfrl's gold did).
FLOOD_FACTOR = 64
EXIT_POLL_S = 0.05  # how often a child is polled for its exit where there is no pidfd (Python < 3.9)
# The repository's modules compiled once by the parent (_cache_compiled): source digest →
# code, and path relative to the repository → digest.
PROJECT_CODE: dict[bytes, types.CodeType] = {}
PROJECT_KEYS: dict[str, bytes] = {}
COMPILE_FILES = 20000
# The file the canaries were appended to in this run → the byte they start at (set by the
# parent before it forks; read by the cached assertion rewrite in the child).
APPENDED: dict[str, int] = {}
# A module's code made of two: the names are replaced by the two code objects (_joined).
JOIN_PARTS = ("__head__", "__tail__")
JOIN_SOURCE = f"exec({JOIN_PARTS[0]!r}, globals())\nexec({JOIN_PARTS[1]!r}, globals())\n"
CHECKED_SUFFIXES = (".py", ".pyc", ".pth", ".ini", ".cfg", ".toml")
MAX_WROTE = 1000  # repository files a run reports changing (a test writing thousands is held to the first)
SCRATCH_SUBDIRS = ("tmp", "home", "basetemp")  # of OWN_DIR: anything may be written there
SCRATCH_DIRS = ("/tmp", "/dev/shm")
SUPERVISOR_HOME = (
    ".home"  # of the work dir: the warm parent's home; candidates may write there, it is restored after each
)
PRISTINE_HOME = ".home-pristine"  # of the work dir: the home as preloading left it, sealed
# Where programs write caches and settings, relative to a home: each candidate's own.
HOME_ENV = {
    "HOME": "", "MPLCONFIGDIR": ".config/matplotlib", "XDG_CACHE_HOME": ".cache", "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share", "TORCH_HOME": ".cache/torch", "HF_HOME": ".cache/huggingface",
}  # fmt: skip
# Who commits when a test runs `git commit` in a temporary repository: git derives an identity
# from a CI runner's user, but from the sandbox's none it accepts ("unable to auto-detect email
# address"). A project's own setting wins.
RUNNER_IDENTITY = {
    "GIT_AUTHOR_NAME": "dlbench runner", "GIT_AUTHOR_EMAIL": "runner@dlbench.invalid",
    "GIT_COMMITTER_NAME": "dlbench runner", "GIT_COMMITTER_EMAIL": "runner@dlbench.invalid",
}  # fmt: skip
IMPORT_LINE = re.compile(rb"^[ \t]*(?:from|import)[ \t]+([A-Za-z_][\w.]*)", re.MULTILINE)
SUBMODULES = 500  # dotted third-party imports preloaded at most (kornia's conftest: torch._dynamo, 4.6 s a child)
SCAN_FILES = 5000  # source files read to find the project's third-party imports
# Built-in plugins a graded run does not need: the unraisable/thread exception plugins cost
# a gc.collect() per run and the terminal reporter ~15 % of a warm run; failures' texts
# travel in the report events instead.
NO_PLUGINS = ("-p", "no:cacheprovider", "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:terminal")
# A module that cannot be collected must not stop the task's tests in other modules.
RUN_ARGS = ("--capture=no", "--continue-on-collection-errors")
# A thread asleep in the kernel (waiting on a condition, for I/O, a timer) that used no CPU time
# over this window is parked: it holds no lock a forked child could need (TensorFlow's, jax's).
QUIET_WINDOW_S = 0.05
SETTLE_S = 3.0  # how long preloading waits for the threads an import started to go idle
# Preloaded first, and the only modules whose imports may change the environment (``preload``).
FRAMEWORKS = ("torch", "tensorflow", "jax")
# A throw-away project run once at start-up, so pytest's lazy imports happen before forking.
WARM_UP = {
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = ""\n',
    "conftest.py": "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n",
    "test_warm.py": (
        "import pytest\n\n\n@pytest.mark.parametrize('x', [1, 2])\ndef test_ok(x, two, tmp_path, monkeypatch):\n"
        "    assert x * two == two * x\n\n\ndef test_fails():\n    assert [1] == [2], 'warm'\n\n\n"
        "@pytest.mark.skip\ndef test_skip():\n    pass\n"
    ),
}
SUPPORT_DIR = os.path.dirname(os.path.abspath(__file__))
IN_CANDIDATE = "DLBENCH_IN_CANDIDATE"  # set in every candidate's process
USAGE_ERROR = 4  # pytest's exit status when a conftest given on the command line cannot be imported
INTERNAL_ERROR = 3
MAX_BROKEN_CONFTESTS = 8


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def load_plugin(path: str):
    spec = importlib.util.spec_from_file_location("dlbench_plugin", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["dlbench_plugin"] = module
    spec.loader.exec_module(module)
    return module


class Supervisor:
    def __init__(self, repo: str, work: str, plugin_path: str, sandboxed: bool, private: list[str] | None = None):
        self.repo, self.work, self.sandboxed = os.path.abspath(repo), os.path.abspath(work), sandboxed
        # the modules requests may rewrite (their originals hold references): never compiled
        # here; None: no compile cache (_cache_compiled)
        self.private = None if private is None else {os.path.normpath(rel) for rel in private}
        os.makedirs(self.work, exist_ok=True)
        for entry in _listdir(self.work):  # left over by a killed predecessor
            _force_rmtree(os.path.join(self.work, entry))
        self.home = os.path.join(self.work, SUPERVISOR_HOME)
        os.makedirs(os.path.join(self.home, "tmp"))
        # The image's work dir is the read-only checkout, and some plugins write into the
        # working directory as they are imported (approvaltests: .approval_tests_temp/).
        os.chdir(self.home)
        # what preloading writes or caches (matplotlib's config dir, a temp dir) stays in a home of ours
        os.environ.update(home_env(self.home), TMPDIR=os.path.join(self.home, "tmp"))
        for name, value in RUNNER_IDENTITY.items():
            os.environ.setdefault(name, value)
        tempfile.tempdir = None
        _prctl(PR_SET_DUMPABLE, 0)
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.plugin = load_plugin(plugin_path)
        import pytest

        self.pytest = pytest
        self.entry_plugins = _entry_point_plugins()
        self.entry_folders = _plugin_folders(self.entry_plugins or [])
        self.patchers: dict[str, list[str]] = {}  # set aside: -p module → the internals it replaces
        self.enders: dict[str, str] = {}  # set aside: -p module → how its hook ended the warm-up session
        self.counter = 0
        self.child = 0
        self.reaped: dict[int, int] = {}
        self.home_before: dict = {}
        self.pristine = os.path.join(self.work, PRISTINE_HOME)
        self.pristine_before: dict | None = None  # set once preloaded (serve mode)
        self.linked: list[str] = []  # large files of the repository the current copy links to
        self.guarded: tuple[list[str], tuple[str, ...]] | None = None  # (readable_roots, library_prefixes)

    def preload(self, modules: list[str], skip: list[str]) -> list[str]:
        """Import third-party modules once, and let pytest load what a real run loads. Modules
        whose imports start threads that do not go idle are refused (forking while a thread
        runs can copy a lock it holds: the child deadlocks); TensorFlow's and jax's park. So
        are modules whose imports change the environment, which every child would inherit
        though its tests may never import them: sentence-transformers sets
        ``TF_USE_LEGACY_KERAS=1``, and nncf's TensorFlow tests, which never import it, then
        built their models from two Keras packages (``layer`` can only be a
        ``tf.keras.layers.Layer``). The frameworks (``FRAMEWORKS``) are imported first and may
        set their own (TensorFlow's ``TF2_BEHAVIOR``): a project that declares one imports it
        in its tests, and importing TensorFlow in every child costs 5-16 s. The modules after
        the first that changed it are left out too: each was imported beside what that one
        imported, so without it one of them could change the environment in its place (nncf's
        skip list grew by one restart each, and each restart re-imports torch and TensorFlow)."""
        loaded, busy, warned, initial = [], [], False, dict(os.environ)
        unset = multiprocessing.context._default_context._actual_context is None
        first = [m for m in sorted(modules, key=lambda m: m not in FRAMEWORKS) if m not in skip]  # stable order
        with OwnModulesBlocked(self.repo):
            for n, name in enumerate(first):
                before, environment = set(_other_threads()), dict(os.environ)
                if _import(name):
                    loaded.append(name)
                started = set(_other_threads()) - before
                if started and not _threads_idle(SETTLE_S, started):
                    busy.append(name)
                elif started and not warned and (warned := _fork_warned()):
                    busy.append(name)  # a failed import counts too: what it ran before failing stays
                elif dict(os.environ) != environment and name not in FRAMEWORKS:
                    busy += first[n:]
                    break
            if busy:  # all at once: one restart, not one each, in the environment it started with
                os.environ.clear()
                os.environ.update(initial)
                raise ForkUnsafe(busy)
            self._warm_up()
        if unset:  # a library that asked for the start method fixed it: children start as a fresh interpreter
            multiprocessing.context._default_context._actual_context = None  # (PennyLane's tests set "spawn")
        for name, module in list(sys.modules.items()):  # the project's own must not leak into children
            if _module_file(module).startswith(self.repo + os.sep):
                del sys.modules[name]
        _cache_rewrites(self.repo)
        if self.private is not None:
            _cache_compiled(self.repo, self.private)
        self.plugin.trust_attributes()
        # Libraries preloaded here keep paths in this home (numba's cache, matplotlib's config):
        # candidates write there as a real run does, and the home is restored after each.
        shutil.copytree(self.home, self.pristine, symlinks=True)
        _seal(self.pristine)
        self.pristine_before = _snapshot(self.pristine)
        self.home_before = _snapshot(self.home)
        gc.freeze()  # children's collections skip the warm heap: fewer copy-on-write faults
        return loaded

    def _warm_up(self) -> None:
        """A session of tiny tests, so that pytest and the installed plugins load here once, and
        so that plugins which replace pytest's internals while a test runs are seen (and set
        aside). A plugin whose hook ends the session is left out of this session and of every
        candidate's, with its cause (pytest-pretty's configure raises without the terminal
        reporter): otherwise no test ran here, and skorch's ``flaky``, after it, went unseen."""
        warm = tempfile.mkdtemp(dir=self.work)
        for name, text in WARM_UP.items():
            with open(os.path.join(warm, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        saved = os.dup(1), os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        autoload = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
        try:
            os.dup2(null, 1), os.dup2(null, 2)
            os.chdir(warm)
            if self.entry_plugins is not None:  # the plugins children load, by name (_entry_point_plugins)
                os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
            args = [f"--rootdir={warm}", f"--basetemp={os.path.join(warm, 'basetemp')}", *NO_PLUGINS]
            plugins = self._third_party_plugins()
            watch = InternalsWatch(self.plugin)
            for _ in range(MAX_BROKEN_CONFTESTS):
                ender = self._warm_session([*args, *plugins, warm], watch)
                if ender is None:
                    break
                self.enders[ender[0]] = ender[1]
                self.entry_plugins = _without_plugin(self.entry_plugins or [], ender[0])
                plugins = _without_plugin(plugins, ender[0])
            self._set_aside(watch.replaced)
        finally:
            if autoload is None:
                os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            for fd in (*saved, null):
                os.close(fd)
            os.chdir(self.home)
            _force_rmtree(warm)
        for name, module in list(sys.modules.items()):
            if _module_file(module).startswith(warm):
                del sys.modules[name]
        sys.path[:] = [p for p in sys.path if not p.startswith(warm)]

    def _third_party_plugins(self) -> list[str]:
        """The ``-p`` pairs of the installed plugins but the project's own (its entry points,
        ``deps.own``): importing them here is refused (``OwnModulesBlocked``), which would end
        the warm-up before a plugin after them is seen; children load them from their copy."""
        plugins = list(self.entry_plugins or ())
        own = _own_names(self.repo)
        for module in plugins[1::2]:
            if module.partition(".")[0] in own:
                plugins = _without_plugin(plugins, module)
        return plugins

    def _warm_session(self, args: list[str], watch: InternalsWatch) -> tuple[str, str] | None:
        """One warm-up session; (plugin, cause) when an installed plugin's hook ended it."""
        try:
            code = int(self.pytest.main(args, plugins=[self.plugin, watch]))
        except Exception:  # noqa: BLE001 - a plugin that needs the project (blocked here): children load it
            return None
        failing = self.plugin.internal_error() if code == INTERNAL_ERROR else None
        plugin = self._plugin_of(failing[1]) if failing else None
        return (plugin, failing[0]) if plugin is not None else None

    # ------------------------------------------------------------ one candidate

    def run(self, req: dict) -> dict:
        self.counter += 1
        copy = os.path.join(self.work, f"c{self.counter}")
        marks = [("start", time.monotonic())]
        result: dict = {"events": [], "output": "", "output_bytes": 0, "timed_out": False, "exit_code": None}
        result.update(output_exceeded=False, violations=[], wrote=[], infra=None, cmd=[], oom=False)
        try:
            if self.private is not None and {os.path.normpath(rel) for rel in req["files"]} - self.private:
                raise OSError("a request rewrites a module the session did not declare private (its code is cached)")
            args, before = self._prepare(copy, req)
            marks.append(("copy", time.monotonic()))
            result["cmd"] = ["pytest", *args]
            kills = _oom_kills() if self.sandboxed else None
            result.update(self._execute(copy, req, args))
            marks.append(("session", time.monotonic()))
            result["oom"] = kills is not None and (_oom_kills() or 0) > kills
            violations, result["wrote"] = self._violations(copy, before, req)
            result["violations"] += violations
            marks.append(("check", time.monotonic()))
        except OSError as exc:
            result["infra"] = f"supervisor: {exc!r}"
        finally:
            self._kill_rest()
            self._cleanup(copy)
        tampered = self._pristine_changed()
        result["violations"] += tampered
        if not tampered:
            self._restore_home()
        marks.append(("cleanup", time.monotonic()))
        wall = round(marks[-1][1] - marks[0][1], 4)
        result.update(id=req.get("id"), wall_s=wall, restart=bool(tampered), phases=_phases(marks, result))
        return result

    def _pristine_changed(self) -> list[str]:
        """The sealed copy the home is restored from changed: this candidate's violation, and the
        next one needs a fresh supervisor (``restart``)."""
        if self.pristine_before is None:
            return []
        after = _snapshot(self.pristine)
        changed = sorted(set(after.items()) ^ set(self.pristine_before.items()))
        return [f"changed the supervisor's pristine home: {rel}" for rel in dict(changed)]

    def _restore_home(self) -> None:
        """What the candidate wrote into the home (a cache, settings) does not reach the next one."""
        if self.pristine_before is None or _snapshot(self.home) == self.home_before:
            return
        os.chdir(self.work)
        _force_rmtree(self.home)
        shutil.copytree(self.pristine, self.home, symlinks=True)
        _unseal(self.home)
        os.chdir(self.home)
        self.home_before = _snapshot(self.home)

    def _prepare(self, copy: str, req: dict) -> tuple[list[str], dict]:
        self.linked = _copy_tree(self.repo, copy, link_large=self.sandboxed)
        if self.guarded is None:  # what every child's guard needs, once: listings and resolved paths
            own = (self.repo, self.work)
            self.guarded = dlbench_guard.readable_roots([self.repo]), dlbench_guard.library_prefixes(SUPPORT_DIR, own)
        for rel, source in req["files"].items():
            target = os.path.join(copy, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8") as fh:
                fh.write(source)
        own = os.path.join(copy, OWN_DIR)
        for sub in SCRATCH_SUBDIRS:
            os.makedirs(os.path.join(own, sub), exist_ok=True)
        files = [
            f for f in dict.fromkeys(t.split("::")[0] for t in req["tests"]) if os.path.isfile(os.path.join(copy, f))
        ]
        canary_path = canary(req["nonce"], req["tests"])[0]
        _append_canaries(os.path.join(copy, canary_path), canary_source(req["nonce"], req["tests"]))
        before = _snapshot(copy)  # the canaries included: editing them is a change like any other
        args = [
            *RUN_ARGS, f"--rootdir={copy}", f"--confcutdir={copy}", *NO_PLUGINS,
            f"--basetemp={os.path.join(own, 'basetemp')}", *(self.entry_plugins or ()), *files,
            *([] if canary_path in files else [canary_path]),
        ]  # fmt: skip
        return args, before

    def _execute(self, copy: str, req: dict, args: list[str]) -> dict:
        out_r, out_w = os.pipe()
        rep_r, rep_w = os.pipe()
        sys.stdout.flush(), sys.stderr.flush()
        _threads_idle(SETTLE_S)  # a preloaded library's thread woke up (a timer): fork once it parks again
        # What the parent holds, its uncollected garbage too, is never collected in the child: a
        # finalizer run there (an earlier run's selector) would close a descriptor number the
        # child's session has reused since the child closed the inherited ones (Python 3.13:
        # every failing run after the first ended in EBADF at pytest's unconfigure).
        gc.freeze()
        self.forked = time.monotonic()
        pid = self.child = os.fork()
        if pid == 0:  # the child never returns
            os.close(out_r), os.close(rep_r)
            self._child(copy, req, args, out_w, rep_w)
        gc.unfreeze()
        os.close(out_w), os.close(rep_w)
        return self._watch(pid, out_r, rep_r, req)

    def _child(self, copy: str, req: dict, args: list[str], out_w: int, rep_w: int) -> None:
        code = 70
        try:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0), os.dup2(out_w, 1), os.dup2(out_w, 2)
            self.report_fd = _settle_descriptors(null, rep_w, self.repo)
            _limit_child(req, self.sandboxed)
            self._enter_copy(copy)
            if self.entry_plugins is not None:  # resolved once in the parent (see _entry_point_plugins)
                os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
            dlbench_guard.hide(self.guarded[0], self.linked)  # the reference is in the original checkout
            audit = self._audit(copy, req)
            _, fail, ok = canary(req["nonce"], req["tests"])
            selected = sorted([*req["tests"], fail, ok])
            self.plugin.attach(self.report_fd, selected, req.get("seed"), audit, copy, req.get("target"))
            sys.addaudithook(audit)
            code = self._main(args, copy)
        except BaseException as exc:  # noqa: BLE001 - report anything, never return
            try:
                where = "".join(traceback.format_tb(exc.__traceback__)[-3:])
                os.write(2, f"dlbench supervisor child: {exc!r}\n{where}".encode())
            except OSError:
                pass
        finally:
            _try_flush()
            os._exit(code)

    def _main(self, args: list[str], copy: str) -> int:
        """pytest, once more without the tests below each conftest that cannot be imported (a
        broken conftest costs the tests under it: a collection error with its cause), and without
        an installed plugin whose hook ended the session before collection (with a note)."""
        for module, names in self.patchers.items():
            cause = f"it replaces pytest's {', '.join(names)} while a test runs; verdicts come from pytest's own"
            self.plugin.send({"ev": "set_aside", "plugin": module, "cause": cause})
        for module, cause in self.enders.items():  # found by the warm-up (_warm_up)
            self.plugin.send({"ev": "set_aside", "plugin": module, "cause": cause})
        for _ in range(MAX_BROKEN_CONFTESTS):
            code = int(self.pytest.main(args, plugins=[self.plugin]))
            failing = self.plugin.internal_error() if code == INTERNAL_ERROR else None
            plugin = self._plugin_of(failing[1]) if failing else None
            if plugin is not None:
                self.plugin.send({"ev": "set_aside", "plugin": plugin, "cause": failing[0]})
                args = _without_plugin(args, plugin)
                continue
            broken = self.plugin.broken_conftest() if code == USAGE_ERROR else None
            if broken is None:
                return code
            folder = os.path.relpath(os.path.dirname(broken[0]), copy)
            kept = [a for a in args if not a.startswith(folder + "/")]
            if folder.startswith(".") or not any(a.endswith(".py") for a in kept):  # nothing left to run
                return code
            self.plugin.send({"ev": "collect_error", "nodeid": folder, "exc": broken[1], "text": broken[1]})
            args = kept
        return code

    def _set_aside(self, replaced: dict[str, str]) -> None:
        """Installed plugins that replace pytest's internals while a test runs are left out of
        every run (``flaky`` reruns tests through its own ``call_and_report``: the integrity
        layers cannot tell it from a forgery, and PennyLane's every gold run was a violation)."""
        for name, file in replaced.items():
            module = self._plugin_of([file])
            if module is not None:
                self.patchers.setdefault(module, []).append(name)
        if self.entry_plugins is not None:
            pairs = zip(self.entry_plugins[::2], self.entry_plugins[1::2])  # (-p, module) pairs
            self.entry_plugins = [arg for flag, m in pairs if m not in self.patchers for arg in (flag, m)]

    def _plugin_of(self, files: list[str]) -> str | None:
        """The installed plugin (a ``-p`` module of ``entry_plugins``) whose code a traceback runs through."""
        for module, folder in self.entry_folders.items():
            if any(f.startswith(folder) for f in files):
                return module
        return None

    def _audit(self, copy: str, req: dict) -> dlbench_guard.Audit:
        own = os.path.join(copy, OWN_DIR)
        return dlbench_guard.Audit(
            self.plugin.send, copy, candidate=list(req["files"]), tests=[t.split("::")[0] for t in req["tests"]],
            scratch=[os.path.join(own, sub) for sub in SCRATCH_SUBDIRS], writable=[*SCRATCH_DIRS, self.work],
            library=self.guarded[1], report_fd=self.report_fd,
        )  # fmt: skip

    def _enter_copy(self, copy: str) -> None:
        own = os.path.join(copy, OWN_DIR)
        os.chdir(copy)
        env = os.environ
        env[IN_CANDIDATE] = "1"  # a test re-executing its process's command line starts no supervisor (main)
        env.update(home_env(os.path.join(own, "home")), TMPDIR=os.path.join(own, "tmp"))
        paths = [_rebase(p, self.repo, copy) for p in sys.path if not p.startswith(self.work)]
        sys.path[:] = [copy] + [p for p in paths if p != copy]
        env["PYTHONPATH"] = os.pathsep.join(
            _rebase(p, self.repo, copy) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p
        )
        tempfile.tempdir = None
        sys.dont_write_bytecode = True  # so any .pyc in the copy was forged (a violation)

    def _watch(self, pid: int, out_r: int, rep_r: int, req: dict) -> dict:
        limit = int(req["output_limit"])
        deadline = time.monotonic() + float(req["timeout_s"])
        head, tail, total = bytearray(), bytearray(), 0
        events = bytearray()
        status = None
        timed_out = exceeded = False
        sel = selectors.DefaultSelector()
        sel.register(out_r, selectors.EVENT_READ, "out")
        sel.register(rep_r, selectors.EVENT_READ, "rep")
        pidfd = _exit_fd(pid)
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ, "exit")
        while sel.get_map() or (pidfd is None and status is None):  # polled: wait for the exit too
            left = deadline - time.monotonic()
            if left <= 0 and status is None:
                timed_out = True
                self._kill_rest()
            if pidfd is None and status is None and self._exited(pid):
                status = self._wait(pid)
                self._kill_rest()
            wait = max(left, 0.05) if status is None else 1.0
            for key, _ in sel.select(timeout=wait if pidfd is not None else min(wait, EXIT_POLL_S)):
                if key.data == "exit":
                    sel.unregister(pidfd)
                    status = self._wait(pid)
                    self._kill_rest()  # whatever it left behind would hold the pipes open
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                elif key.data == "rep":
                    events += chunk
                    exceeded |= len(events) > EVENT_LIMIT
                else:
                    total += len(chunk)
                    room = limit - len(head)
                    head += chunk[: max(room, 0)]
                    tail = (tail + chunk)[-TAIL_BYTES:]
                    exceeded |= total > limit * FLOOD_FACTOR
            if exceeded and status is None:
                self._kill_rest()
        sel.close()
        for fd in (out_r, rep_r, pidfd):
            if fd is not None:
                os.close(fd)
        output = head.decode(errors="replace")
        if total > len(head):
            output += f"\n[... {total - len(head)} bytes not kept ...]\n" + tail[
                -min(TAIL_BYTES, total - len(head)) :
            ].decode(errors="replace")
        return {
            "events": bytes(events[:EVENT_LIMIT]).decode(errors="replace").splitlines(),
            "forked": self.forked,
            "output": output,
            "output_bytes": total,
            "output_exceeded": exceeded,
            "timed_out": timed_out,
            "exit_code": _exit_code(status) if status is not None else None,
            "violations": [],
        }

    # ------------------------------------------------------------ after the run

    def _violations(self, copy: str, before: dict, req: dict) -> tuple[list[str], list[str]]:
        """Repository code changed, and tests or config files created, by the run; and the
        repository's other files it changed or removed (a test's own output: the host holds
        a candidate only to those gold's runs of the task changed too)."""
        after = _snapshot(copy)
        changed = [rel for rel, sig in before.items() if rel not in req["files"] and after.get(rel) != sig]
        found = [f"changed or removed {rel}" for rel in changed if rel.endswith(CHECKED_SUFFIXES)]
        wrote = sorted(rel for rel in changed if not rel.endswith(CHECKED_SUFFIXES))
        for rel in after.keys() - before.keys():
            parts = rel.split(os.sep)
            scratch = parts[0] == OWN_DIR and len(parts) > 2 and parts[1] in SCRATCH_SUBDIRS
            if not scratch and rel.endswith(CHECKED_SUFFIXES):
                found.append(f"created {rel}")
        return found, wrote[:MAX_WROTE]

    def _kill_rest(self) -> None:
        """SIGKILL every process but this one (in the container) or every descendant (local)."""
        for _ in range(200):
            victims = _other_processes() if self.sandboxed else _descendants(os.getpid())
            if not victims:
                break
            if self.sandboxed:
                _try(os.kill, -1, signal.SIGKILL)
            for victim in victims:
                _try(os.kill, victim, signal.SIGKILL)
            self._reap()
            time.sleep(0.005)
        self._reap()

    def _reap(self) -> None:
        """Collect exited children (orphans come to us: we are a subreaper), keeping statuses."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.child:  # orphans' statuses are not needed
                self.reaped[pid] = status

    def _exited(self, pid: int) -> bool:
        """Whether ``pid`` has exited (reaped now, its status kept for ``_wait``)."""
        if pid in self.reaped:
            return True
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if done:
            self.reaped[pid] = status
        return bool(done)

    def _wait(self, pid: int) -> int:
        if pid not in self.reaped:
            try:
                self.reaped[pid] = os.waitpid(pid, 0)[1]
            except ChildProcessError:
                return 0
        return self.reaped.pop(pid)

    def _cleanup(self, copy: str) -> None:
        """Remove the copy and whatever the run left in the scratch dirs. Real suites write to
        ``/tmp`` by name (a downloaded dataset, ``tempfile`` with ``dir="/tmp"``): normal, not a
        violation, and nothing of it reaches the next candidate."""
        _force_rmtree(copy)
        if not self.sandboxed:
            return
        for scratch in SCRATCH_DIRS:
            for entry in _listdir(scratch):
                path = os.path.join(scratch, entry)
                if not self.work.startswith(path):
                    _force_rmtree(path)
        for entry in _listdir(self.work):
            if entry not in (SUPERVISOR_HOME, PRISTINE_HOME):
                _force_rmtree(os.path.join(self.work, entry))


# ---------------------------------------------------------------- helpers


class ForkUnsafe(Exception):
    """Importing these modules started threads or changed the environment: the supervisor
    restarts without them."""

    def __init__(self, modules: list[str]):
        super().__init__(", ".join(modules))
        self.modules = modules


def home_env(home: str) -> dict[str, str]:
    """HOME and the cache and settings directories programs derive from it, under ``home``."""
    return {name: os.path.join(home, rel) if rel else home for name, rel in HOME_ENV.items()}


class InternalsWatch:
    """A pytest plugin for the warm-up run: which watched pytest internals (``plugin._watched``)
    another plugin has replaced while a test runs, and the file of each replacement."""

    def __init__(self, plugin: types.ModuleType):
        self.plugin = plugin
        self.baseline = plugin.fingerprints()
        self.replaced: dict[str, str] = {}

    def pytest_runtest_call(self, item) -> None:  # noqa: ANN001 - pytest's Item
        for name, obj in self.plugin._watched().items():
            if self.plugin._fingerprint(obj) != self.baseline.get(name):
                code = self.plugin._code_of(obj)
                self.replaced[name] = code.co_filename if code is not None else ""


class OwnModulesBlocked:
    """While preloading, the project's own modules cannot be imported: a library that imports
    the project (a plugin of it) is then not preloaded, and each child imports both fresh. Run
    in the warm parent, the project's module code would leave side effects that outlive its
    modules, removed before any child starts: jax's pytree registry refused PennyLane's second
    registration of its types in every child, so every gold run of PennyLane ended at collection."""

    def __init__(self, repo: str):
        self.prefix = repo + os.sep

    def find_spec(self, fullname: str, path=None, target=None):
        if "." in fullname:
            return None  # a submodule follows its package
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        where = spec and (spec.origin or next(iter(spec.submodule_search_locations or ()), None))
        if where and where.startswith(self.prefix):
            raise ImportError(f"{fullname} is the project's own: imported by each candidate, never preloaded")
        return None

    def __enter__(self) -> OwnModulesBlocked:
        sys.meta_path.insert(0, self)
        return self

    def __exit__(self, *exc) -> None:
        sys.meta_path.remove(self)


def _fork_warned() -> bool:
    """Whether a library's before-fork hook now warns that forking is unsafe, tried with a fork
    whose child exits at once. JAX registers one when its XLA backend starts (numpyro's
    preloaded jaxns runs jax code at import, even where the import then fails): the
    backend's threads park, but a child has none of them and its first compilation waits for
    them forever (numpyro's every gold run ended at the time limit)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    return any("fork" in str(w.message) for w in caught)


def _import(name: str) -> bool:
    try:
        __import__(name)
        return True
    except Exception:  # noqa: BLE001 - optional warm-up: the child imports it itself if it can
        return False


def _threads_idle(within: float, only: set[str] | None = None) -> bool:
    """Whether every other thread of this process (or those of ``only`` still alive) is idle,
    parked in a blocking system call and using no CPU time over ``QUIET_WINDOW_S``, at some
    moment ``within`` seconds; at once when there is none."""
    deadline = time.monotonic() + within
    while True:
        before = {tid: s for tid, s in _other_threads().items() if only is None or tid in only}
        if not before:
            return True
        time.sleep(QUIET_WINDOW_S)
        after = {tid: s for tid, s in _other_threads().items() if tid in before}
        if _parked(before) and before == after:
            return True
        if time.monotonic() > deadline:
            return False


def _other_threads() -> dict[str, tuple[str, ...]]:
    """Each thread but the calling one: its state and CPU time so far, from its ``stat`` (its
    ``syscall`` file is not readable once the supervisor is not dumpable). A thread whose file
    cannot be read counts as running."""
    me = str(threading.get_native_id())
    found = {}
    for tid in (t for t in _listdir("/proc/self/task") if t != me):
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            found[tid] = (fields[0], *fields[11:13])  # state, utime, stime
        except (OSError, IndexError):
            found[tid] = ("R",)
    return found


def _parked(threads: dict[str, tuple[str, ...]]) -> bool:
    return all(state == "S" for state, *_ in threads.values())


def _own_names(repo: str) -> set[str]:
    """The top-level names the checkout's own modules take (at its root and under ``src/``)."""
    return {n[:-3] if n.endswith(".py") else n for d in (repo, os.path.join(repo, "src")) for n in _listdir(d)}


def project_imports(repo: str) -> list[str]:
    """Installed third-party modules the project's sources import (preload candidates): the
    top-level ones, and the submodules they name (``import torch._dynamo``: a submodule its
    package does not import itself costs every child that imports it, a conftest's in all)."""
    own = _own_names(repo)
    found: set[str] = set()
    for path in _python_files(repo)[:SCAN_FILES]:
        try:
            with open(path, "rb") as fh:
                found.update(m.decode().rstrip(".") for m in IMPORT_LINE.findall(fh.read()))
        except OSError:
            continue
    outside = own | _stdlib_modules() | {"__future__", "conftest"}
    third_party = {name for name in found if name.partition(".")[0] not in outside}
    top = sorted(name for name in {n.partition(".")[0] for n in third_party} if _installed(name))
    dotted = sorted(name for name in third_party if "." in name and name.partition(".")[0] in top)
    return top + [name for name in dotted[:SUBMODULES] if _installed(name)]


def _in_child(func, *args, failed):
    """``func(*args)`` (plain data or code, as ``marshal`` carries them) computed in a forked
    child: the project's sources it reads never enter the warm parent's memory, which every
    candidate's process inherits. ``failed`` when the child could not answer."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            with os.fdopen(write_end, "wb") as out:
                out.write(marshal.dumps(func(*args)))
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answer:
        data = answer.read()
    os.waitpid(pid, 0)
    return marshal.loads(data) if data else failed


def _python_files(repo: str) -> list[str]:
    files = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py")]
    return files


def _module_file(module: object) -> str:
    """An imported module's ``__file__`` ("" without one), read from its namespace: a module's
    own ``__getattr__`` may raise for any name it lacks (haiku's ``no_flax`` stand-in raises
    ImportError: every supervisor of deepchem failed to start)."""
    if isinstance(module, types.ModuleType):
        file = vars(module).get("__file__")
    else:  # something a library put in sys.modules; the warm parent runs no candidate code
        try:
            file = getattr(module, "__file__", None)
        except Exception:  # noqa: BLE001 - an object that answers no attribute has no file
            file = None
    return file if isinstance(file, str) else ""


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _unseal(root: str) -> None:
    """Writable by its owner again (a copy of a sealed tree keeps its modes)."""
    for dirpath, _, filenames in os.walk(root):
        _try(os.chmod, dirpath, 0o755)
        for name in filenames:
            if not os.path.islink(os.path.join(dirpath, name)):
                _try(os.chmod, os.path.join(dirpath, name), 0o644)


def _seal(root: str) -> None:
    """Read-only for everyone: a child writing there fails (and a chmod back shows in the snapshot)."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            _try(os.chmod, os.path.join(dirpath, name), 0o444)
        _try(os.chmod, dirpath, 0o555)


def _cache_rewrites(repo: str) -> None:
    """Rewrite the repository's test modules and conftests once, in the trusted parent; every
    child reuses the code for a file with the same content (an edited file misses the cache)."""
    from _pytest.assertion import rewrite

    cache: dict[bytes, tuple[bytes, types.CodeType]] = {}
    for dirpath, _, filenames in os.walk(repo):
        for name in filenames:
            if _rewritten_by_pytest(name):
                path = os.path.join(dirpath, name)
                try:
                    with open(path, "rb") as fh:
                        source = fh.read()
                    cache[hashlib.sha256(source).digest()] = rewritten(rewrite, source, path)
                except (OSError, SyntaxError, ValueError):
                    continue
    original = rewrite._rewrite_test

    def cached(fn, config):
        source = fn.read_bytes()
        head = APPENDED.get(os.path.realpath(fn), len(source))  # a module the canaries joined: its own part is cached
        hit = cache.get(hashlib.sha256(source[:head]).digest())
        if hit is None or config.getini("enable_assertion_pass_hook"):
            return original(fn, config)
        code = _refile(hit[1], str(fn))
        if head < len(source):
            code = _joined(code, _compiled_tail(source, head, str(fn)))
        return hit[0], code

    rewrite._rewrite_test = cached


def _rewritten_by_pytest(name: str) -> bool:
    """A file pytest imports through its assertion rewriting (by default): a test module or a
    conftest, whose code ``_cache_rewrites`` keeps."""
    return name == "conftest.py" or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))


def _cache_compiled(repo: str, private: set[str]) -> None:
    """The repository's modules but the ``private`` ones, compiled once: a child loads an
    unchanged module's code by its source's digest instead of compiling it (torchgeo: 0.46 s of
    a child's 1.3-2 s of start-up and collection was compiling its own modules afresh). They
    are compiled in a throw-away child, and the private ones (every task's module: their
    originals hold the references) never at all, so neither a source nor a reference's code
    enters the memory every candidate's process inherits."""
    codes, keys = _in_child(_compiled_tree, repo, sorted(private), failed=({}, {}))
    PROJECT_CODE.update(codes)
    PROJECT_KEYS.update(keys)
    loader = importlib.machinery.SourceFileLoader
    original = loader.source_to_code

    def source_to_code(self, data, path, *args, **kwargs):
        code = PROJECT_CODE.get(hashlib.sha256(data).digest()) if isinstance(data, bytes) else None
        return original(self, data, path, *args, **kwargs) if code is None else _refile(code, path)

    loader.source_to_code = source_to_code


def _compiled_tree(repo: str, private: list[str]) -> tuple[dict[bytes, types.CodeType], dict[str, bytes]]:
    """(source digest → code, path → digest) of the repository's modules but ``private`` and
    those pytest's assertion rewriting imports (``_cache_rewrites`` keeps theirs)."""
    codes, keys, skipped = {}, {}, set(private)
    for path in _python_files(repo)[:COMPILE_FILES]:
        rel = os.path.relpath(path, repo)
        if rel in skipped or _rewritten_by_pytest(os.path.basename(path)):
            continue
        try:
            with open(path, "rb") as fh:
                source = fh.read()
            key = hashlib.sha256(source).digest()
            codes[key] = compile(source, path, "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError):
            continue
        keys[rel] = key
    return codes, keys


def _compiled_tail(source: bytes, head: int, path: str) -> types.CodeType:
    """The canaries appended at byte ``head``, compiled alone, numbered as lines of the file."""
    tree = ast.parse(source[head:], filename=path)
    ast.increment_lineno(tree, source[:head].count(b"\n"))
    return compile(tree, path, "exec", dont_inherit=True)


def _joined(head: types.CodeType, tail: types.CodeType) -> types.CodeType:
    """One module code that runs ``head`` then ``tail`` in the module's namespace: a large test
    module the canaries joined is not rewritten again for each candidate (kornia's 5,000-line
    test_augmentation.py: 0.6 s)."""
    template = compile(JOIN_SOURCE, head.co_filename, "exec", dont_inherit=True)
    parts = {JOIN_PARTS[0]: head, JOIN_PARTS[1]: tail}
    return template.replace(co_consts=tuple(parts.get(c, c) if isinstance(c, str) else c for c in template.co_consts))


def rewritten(rewrite, source: bytes, path: str) -> tuple[bytes, types.CodeType]:
    """(source hash, code) as pytest's own ``_rewrite_test`` makes them (no config: defaults)."""
    tree = ast.parse(source, filename=path)
    rewrite.rewrite_asserts(tree, source, path, None)
    return importlib.util.source_hash(source), compile(tree, path, "exec", dont_inherit=True)


def _refile(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(_refile(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _limit_child(req: dict, sandboxed: bool) -> None:
    """rlimits and OOM-killer preference. In a container its memory cgroup is the memory
    bound: an address-space limit would stop frameworks that reserve far more than they use
    (torch's CUDA libraries cannot even be mapped under one) when they were not preloaded."""
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
    memory = int(req["memory_mb"]) << 20
    cpu = int(float(req["timeout_s"])) + 2
    limits = [("RLIMIT_CPU", cpu), ("RLIMIT_FSIZE", memory), ("RLIMIT_CORE", 0)]
    if not sandboxed:
        with open("/proc/self/statm") as fh:
            limits.append(("RLIMIT_AS", int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") + memory))
    for name, value in limits:
        _try(resource.setrlimit, getattr(resource, name), (value, value))
    # RLIMIT_NPROC counts every thread of the user id, in every container running as it: in a
    # sandbox, other candidates' threads (TensorFlow's pools, a concurrent pfrl run's workers)
    # made a candidate's pthread_create fail. There the container's pids cgroup is the bound.
    if req.get("nproc") and os.getuid() != 0 and not sandboxed:
        _try(resource.setrlimit, resource.RLIMIT_NPROC, (req["nproc"], req["nproc"]))


def _oom_kills() -> int | None:
    """Processes the container's memory cgroup has killed so far (cgroup v2, then v1), or None."""
    for path in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        try:
            with open(path) as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def _rebase(path: str, old: str, new: str) -> str:
    return new + path[len(old) :] if path == old or path.startswith(old + os.sep) else path


def _shadows_source(path: str) -> bool:
    """A compiled module named like a Python file beside it (``m.cpython-311-….so`` by ``m.py``,
    a project that compiles its own sources): Python would import it instead of the file."""
    folder, name = os.path.split(path)
    return os.path.isfile(os.path.join(folder, name.split(".", 1)[0] + ".py"))


def _large_data(path: str) -> bool:
    return os.path.getsize(path) > COPY_LINK_BYTES and not path.endswith(dlbench_guard.CODE_SUFFIXES)


STAMPED_EVENTS = ('{"ev": "hello"', '{"ev": "collected"', '{"ev": "finish"')  # as the plugin writes them


def _phases(marks: list, result: dict) -> dict:
    """Seconds of each part of a run (the harness's overhead, measured: docs/PERFORMANCE.md):
    the supervisor's own (copy, session, check, cleanup), and within the session the child's,
    from the times its plugin stamps on its events (start: fork to the plugin attached;
    collect: pytest's start-up and collection, ``import`` the part of it executing the
    repository's own modules; tests; exit). Informational only: a child
    could forge its stamps, no verdict reads them."""
    phases = {name: round(t - marks[i][1], 4) for i, (name, t) in enumerate(marks[1:])}
    stamps = {"forked": result.get("forked")}
    for line in result.get("events", []):
        if line.startswith(STAMPED_EVENTS):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            stamps.setdefault(event.get("ev"), event.get("t"))
            if event.get("ev") == "collected" and isinstance(event.get("import_s"), float):
                phases.setdefault("import", event["import_s"])  # of collect: the repository's own modules
    names = [("start", "forked", "hello"), ("collect", "hello", "collected"), ("tests", "collected", "finish")]
    for name, a, b in names:
        if isinstance(stamps.get(a), float) and isinstance(stamps.get(b), float):
            phases[name] = round(stamps[b] - stamps[a], 4)
    return phases


def _settle_descriptors(null: int, report: int, repo: str) -> int:
    """The child's descriptors: the report pipe moved to a number the parent never had open,
    which is returned; every inherited one keeps its number, a read-only regular file outside
    the repository (a preloaded library's database: pyproj's proj.db) as it is, anything
    else (the parent's pipes and sockets, writable files) pointed at /dev/null.

    Objects inherited from the parent close their descriptor when the child drops them: had
    the number been closed, the child's own files would reuse it and be closed under it
    (torchgeo: pyproj's database held the number the report pipe took, and every session
    ended at collection on EBADF)."""
    inherited = _open_descriptors()
    moved = fcntl.fcntl(report, fcntl.F_DUPFD, max([*inherited, null]) + 1)
    for fd in inherited:
        if fd != null and not _read_only_file(fd, repo):
            os.dup2(null, fd)
    return moved


def _open_descriptors() -> list[int]:
    """This process's open descriptors beyond stdio."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:  # no /proc: probe
        names = [str(n) for n in range(3, 1024)]
    found = []
    for fd in sorted(int(n) for n in names if n.isdigit() and int(n) > 2):
        try:
            os.fstat(fd)  # the listing's own descriptor is closed by now
        except OSError:
            continue
        found.append(fd)
    return found


def _read_only_file(fd: int, repo: str) -> bool:
    try:
        mode, flags = os.fstat(fd).st_mode, fcntl.fcntl(fd, fcntl.F_GETFL)
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return False
    inside = path == repo or path.startswith(repo + os.sep)  # never a way back to the reference
    return stat.S_ISREG(mode) and flags & os.O_ACCMODE == os.O_RDONLY and not inside


def _append_canaries(path: str, source: str) -> None:
    """The canaries at the end of the test module they join (a copy of its own, if the
    project's file is a link), or in a new module; where they start is kept for the
    rewrite cache (``_cache_rewrites``)."""
    if os.path.islink(path):
        with open(path, "rb") as fh:
            content = fh.read()
        os.unlink(path)
        with open(path, "xb") as fh:
            fh.write(content)
    APPENDED.clear()
    with open(path, "ab") as fh:
        APPENDED[os.path.realpath(path)] = fh.tell()
        fh.write(source.encode())


def _copy_tree(src: str, dst: str, link_large: bool) -> list[str]:
    """Copy ``src`` to ``dst``; ``link_large``: large data files are symlinked instead (never
    source code: the candidate's process cannot read the original), and so are the project's
    built extension modules (large, and never the candidate's). The files linked."""
    linked = []

    def copy(s: str, d: str) -> None:
        if s.endswith(EXTENSION_SUFFIXES) and _shadows_source(s):
            return  # never imported in place of the source, where the candidate's code goes
        if link_large and (s.endswith(EXTENSION_SUFFIXES) or _large_data(s)):
            os.symlink(s, d)
            linked.append(s)
        else:
            shutil.copyfile(s, d)

    shutil.copytree(
        src,
        dst,
        symlinks=True,
        copy_function=copy,
        ignore=shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache"),
    )
    return linked


def _entry_point_plugins() -> list[str] | None:
    """Installed pytest plugins as ``-p module`` arguments, or None to let pytest scan.

    Scanning the installed distributions for entry points costs each candidate's pytest
    about a third of its start-up; the set cannot change inside one image, so the warm
    parent resolves it once and children load the same plugins by name."""
    found = importlib.metadata.entry_points()
    # a selectable collection from Python 3.10; before it, a dict of group → entry points
    points = found.select(group="pytest11") if hasattr(found, "select") else found.get("pytest11", [])
    if any(":" in point.value for point in points):  # an object, not a module: -p cannot name it
        return None
    return [arg for point in points for arg in ("-p", point.value)]


def _without_plugin(args: list[str], module: str) -> list[str]:
    """``args`` without the ``-p module`` pair."""
    at = next(i for i in range(len(args) - 1) if args[i : i + 2] == ["-p", module])
    return args[:at] + args[at + 2 :]


def _plugin_folders(args: list[str]) -> dict[str, str]:
    """``-p`` module → the folder of its top-level package (or its file), for the installed plugins."""
    folders = {}
    for module in args[1::2]:
        try:
            origin = (importlib.util.find_spec(module.split(".")[0]) or types.SimpleNamespace(origin=None)).origin
        except (ImportError, ValueError):
            continue
        if origin:
            folders[module] = os.path.dirname(origin) + os.sep if origin.endswith("__init__.py") else origin
    return folders


def _snapshot(root: str) -> dict[str, tuple]:
    """(inode, ctime, size, symlink target) of every file: any write, rename or chmod shows."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
            found[os.path.relpath(path, root)] = (st.st_ino, st.st_ctime_ns, st.st_size, link)
    return found


def _pids() -> list[int]:
    return [int(p) for p in _listdir("/proc") if p.isdigit()]


def _other_processes() -> list[int]:
    me = os.getpid()
    return [p for p in _pids() if p not in (1, me) and _state(p) != "Z"]


def _descendants(root: int) -> list[int]:
    parents = {}
    for pid in _pids():
        ppid = _ppid(pid)
        if ppid is not None:
            parents[pid] = ppid
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier and pid not in found}
        found |= frontier
    return [p for p in found if _state(p) != "Z"]


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _state(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def _ppid(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[1]) if fields else None


def _try_flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _stdlib_modules() -> set[str]:
    """The standard library's top-level names (``sys.stdlib_module_names`` from Python 3.10;
    before it, the modules in the interpreter's own library folder)."""
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return set(names)
    import sysconfig  # noqa: PLC0415 - only images older than Python 3.10 get here

    folders = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
    found = {n.split(".")[0] for folder in folders for n in _listdir(folder) if not n.startswith("site-packages")}
    found |= {n.split(".")[0] for n in _listdir(os.path.join(sysconfig.get_paths()["stdlib"], "lib-dynload"))}
    return found | set(sys.builtin_module_names)


def _exit_code(status: int) -> int:
    """``os.waitstatus_to_exitcode`` (Python 3.9): the exit status, or minus the killing signal."""
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _exit_fd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (``os.pidfd_open``: Python 3.9,
    Linux 5.3); None where there is none, and the watcher polls instead."""
    opener = getattr(os, "pidfd_open", None)
    try:
        return opener(pid) if opener is not None else None
    except OSError:
        return None


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _force_rmtree(path: str) -> None:
    def unlock(func, target, _exc):
        _try(os.chmod, os.path.dirname(target), 0o700)
        _try(os.chmod, target, 0o700)
        _try(func, target)

    if os.path.islink(path) or not os.path.isdir(path):
        _try(os.unlink, path)
    else:
        shutil.rmtree(path, onerror=unlock)  # 3.11: onerror (onexc is 3.12+)


def _try(func, *args) -> None:
    try:
        func(*args)
    except OSError:
        pass


def _reply(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    if os.environ.get(IN_CANDIDATE):  # Lightning's DDP launcher re-runs ``sys.argv``: it would wipe the work dir
        sys.stderr.write(
            "dlbench supervisor: started again from inside a test (its command line re-executed); refused\n"
        )
        return 2
    parser = argparse.ArgumentParser(description="dlbench test supervisor")
    parser.add_argument("mode", choices=["serve", "once"])
    parser.add_argument("--request", help="once: the request as base64 JSON")
    parser.add_argument("--repo", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--plugin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin.py"))
    parser.add_argument("--preload", default="", help="modules to import once, comma-separated")
    parser.add_argument(
        "--discover", action="store_true", help="also preload the project's installed third-party imports"
    )
    parser.add_argument(
        "--skip-preload",
        action="append",
        default=[],
        help="never preload (its import started a thread that stays busy or changed the environment)",
    )
    parser.add_argument("--sandboxed", action="store_true", help="alone in a container: may kill every other process")
    parser.add_argument(
        "--private", action="append", help="a module requests may rewrite; given: the others are compiled once"
    )
    args = parser.parse_args(argv)
    sup = Supervisor(args.repo, args.work, args.plugin, args.sandboxed, args.private)
    if args.mode == "once":
        _reply(sup.run(json.loads(base64.b64decode(args.request))))
        return 0
    modules = [m for m in args.preload.split(",") if m] + (
        _in_child(project_imports, sup.repo, failed=[]) if args.discover else []
    )
    try:
        loaded = sup.preload(list(dict.fromkeys(modules)), args.skip_preload)
    except ForkUnsafe as exc:  # start afresh, single-threaded, without them
        command = [sys.executable, os.path.abspath(__file__), *(argv if argv is not None else sys.argv[1:])]
        os.execv(sys.executable, [*command, *(arg for name in exc.modules for arg in ("--skip-preload", name))])
    ready = {"ready": True, "pid": os.getpid(), "preloaded": loaded, "not_preloaded": args.skip_preload}
    _reply(dict(ready, landlock=dlbench_guard.landlock_abi()))
    while line := sys.stdin.readline():
        req = json.loads(line)
        if req.get("op") == "exit":
            break
        result = sup.run(req)
        _reply(result)
        if result["restart"]:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
