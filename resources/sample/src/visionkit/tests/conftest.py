import numpy as np
import pytest

from visionkit import BoxList, normalize


@pytest.fixture
def rgb_image() -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(6, 8, 3)).astype(np.uint8)


@pytest.fixture
def gray_image() -> np.ndarray:
    return np.arange(12, dtype=np.float64).reshape(3, 4)


@pytest.fixture
def normalized_image(rgb_image) -> np.ndarray:
    return normalize(rgb_image, mean=[127.5] * 3, std=[127.5] * 3)


@pytest.fixture
def box_list() -> BoxList:
    boxes = np.array([[0, 0, 10, 10], [5, 5, 15, 15], [20, 20, 30, 40]], dtype=float)
    return BoxList(boxes, scores=np.array([0.9, 0.4, 0.7]))
