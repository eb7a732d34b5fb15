"""Which benchmark tasks are usable: gold must pass (every run), null must fail.

A task's tests are those gold's runs keep (``testset``: skipped, xfailed, deselected,
network-bound, flaky and always-failing tests, and those a gold run stopped at its time
limit never finished, are dropped, each with its cause in ``dropped``).
``results/validation.csv`` has one row per task with ``usable`` and, when not, the first reason in this order: ``image`` (the project image or checkout is
unusable), ``not sampled`` (outside ``dlbench.subset``'s tasks), ``no gold`` (no gold evaluation),
``gold fails`` (too few tests left, some dropped because gold failed them in every run:
the first one's cause), ``too few tests`` (fewer than ``mine.min_tests`` kept), ``gold
fails`` (a kept test failed in every run: the run did not report it whole), ``flaky``
(gold passed in some runs only: another did not finish), ``no null`` (nothing shows the tests can fail),
``null passes`` (on the tests the other models are graded on: with ``evaluate.test_budget_s``,
those of the kept tests within the budget).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from dlbench.config import EvaluateConfig
from dlbench.harness.testset import (
    COMPLETE,
    GOLD_FAILS,
    dropped_of,
    dropped_tests,
    graded_tests,
    kept_tests,
    passes_on,
    tests_represented,
)
from dlbench.records import BenchmarkTask, EvalStatus, Evaluation
from dlbench.store import iter_jsonl, write_frame
from dlbench.subset import scored_task_ids

COLUMNS = [
    "task_id", "repo", "usable", "reason", "tests", "tests_kept", "dropped", "gold_runs", "gold_passes", "gold_status",
    "gold_exception", "null_status",
]  # fmt: skip


def task_row(
    task: BenchmarkTask, gold: list[Evaluation], null: list[Evaluation], min_tests: int, sampled: bool = True,
    budget_s: float = 0.0,
) -> dict:  # fmt: skip
    """``budget_s``: ``evaluate.test_budget_s``; null is judged on the tests every other model
    is graded on (gold's kept tests within the budget), so no task counts as usable whose
    graded tests a missing body passes."""
    kept = kept_tests(task.tests, dropped_tests(gold), gold)
    dropped = dropped_of(task.tests, dropped_tests(gold), kept)
    failing = [e for e in gold if not passes_on(e, kept)]
    row = {
        "task_id": task.task_id,
        "repo": task.repo,
        "tests": len(task.tests),
        "tests_kept": tests_represented(task.tests, kept),
        "dropped": "; ".join(f"{t}: {why}" for t, why in dropped.items()) or None,
        "gold_runs": len(gold),
        "gold_passes": len(gold) - len(failing),
        "gold_status": failing[0].status.value if failing else (EvalStatus.PASS.value if gold else None),
        "gold_exception": failing[0].exception if failing else None,
        "null_status": ",".join(sorted({e.status.value for e in null})) or None,
    }
    graded = graded_tests(kept, gold, null, budget_s)
    reason = _reason(gold, null, row["tests_kept"], dropped, failing, min_tests, sampled, kept, graded)
    return row | {"usable": reason is None, "reason": reason}


def _reason(
    gold: list[Evaluation], null: list[Evaluation], n_kept: int, dropped: Mapping[str, str], failing: list[Evaluation],
    min_tests: int, sampled: bool, kept: list[str], graded: list[str],
) -> str | None:  # fmt: skip
    if any(e.status == EvalStatus.IMAGE_ERROR for e in gold):
        return f"image: {next(e.detail for e in gold if e.status == EvalStatus.IMAGE_ERROR)}"
    if not gold and not sampled:
        return (
            "not sampled: outside the tasks this run evaluates (evaluate.sample_tasks, sample_limit, task_ids, repos)"
        )
    if not gold:
        return "no gold: no gold evaluation"
    if n_kept < min_tests and (broken := [t for t, why in dropped.items() if why.startswith(GOLD_FAILS)]):
        return f"gold fails: {failure_cause(next(e for e in gold if e.status in COMPLETE), broken)}"
    if n_kept < min_tests:
        return f"too few tests: {n_kept} left, mine.min_tests is {min_tests} ({_dropped_summary(dropped)})"
    if len(failing) == len(gold):
        return f"gold fails: {failure_cause(failing[0], kept)}"
    if failing:
        passes = len(gold) - len(failing)
        return f"flaky: gold passed {passes}/{len(gold)} runs ({failure_cause(failing[0], kept)})"
    if not null:
        return "no null: no null evaluation, so nothing shows the tests can fail"
    if any(passes_on(e, kept) for e in null):
        return "null passes: the tests do not notice a missing body"
    if graded != kept and any(passes_on(e, graded) for e in null):
        return (
            f"null passes: the {len(graded)} of {len(kept)} kept tests within evaluate.test_budget_s (those the "
            "other models are graded on) do not notice a missing body"
        )
    return None


def failure_cause(evaluation: Evaluation, kept: list[str]) -> str:
    """``status: node: cause`` of the first kept test that did not pass (or the run's own detail)."""
    node = next((t for t in kept if t in evaluation.causes), None)
    if evaluation.status in (EvalStatus.FAIL, EvalStatus.TIMEOUT) and node is not None:
        return f"{evaluation.status.value}: {node}: {evaluation.causes[node]}"
    return f"{evaluation.status.value}: {evaluation.detail or evaluation.exception}"


def _dropped_summary(dropped: Mapping[str, str]) -> str:
    return "; ".join(f"{t}: {why}" for t, why in dropped.items()) or "none dropped"


def validation_table(
    tasks: Iterable[BenchmarkTask], gold: Iterable[Evaluation], null: Iterable[Evaluation], min_tests: int = 1,
    cfg: EvaluateConfig | None = None,
) -> pd.DataFrame:  # fmt: skip
    cfg = cfg or EvaluateConfig()
    tasks = list(tasks)
    by_task: dict[str, dict[str, list[Evaluation]]] = defaultdict(lambda: {"gold": [], "null": []})
    for key, evaluations in (("gold", gold), ("null", null)):
        for e in evaluations:
            by_task[e.task_id][key].append(e)
    sampled = sampled_ids(tasks, cfg)
    rows = [
        task_row(
            t,
            by_task[t.task_id]["gold"],
            by_task[t.task_id]["null"],
            min_tests,
            t.task_id in sampled,
            cfg.test_budget_s,
        )  # fmt: skip
        for t in tasks
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def sampled_ids(tasks: Iterable[BenchmarkTask], cfg: EvaluateConfig) -> set[str]:
    """The ids of the tasks the run evaluates (each repository's seeded sample, the run's subset)."""
    return scored_task_ids(tasks, cfg)


def validate_tasks(
    benchmark: Path, gold_files: Iterable[Path], null_files: Iterable[Path], out: Path, min_tests: int = 1,
    cfg: EvaluateConfig | None = None,
) -> pd.DataFrame:  # fmt: skip
    """The ``validate_tasks`` rule."""
    tasks = list(iter_jsonl(benchmark, BenchmarkTask))
    gold = [e for f in gold_files for e in iter_jsonl(f, Evaluation)]
    null = [e for f in null_files for e in iter_jsonl(f, Evaluation)]
    table = validation_table(tasks, gold, null, min_tests, cfg)
    write_frame(out, table)
    return table
