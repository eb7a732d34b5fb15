"""Layers with explicit forward and backward passes."""
import numpy as np

from .init import xavier_uniform, zeros


class Dense:
    """Fully connected layer ``y = x @ W + b``."""

    def __init__(self, in_features, out_features, seed=None):
        """Create the layer with Xavier-initialized weights and zero bias.

        Args:
            in_features: input size.
            out_features: output size.
            seed: seed of the weight initialization.
        """
        self.weight = xavier_uniform((in_features, out_features), seed=seed)
        self.bias = zeros(out_features)
        self.grad_weight = zeros((in_features, out_features))
        self.grad_bias = zeros(out_features)
        self._input = None

    def forward(self, x):
        """Compute the layer output and remember the input for ``backward``.

        Args:
            x: array of shape (batch, in_features).

        Returns:
            np.ndarray: array of shape (batch, out_features).
        """
        self._input = np.asarray(x, dtype=np.float64)
        return self._input @ self.weight + self.bias

    def backward(self, grad_output):
        """Back-propagate ``grad_output`` and store the parameter gradients.

        Args:
            grad_output: gradient of the loss w.r.t. the output, (batch, out_features).

        Returns:
            np.ndarray: gradient w.r.t. the input, (batch, in_features).
        """
        if self._input is None:
            raise RuntimeError("forward must be called before backward")
        self.grad_weight = self._input.T @ grad_output
        self.grad_bias = grad_output.sum(axis=0)
        return grad_output @ self.weight.T

    def parameters(self):
        """Return ``[(param, grad), ...]`` pairs for an optimizer."""
        return [(self.weight, self.grad_weight), (self.bias, self.grad_bias)]
