"""Colour conversion tests (unittest style)."""
import unittest

import numpy as np

from visionkit import to_grayscale


class TestGrayscale(unittest.TestCase):
    def setUp(self):
        self.white = np.full((2, 2, 3), 255, dtype=np.uint8)
        self.gray = to_grayscale(self.white)

    def test_white_stays_white(self):
        self.assertTrue(np.allclose(self.gray, 255.0))

    def test_shape(self):
        self.assertEqual(self.gray.shape, (2, 2))

    def test_pure_red(self):
        red = np.zeros((1, 1, 3))
        red[..., 0] = 1.0
        self.assertAlmostEqual(float(to_grayscale(red)[0, 0]), 0.299)

    def test_rejects_gray_input(self):
        with self.assertRaises(ValueError):
            to_grayscale(np.zeros((2, 2)))
