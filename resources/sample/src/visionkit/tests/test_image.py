import numpy as np
import pytest

from visionkit import center_crop, hflip, normalize, pad, resize_nearest, rotate90, vflip


def flip_both(img):
    """Helper: flipping both axes equals a half turn."""
    return vflip(hflip(img))


def test_normalize_scalar(gray_image):
    out = normalize(gray_image, mean=5.5, std=2.0)
    assert np.allclose(out, (gray_image - 5.5) / 2.0)


def test_normalize_per_channel(rgb_image):
    mean = rgb_image.reshape(-1, 3).mean(axis=0)
    std = rgb_image.reshape(-1, 3).std(axis=0)
    out = normalize(rgb_image, mean, std)
    assert np.allclose(out.reshape(-1, 3).mean(axis=0), 0.0)
    assert np.allclose(out.reshape(-1, 3).std(axis=0), 1.0)


def test_normalize_rejects_zero_std(gray_image):
    with pytest.raises(ValueError):
        normalize(gray_image, mean=0.0, std=0.0)


def test_normalized_fixture_range(normalized_image):
    assert normalized_image.min() >= -1.0
    assert normalized_image.max() <= 1.0


@pytest.mark.parametrize("size", [(3, 4), (6, 8), (12, 16), (2, 5)])
def test_resize_shape(rgb_image, size):
    out = resize_nearest(rgb_image, size)
    assert out.shape == (size[0], size[1], 3)
    assert out.dtype == rgb_image.dtype


def test_resize_upsample_repeats(gray_image):
    out = resize_nearest(gray_image, (6, 8))
    assert np.array_equal(out, np.repeat(np.repeat(gray_image, 2, axis=0), 2, axis=1))


def test_resize_identity(gray_image):
    assert np.array_equal(resize_nearest(gray_image, gray_image.shape), gray_image)


def test_resize_rejects_zero():
    with pytest.raises(ValueError):
        resize_nearest(np.zeros((4, 4)), (0, 2))


def test_hflip(gray_image):
    out = hflip(gray_image)
    assert np.array_equal(out[:, 0], gray_image[:, -1])


def test_hflip_twice_is_identity(rgb_image):
    assert np.array_equal(hflip(hflip(rgb_image)), rgb_image)


def test_vflip(gray_image):
    out = vflip(gray_image)
    assert np.array_equal(out[0], gray_image[-1])


def test_vflip_twice_is_identity(rgb_image):
    assert np.array_equal(vflip(vflip(rgb_image)), rgb_image)


def test_flip_both_is_half_turn(gray_image):
    assert np.array_equal(flip_both(gray_image), np.rot90(gray_image, 2))


def test_rotate90_four_times(rgb_image):
    assert np.array_equal(rotate90(rgb_image, k=4), rgb_image)


def test_center_crop_values(gray_image):
    out = center_crop(gray_image, (1, 2))
    assert np.array_equal(out, np.array([[5.0, 6.0]]))


def test_center_crop_full_size(rgb_image):
    assert np.array_equal(center_crop(rgb_image, (6, 8)), rgb_image)


def test_center_crop_too_large(gray_image):
    with pytest.raises(ValueError):
        center_crop(gray_image, (4, 4))


def test_pad_int(gray_image):
    out = pad(gray_image, 1)
    assert out.shape == (5, 6)
    assert out[0].sum() == 0
    assert np.array_equal(out[1:-1, 1:-1], gray_image)


def test_pad_tuple_with_value(rgb_image):
    out = pad(rgb_image, (1, 2, 3, 4), value=255)
    assert out.shape == (9, 15, 3)
    assert np.all(out[0] == 255)


def test_pad_then_crop_roundtrip(rgb_image):
    assert np.array_equal(center_crop(pad(rgb_image, 2), (6, 8)), rgb_image)
