import numpy as np
import pytest

from nnkit import SGD, Adam, Dense, Momentum, mse, mse_grad


def distance_to_optimum(param):
    """Helper: largest distance of the quadratic fixture's parameter from its minimum."""
    return float(np.max(np.abs(param - 3.0)))


class TestSGD:
    def test_single_step(self):
        p = np.array([1.0, 2.0])
        opt = SGD(lr=0.5)
        opt.step([(p, np.array([2.0, -2.0]))])
        assert np.allclose(p, [0.0, 3.0])

    def test_converges(self, quadratic):
        param, grad_fn = quadratic
        opt = SGD(lr=0.1)
        for _ in range(200):
            opt.step([(param, grad_fn(param))])
        assert np.allclose(param, 3.0)

    def test_rejects_non_positive_lr(self):
        with pytest.raises(ValueError):
            SGD(lr=0.0)

    def test_trains_dense_layer(self):
        rng = np.random.default_rng(0)
        x = rng.normal(size=(32, 3))
        y = x @ np.array([[1.0], [-2.0], [0.5]])
        layer = Dense(3, 1, seed=0)
        opt = SGD(lr=0.1)
        for _ in range(300):
            out = layer.forward(x)
            layer.backward(mse_grad(out, y))
            opt.step(layer.parameters())
        assert mse(layer.forward(x), y) < 1e-4


class TestMomentum:
    def test_init(self):
        opt = Momentum(lr=0.1, momentum=0.5)
        assert (opt.lr, opt.momentum) == (0.1, 0.5)

    def test_two_steps(self):
        p = np.array([0.0])
        opt = Momentum(lr=1.0, momentum=0.5)
        opt.step([(p, np.array([1.0]))])
        opt.step([(p, np.array([1.0]))])
        # v1 = -1, v2 = 0.5 * -1 - 1 = -1.5 -> p = -2.5
        assert np.allclose(p, [-2.5])

    def test_converges(self, quadratic):
        param, grad_fn = quadratic
        opt = Momentum(lr=0.05, momentum=0.8)
        for _ in range(300):
            opt.step([(param, grad_fn(param))])
        assert distance_to_optimum(param) < 1e-6

    def test_velocity_per_parameter(self):
        a, b = np.zeros(1), np.zeros(2)
        opt = Momentum(lr=0.1, momentum=0.9)
        opt.step([(a, np.ones(1)), (b, -np.ones(2))])
        assert opt.velocity[0].shape == (1,)
        assert np.allclose(b, [0.1, 0.1])

    def test_rejects_bad_lr(self):
        with pytest.raises(ValueError):
            Momentum(lr=-1.0)


class TestAdam:
    def test_init_defaults(self):
        opt = Adam()
        assert (opt.lr, opt.beta1, opt.beta2, opt.t) == (0.001, 0.9, 0.999, 0)

    def test_first_step_size_is_lr(self):
        p = np.array([1.0, -1.0])
        opt = Adam(lr=0.01)
        opt.step([(p, np.array([5.0, -0.2]))])
        assert np.allclose(p, [0.99, -0.99], atol=1e-6)

    def test_converges(self, quadratic):
        param, grad_fn = quadratic
        opt = Adam(lr=0.2)
        for _ in range(500):
            opt.step([(param, grad_fn(param))])
        assert distance_to_optimum(param) < 1e-3

    def test_counts_steps(self):
        opt = Adam()
        opt.step([(np.zeros(1), np.ones(1))])
        opt.step([(np.zeros(1), np.ones(1))])
        assert opt.t == 2
