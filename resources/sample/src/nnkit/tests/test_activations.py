import numpy as np
import pytest

from nnkit import dropout, relu, relu_grad, sigmoid, softmax


def test_relu():
    assert np.array_equal(relu([-1.0, 0.0, 2.0]), [0.0, 0.0, 2.0])


def test_relu_preserves_shape(batch):
    assert relu(batch).shape == batch.shape


def test_relu_is_idempotent(batch):
    assert np.array_equal(relu(relu(batch)), relu(batch))


def test_relu_grad():
    assert np.array_equal(relu_grad([-1.0, 0.0, 3.0]), [0.0, 0.0, 1.0])


@pytest.mark.parametrize("x", [-1000.0, -1.0, 0.0, 2.5, 1000.0])
def test_sigmoid_matches_formula(x):
    expected = 0.5 * (1 + np.tanh(x / 2))
    assert np.allclose(sigmoid(np.array([x])), expected)


def test_sigmoid_symmetry(batch):
    assert np.allclose(sigmoid(batch) + sigmoid(-batch), 1.0)


def test_sigmoid_no_overflow():
    with np.errstate(over="raise"):
        assert np.all(np.isfinite(sigmoid(np.array([-800.0, 800.0]))))


def test_softmax_sums_to_one(batch):
    assert np.allclose(softmax(batch).sum(axis=1), 1.0)


def test_softmax_shift_invariant(batch):
    assert np.allclose(softmax(batch), softmax(batch + 100.0))


def test_softmax_axis0():
    out = softmax(np.array([[0.0, 1.0], [0.0, 1.0]]), axis=0)
    assert np.allclose(out, 0.5)


def test_softmax_large_logits():
    assert np.allclose(softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])


class TestDropout:
    def test_eval_mode_is_identity(self, batch):
        assert np.array_equal(dropout(batch, 0.5, training=False), batch)

    def test_seeded(self, batch):
        assert np.array_equal(dropout(batch, 0.5, seed=3), dropout(batch, 0.5, seed=3))

    def test_preserves_expectation(self):
        x = np.ones(200_000)
        assert abs(dropout(x, 0.3, seed=0).mean() - 1.0) < 0.01

    def test_invalid_rate(self, batch):
        with pytest.raises(ValueError):
            dropout(batch, 1.0)
