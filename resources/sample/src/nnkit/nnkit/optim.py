"""Gradient-descent optimizers updating parameter arrays in place."""
import numpy as np


class Optimizer:
    """Base optimizer; ``step`` receives ``[(param, grad), ...]`` pairs."""

    def __init__(self, lr):
        """Args:
            lr: learning rate, positive.
        """
        if lr <= 0:
            raise ValueError("learning rate must be positive")
        self.lr = lr

    def step(self, params_and_grads):
        raise NotImplementedError


class SGD(Optimizer):
    """Plain stochastic gradient descent: ``p -= lr * g``."""

    def step(self, params_and_grads):
        """Apply one update in place.

        Args:
            params_and_grads: list of (parameter array, gradient array) pairs.
        """
        for param, grad in params_and_grads:
            param -= self.lr * grad


class Momentum(Optimizer):
    """SGD with heavy-ball momentum: ``v = mu * v - lr * g; p += v``."""

    def __init__(self, lr, momentum=0.9):
        """Args:
            lr: learning rate.
            momentum: momentum coefficient in [0, 1).
        """
        super().__init__(lr)
        self.momentum = momentum
        self.velocity = {}

    def step(self, params_and_grads):
        """Apply one momentum update in place (velocities are kept per parameter)."""
        for i, (param, grad) in enumerate(params_and_grads):
            v = self.velocity.get(i, np.zeros_like(param))
            v = self.momentum * v - self.lr * grad
            self.velocity[i] = v
            param += v


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015) with bias correction."""

    def __init__(self, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8):
        """Args:
            lr: learning rate.
            beta1: decay of the first-moment estimate.
            beta2: decay of the second-moment estimate.
            eps: term added to the denominator.
        """
        super().__init__(lr)
        self.beta1, self.beta2, self.eps = beta1, beta2, eps
        self.t = 0
        self.m = {}
        self.v = {}

    def step(self, params_and_grads):
        """Apply one Adam update in place."""
        self.t += 1
        for i, (param, grad) in enumerate(params_and_grads):
            m = self.beta1 * self.m.get(i, 0.0) + (1 - self.beta1) * grad
            v = self.beta2 * self.v.get(i, 0.0) + (1 - self.beta2) * grad ** 2
            self.m[i], self.v[i] = m, v
            m_hat = m / (1 - self.beta1 ** self.t)
            v_hat = v / (1 - self.beta2 ** self.t)
            param -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
