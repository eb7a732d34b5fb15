"""How far a score could move with other tasks: standard errors, intervals and paired tests.

A score of a group (pass@k, test pass ratio) is the mean of its tasks' scores, and a task's
score is already the mean over its runs (``metrics.task_pass_at_k``). Tasks are the unit
that varies: the benchmark is one draw of functions from the projects it mined, so the
uncertainty here is over tasks, with each task's runs kept inside it (a cluster bootstrap:
a resampled task brings all its runs; runs are never resampled apart from their task).

- ``stderr``: the standard error of the mean over tasks, sd(task scores, ddof 1) / sqrt(n).
- ``ci_low``/``ci_high``: a percentile bootstrap interval (``level``, default 95%) of the mean
  over tasks, ``resamples`` draws from a seeded generator, so a table's bytes repeat.
- ``paired``: two configurations (two models under one technique, or two techniques of one
  model) on the same tasks: the mean difference of their task scores, its standard error and
  paired-bootstrap interval, and the p-value of a paired sign-flip permutation test
  (``scipy.stats.permutation_test``; exact when 2^n is within the resamples), which asks
  whether the difference could be the luck of which configuration a task fell to.
- ``holm``: Holm's step-down adjustment of a family of p-values (a table of many pairs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Bootstrap:
    """How intervals are drawn (``report.intervals`` in the config)."""

    resamples: int = 2000
    level: float = 0.95
    seed: int = 0


@dataclass(frozen=True)
class Spread:
    """Uncertainty of a mean over tasks; ``nan`` where one task cannot show any."""

    stderr: float
    ci_low: float
    ci_high: float


def standard_error(scores: Sequence[float]) -> float:
    """sd / sqrt(n) of the task scores (ddof 1); ``nan`` for fewer than two tasks."""
    if len(scores) < 2:
        return math.nan
    return float(np.std(np.asarray(scores, dtype=float), ddof=1) / math.sqrt(len(scores)))


def bootstrap_means(scores: Sequence[float], boot: Bootstrap) -> np.ndarray:
    """Means of ``boot.resamples`` resamples of the tasks (drawn with replacement)."""
    values = np.asarray(scores, dtype=float)
    rng = np.random.default_rng(boot.seed)
    picks = rng.integers(0, len(values), size=(boot.resamples, len(values)))
    return values[picks].mean(axis=1)


def percentile_interval(means: np.ndarray, level: float) -> tuple[float, float]:
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def spread(scores: Sequence[float], boot: Bootstrap) -> Spread:
    """Standard error and bootstrap interval of the mean of ``scores`` (one per task)."""
    if len(scores) < 2:
        return Spread(math.nan, math.nan, math.nan)
    low, high = percentile_interval(bootstrap_means(scores, boot), boot.level)
    return Spread(standard_error(scores), low, high)


@dataclass(frozen=True)
class Difference:
    """A − B over the same tasks: mean difference, its spread, and the permutation p-value."""

    n_tasks: int
    difference: float
    spread: Spread
    p_value: float


def _mean_difference(d: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(d, axis=axis)


def paired(a: Sequence[float], b: Sequence[float], boot: Bootstrap) -> Difference:
    """Compare two configurations' scores on the same tasks (``a[i]`` and ``b[i]``: task i)."""
    if len(a) != len(b):
        raise ValueError(f"paired scores need the same tasks ({len(a)} against {len(b)})")
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if len(d) < 2:
        return Difference(
            len(d), float(d.mean()) if len(d) else math.nan, Spread(math.nan, math.nan, math.nan), math.nan
        )
    if not d.any():  # identical on every task: no evidence of any difference
        return Difference(len(d), 0.0, Spread(0.0, 0.0, 0.0), 1.0)
    test = stats.permutation_test(
        (d,),
        _mean_difference,
        permutation_type="samples",
        n_resamples=boot.resamples,
        vectorized=True,
        alternative="two-sided",
        random_state=boot.seed,
    )
    return Difference(len(d), float(d.mean()), spread(d.tolist(), boot), float(test.pvalue))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (``nan`` stays ``nan`` and does not count)."""
    present = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (len(present) - rank) * p))
        adjusted[i] = running
    return adjusted
