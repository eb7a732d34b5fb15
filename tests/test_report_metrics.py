"""pass@k estimator, k-availability rule, run spread and test pass ratio."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dlbench.report.metrics import (
    RunCount,
    group_pass_at_k,
    pass_at_k,
    run_spread,
    share_of_tests_passed,
    task_pass_at_k,
)

# 1 - C(5-c, k) / C(5, k), worked by hand: C(5,1)=5, C(5,3)=10, C(5,5)=1
HAND = {
    (0, 1): Fraction(0),
    (1, 1): Fraction(1, 5),
    (2, 1): Fraction(2, 5),
    (3, 1): Fraction(3, 5),
    (4, 1): Fraction(4, 5),
    (5, 1): Fraction(1),
    (0, 3): Fraction(0),
    (1, 3): 1 - Fraction(4, 10),
    (2, 3): 1 - Fraction(1, 10),
    (3, 3): Fraction(1),
    (4, 3): Fraction(1),
    (5, 3): Fraction(1),
    (0, 5): Fraction(0),
    (1, 5): Fraction(1),
    (2, 5): Fraction(1),
    (3, 5): Fraction(1),
    (4, 5): Fraction(1),
    (5, 5): Fraction(1),
}


@pytest.mark.parametrize(("c", "k"), sorted(HAND))
def test_pass_at_k_matches_hand_computed_closed_form(c, k):
    assert pass_at_k(5, c, k) == pytest.approx(float(HAND[(c, k)]), abs=1e-12)


@pytest.mark.parametrize(("n", "c", "k"), [(10, 3, 1), (10, 3, 4), (20, 7, 10), (200, 13, 100), (50, 0, 7)])
def test_pass_at_k_equals_binomial_formula(n, c, k):
    expected = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    assert pass_at_k(n, c, k) == pytest.approx(float(expected), rel=1e-12, abs=1e-15)


def test_pass_at_k_is_stable_for_large_n():
    # C(2000, 1000) overflows a float; the product form must not
    assert pass_at_k(2000, 1, 1000) == pytest.approx(0.5)
    assert 0.0 < pass_at_k(2000, 1, 1) == pytest.approx(1 / 2000)


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_pass_at_k_rejects_impossible_counts(n, c, k):
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


def test_task_pass_at_k_averages_runs_and_needs_k_samples_in_every_run():
    runs = [RunCount(run=0, n=5, c=1), RunCount(run=1, n=5, c=3)]
    assert task_pass_at_k(runs, 1) == pytest.approx((0.2 + 0.6) / 2)
    assert task_pass_at_k([RunCount(0, 5, 1), RunCount(1, 2, 1)], 3) is None
    assert task_pass_at_k([], 1) is None


def test_group_pass_at_k_reported_only_where_every_task_has_k_samples():
    tasks = [[RunCount(0, 5, 5)], [RunCount(0, 5, 0)], [RunCount(0, 1, 1)]]
    assert group_pass_at_k(tasks, 1) == pytest.approx([1, 0, 1])
    assert group_pass_at_k(tasks, 3) is None  # the third task has one sample only
    assert group_pass_at_k(tasks[:2], 3) == pytest.approx([1, 0])
    assert group_pass_at_k([], 1) is None


def test_run_spread_is_mean_and_sample_variance_of_per_run_pass1():
    # run 0: tasks score 1 and 0 -> 0.5; run 1: 1 and 1 -> 1.0; run 2: 0 and 0 -> 0.0
    tasks = [
        [RunCount(0, 1, 1), RunCount(1, 1, 1), RunCount(2, 1, 0)],
        [RunCount(0, 1, 0), RunCount(1, 1, 1), RunCount(2, 1, 0)],
    ]
    spread = run_spread(tasks)
    assert spread is not None
    assert (spread.runs, spread.mean) == (3, pytest.approx(0.5))
    assert spread.variance == pytest.approx(((0.0) ** 2 + 0.5**2 + 0.5**2) / 2)
    assert spread.std == pytest.approx(math.sqrt(0.25))
    assert run_spread([[RunCount(0, 3, 1)]]) is None  # one run: no variance


def test_share_of_tests_passed_counts_unreported_tests_as_not_passed():
    outcomes = {"t::a": "passed", "t::b": "failed", "t::extra": "passed"}
    assert share_of_tests_passed(outcomes, ["t::a", "t::b", "t::c", "t::d"]) == 0.25
    assert share_of_tests_passed(outcomes, []) == pytest.approx(2 / 3)
    assert share_of_tests_passed({}, []) == 0.0
