import numpy as np
import pytest

from nnkit import he_normal, xavier_uniform, zeros


@pytest.mark.parametrize("shape", [(4, 4), (100, 10), (3, 50)])
def test_xavier_bounds(shape):
    w = xavier_uniform(shape, seed=0)
    limit = np.sqrt(6.0 / sum(shape))
    assert w.shape == shape
    assert np.all(np.abs(w) <= limit)


def test_xavier_seeded():
    assert np.array_equal(xavier_uniform((3, 3), seed=2), xavier_uniform((3, 3), seed=2))


def test_xavier_variance():
    w = xavier_uniform((400, 600), seed=0)
    assert np.isclose(w.var(), 2.0 / 1000, rtol=0.05)


def test_he_normal_variance():
    w = he_normal((500, 400), seed=0)
    assert np.isclose(w.std(), np.sqrt(2.0 / 500), rtol=0.05)


def test_he_normal_seeded():
    assert np.array_equal(he_normal((2, 5), seed=9), he_normal((2, 5), seed=9))


def test_he_normal_mean_near_zero():
    assert abs(he_normal((1000, 100), seed=1).mean()) < 0.01


def test_zeros():
    assert not zeros((2, 2)).any()
