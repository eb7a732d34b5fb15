import numpy as np
import pytest

from recokit import build_interaction_matrix, leave_one_out, train_test_split_per_user


def test_build_interaction_matrix():
    m = build_interaction_matrix([(0, 1, 2.0), (1, 0, 1.0)], n_users=2, n_items=2)
    assert m.tolist() == [[0.0, 2.0], [1.0, 0.0]]


def test_build_interaction_matrix_overwrites():
    m = build_interaction_matrix([(0, 0, 1.0), (0, 0, 4.0)], 1, 1)
    assert m[0, 0] == 4.0


def test_build_interaction_matrix_out_of_range():
    with pytest.raises(IndexError):
        build_interaction_matrix([(2, 0, 1.0)], 2, 2)


def test_split_is_disjoint_and_complete(ratings):
    train, test = train_test_split_per_user(ratings, test_ratio=0.3, seed=0)
    assert not np.any((train != 0) & (test != 0))
    assert np.allclose(train + test, ratings)


def test_split_keeps_train_for_every_user(ratings):
    train, test = train_test_split_per_user(ratings, test_ratio=0.9, seed=1)
    assert np.all((train != 0).sum(axis=1) >= 1)
    assert np.all((test != 0).sum(axis=1) >= 1)


def test_split_single_interaction_stays_in_train():
    m = np.array([[0.0, 3.0, 0.0]])
    train, test = train_test_split_per_user(m, test_ratio=0.5)
    assert np.array_equal(train, m)
    assert not test.any()


def test_split_is_seeded(ratings):
    a = train_test_split_per_user(ratings, seed=5)[1]
    b = train_test_split_per_user(ratings, seed=5)[1]
    assert np.array_equal(a, b)


def test_leave_one_out(ratings):
    train, test = leave_one_out(ratings, seed=0)
    assert np.all((test != 0).sum(axis=1) == 1)
