import numpy as np
import pytest

from tskit import difference, inverse_difference, lag_features, moving_average, sliding_windows, time_split


def window_count(length, window, horizon=1, stride=1):
    """Helper: number of windows produced for a series of ``length`` steps."""
    inputs, _ = sliding_windows(np.arange(length), window, horizon, stride)
    return len(inputs)


def test_sliding_windows_values(series):
    inputs, targets = sliding_windows(series, window=3, horizon=2)
    assert inputs.shape == (4, 3)
    assert targets.shape == (4, 2)
    assert np.array_equal(inputs[1], series[1:4])
    assert np.array_equal(targets[1], series[4:6])


@pytest.mark.parametrize("length, window, horizon, stride, expected", [
    (10, 3, 1, 1, 7), (10, 3, 1, 2, 4), (10, 5, 5, 1, 1), (20, 4, 2, 3, 5),
])
def test_sliding_windows_count(length, window, horizon, stride, expected):
    assert window_count(length, window, horizon, stride) == expected


def test_sliding_windows_multivariate(features):
    inputs, targets = sliding_windows(features, window=2)
    assert inputs.shape == (2, 2, 2)
    assert np.array_equal(targets[-1], features[-1:])


def test_sliding_windows_too_short():
    with pytest.raises(ValueError):
        sliding_windows(np.arange(3), window=3)


def test_time_split_int(series):
    train, test = time_split(series, 2)
    assert np.array_equal(test, [12.0, 15.0])
    assert len(train) == 6


def test_time_split_fraction(series):
    train, test = time_split(series, 0.25)
    assert (len(train), len(test)) == (6, 2)


def test_time_split_invalid(series):
    with pytest.raises(ValueError):
        time_split(series, 8)


def test_difference(series):
    assert np.array_equal(difference(series), np.diff(series))


def test_difference_lag2():
    assert np.array_equal(difference([1.0, 2.0, 4.0, 8.0], lag=2), [3.0, 6.0])


@pytest.mark.parametrize("lag", [1, 2, 3])
def test_difference_roundtrip(series, lag):
    restored = inverse_difference(difference(series, lag), series[:lag], lag)
    assert np.allclose(restored, series)


def test_inverse_difference_cumsum():
    assert np.allclose(inverse_difference([1.0, 1.0, 1.0], [5.0]), [5.0, 6.0, 7.0, 8.0])


def test_inverse_difference_empty():
    assert np.allclose(inverse_difference([], [2.0]), [2.0])


def test_moving_average(series):
    expected = np.convolve(series, np.ones(3) / 3, mode="valid")
    assert np.allclose(moving_average(series, 3), expected)


def test_moving_average_window_one(series):
    assert np.allclose(moving_average(series, 1), series)


def test_moving_average_bad_window(series):
    with pytest.raises(ValueError):
        moving_average(series, 9)


def test_lag_features():
    out = lag_features([1.0, 2.0, 3.0, 4.0], lags=[1, 2])
    assert out.tolist() == [[2.0, 1.0], [3.0, 2.0]]
