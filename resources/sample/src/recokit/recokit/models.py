"""Tiny recommenders over an implicit/explicit user x item matrix."""
import numpy as np


class BaseRecommender:
    """Shared top-k logic; subclasses implement ``score_items``."""

    def score_items(self, user):
        raise NotImplementedError

    def recommend(self, user, k=10, exclude=None):
        """Return the ``k`` best item ids for ``user``.

        Args:
            user: user index.
            k: number of items.
            exclude: optional collection of item ids to leave out (e.g. already seen).

        Returns:
            list[int]: item ids, best first; ties go to the lower id.
        """
        scores = np.asarray(self.score_items(user), dtype=np.float64).copy()
        if exclude is not None:
            scores[list(exclude)] = -np.inf
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order[:k] if np.isfinite(scores[i])]


class PopularityRecommender(BaseRecommender):
    """Recommends the items with the most interactions to everyone."""

    def fit(self, matrix):
        """Count interactions per item.

        Args:
            matrix: user x item array; non-zero entries are interactions.

        Returns:
            PopularityRecommender: ``self``.
        """
        self.counts_ = (np.asarray(matrix) != 0).sum(axis=0).astype(np.float64)
        return self

    def score_items(self, user):
        return self.counts_


class MatrixFactorization(BaseRecommender):
    """Explicit-feedback matrix factorization trained with full-batch gradient descent."""

    def __init__(self, n_factors=8, lr=0.05, reg=0.01, seed=0):
        """Set hyper-parameters.

        Args:
            n_factors: latent dimension.
            lr: learning rate.
            reg: L2 regularization strength.
            seed: seed of the factor initialization.
        """
        self.n_factors = n_factors
        self.lr = lr
        self.reg = reg
        self.seed = seed
        self.user_factors = None
        self.item_factors = None

    def fit(self, matrix, epochs=200):
        """Fit factors to the observed (non-zero) ratings of ``matrix``.

        Minimizes ``sum_observed (r - p_u . q_i)^2 + reg * (|P|^2 + |Q|^2)``.

        Args:
            matrix: user x item rating array; zeros are missing.
            epochs: gradient steps.

        Returns:
            MatrixFactorization: ``self``.
        """
        r = np.asarray(matrix, dtype=np.float64)
        mask = r != 0
        rng = np.random.default_rng(self.seed)
        n_users, n_items = r.shape
        p = rng.normal(scale=0.1, size=(n_users, self.n_factors))
        q = rng.normal(scale=0.1, size=(n_items, self.n_factors))
        for _ in range(epochs):
            err = np.where(mask, r - p @ q.T, 0.0)
            grad_p = -err @ q + self.reg * p
            grad_q = -err.T @ p + self.reg * q
            p -= self.lr * grad_p
            q -= self.lr * grad_q
        self.user_factors, self.item_factors = p, q
        return self

    def predict(self, user, item):
        """Predicted rating of ``item`` by ``user``.

        Raises:
            RuntimeError: if the model is not fitted.
        """
        if self.user_factors is None:
            raise RuntimeError("call fit() first")
        return float(self.user_factors[user] @ self.item_factors[item])

    def score_items(self, user):
        return self.item_factors @ self.user_factors[user]
