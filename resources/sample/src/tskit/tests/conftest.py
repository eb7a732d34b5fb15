import numpy as np
import pytest

from tskit import MinMaxScaler, StandardScaler


@pytest.fixture
def series() -> np.ndarray:
    return np.array([3.0, 5.0, 4.0, 8.0, 10.0, 9.0, 12.0, 15.0])


@pytest.fixture
def features() -> np.ndarray:
    return np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 60.0], [6.0, 30.0]])


@pytest.fixture
def fitted_minmax(features) -> MinMaxScaler:
    scaler = MinMaxScaler()
    scaler.fit(features)
    return scaler


@pytest.fixture
def standard_scaler() -> StandardScaler:
    return StandardScaler()
