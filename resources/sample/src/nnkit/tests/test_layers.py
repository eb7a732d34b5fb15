import numpy as np
import pytest

from nnkit import Dense, mse, mse_grad


def numeric_grad_weight(layer, x, target, eps=1e-6):
    """Helper: finite-difference gradient of the MSE loss w.r.t. the weights."""
    grad = np.zeros_like(layer.weight)
    for idx in np.ndindex(*layer.weight.shape):
        old = layer.weight[idx]
        layer.weight[idx] = old + eps
        up = mse(x @ layer.weight + layer.bias, target)
        layer.weight[idx] = old - eps
        down = mse(x @ layer.weight + layer.bias, target)
        layer.weight[idx] = old
        grad[idx] = (up - down) / (2 * eps)
    return grad


def test_init_shapes():
    d = Dense(4, 3, seed=1)
    assert d.weight.shape == (4, 3)
    assert np.array_equal(d.bias, np.zeros(3))


def test_init_seeded():
    a = Dense(4, 3, seed=1)
    b = Dense(4, 3, seed=1)
    assert np.array_equal(a.weight, b.weight)


def test_forward(layer: Dense, batch):
    out = layer.forward(batch)
    assert np.allclose(out, batch @ layer.weight)


def test_forward_with_bias(layer: Dense, batch):
    layer.bias[:] = [1.0, -1.0]
    out = layer.forward(batch)
    assert np.allclose(out - batch @ layer.weight, [[1.0, -1.0], [1.0, -1.0]])


def test_backward_matches_numeric(layer: Dense, batch):
    target = np.array([[1.0, 0.0], [0.0, 1.0]])
    out = layer.forward(batch)
    layer.backward(mse_grad(out, target))
    assert np.allclose(layer.grad_weight, numeric_grad_weight(layer, batch, target), atol=1e-6)


def test_backward_input_grad(layer: Dense, batch):
    layer.forward(batch)
    grad_in = layer.backward(np.ones((2, 2)))
    assert np.allclose(grad_in, np.ones((2, 2)) @ layer.weight.T)
    assert np.allclose(layer.grad_bias, [2.0, 2.0])


def test_backward_before_forward(layer: Dense):
    with pytest.raises(RuntimeError):
        layer.backward(np.ones((1, 2)))


def test_parameters_pairs(layer: Dense, batch):
    layer.forward(batch)
    layer.backward(np.ones((2, 2)))
    params = layer.parameters()
    assert params[0][0] is layer.weight
