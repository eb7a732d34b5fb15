"""nnkit: a minimal neural-network toolkit in numpy."""
from .activations import dropout, relu, relu_grad, sigmoid, softmax
from .init import he_normal, xavier_uniform, zeros
from .layers import Dense
from .losses import cross_entropy, hinge_loss, mse, mse_grad
from .optim import SGD, Adam, Momentum

__all__ = [
    "Adam",
    "Dense",
    "Momentum",
    "SGD",
    "cross_entropy",
    "dropout",
    "he_normal",
    "hinge_loss",
    "mse",
    "mse_grad",
    "relu",
    "relu_grad",
    "sigmoid",
    "softmax",
    "xavier_uniform",
    "zeros",
]
