"""Building and splitting interaction data."""
import numpy as np


def build_interaction_matrix(triples, n_users, n_items):
    """Dense user x item matrix from ``(user, item, value)`` triples.

    Args:
        triples: iterable of (user, item, value); later duplicates overwrite earlier ones.
        n_users: number of rows.
        n_items: number of columns.

    Returns:
        np.ndarray: float64 matrix of shape (n_users, n_items).
    """
    matrix = np.zeros((n_users, n_items))
    for user, item, value in triples:
        if not (0 <= user < n_users and 0 <= item < n_items):
            raise IndexError(f"({user}, {item}) outside a {n_users}x{n_items} matrix")
        matrix[user, item] = value
    return matrix


def train_test_split_per_user(matrix, test_ratio=0.2, seed=0):
    """Hold out a fraction of each user's interactions.

    Every user with at least two interactions keeps at least one in train and gives at
    least one to test; users with a single interaction keep it in train.

    Args:
        matrix: user x item array; non-zero entries are interactions.
        test_ratio: fraction of each user's interactions moved to test.
        seed: random seed.

    Returns:
        tuple[np.ndarray, np.ndarray]: train and test matrices (same shape, disjoint).
    """
    m = np.asarray(matrix, dtype=np.float64)
    rng = np.random.default_rng(seed)
    train, test = m.copy(), np.zeros_like(m)
    for user in range(m.shape[0]):
        items = np.flatnonzero(m[user])
        if items.size < 2:
            continue
        n_test = min(max(1, int(round(test_ratio * items.size))), items.size - 1)
        held = rng.choice(items, size=n_test, replace=False)
        test[user, held] = m[user, held]
        train[user, held] = 0.0
    return train, test


def leave_one_out(matrix, seed=0):
    """Hold out exactly one interaction per user with at least two."""
    m = np.asarray(matrix, dtype=np.float64)
    counts = (m != 0).sum(axis=1)
    ratio = np.where(counts > 0, 1.0 / np.maximum(counts, 1), 0.0)
    rng = np.random.default_rng(seed)
    train, test = m.copy(), np.zeros_like(m)
    for user in np.flatnonzero(ratio):
        items = np.flatnonzero(m[user])
        if items.size < 2:
            continue
        held = rng.choice(items)
        test[user, held], train[user, held] = m[user, held], 0.0
    return train, test
