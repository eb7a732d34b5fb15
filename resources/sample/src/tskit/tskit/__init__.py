"""tskit: time-series windowing, scaling and forecast metrics with numpy."""
from .metrics import mae, mape, rmse, smape
from .preprocessing import MinMaxScaler, StandardScaler
from .windows import (
    difference,
    inverse_difference,
    lag_features,
    moving_average,
    sliding_windows,
    time_split,
)

__all__ = [
    "MinMaxScaler",
    "StandardScaler",
    "difference",
    "inverse_difference",
    "lag_features",
    "mae",
    "mape",
    "moving_average",
    "rmse",
    "sliding_windows",
    "smape",
    "time_split",
]
