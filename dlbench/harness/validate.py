"""Which benchmark tasks are usable: gold must pass (every run), null must fail.

``results/validation.csv`` has one row per task with ``usable`` and, when not, the first
reason in this order: ``image`` (the project image or checkout is unusable), ``no gold``
(no gold evaluation), ``gold fails``, ``flaky`` (gold passed in some runs only),
``no null`` (no null evaluation: nothing shows the tests can fail), ``null passes``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dlbench.records import BenchmarkTask, EvalStatus, Evaluation
from dlbench.store import iter_jsonl, write_frame

COLUMNS = ["task_id", "repo", "usable", "reason", "gold_runs", "gold_passes", "gold_status", "gold_exception", "null_status"]


def task_row(task: BenchmarkTask, gold: list[Evaluation], null: list[Evaluation]) -> dict:
    passes = sum(e.passed for e in gold)
    failing = next((e for e in gold if not e.passed), None)
    row = {
        "task_id": task.task_id,
        "repo": task.repo,
        "gold_runs": len(gold),
        "gold_passes": passes,
        "gold_status": failing.status.value if failing else (EvalStatus.PASS.value if gold else None),
        "gold_exception": failing.exception if failing else None,
        "null_status": ",".join(sorted({e.status.value for e in null})) or None,
    }
    reason = _reason(gold, null, passes, failing)
    return row | {"usable": reason is None, "reason": reason}


def _reason(gold: list[Evaluation], null: list[Evaluation], passes: int, failing: Evaluation | None) -> str | None:
    if any(e.status == EvalStatus.IMAGE_ERROR for e in gold):
        return f"image: {next(e.detail for e in gold if e.status == EvalStatus.IMAGE_ERROR)}"
    if not gold:
        return "no gold: no gold evaluation"
    if passes == 0:
        return f"gold fails: {failing.status.value}: {failing.exception or failing.detail}"
    if passes < len(gold):
        return f"flaky: gold passed {passes}/{len(gold)} runs ({failing.status.value}: {failing.exception or failing.detail})"
    if not null:
        return "no null: no null evaluation, so nothing shows the tests can fail"
    if any(e.passed for e in null):
        return "null passes: the tests do not notice a missing body"
    return None


def validation_table(tasks: Iterable[BenchmarkTask], gold: Iterable[Evaluation], null: Iterable[Evaluation]) -> pd.DataFrame:
    by_task: dict[str, dict[str, list[Evaluation]]] = defaultdict(lambda: {"gold": [], "null": []})
    for key, evaluations in (("gold", gold), ("null", null)):
        for e in evaluations:
            by_task[e.task_id][key].append(e)
    rows = [task_row(t, by_task[t.task_id]["gold"], by_task[t.task_id]["null"]) for t in tasks]
    return pd.DataFrame(rows, columns=COLUMNS)


def validate_tasks(benchmark: Path, gold_files: Iterable[Path], null_files: Iterable[Path], out: Path) -> pd.DataFrame:
    """The ``validate_tasks`` rule."""
    tasks = list(iter_jsonl(benchmark, BenchmarkTask))
    gold = [e for f in gold_files for e in iter_jsonl(f, Evaluation)]
    null = [e for f in null_files for e in iter_jsonl(f, Evaluation)]
    table = validation_table(tasks, gold, null)
    write_frame(out, table)
    return table
