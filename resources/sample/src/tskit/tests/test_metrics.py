import numpy as np
import pytest

from tskit import mae, mape, rmse, smape

Y = np.array([100.0, 200.0, 300.0])
P = np.array([110.0, 190.0, 330.0])


def test_mae():
    assert mae(Y, P) == pytest.approx(50.0 / 3)


def test_mae_perfect():
    assert mae(Y, Y) == 0.0


def test_mae_shape_mismatch():
    with pytest.raises(ValueError):
        mae(Y, P[:2])


def test_rmse():
    assert rmse(Y, P) == pytest.approx(np.sqrt((100 + 100 + 900) / 3))


def test_rmse_at_least_mae():
    assert rmse(Y, P) >= mae(Y, P)


def test_rmse_constant_error():
    assert rmse([1.0, 2.0], [3.0, 4.0]) == pytest.approx(2.0)


def test_mape():
    assert mape(Y, P) == pytest.approx(100 * (0.1 + 0.05 + 0.1) / 3)


def test_mape_zero_actual():
    with pytest.raises(ValueError):
        mape([0.0, 1.0], [1.0, 1.0])


def test_mape_scale_invariant():
    assert mape(Y, P) == pytest.approx(mape(Y * 7, P * 7))


class TestSmape:
    def test_value(self):
        expected = 100 * np.mean(2 * np.abs(P - Y) / (np.abs(Y) + np.abs(P)))
        assert smape(Y, P) == pytest.approx(expected)

    def test_both_zero(self):
        assert smape([0.0, 1.0], [0.0, 1.0]) == 0.0

    def test_upper_bound(self):
        assert smape([1.0], [-1.0]) == pytest.approx(200.0)

    def test_symmetric(self):
        assert smape(Y, P) == pytest.approx(smape(P, Y))
