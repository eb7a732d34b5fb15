"""A task's test set is what gold shows, and the seeded sample of tasks a run evaluates.

A test that gold skips, xfails, sees deselected by the project's own configuration, or
that fails for want of the network (the sandbox has none), is not part of the task: it
is dropped with the cause gold's run recorded. Models are graded on the tests kept, so a
candidate that makes a kept test skip does not pass.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping

from dlbench.harness.verdict import NEEDS_NETWORK
from dlbench.records import BenchmarkTask, EvalStatus, Evaluation, TestOutcome

NOT_RUN = frozenset({TestOutcome.SKIPPED, TestOutcome.XFAIL, TestOutcome.DESELECTED})
FAILED = frozenset({TestOutcome.FAILED, TestOutcome.ERROR})
COMPLETE = frozenset({EvalStatus.PASS, EvalStatus.FAIL})  # the grader found the run whole


def dropped_tests(gold: Iterable[Evaluation]) -> dict[str, str]:
    """Node id → why gold's runs show it is not part of the task (first cause seen)."""
    dropped: dict[str, str] = {}
    for evaluation in gold:
        for node_id, outcome in evaluation.tests.items():
            cause = evaluation.causes.get(node_id, outcome.value)
            if outcome in NOT_RUN or (outcome in FAILED and cause.startswith(NEEDS_NETWORK)):
                dropped.setdefault(node_id, cause)
    return dropped


def kept_tests(tests: list[str], dropped: Mapping[str, str]) -> list[str]:
    return [t for t in tests if t not in dropped]


def passes_on(evaluation: Evaluation, kept: list[str]) -> bool:
    """Every kept test passed, in a run the grader found complete."""
    return evaluation.status in COMPLETE and bool(kept) and all(evaluation.tests.get(t) == TestOutcome.PASSED for t in kept)


def gold_test_sets(tasks: Mapping[str, BenchmarkTask], gold: Iterable[Evaluation]) -> dict[str, BenchmarkTask]:
    """The tasks with only the tests gold kept (a task gold kept nothing of stays whole:
    it is unusable anyway, and its candidates still get a verdict)."""
    by_task: dict[str, list[Evaluation]] = defaultdict(list)
    for evaluation in gold:
        by_task[evaluation.task_id].append(evaluation)
    trimmed = {}
    for task_id, task in tasks.items():
        kept = kept_tests(task.tests, dropped_tests(by_task[task_id]))
        trimmed[task_id] = task.model_copy(update={"tests": kept}) if kept else task
    return trimmed


def sample_task_ids(task_ids: Iterable[str], size: int, seed: int) -> set[str]:
    """A seeded sample of ``size`` task ids (all when ``size`` is 0), the same for every model:
    ids ranked by a hash of (seed, id), so it depends on no order of the input."""
    ids = sorted(set(task_ids))
    if size == 0 or size >= len(ids):
        return set(ids)
    return set(sorted(ids, key=lambda t: hashlib.sha256(f"{seed}:{t}".encode()).hexdigest())[:size])
