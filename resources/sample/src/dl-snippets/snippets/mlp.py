"""A two-layer perceptron in numpy (forward pass and one SGD step)."""
import numpy as np


def init_mlp(sizes, seed=0):
    """Random weights for a multilayer perceptron with layer ``sizes``."""
    rng = np.random.default_rng(seed)
    return [(rng.normal(0, np.sqrt(2 / i), (i, o)), np.zeros(o)) for i, o in zip(sizes, sizes[1:])]


def forward(params, x):
    """ReLU hidden layers, linear output."""
    for w, b in params[:-1]:
        x = np.maximum(x @ w + b, 0)
    w, b = params[-1]
    return x @ w + b


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)
