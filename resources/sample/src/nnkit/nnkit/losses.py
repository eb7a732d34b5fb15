"""Loss functions (mean over the batch)."""
import numpy as np

from .activations import softmax


def mse(pred, target):
    """Mean squared error.

    Args:
        pred: predictions.
        target: targets of the same shape.

    Returns:
        float: the mean of the squared differences.
    """
    diff = np.asarray(pred, dtype=np.float64) - np.asarray(target, dtype=np.float64)
    return float(np.mean(diff ** 2))


def mse_grad(pred, target):
    """Gradient of ``mse`` with respect to ``pred``."""
    diff = np.asarray(pred, dtype=np.float64) - np.asarray(target, dtype=np.float64)
    return 2.0 * diff / diff.size


def cross_entropy(logits, labels, eps=1e-12):
    """Softmax cross-entropy from raw logits and integer class labels.

    Args:
        logits: array of shape (batch, n_classes).
        labels: int array of shape (batch,).
        eps: floor on probabilities before the log.

    Returns:
        float: the mean negative log-likelihood.
    """
    probs = softmax(logits, axis=1)
    labels = np.asarray(labels)
    picked = probs[np.arange(labels.size), labels]
    return float(-np.mean(np.log(np.maximum(picked, eps))))


def hinge_loss(scores, labels, margin=1.0):
    """Binary hinge loss with labels in {-1, +1}.

    Args:
        scores: raw decision values, shape (batch,).
        labels: labels in {-1, +1}.
        margin: the margin.

    Returns:
        float: ``mean(max(0, margin - y * s))``.
    """
    labels = np.asarray(labels, dtype=np.float64)
    if not np.all(np.isin(labels, (-1.0, 1.0))):
        raise ValueError("labels must be -1 or +1")
    return float(np.mean(np.maximum(0.0, margin - labels * np.asarray(scores, dtype=np.float64))))
