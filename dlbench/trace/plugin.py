"""pytest plugin: the repository functions each test executes (runs inside the project image).

Standalone on purpose (stdlib + pytest): it is copied into a container of the project image
at run time (never baked in, so the image stays the one evaluation uses) and loaded with
``-p dlbench_tracer``. A profile hook (``sys.setprofile``: the image's Python 3.11 has no
``sys.monitoring``) sees every Python call; a call counts when its code is a *candidate*:
a top-level function or a method of a top-level class (``path:Qualname``, as mining names
them) in a repository file that is not test code (``--trace-support`` lists those files).

Per test, three sets: ``executed`` (every candidate that ran, at any depth), ``direct``
(candidates whose nearest calling repository frame is test code: the test, its helpers or
its fixtures; frames outside the repository and nested functions of library code, such as
decorator wrappers, are passed through) and ``called`` (``direct`` during the test body
alone). Calls made while a fixture is set up count for every test that uses the fixture,
also when pytest reuses a cached value of a wider scope: the fixture ran for them all.

Hypothesis's timing checks are off (tracing slows every call). Each test is limited to
``--trace-timeout`` seconds (an alarm fails it) and the session
stops after ``--trace-budget`` seconds; one JSON line per test is written to
``--trace-out`` as soon as the test finishes, so a killed run keeps what it traced.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

import pytest

TEST, LIBRARY, CANDIDATE, OUTSIDE = "test", "library", "candidate", "outside"
NOT_CANDIDATE = ("<", ">")  # <module>, <locals>, <lambda>, <listcomp>, <genexpr>


class TraceTimeout(BaseException):
    """Raised in a test that overran its time (BaseException: ``except Exception`` cannot hide it)."""


class Sets:
    """What ran while one test phase or one fixture's setup was active."""

    __slots__ = ("executed", "direct")

    def __init__(self) -> None:
        self.executed: set[str] = set()
        self.direct: set[str] = set()


class Tracer:
    """Classifies code objects once and records candidate calls into the active ``Sets``."""

    def __init__(self, root: str, support: set[str]):
        self.root = root.rstrip(os.sep) + os.sep
        self.support = support
        self.sink = Sets()  # calls outside any test (collection) land here and are dropped
        self._kinds: dict[object, tuple[str, str | None]] = {}

    def kind(self, code) -> tuple[str, str | None]:
        """(TEST | LIBRARY | CANDIDATE | OUTSIDE, ``path:qualname`` for a candidate)."""
        found = self._kinds.get(code)
        if found is None:
            found = self._kinds[code] = self._classify(code.co_filename, code.co_qualname)
        return found

    def _classify(self, filename: str, qualname: str) -> tuple[str, str | None]:
        if not filename.startswith(self.root):
            return OUTSIDE, None
        path = filename[len(self.root) :].replace(os.sep, "/")
        if path in self.support:
            return TEST, None
        if qualname.count(".") > 1 or any(c in qualname for c in NOT_CANDIDATE):
            return LIBRARY, None
        return CANDIDATE, f"{path}:{qualname}"

    def profile(self, frame, event: str, arg) -> None:
        if event != "call":
            return
        kind, key = self.kind(frame.f_code)
        if kind != CANDIDATE:
            return
        sink = self.sink
        sink.executed.add(key)
        if key not in sink.direct and self._from_test(frame.f_back):
            sink.direct.add(key)

    def _from_test(self, frame) -> bool:
        """Is the nearest calling frame that decides (test code or a candidate) test code?"""
        while frame is not None:
            kind = self.kind(frame.f_code)[0]
            if kind == TEST:
                return True
            if kind == CANDIDATE:
                return False
            frame = frame.f_back
        return False

    def start(self) -> None:
        threading.setprofile(self.profile)
        sys.setprofile(self.profile)

    def rearm(self) -> bool:
        """Install the hook again if something removed it (a test's own ``sys.setprofile``,
        or CPython, which drops a hook that raised: a timeout's alarm can fire inside it)."""
        if sys.getprofile() == self.profile:
            return False
        self.start()
        return True

    def stop(self) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


class TracePlugin:
    """Per test: sets per phase and per fixture, outcome, time; one JSON line when done."""

    def __init__(self, tracer: Tracer, out, timeout_s: float, budget_s: float):
        self.tracer = tracer
        self.out = out
        self.timeout_s = timeout_s
        self.budget_s = budget_s
        self.started = time.monotonic()
        self.fixtures: dict[int, Sets] = {}  # id(FixtureDef) → what its setup ran
        self.outcome = "passed"
        self.timed_out = False
        self._body = Sets()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        # a fresh record each time it runs: the value pytest caches is the last one's
        outer = self.tracer.sink
        self.tracer.sink = self.fixtures[id(fixturedef)] = Sets()
        try:
            yield
        finally:
            self.tracer.sink = outer

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        around, self._body = Sets(), Sets()  # the body stays empty when setup fails
        self.outcome, self.timed_out = "passed", False
        start = time.monotonic()
        if self.tracer.rearm():  # said in the run's log: the test before lost part of its trace
            sys.stderr.write(f"dlbench-trace: profile hook was removed; installed again before {item.nodeid}\n")
        self.tracer.sink = around
        signal.signal(signal.SIGALRM, self._overran)
        signal.setitimer(signal.ITIMER_REAL, self.timeout_s)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.tracer.sink = Sets()
        self._write(item, around, self._body, time.monotonic() - start)
        if time.monotonic() - self.started > self.budget_s:
            item.session.shouldstop = f"trace budget of {self.budget_s:.0f}s spent"

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        around, self._body = self.tracer.sink, Sets()
        self.tracer.sink = self._body
        try:
            yield
        finally:
            self.tracer.sink = around

    def pytest_runtest_logreport(self, report) -> None:
        if report.outcome != "passed" and self.outcome == "passed":
            self.outcome = report.outcome if report.when == "call" or report.outcome == "skipped" else "error"

    def _overran(self, signum, frame) -> None:
        self.timed_out = True
        raise TraceTimeout(f"test ran longer than {self.timeout_s:.0f}s (trace timeout)")

    def _write(self, item, around: Sets, body: Sets, seconds: float) -> None:
        parts = [around, body, *self._fixture_sets(item)]
        record = {
            "node_id": node_id(item, self.tracer.root),
            "outcome": "timeout" if self.timed_out else self.outcome,
            "seconds": round(seconds, 3),
            "called": sorted(body.direct),
            "direct": sorted(set().union(*(p.direct for p in parts))),
            "executed": sorted(set().union(*(p.executed for p in parts))),
        }
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    def _fixture_sets(self, item) -> list[Sets]:
        """What the setup of each fixture the test uses ran (cached wider-scope ones included)."""
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            return []
        used = (defs[-1] for name in item.fixturenames if (defs := info.name2fixturedefs.get(name)))
        return [self.fixtures[id(d)] for d in used if id(d) in self.fixtures]


_KEY = pytest.StashKey[TracePlugin]()


def node_id(item, root: str) -> str:
    """The node id relative to the repository root, whatever pytest's rootdir is."""
    path = os.path.relpath(str(item.path), root).replace(os.sep, "/")
    _, sep, rest = item.nodeid.partition("::")
    return f"{path}{sep}{rest}"


def pytest_addoption(parser) -> None:
    group = parser.getgroup("dlbench-trace")
    group.addoption("--trace-out", help="JSON Lines written here, one line per test")
    group.addoption("--trace-support", help="JSON list of test-code files (relative paths)")
    group.addoption("--trace-root", help="repository root (default: pytest's rootdir)")
    group.addoption("--trace-timeout", type=float, default=60.0, help="seconds per test")
    group.addoption("--trace-budget", type=float, default=3600.0, help="seconds for the session")


def pytest_configure(config) -> None:
    out_path = config.getoption("--trace-out")
    if not out_path:
        return
    with open(config.getoption("--trace-support"), encoding="utf-8") as fh:
        support = set(json.load(fh))
    root = os.path.abspath(config.getoption("--trace-root") or str(config.rootpath))
    tracer = Tracer(root, support)
    out = open(out_path, "a", encoding="utf-8")  # noqa: SIM115 (closed at unconfigure)
    plugin = TracePlugin(
        tracer,
        out,
        config.getoption("--trace-timeout"),
        config.getoption("--trace-budget"),
    )
    config.pluginmanager.register(plugin, "dlbench-trace")
    config.stash[_KEY] = plugin
    _relax_hypothesis()


def _relax_hypothesis() -> None:
    """Tracing slows every call: Hypothesis's timing checks (deadline, too_slow) would fail
    tests that pass untraced, so they are off (a profile the project loads later wins)."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    settings.register_profile("dlbench-trace", deadline=None, suppress_health_check=list(HealthCheck))
    settings.load_profile("dlbench-trace")


def pytest_collection_finish(session) -> None:
    plugin = session.config.stash.get(_KEY, None)
    if plugin is not None:  # after collection: importing the test modules is no test's work
        plugin.tracer.start()


def pytest_unconfigure(config) -> None:
    plugin = config.stash.get(_KEY, None)
    if plugin is not None:
        plugin.tracer.stop()
        plugin.out.close()
