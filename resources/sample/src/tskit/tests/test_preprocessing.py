import numpy as np
import pytest

from tskit import MinMaxScaler, StandardScaler


class TestMinMaxScaler:
    def test_init_range(self):
        scaler = MinMaxScaler(feature_range=(-1, 1))
        assert scaler.feature_range == (-1.0, 1.0)

    def test_init_rejects_empty_range(self):
        with pytest.raises(ValueError):
            MinMaxScaler(feature_range=(1, 1))

    def test_fit_statistics(self, fitted_minmax: MinMaxScaler):
        assert np.array_equal(fitted_minmax.data_min_, [1.0, 10.0])
        assert np.array_equal(fitted_minmax.data_max_, [6.0, 60.0])

    def test_fit_constant_feature(self):
        scaler = MinMaxScaler()
        scaler.fit(np.array([[2.0], [2.0]]))
        assert np.array_equal(scaler.transform(np.array([[2.0]])), [[0.0]])

    def test_transform_range(self, fitted_minmax: MinMaxScaler, features):
        out = fitted_minmax.transform(features)
        assert np.allclose(out.min(axis=0), 0.0)
        assert np.allclose(out.max(axis=0), 1.0)

    def test_transform_custom_range(self, features):
        scaler = MinMaxScaler(feature_range=(-1, 1))
        scaler.fit(features)
        assert np.allclose(scaler.transform(features)[0], [-1.0, -1.0])

    def test_transform_before_fit(self, features):
        scaler = MinMaxScaler()
        with pytest.raises(RuntimeError):
            scaler.transform(features)

    def test_inverse_roundtrip(self, fitted_minmax: MinMaxScaler, features):
        scaled = fitted_minmax.transform(features)
        assert np.allclose(fitted_minmax.inverse_transform(scaled), features)

    def test_inverse_of_bounds(self, fitted_minmax: MinMaxScaler):
        out = fitted_minmax.inverse_transform(np.array([[0.0, 1.0]]))
        assert np.allclose(out, [[1.0, 60.0]])

    def test_inverse_before_fit(self):
        scaler = MinMaxScaler()
        with pytest.raises(RuntimeError):
            scaler.inverse_transform(np.zeros((1, 2)))

    def test_fit_transform(self, features):
        scaler = MinMaxScaler()
        assert np.allclose(scaler.fit_transform(features)[2], [0.4, 1.0])


class TestStandardScaler:
    def test_init_flags(self):
        scaler = StandardScaler(with_mean=False)
        assert scaler.with_mean is False and scaler.with_std is True

    def test_fit(self, standard_scaler: StandardScaler, features):
        standard_scaler.fit(features)
        assert np.allclose(standard_scaler.mean_, features.mean(axis=0))
        assert np.allclose(standard_scaler.scale_, features.std(axis=0))

    def test_fit_without_mean(self, features):
        scaler = StandardScaler(with_mean=False)
        scaler.fit(features)
        assert np.array_equal(scaler.mean_, [0.0, 0.0])

    def test_transform_standardizes(self, standard_scaler: StandardScaler, features):
        standard_scaler.fit(features)
        out = standard_scaler.transform(features)
        assert np.allclose(out.mean(axis=0), 0.0)
        assert np.allclose(out.std(axis=0), 1.0)

    def test_transform_before_fit(self, standard_scaler: StandardScaler, features):
        with pytest.raises(RuntimeError):
            standard_scaler.transform(features)

    def test_inverse_roundtrip(self, standard_scaler: StandardScaler, series):
        standard_scaler.fit(series)
        restored = standard_scaler.inverse_transform(standard_scaler.transform(series))
        assert np.allclose(restored, series)

    def test_inverse_of_zero_is_mean(self, standard_scaler: StandardScaler, features):
        standard_scaler.fit(features)
        assert np.allclose(standard_scaler.inverse_transform(np.zeros((1, 2))), [features.mean(axis=0)])

    def test_fit_transform(self, standard_scaler: StandardScaler, series):
        out = standard_scaler.fit_transform(series)
        assert np.isclose(out.mean(), 0.0)

    def test_fit_transform_constant(self):
        scaler = StandardScaler()
        assert np.array_equal(scaler.fit_transform(np.ones(4)), np.zeros(4))
