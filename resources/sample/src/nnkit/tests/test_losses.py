import numpy as np
import pytest

from nnkit import cross_entropy, hinge_loss, mse, mse_grad


def test_mse():
    assert mse([1.0, 2.0], [1.0, 4.0]) == pytest.approx(2.0)


def test_mse_zero(batch):
    assert mse(batch, batch) == 0.0


def test_mse_grad_direction():
    assert np.allclose(mse_grad([3.0, 1.0], [1.0, 1.0]), [2.0, 0.0])


def test_cross_entropy_uniform():
    assert cross_entropy(np.zeros((2, 4)), [0, 3]) == pytest.approx(np.log(4))


def test_cross_entropy_confident():
    logits = np.array([[20.0, 0.0], [0.0, 20.0]])
    assert cross_entropy(logits, [0, 1]) < 1e-6


def test_cross_entropy_matches_manual(batch):
    labels = np.array([2, 0])
    z = batch - batch.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    assert cross_entropy(batch, labels) == pytest.approx(-logp[[0, 1], labels].mean())


@pytest.mark.parametrize("score, label, expected", [(2.0, 1, 0.0), (0.5, 1, 0.5), (0.5, -1, 1.5)])
def test_hinge_loss_single(score, label, expected):
    assert hinge_loss([score], [label]) == pytest.approx(expected)


def test_hinge_loss_margin():
    assert hinge_loss([1.0, -1.0], [1, -1], margin=2.0) == pytest.approx(1.0)


def test_hinge_loss_rejects_01_labels():
    with pytest.raises(ValueError):
        hinge_loss([0.3], [0])
