"""Weight initializers."""
import numpy as np


def xavier_uniform(shape, seed=None):
    """Glorot/Xavier uniform initialization.

    Samples from ``U(-a, a)`` with ``a = sqrt(6 / (fan_in + fan_out))``.

    Args:
        shape: ``(fan_in, fan_out)``.
        seed: random seed.

    Returns:
        np.ndarray: the weights.
    """
    fan_in, fan_out = shape
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return np.random.default_rng(seed).uniform(-limit, limit, size=shape)


def he_normal(shape, seed=None):
    """He/Kaiming normal initialization, ``N(0, 2 / fan_in)``.

    Args:
        shape: ``(fan_in, fan_out)``.
        seed: random seed.

    Returns:
        np.ndarray: the weights.
    """
    fan_in = shape[0]
    return np.random.default_rng(seed).normal(0.0, np.sqrt(2.0 / fan_in), size=shape)


def zeros(shape):
    """All-zero weights of ``shape``."""
    return np.zeros(shape)
