"""Standard errors, bootstrap intervals and the paired test of the tables (dlbench/report/uncertainty.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dlbench.report.uncertainty import Bootstrap, holm, paired, spread, standard_error


def test_standard_error_is_sample_sd_over_root_n():
    assert standard_error([1.0, 0.0, 1.0, 0.0]) == pytest.approx(math.sqrt(1 / 3) / 2)
    assert math.isnan(standard_error([1.0]))


def test_an_interval_is_seeded_and_a_single_task_has_none():
    scores = [1.0, 0.0, 1.0, 1.0, 0.5, 0.0]
    assert spread(scores, Bootstrap(seed=3)) == spread(scores, Bootstrap(seed=3))
    assert math.isnan(spread([1.0], Bootstrap()).ci_low)


def test_the_95_percent_interval_covers_a_known_rate_about_95_times_in_100():
    """Benchmarks of 200 tasks, each passed with probability 0.3: over 600 such benchmarks,
    the interval around each one's pass rate holds 0.3 in 92–97.5% of them (a wrong
    resampling, e.g. of a tenth of the tasks, covers far less or far more)."""
    rng = np.random.default_rng(11)
    rate, tasks, trials = 0.3, 200, 600
    covered = 0
    for trial in range(trials):
        scores = (rng.random(tasks) < rate).astype(float).tolist()
        s = spread(scores, Bootstrap(resamples=1000, seed=trial))
        covered += s.ci_low <= rate <= s.ci_high
        assert s.stderr == pytest.approx(math.sqrt(np.mean(scores) * (1 - np.mean(scores)) / (tasks - 1)), rel=1e-9)
    assert 0.92 <= covered / trials <= 0.975


def test_paired_test_is_the_exact_sign_flip_test_on_few_tasks():
    """A beats B on 8 tasks and ties on 2: of the 2^8 sign flips of the nonzero differences,
    two are as extreme as the observed one (all +, all −): p = 2/256."""
    a = [1.0] * 8 + [0.0, 1.0]
    b = [0.0] * 8 + [0.0, 1.0]
    d = paired(a, b, Bootstrap())
    assert d.difference == pytest.approx(0.8)
    assert d.p_value == pytest.approx(2 / 256)
    assert d.spread.ci_low > 0


def test_identical_configurations_differ_by_nothing():
    same = paired([1.0, 0.0, 0.5], [1.0, 0.0, 0.5], Bootstrap())
    assert (same.difference, same.p_value) == (0.0, 1.0)
    with pytest.raises(ValueError, match="same tasks"):
        paired([1.0], [1.0, 0.0], Bootstrap())


def test_holm_adjusts_step_down_and_keeps_order():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    adjusted = holm([0.5, math.nan])
    assert adjusted[0] == 0.5 and math.isnan(adjusted[1])
