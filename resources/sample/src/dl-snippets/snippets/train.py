"""Training loop skeleton for the MLP snippet."""
import numpy as np

from .mlp import forward, init_mlp, softmax


def train_epoch(params, x, y, lr=0.01, batch_size=32):
    """One epoch of mini-batch SGD on the output layer only (quick baseline)."""
    for start in range(0, len(x), batch_size):
        xb, yb = x[start:start + batch_size], y[start:start + batch_size]
        probs = softmax(forward(params, xb))
        probs[np.arange(len(yb)), yb] -= 1
        hidden = xb
        for w, b in params[:-1]:
            hidden = np.maximum(hidden @ w + b, 0)
        w, b = params[-1]
        params[-1] = (w - lr * hidden.T @ probs / len(xb), b - lr * probs.mean(axis=0))
    return params


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(256, 4)), rng.integers(0, 3, 256)
    model = init_mlp([4, 16, 3])
    for _ in range(5):
        model = train_epoch(model, x, y)
