import numpy as np
import pytest

from recokit import MatrixFactorization, PopularityRecommender, build_interaction_matrix

TRIPLES = [
    (0, 0, 5), (0, 1, 3), (0, 3, 1),
    (1, 0, 4), (1, 3, 1),
    (2, 0, 1), (2, 1, 1), (2, 3, 5),
    (3, 0, 1), (3, 2, 5), (3, 3, 4),
    (4, 1, 1), (4, 2, 5), (4, 3, 4),
]


@pytest.fixture
def ratings() -> np.ndarray:
    return build_interaction_matrix(TRIPLES, n_users=5, n_items=4)


@pytest.fixture
def fitted_mf(ratings) -> MatrixFactorization:
    model = MatrixFactorization(n_factors=3, lr=0.02, reg=0.001, seed=1)
    model.fit(ratings, epochs=3000)
    return model


@pytest.fixture
def popularity(ratings) -> PopularityRecommender:
    model = PopularityRecommender()
    model.fit(ratings)
    return model
