"""Windowing and transformations of 1-D (or T x F) series."""
import numpy as np


def sliding_windows(series, window, horizon=1, stride=1):
    """Cut a series into (input window, target) pairs for supervised forecasting.

    Args:
        series: array of shape (T,) or (T, F).
        window: length of each input window.
        horizon: number of steps to predict after each window.
        stride: step between consecutive windows.

    Returns:
        tuple[np.ndarray, np.ndarray]: inputs of shape (N, window, ...) and targets of
        shape (N, horizon, ...), with ``N = (T - window - horizon) // stride + 1``.

    Raises:
        ValueError: if the series is shorter than ``window + horizon``.
    """
    x = np.asarray(series)
    if window < 1 or horizon < 1 or stride < 1:
        raise ValueError("window, horizon and stride must be >= 1")
    n = (len(x) - window - horizon) // stride + 1
    if n < 1:
        raise ValueError("series too short for one window")
    starts = np.arange(n) * stride
    inputs = np.stack([x[s:s + window] for s in starts])
    targets = np.stack([x[s + window:s + window + horizon] for s in starts])
    return inputs, targets


def time_split(series, test_size):
    """Split a series chronologically into train and test parts.

    Args:
        series: array of shape (T, ...).
        test_size: an int (number of final steps) or a float fraction in (0, 1).

    Returns:
        tuple[np.ndarray, np.ndarray]: the first and last parts.
    """
    x = np.asarray(series)
    n_test = int(round(test_size * len(x))) if isinstance(test_size, float) else int(test_size)
    if not 0 < n_test < len(x):
        raise ValueError("test_size must leave both parts non-empty")
    return x[:-n_test], x[-n_test:]


def difference(series, lag=1):
    """Lagged difference ``x[t] - x[t - lag]``.

    Args:
        series: array of shape (T,).
        lag: lag, at least 1.

    Returns:
        np.ndarray: array of length ``T - lag``.
    """
    x = np.asarray(series, dtype=np.float64)
    return x[lag:] - x[:-lag]


def inverse_difference(diffs, initial, lag=1):
    """Undo ``difference``.

    Args:
        diffs: the differenced series, length ``T - lag``.
        initial: the first ``lag`` values of the original series.
        lag: the lag used by ``difference``.

    Returns:
        np.ndarray: the reconstructed series of length ``T``.
    """
    d = np.asarray(diffs, dtype=np.float64)
    out = np.concatenate([np.asarray(initial, dtype=np.float64), np.zeros(len(d))])
    for t in range(len(d)):
        out[t + lag] = out[t] + d[t]
    return out


def moving_average(series, window):
    """Trailing moving average over complete windows.

    Args:
        series: array of shape (T,).
        window: window length.

    Returns:
        np.ndarray: array of length ``T - window + 1``; entry i is the mean of
        ``series[i:i + window]``.
    """
    x = np.asarray(series, dtype=np.float64)
    if not 1 <= window <= len(x):
        raise ValueError("window must be between 1 and len(series)")
    csum = np.cumsum(np.concatenate([[0.0], x]))
    return (csum[window:] - csum[:-window]) / window


def lag_features(series, lags):
    """Matrix whose column j is the series shifted by ``lags[j]`` (rows with gaps dropped)."""
    x = np.asarray(series, dtype=np.float64)
    max_lag = max(lags)
    return np.column_stack([x[max_lag - lag:len(x) - lag] for lag in lags])
