"""The dynamic check and the trace's merging of parametrized variants (records only)."""

from __future__ import annotations

import json

from dlbench.mine.trace_check import dynamic_check
from dlbench.records import FunctionRecord, TraceRecord
from dlbench.trace.truth import trace_records

KEY = "pkg/ops.py:f"


def task(tests: list[str]) -> FunctionRecord:
    return FunctionRecord(
        task_id=f"acme__p:{KEY}", repo="acme/p", sha=None, path="pkg/ops.py", function="f", class_name=None,
        qualname="f", signature="def f():", source="", docstring=None, class_context=None, start_line=1,
        end_line=2, tests=tests,
    )  # fmt: skip


def trace(node_id: str, outcome: str, executed: list[str]) -> TraceRecord:
    return TraceRecord(
        repo="acme/p",
        node_id=node_id,
        outcome=outcome,
        seconds=0.1,
        called=[],
        direct=[],
        executed=executed,
    )


def test_dropped_only_when_tests_ran_and_none_executed_it() -> None:
    traces = [
        trace("t::a", "passed", []),
        trace("t::b", "failed", []),
        trace("t::c", "passed", [KEY]),
    ]
    traces += [trace("t::s", "skipped", []), trace("t::x", "timeout", [])]
    kept, dropped = dynamic_check([task(["t::a", "t::c"]), task(["t::a", "t::b", "t::gone"])], traces)
    assert [k.tests for k in kept] == [["t::a", "t::c"]]  # one listed test executed it
    assert dropped[0].traced == ["t::a", "t::b"] and "2 of its 3 listed tests" in dropped[0].reason


def test_kept_when_no_listed_test_ran_to_a_verdict() -> None:
    traces = [trace("t::s", "skipped", []), trace("t::x", "timeout", [])]
    kept, dropped = dynamic_check([task(["t::s", "t::x", "t::untraced"])], traces)
    assert len(kept) == 1 and dropped == []


def test_variants_merge_with_the_worst_outcome_and_only_candidates() -> None:
    raw = [
        {"node_id": "t.py::test_p[1]", "outcome": "passed", "seconds": 1.0, "called": [KEY], "direct": [KEY], "executed": [KEY, "x.py:g"]},
        {"node_id": "t.py::test_p[2]", "outcome": "failed", "seconds": 2.0, "called": [], "direct": [], "executed": ["pkg/ops.py:h"]},
    ]  # fmt: skip
    (merged,) = trace_records([json.dumps(r) for r in raw], "acme/p", frozenset({KEY, "pkg/ops.py:h"}))
    assert (merged.node_id, merged.outcome, merged.variants, merged.seconds) == (
        "t.py::test_p",
        "failed",
        2,
        3.0,
    )
    assert merged.executed == [KEY, "pkg/ops.py:h"] and merged.direct == [KEY]
