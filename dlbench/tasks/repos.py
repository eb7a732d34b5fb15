"""``results/benchmark/repos.csv``: each repository's verdict after mining (rule ``assemble``),
written for people and read back by the dataset card."""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RepoRow:
    """One repository's post-mining verdict (a row of ``results/benchmark/repos.csv``)."""

    repo: str
    slug: str
    sha: str | None
    license: str | None
    clone_status: str
    functions: int
    avg_tests_per_function: float
    docstring_coverage: float
    tasks: int
    keep: bool
    reasons: str


REPO_COLUMNS = tuple(f.name for f in dataclasses.fields(RepoRow))


def repos_csv(rows: Sequence[RepoRow]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(REPO_COLUMNS)
    writer.writerows([getattr(r, c) for c in REPO_COLUMNS] for r in rows)
    return buffer.getvalue()


def csv_flag(text: str) -> bool:
    """A boolean cell as written by ``csv`` or pandas (``True``/``False``)."""
    if text not in ("True", "False"):
        raise ValueError(f"not a boolean: {text!r}")
    return text == "True"


def _repo_row(row: dict[str, str]) -> RepoRow:
    return RepoRow(
        repo=row["repo"],
        slug=row["slug"],
        sha=row["sha"] or None,  # csv writes None as an empty cell
        license=row["license"] or None,
        clone_status=row["clone_status"],
        functions=int(row["functions"]),
        avg_tests_per_function=float(row["avg_tests_per_function"]),
        docstring_coverage=float(row["docstring_coverage"]),
        tasks=int(row["tasks"]),
        keep=csv_flag(row["keep"]),
        reasons=row["reasons"],
    )


def read_repos_csv(path: str | Path) -> list[RepoRow]:
    """The rows of a ``repos.csv`` written by :func:`repos_csv`."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != REPO_COLUMNS:
            raise ValueError(f"{path}: columns {reader.fieldnames} are not {list(REPO_COLUMNS)}")
        try:
            return [_repo_row(row) for row in reader]
        except ValueError as err:
            raise ValueError(f"{path}:{reader.line_num}: {err}") from err
