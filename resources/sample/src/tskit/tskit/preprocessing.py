"""Feature scalers with a scikit-learn-like fit/transform interface."""
import numpy as np


class BaseScaler:
    """Common ``fit_transform``; subclasses implement ``fit`` and ``transform``."""

    def _check_fitted(self):
        if not getattr(self, "fitted_", False):
            raise RuntimeError(f"{type(self).__name__} is not fitted")

    def fit_transform(self, x):
        """Fit to ``x`` and return the transformed ``x``."""
        self.fit(x)
        return self.transform(x)


class MinMaxScaler(BaseScaler):
    """Scale each feature to ``feature_range`` using the training min and max."""

    def __init__(self, feature_range=(0.0, 1.0)):
        """Args:
            feature_range: ``(low, high)`` target range with low < high.
        """
        low, high = feature_range
        if low >= high:
            raise ValueError("feature_range must satisfy low < high")
        self.feature_range = (float(low), float(high))
        self.fitted_ = False

    def fit(self, x):
        """Learn per-feature minimum and maximum.

        Args:
            x: array of shape (n_samples, n_features) or (n_samples,).

        Returns:
            MinMaxScaler: ``self``.
        """
        x = np.asarray(x, dtype=np.float64)
        self.data_min_ = x.min(axis=0)
        self.data_max_ = x.max(axis=0)
        # Constant features map to ``low`` instead of dividing by zero.
        span = self.data_max_ - self.data_min_
        self.data_range_ = np.where(span == 0, 1.0, span)
        self.fitted_ = True
        return self

    def transform(self, x):
        """Scale ``x`` with the fitted statistics.

        Returns:
            np.ndarray: values in ``feature_range`` for data inside the training range.
        """
        self._check_fitted()
        low, high = self.feature_range
        unit = (np.asarray(x, dtype=np.float64) - self.data_min_) / self.data_range_
        return unit * (high - low) + low

    def inverse_transform(self, x):
        """Map scaled values back to the original units."""
        self._check_fitted()
        low, high = self.feature_range
        unit = (np.asarray(x, dtype=np.float64) - low) / (high - low)
        return unit * self.data_range_ + self.data_min_


class StandardScaler(BaseScaler):
    """Standardize features to zero mean and unit variance."""

    def __init__(self, with_mean=True, with_std=True):
        """Args:
            with_mean: subtract the mean.
            with_std: divide by the (population) standard deviation.
        """
        self.with_mean = with_mean
        self.with_std = with_std
        self.fitted_ = False

    def fit(self, x):
        """Learn per-feature mean and standard deviation.

        Args:
            x: array of shape (n_samples, n_features) or (n_samples,).

        Returns:
            StandardScaler: ``self``.
        """
        x = np.asarray(x, dtype=np.float64)
        self.mean_ = x.mean(axis=0) if self.with_mean else np.zeros(x.shape[1:])
        std = x.std(axis=0) if self.with_std else np.ones(x.shape[1:])
        self.scale_ = np.where(std == 0, 1.0, std)
        self.fitted_ = True
        return self

    def transform(self, x):
        """Standardize ``x`` with the fitted statistics."""
        self._check_fitted()
        return (np.asarray(x, dtype=np.float64) - self.mean_) / self.scale_

    def inverse_transform(self, x):
        """Undo ``transform``."""
        self._check_fitted()
        return np.asarray(x, dtype=np.float64) * self.scale_ + self.mean_
