import numpy as np
import pytest

from recokit import (
    average_precision,
    dcg_at_k,
    hit_rate,
    mean_average_precision,
    mrr,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)

RANKED = [3, 1, 4, 5, 9]
RELEVANT = {1, 5, 7}


@pytest.mark.parametrize("k, expected", [(1, 0.0), (2, 0.5), (4, 0.5), (5, 0.4)])
def test_precision_at_k(k, expected):
    assert precision_at_k(RANKED, RELEVANT, k) == pytest.approx(expected)


def test_precision_at_k_beyond_list():
    assert precision_at_k([1], {1}, 3) == pytest.approx(1 / 3)


def test_precision_at_k_invalid():
    with pytest.raises(ValueError):
        precision_at_k(RANKED, RELEVANT, 0)


def test_recall_at_k():
    assert recall_at_k(RANKED, RELEVANT, 4) == pytest.approx(2 / 3)


def test_recall_at_k_no_relevant():
    assert recall_at_k(RANKED, set(), 3) == 0.0


def test_recall_at_k_monotone():
    values = [recall_at_k(RANKED, RELEVANT, k) for k in range(1, 6)]
    assert values == sorted(values)


def test_dcg_at_k():
    expected = 3 / np.log2(2) + 2 / np.log2(3) + 1 / np.log2(4)
    assert dcg_at_k([3, 2, 1], 3) == pytest.approx(expected)


def test_dcg_at_k_cutoff():
    assert dcg_at_k([1, 1, 1], 1) == pytest.approx(1.0)


def test_dcg_empty():
    assert dcg_at_k([], 5) == 0.0


def test_ndcg_perfect():
    assert ndcg_at_k([1, 5, 7, 2], RELEVANT, 3) == pytest.approx(1.0)


def test_ndcg_value():
    # hits at ranks 2 and 4; ideal has 3 hits in the top 5.
    dcg = 1 / np.log2(3) + 1 / np.log2(5)
    ideal = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    assert ndcg_at_k(RANKED, RELEVANT, 5) == pytest.approx(dcg / ideal)


def test_ndcg_no_relevant():
    assert ndcg_at_k(RANKED, [], 5) == 0.0


def test_average_precision():
    assert average_precision(RANKED, RELEVANT) == pytest.approx((1 / 2 + 2 / 4) / 3)


def test_average_precision_cutoff():
    assert average_precision(RANKED, RELEVANT, k=2) == pytest.approx((1 / 2) / 2)


def test_average_precision_perfect():
    assert average_precision([7, 5, 1], RELEVANT) == pytest.approx(1.0)


def test_mean_average_precision():
    assert mean_average_precision([[1], [2]], [{1}, {3}]) == pytest.approx(0.5)


class TestUserLevelMetrics:
    ranked = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    relevant = [{2}, {9}, {7, 8}]

    def test_mrr(self):
        assert mrr(self.ranked, self.relevant) == pytest.approx((0.5 + 0.0 + 1.0) / 3)

    def test_mrr_empty(self):
        assert mrr([], []) == 0.0

    def test_mrr_all_first(self):
        assert mrr([[1], [2]], [{1}, {2}]) == pytest.approx(1.0)

    def hits_at(self, k):
        """Helper method: hit rate of the shared rankings at ``k``."""
        return hit_rate(self.ranked, self.relevant, k=k)

    def test_hit_rate(self):
        assert self.hits_at(2) == pytest.approx(2 / 3)

    def test_hit_rate_k1(self):
        assert self.hits_at(1) == pytest.approx(1 / 3)

    def test_hit_rate_empty(self):
        assert hit_rate([], [], k=3) == 0.0
