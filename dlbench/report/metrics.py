"""Scores of candidates: unbiased pass@k, run-to-run spread, and test pass ratio.

Counting rules (DESIGN.md "Verdicts", STYLE.md point 11):

- pass@k of one task uses the unbiased estimator 1 − C(n−c, k)/C(n, k) over the n
  candidates of one (task, run) with c passes; a task with several runs scores the mean
  over its runs; a group of tasks scores the mean over its tasks (every task weighs the same).
- pass@k of a group is reported only where every (task, run) in it has n ≥ k: a group where
  some task has fewer samples would mix estimators of different k and is left out.
- The run table (the paper's Table 8) takes the pass@1 of each run over the group's tasks
  and reports mean, sample variance (ddof 1) and standard deviation across runs.
- test_pass_ratio of a candidate is the share of its task's tests reported ``passed``;
  per task the mean over its candidates, per group the mean over tasks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for ``n`` samples with ``c`` correct (Chen et al., 2021).

    Uses the product form 1 − ∏_{i=n−c+1}^{n} (1 − k/i), which never builds the large
    binomial coefficients and so stays exact to float precision for any n.
    """
    if n < 1 or not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs n >= 1, 0 <= c <= n and 1 <= k <= n (got n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def mean(values: Iterable[float]) -> float:
    """Mean with exactly rounded summation, so row order never changes a table's bytes."""
    items = list(values)
    if not items:
        raise ValueError("mean of no values")
    return math.fsum(items) / len(items)


@dataclass(frozen=True)
class RunCount:
    """Candidates of one task in one run: ``n`` samples, ``c`` of them passed."""

    run: int
    n: int
    c: int


def task_pass_at_k(runs: Sequence[RunCount], k: int) -> float | None:
    """pass@k of one task: mean over its runs; ``None`` when some run has fewer than k samples."""
    if not runs or min(r.n for r in runs) < k:
        return None
    return mean(pass_at_k(r.n, r.c, k) for r in runs)


def group_pass_at_k(tasks: Sequence[Sequence[RunCount]], k: int) -> list[float] | None:
    """pass@k of each task of a group (their mean is the group's); ``None`` unless every task
    has n ≥ k in every run."""
    scores = [task_pass_at_k(runs, k) for runs in tasks]
    if not scores or any(s is None for s in scores):
        return None
    return [s for s in scores if s is not None]


@dataclass(frozen=True)
class RunSpread:
    """pass@1 across repeated runs (the paper's Table 8)."""

    runs: int
    mean: float
    variance: float
    std: float


def run_spread(tasks: Sequence[Sequence[RunCount]]) -> RunSpread | None:
    """Mean, sample variance and standard deviation of per-run pass@1 over a group of tasks.

    Each run's pass@1 averages the tasks that have candidates in that run. Needs two runs
    at least (a variance of one run is undefined); returns ``None`` otherwise.
    """
    per_run: dict[int, list[float]] = {}
    for runs in tasks:
        for r in runs:
            per_run.setdefault(r.run, []).append(pass_at_k(r.n, r.c, 1))
    if len(per_run) < 2:
        return None
    scores = [mean(per_run[run]) for run in sorted(per_run)]
    centre = mean(scores)
    variance = math.fsum((s - centre) ** 2 for s in scores) / (len(scores) - 1)
    return RunSpread(runs=len(scores), mean=centre, variance=variance, std=math.sqrt(variance))


def share_of_tests_passed(outcomes: dict[str, str], task_tests: Sequence[str]) -> float:
    """Share of the task's tests that a candidate passed (tests it never ran count as not passed).

    Falls back to the candidate's own reported tests when the task lists none.
    """
    wanted = list(task_tests) or list(outcomes)
    if not wanted:
        return 0.0
    return sum(outcomes.get(t) == "passed" for t in wanted) / len(wanted)
