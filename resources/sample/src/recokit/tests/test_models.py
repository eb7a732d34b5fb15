import numpy as np
import pytest

from recokit import MatrixFactorization, PopularityRecommender, precision_at_k


def rmse(predicted, actual):
    """Helper: root mean squared error of two arrays."""
    return float(np.sqrt(np.mean((np.asarray(predicted) - np.asarray(actual)) ** 2)))


def test_mf_init_defaults():
    model = MatrixFactorization()
    assert model.n_factors == 8
    assert model.user_factors is None


def test_mf_init_custom():
    model = MatrixFactorization(n_factors=2, lr=0.1, reg=0.5, seed=3)
    assert (model.n_factors, model.lr, model.reg, model.seed) == (2, 0.1, 0.5, 3)


def test_mf_fit_shapes(ratings):
    model = MatrixFactorization(n_factors=2)
    model.fit(ratings, epochs=5)
    assert model.user_factors.shape == (5, 2)
    assert model.item_factors.shape == (4, 2)


def test_mf_fit_is_deterministic(ratings):
    a = MatrixFactorization(n_factors=2, seed=7)
    b = MatrixFactorization(n_factors=2, seed=7)
    a.fit(ratings, epochs=10)
    b.fit(ratings, epochs=10)
    assert np.allclose(a.user_factors, b.user_factors)


def test_mf_fits_observed_ratings(fitted_mf: MatrixFactorization, ratings):
    users, items = np.nonzero(ratings)
    preds = [fitted_mf.predict(u, i) for u, i in zip(users, items)]
    assert rmse(preds, ratings[users, items]) < 0.3


def test_mf_predict_before_fit():
    model = MatrixFactorization()
    with pytest.raises(RuntimeError):
        model.predict(0, 0)


def test_mf_predict_orders_items(fitted_mf: MatrixFactorization):
    assert fitted_mf.predict(0, 0) > fitted_mf.predict(0, 3)


def test_mf_recommend_excludes_seen(fitted_mf: MatrixFactorization, ratings):
    seen = set(np.flatnonzero(ratings[0]).tolist())
    recs = fitted_mf.recommend(0, k=4, exclude=seen)
    assert recs == [2]


def test_mf_recommend_length(fitted_mf: MatrixFactorization):
    assert len(fitted_mf.recommend(1, k=3)) == 3


def test_popularity_fit_counts(popularity: PopularityRecommender):
    assert popularity.counts_.tolist() == [4.0, 3.0, 2.0, 5.0]


def test_popularity_fit_returns_self(ratings):
    model = PopularityRecommender()
    assert model.fit(ratings) is model


def test_popularity_fit_binary():
    model = PopularityRecommender()
    model.fit(np.array([[0, 2], [0, 0], [1, 0]]))
    assert model.counts_.tolist() == [1.0, 1.0]


def test_popularity_recommend(popularity: PopularityRecommender):
    assert popularity.recommend(0, k=2) == [3, 0]


def test_popularity_precision(popularity: PopularityRecommender):
    recs = popularity.recommend(2, k=2)
    assert precision_at_k(recs, {3}, 2) == pytest.approx(0.5)
