"""The dynamic check (``mine.dynamic_check``): drop tasks their listed tests never execute.

A task stays when one of its listed tests executed the function in the traced run (at any
depth: a test that reaches it through a helper still tests it), or when none of its tests
ran to a verdict there (not traced, skipped, timed out): the trace cannot contradict what
it did not see. Only tests that passed or failed count: both ran their body. The dropped
tasks are written with the reason, not lost.
"""

from __future__ import annotations

import logging
from pathlib import Path

from dlbench.records import FunctionRecord, TraceRecord, UntracedTask
from dlbench.store import read_jsonl, write_jsonl

log = logging.getLogger(__name__)

RAN = frozenset({"passed", "failed"})


def dynamic_check(functions: list[FunctionRecord], traces: list[TraceRecord]) -> tuple[list[FunctionRecord], list[UntracedTask]]:  # fmt: skip
    """(kept tasks, dropped tasks with their reason)."""
    ran = {t.node_id: set(t.executed) for t in traces if t.outcome in RAN}
    kept: list[FunctionRecord] = []
    dropped: list[UntracedTask] = []
    for fn in functions:
        key = f"{fn.path}:{fn.qualname}"
        traced = [test for test in fn.tests if test in ran]
        if not traced or any(key in ran[test] for test in traced):
            kept.append(fn)
        else:
            dropped.append(_untraced(fn, traced))
    return kept, dropped


def _untraced(fn: FunctionRecord, traced: list[str]) -> UntracedTask:
    reason = f"{len(traced)} of its {len(fn.tests)} listed tests ran with the tracer and none executed {fn.qualname}"
    return UntracedTask(
        task_id=fn.task_id,
        repo=fn.repo,
        path=fn.path,
        qualname=fn.qualname,
        tests=fn.tests,
        traced=traced,
        reason=reason,
    )


def check_functions_file(functions_jsonl: str | Path, trace_jsonl: str | Path, out: str | Path, untraced: str | Path) -> int:  # fmt: skip
    """Rule ``check_functions``: statically mined functions + trace → kept and dropped tasks."""
    kept, dropped = dynamic_check(
        read_jsonl(functions_jsonl, FunctionRecord),
        read_jsonl(trace_jsonl, TraceRecord),
    )
    log.info("dynamic check: %d tasks kept, %d dropped", len(kept), len(dropped))
    write_jsonl(untraced, dropped)
    return write_jsonl(out, kept)
