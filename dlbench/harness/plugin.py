"""pytest plugin that streams per-test outcomes to the supervisor (runs inside the sandbox).

Standalone on purpose (stdlib + pytest): it is shipped into the image as trusted support
code (``/opt/dlbench``) and loaded by the supervisor *before* any project module, so the
references it checks are captured before candidate code can run.

Each event is one JSON line written to an inherited pipe (never to stdout, which the
candidate shares): ``hello`` (before pytest starts), ``collect_error``, ``collected``, one
``report`` per test phase as it happens, ``tamper`` when a watched pytest internal has been
replaced since ``hello``, and ``finish``. The host grades from these events only.
It also keeps only the items under the task's node ids (so an id pytest cannot find is a
missing test, not an aborted session) and sets the traceback style (the terminal
reporter is off).
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import sys

import _pytest.python
import _pytest.reports
import _pytest.runner
import pluggy
import pytest

_FD: int | None = None
_WRITE = os.write  # captured before candidate code can replace os.write
_BASELINE: dict[str, str] = {}
TEXT_LIMIT = 4000  # tail of a failure's traceback kept in its event
_SELECTED: list[str] = []


def _watched() -> dict[str, object]:
    """Objects whose replacement would let code turn failures into passes."""
    return {
        "runner.call_and_report": _pytest.runner.call_and_report,
        "runner.runtestprotocol": _pytest.runner.runtestprotocol,
        "runner.pytest_runtest_makereport": _pytest.runner.pytest_runtest_makereport,
        "runner.CallInfo.from_call": _pytest.runner.CallInfo.__dict__["from_call"],
        "reports.TestReport.from_item_and_call": _pytest.reports.TestReport.__dict__["from_item_and_call"],
        "reports.TestReport.__init__": _pytest.reports.TestReport.__init__,
        "reports.BaseReport.passed": _pytest.reports.BaseReport.__dict__["passed"],
        "reports.BaseReport.failed": _pytest.reports.BaseReport.__dict__["failed"],
        "python.Function.runtest": _pytest.python.Function.runtest,
        "python.pytest_pyfunc_call": _pytest.python.pytest_pyfunc_call,
        "pluggy.HookCaller.__call__": pluggy.HookCaller.__call__,
        "pluggy.PluginManager._hookexec": pluggy.PluginManager._hookexec,
        "builtins.__import__": builtins.__import__,
        "pytest.fail": pytest.fail,
        "plugin.send": send,
        "plugin.pytest_runtest_logreport": pytest_runtest_logreport,
        "plugin.pytest_sessionfinish": pytest_sessionfinish,
        "plugin.check": check,
    }


def _fingerprint(obj: object) -> str:
    target = getattr(obj, "fget", obj)  # properties: their getter
    target = getattr(target, "__func__", target)  # classmethods
    code = getattr(target, "__code__", None)
    body = code.co_code + repr(code.co_consts).encode() if code is not None else b""
    return f"{id(target):x}:{hashlib.sha1(body).hexdigest()[:12]}"


def fingerprints() -> dict[str, str]:
    return {name: _fingerprint(obj) for name, obj in _watched().items()}


def attach(fd: int, selected: list[str]) -> None:
    """Called by the supervisor in the child before ``pytest.main`` (so before any project
    module, initial conftests included, is imported): fix the baseline and say hello.
    Only items under ``selected`` node ids run (ids pytest cannot find become missing
    tests instead of aborting the whole session)."""
    global _FD
    _FD = fd
    _SELECTED[:] = selected
    _BASELINE.clear()
    _BASELINE.update(fingerprints())
    send({"ev": "hello", "pid": os.getpid(), "python": sys.version.split()[0], "pytest": pytest.__version__})


def send(event: dict) -> None:
    if _FD is None:
        return
    data = (json.dumps(event, default=str) + "\n").encode()
    view = memoryview(data)
    while view:
        view = view[_WRITE(_FD, view) :]


def check(stage: str) -> None:
    """Report watched objects replaced since ``hello``."""
    changed = sorted(name for name, fp in fingerprints().items() if _BASELINE.get(name) != fp)
    if changed:
        send({"ev": "tamper", "stage": stage, "what": changed})


def _exception(report: pytest.TestReport | pytest.CollectReport) -> str | None:
    if not report.failed:
        return None
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message[:2000]
    return str(report.longrepr).strip().splitlines()[-1][:2000] if report.longrepr else None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.option.tbstyle = "short"  # ``--tb`` belongs to the terminal plugin, which is off


@pytest.hookimpl(tryfirst=True)
def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        send(
            {
                "ev": "collect_error",
                "nodeid": report.nodeid,
                "exc": _exception(report),
                "text": str(report.longrepr)[-TEXT_LIMIT:],
            }
        )


def selects(node_id: str, selected: list[str]) -> bool:
    """``node_id`` is a selected id, one of its parametrized cases, or inside a selected class."""
    return any(node_id == s or node_id.startswith((s + "[", s + "::")) for s in selected)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _SELECTED:
        return  # not attached (the supervisor's warm-up run): run everything
    keep = [item for item in items if selects(item.nodeid, _SELECTED)]
    dropped = [item for item in items if not selects(item.nodeid, _SELECTED)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    check("collection")
    send({"ev": "collected", "ids": [item.nodeid for item in session.items]})


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    send(
        {
            "ev": "report",
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "xfail": hasattr(report, "wasxfail"),
            "duration": round(report.duration, 6),
            "exc": _exception(report),
            "text": str(report.longrepr)[-TEXT_LIMIT:] if report.failed else None,
        }
    )
    if report.when == "teardown":
        check(report.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    check("finish")
    send({"ev": "finish", "exitstatus": int(exitstatus)})
