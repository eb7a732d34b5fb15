"""Image operations on HxW or HxWxC numpy arrays."""
import numpy as np

from ._checks import check_image

# ITU-R BT.601 luma weights.
_LUMA = np.array([0.299, 0.587, 0.114])


def normalize(img, mean, std):
    """Normalize an image channel-wise.

    Args:
        img: image of shape (H, W, C) or (H, W).
        mean: per-channel mean (scalar or sequence of length C).
        std: per-channel standard deviation, same shape as ``mean``.

    Returns:
        np.ndarray: float64 image ``(img - mean) / std``.

    Raises:
        ValueError: if any ``std`` entry is zero.
    """
    arr = check_image(img).astype(np.float64)
    std = np.asarray(std, dtype=np.float64)
    if np.any(std == 0):
        raise ValueError("std must be non-zero")
    return (arr - np.asarray(mean, dtype=np.float64)) / std


def resize_nearest(img, size):
    """Resize an image with nearest-neighbour sampling.

    Args:
        img: image of shape (H, W) or (H, W, C).
        size: target ``(height, width)``.

    Returns:
        np.ndarray: resized image with the same dtype.
    """
    arr = check_image(img)
    out_h, out_w = size
    if out_h <= 0 or out_w <= 0:
        raise ValueError("target size must be positive")
    in_h, in_w = arr.shape[:2]
    rows = np.minimum((np.arange(out_h) * in_h / out_h).astype(int), in_h - 1)
    cols = np.minimum((np.arange(out_w) * in_w / out_w).astype(int), in_w - 1)
    return arr[rows][:, cols]


def hflip(img):
    """Flip an image horizontally (left-right).

    Args:
        img: image of shape (H, W) or (H, W, C).

    Returns:
        np.ndarray: the mirrored image.
    """
    return check_image(img)[:, ::-1].copy()


def vflip(img):
    """Flip an image vertically (up-down).

    Args:
        img: image of shape (H, W) or (H, W, C).

    Returns:
        np.ndarray: the flipped image.
    """
    return check_image(img)[::-1].copy()


def rotate90(img, k=1):
    """Rotate an image by ``k`` quarter turns counter-clockwise."""
    return np.rot90(check_image(img), k=k, axes=(0, 1)).copy()


def center_crop(img, size):
    """Crop the central region of an image.

    Args:
        img: image of shape (H, W) or (H, W, C).
        size: crop ``(height, width)``; must not exceed the image size.

    Returns:
        np.ndarray: the cropped image.

    Raises:
        ValueError: if the crop is larger than the image.
    """
    arr = check_image(img)
    crop_h, crop_w = size
    h, w = arr.shape[:2]
    if crop_h > h or crop_w > w:
        raise ValueError(f"crop {size} larger than image {(h, w)}")
    top = (h - crop_h) // 2
    left = (w - crop_w) // 2
    return arr[top:top + crop_h, left:left + crop_w].copy()


def pad(img, padding, value=0):
    """Pad an image on all four sides with a constant.

    Args:
        img: image of shape (H, W) or (H, W, C).
        padding: an int for all sides or ``(top, bottom, left, right)``.
        value: constant fill value.

    Returns:
        np.ndarray: the padded image.
    """
    arr = check_image(img)
    if isinstance(padding, int):
        padding = (padding,) * 4
    top, bottom, left, right = padding
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    return np.pad(arr, widths, mode="constant", constant_values=value)


def to_grayscale(img):
    """Convert an RGB image to grayscale with BT.601 luma weights.

    Args:
        img: image of shape (H, W, 3).

    Returns:
        np.ndarray: float64 image of shape (H, W).
    """
    arr = check_image(img)
    if arr.ndim != 3 or arr.shape[2] != 3:
        raise ValueError("to_grayscale expects an HxWx3 image")
    return arr.astype(np.float64) @ _LUMA
