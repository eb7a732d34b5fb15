"""Live slices: the tasks whose function changed after a cutoff date (contamination control).

A task belongs to the slice of a cutoff when its function was last modified strictly after
the cutoff; the slice ``all`` holds every task. Slice names are the ``slice`` column of
``results/tables.csv``: ``all`` and ``after-YYYY-MM-DD``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

ALL = "all"
PREFIX = "after-"


def slice_name(cutoff: date | None) -> str:
    return ALL if cutoff is None else f"{PREFIX}{cutoff.isoformat()}"


def slice_names(cutoffs: Sequence[date]) -> list[str]:
    """``["all", "after-YYYY-MM-DD", ...]`` with the cutoffs in date order, no duplicates."""
    return [ALL, *(slice_name(c) for c in sorted(set(cutoffs)))]


def slice_cutoff(name: str) -> date | None:
    """The cutoff of a slice name (None for ``all``); a clear error for anything else."""
    if name == ALL:
        return None
    if not name.startswith(PREFIX):
        raise ValueError(f"not a slice name: {name!r} (expected 'all' or 'after-YYYY-MM-DD')")
    try:
        return date.fromisoformat(name.removeprefix(PREFIX))
    except ValueError:
        raise ValueError(f"not a slice name: {name!r} (expected 'all' or 'after-YYYY-MM-DD')") from None


def _last_modified(task: object) -> date | None:
    value = task.get("last_modified") if isinstance(task, Mapping) else task.last_modified
    if value is None or (isinstance(value, float) and value != value):  # None or NaN from a frame
        return None
    if isinstance(value, str):
        return date.fromisoformat(value[:10])
    return value.date() if hasattr(value, "date") and callable(value.date) else value


def slice_of(task: object, cutoff: date | None) -> bool:
    """Whether ``task`` (a record or mapping with ``last_modified``) is in the cutoff's slice.

    ``cutoff=None`` is the ``all`` slice. A task with no known modification date is only in
    ``all``: it cannot be shown to postdate any cutoff.
    """
    if cutoff is None:
        return True
    modified = _last_modified(task)
    return modified is not None and modified > cutoff


def in_slice(task: object, name: str) -> bool:
    """Membership by slice name (``all`` or ``after-YYYY-MM-DD``)."""
    return slice_of(task, slice_cutoff(name))
