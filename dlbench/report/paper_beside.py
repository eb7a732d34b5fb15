"""The paper's published figures beyond pass@k, set beside ours table by table.

``resources/paper_results.csv`` holds, besides the pass@k rows of Tables 1, 2, 3, 5 and 7
(matched by ``render.paper_comparison``), DL-Bench's published stage counts (Table 4, metric
``tasks``), the failure counts per category and DL sub-type (Table 6, metric ``failures``,
``failures.table6_beside_paper``) and the separability statistics of DL-Bench and DS-1000
(dimension ``separability``). Each row names where it was read (docs/ARTIFACTS.md); a
published figure with no row of ours stays, with ours shown as missing, so nothing of the
paper's is dropped silently.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import pandas as pd

from dlbench.records import BenchmarkTask
from dlbench.report.cells import MISSING
from dlbench.tasks.vocab import STAGES

DLBENCH = "DL-Bench"
TASKS = "tasks"
SEPARABILITY = "separability"
# the paper's separability statistics: columns of our tables/separability.csv of the same names
SEPARABILITY_METRICS = ("cohen_d", "fisher_ratio", "spearman_rho", "spearman_p")


def published(paper: pd.DataFrame, benchmark: str = DLBENCH, **where: str) -> pd.DataFrame:
    """The paper's rows of one benchmark (a file without the ``benchmark`` column is all
    DL-Bench's), narrowed by equality on any other column (``metric="tasks"``)."""
    named = paper["benchmark"].fillna(DLBENCH).replace("", DLBENCH) if "benchmark" in paper else DLBENCH
    rows = paper.assign(benchmark=named)
    rows = rows[rows["benchmark"] == benchmark]
    for column, value in where.items():
        rows = rows[rows[column] == value]
    return rows.reset_index(drop=True)


def count_share(n: int | None, total: int) -> str:
    return MISSING if n is None else f"{n} ({100 * n / total:.1f}%)" if total else str(n)


def table4_beside_paper(tasks: Sequence[BenchmarkTask], paper: pd.DataFrame) -> pd.DataFrame:
    """Table 4's DL-Bench column: our tasks per labelled stage beside the paper's counts."""
    theirs = published(paper, metric=TASKS, dimension="stage")
    ours = Counter(t.stage for t in tasks)
    their_counts = {r.category: int(r.value) for r in theirs.itertuples(index=False)}
    their_total = sum(their_counts.values())
    order = [*STAGES, *sorted(set(their_counts) - set(STAGES))]
    rows = [
        [
            stage,
            count_share(ours.get(stage, 0), len(tasks)),
            count_share(their_counts.get(stage), their_total),
            theirs.loc[theirs["category"] == stage, "source"].iloc[0] if stage in their_counts else MISSING,
        ]
        for stage in order
    ]
    columns = ["stage", f"ours (n={len(tasks)})", f"paper (n={their_total})", "source"]
    return pd.DataFrame(rows, columns=columns)


def separability_beside_paper(separated: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Our separability statistics (``tables/separability.csv``) beside the paper's, per
    benchmark and technique of ours and statistic the paper gives for that benchmark."""
    rows = []
    for benchmark in sorted(set(separated["benchmark"])):
        theirs = published(paper, benchmark, dimension=SEPARABILITY)
        ours = separated[separated["benchmark"] == benchmark]
        for r in theirs.itertuples(index=False):
            for mine in ours.itertuples(index=False) if r.metric in SEPARABILITY_METRICS else ():
                value = getattr(mine, r.metric)
                shown = MISSING if value is None or not math.isfinite(value) else f"{value:.2f}"
                rows.append([benchmark, mine.technique, int(mine.models), r.metric, shown, f"{r.value:g}", r.source])
    columns = ["benchmark", "technique", "models", "statistic", "ours", "paper", "source"]
    return pd.DataFrame(rows, columns=columns)
