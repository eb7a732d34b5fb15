"""Display strings of the readable tables: percentages, standard errors, intervals."""

from __future__ import annotations

import pandas as pd

MISSING = "–"


def percent(value: float | None) -> str:
    return MISSING if value is None or pd.isna(value) else f"{100 * value:.1f}"


def with_error(value: float | None, stderr: float | None) -> str:
    """A percentage with its standard error ("45.0 ± 3.1"), or alone where it has none."""
    if stderr is None or pd.isna(stderr) or value is None or pd.isna(value):
        return percent(value)
    return f"{percent(value)} ± {100 * stderr:.1f}"


def interval(low: float | None, high: float | None) -> str:
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return MISSING
    return f"[{percent(low)}, {percent(high)}]"


def at(frame: pd.DataFrame, row: object, column: str) -> float | None:
    """A pivot's entry, ``None`` where the pivot dropped its row or column (nothing there)."""
    return frame.loc[row].get(column) if row in frame.index else None


def cell(wide: pd.DataFrame, errors: pd.DataFrame, row: object, column: str) -> str:
    """One value of a pivot with its standard error from the matching pivot of ``stderr``."""
    return with_error(at(wide, row, column), at(errors, row, column))
