"""Forecast error metrics."""
import numpy as np


def _pair(y_true, y_pred):
    t = np.asarray(y_true, dtype=np.float64)
    p = np.asarray(y_pred, dtype=np.float64)
    if t.shape != p.shape:
        raise ValueError(f"shape mismatch: {t.shape} vs {p.shape}")
    return t, p


def mae(y_true, y_pred):
    """Mean absolute error.

    Args:
        y_true: actual values.
        y_pred: forecasts of the same shape.

    Returns:
        float: ``mean(|y_true - y_pred|)``.
    """
    t, p = _pair(y_true, y_pred)
    return float(np.mean(np.abs(t - p)))


def rmse(y_true, y_pred):
    """Root mean squared error.

    Args:
        y_true: actual values.
        y_pred: forecasts of the same shape.

    Returns:
        float: ``sqrt(mean((y_true - y_pred)^2))``.
    """
    t, p = _pair(y_true, y_pred)
    return float(np.sqrt(np.mean((t - p) ** 2)))


def mape(y_true, y_pred):
    """Mean absolute percentage error, in percent.

    Args:
        y_true: actual values, non-zero.
        y_pred: forecasts of the same shape.

    Returns:
        float: ``100 * mean(|(y_true - y_pred) / y_true|)``.

    Raises:
        ValueError: if any actual value is zero.
    """
    t, p = _pair(y_true, y_pred)
    if np.any(t == 0):
        raise ValueError("MAPE is undefined when y_true contains zeros")
    return float(100.0 * np.mean(np.abs((t - p) / t)))


def smape(y_true, y_pred):
    """Symmetric MAPE in percent, ``100 * mean(2|p - t| / (|t| + |p|))``.

    Terms where both values are zero count as zero error.

    Args:
        y_true: actual values.
        y_pred: forecasts of the same shape.

    Returns:
        float: sMAPE in [0, 200].
    """
    t, p = _pair(y_true, y_pred)
    denom = np.abs(t) + np.abs(p)
    ratio = np.where(denom == 0, 0.0, 2.0 * np.abs(p - t) / np.where(denom == 0, 1.0, denom))
    return float(100.0 * np.mean(ratio))
