import numpy as np
import pytest

from nnkit import Dense


@pytest.fixture
def batch() -> np.ndarray:
    return np.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]])


@pytest.fixture
def layer() -> Dense:
    return Dense(3, 2, seed=0)


@pytest.fixture
def quadratic():
    """A parameter and the gradient function of f(p) = |p - 3|^2."""
    param = np.array([0.0, 10.0])
    return param, lambda p: 2.0 * (p - 3.0)
