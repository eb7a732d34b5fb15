"""The tracer's raw lines as ``TraceRecord``s, and the static call graph scored against them.

Raw lines carry pytest's node ids (one per parametrized variant) and every function the
plugin took for a candidate; records carry mining's node ids (variants merged: what one of
them executed, the test executed) and only keys the symbol table knows, so a set
difference between a ``CallRecord`` and a ``TraceRecord`` is a real disagreement.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from dlbench.records import CallRecord, TraceRecord

log = logging.getLogger(__name__)

_PARAMS = re.compile(r"\[.*\]$")
# Worst first: a test's merged outcome is the worst of its variants'.
OUTCOMES = ("timeout", "error", "failed", "passed", "skipped")
TraceField = Literal["called", "direct", "executed"]
FIELDS: tuple[TraceField, ...] = ("called", "direct", "executed")


def collapse(node_id: str) -> str:
    """``f.py::test_x[cpu-2]`` → ``f.py::test_x`` (mining's node id of the function)."""
    return _PARAMS.sub("", node_id)


def trace_records(lines: Iterable[str], repo: str, candidates: frozenset[str]) -> list[TraceRecord]:
    """Merge the plugin's lines by mining's node id, keeping only candidate functions."""
    merged: dict[str, TraceRecord] = {}
    for line in lines:
        if not line.strip():
            continue
        raw = json.loads(line)
        node_id = collapse(raw["node_id"])
        sets = {name: sorted(set(raw[name]) & candidates) for name in FIELDS}
        record = TraceRecord(
            repo=repo,
            node_id=node_id,
            outcome=raw["outcome"],
            seconds=raw["seconds"],
            **sets,
        )
        merged[node_id] = _merge(merged[node_id], record) if node_id in merged else record
    return [merged[key] for key in sorted(merged)]


def _merge(a: TraceRecord, b: TraceRecord) -> TraceRecord:
    sets = {name: sorted(set(getattr(a, name)) | set(getattr(b, name))) for name in FIELDS}
    outcome = min(a.outcome, b.outcome, key=OUTCOMES.index)
    return a.model_copy(update={"outcome": outcome, "variants": a.variants + b.variants, "seconds": a.seconds + b.seconds, **sets})  # fmt: skip


@dataclass(frozen=True, slots=True)
class Score:
    """(test, function) pairs: the static graph's against the trace's, over the same tests."""

    tests: int
    true_pos: int
    false_pos: int
    false_neg: int

    @property
    def precision(self) -> float:
        found = self.true_pos + self.false_pos
        return self.true_pos / found if found else 1.0

    @property
    def recall(self) -> float:
        truth = self.true_pos + self.false_neg
        return self.true_pos / truth if truth else 1.0


def score(static: list[CallRecord], traces: list[TraceRecord], field: TraceField) -> Score:
    """Pairs over the tests both know whose traced run passed (a failed run stops early,
    so its trace is not the whole truth); ``field`` names the dynamic set compared."""
    calls = {record.node_id: set(record.calls) for record in static}
    tp = fp = fn = tests = 0
    for trace in traces:
        if trace.outcome != "passed" or trace.node_id not in calls:
            continue
        predicted, truth = calls[trace.node_id], set(getattr(trace, field))
        tests += 1
        tp += len(predicted & truth)
        fp += len(predicted - truth)
        fn += len(truth - predicted)
    return Score(tests, tp, fp, fn)
