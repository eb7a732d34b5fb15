"""Element-wise activations and dropout."""
import numpy as np


def relu(x):
    """Rectified linear unit, ``max(x, 0)``.

    Args:
        x: input array.

    Returns:
        np.ndarray: array of the same shape.
    """
    return np.maximum(np.asarray(x, dtype=np.float64), 0.0)


def relu_grad(x):
    """Derivative of ``relu`` (0 at x <= 0, 1 elsewhere)."""
    return (np.asarray(x) > 0).astype(np.float64)


def sigmoid(x):
    """Numerically stable logistic function.

    Args:
        x: input array.

    Returns:
        np.ndarray: values in (0, 1).
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    ex = np.exp(x[~pos])
    out[~pos] = ex / (1.0 + ex)
    return out


def softmax(logits, axis=-1):
    """Numerically stable softmax.

    Args:
        logits: input array.
        axis: axis that sums to one.

    Returns:
        np.ndarray: probabilities of the same shape.
    """
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def dropout(x, rate, training=True, seed=None):
    """Inverted dropout: zero a fraction ``rate`` of units and rescale the rest.

    Args:
        x: input array.
        rate: drop probability in [0, 1).
        training: when False the input is returned unchanged.
        seed: seed of the random mask.

    Returns:
        np.ndarray: the masked and rescaled array.
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError("rate must be in [0, 1)")
    x = np.asarray(x, dtype=np.float64)
    if not training or rate == 0.0:
        return x
    mask = np.random.default_rng(seed).random(x.shape) >= rate
    return x * mask / (1.0 - rate)
