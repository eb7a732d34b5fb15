"""Input validation shared by the image functions."""
import numpy as np


def check_image(img):
    """Return ``img`` as an array, checking it is HxW or HxWxC.

    Args:
        img: array-like image.

    Returns:
        np.ndarray: the image as a numpy array.

    Raises:
        ValueError: if the image is not 2-D or 3-D.
    """
    arr = np.asarray(img)
    if arr.ndim not in (2, 3):
        raise ValueError(f"expected an HxW or HxWxC image, got shape {arr.shape}")
    return arr
