"""DL-Bench beside another benchmark the same models ran (the DS-1000 track, docs/DS1000.md):
Tables 1 and 5 with a ``benchmark`` column, and the separability statistics.

The statistics compare the two benchmarks over the models that ran both (every LLM at one
technique: the reference models gold, null and mutant, and the averages, are not models), with
x the models' pass@1 on DL-Bench and y on the other benchmark (all usable tasks):

- Cohen's d = (mean y − mean x) / sqrt((s²x + s²y) / 2), s² the sample variance (n − 1):
  how far apart the two benchmarks' scores are, in pooled standard deviations (positive: the
  other benchmark is the easier one);
- Fisher's ratio = (mean y − mean x)² / (s²x + s²y): the between-benchmark over the
  within-benchmark spread;
- Spearman's ρ of x and y with its two-sided p-value (``scipy.stats.spearmanr``): whether
  the benchmarks rank the models alike.

Why these definitions: with them Fisher's ratio is d²/2, and the paper's pair (d = 3.13,
ratio 4.9) satisfies exactly that (3.13²/2 = 4.90); and its ρ = 0.50 with p = 0.25 is what
seven models give (the paper ran seven), where its five stages would give p = 0.39. So the
units are the models and the two samples their scores on each benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from dlbench.generate.techniques import REFERENCE
from dlbench.report.cells import MISSING
from dlbench.report.slices import ALL

DLBENCH = "DL-Bench"
AVERAGE = "average"  # paper_tables.AVERAGE: the averages' rows are no model
SPREAD = ("stderr", "ci_low", "ci_high")
SEPARABILITY_COLUMNS = [
    "benchmark", "technique", "models", "dlbench_mean", "other_mean", "cohen_d", "fisher_ratio",
    "spearman_rho", "spearman_p",
]  # fmt: skip


def read_long_table(path: str | Path) -> pd.DataFrame:
    """A ``tables.csv`` as written (a model may be named "null"; empty spreads are missing)."""
    table = pd.read_csv(path, keep_default_na=False, dtype={"model": str, "technique": str})
    for column in SPREAD:
        if column in table:
            table[column] = pd.to_numeric(table[column].replace("", np.nan))
    return table


def beside(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Readable tables of several benchmarks as one, a ``benchmark`` column first (in the given order)."""
    parts = [frame.assign(benchmark=name) for name, frame in frames.items()]
    if not parts:
        return pd.DataFrame(columns=["benchmark"])
    joined = pd.concat(parts, ignore_index=True)
    return joined[["benchmark", *[c for c in joined.columns if c != "benchmark"]]].fillna(MISSING)


def model_scores(table: pd.DataFrame, technique: str) -> pd.Series:
    """pass@1 over all usable tasks of every LLM at ``technique``, by model."""
    rows = table[
        (table["technique"] == technique)
        & (table["technique"] != REFERENCE)
        & (table["model"] != AVERAGE)
        & (table["slice"] == ALL)
        & (table["dimension"] == "overall")
        & (table["metric"] == "pass@1")
    ]
    return rows.groupby("model")["value"].first().astype(float)


def cohens_d(x: np.ndarray, y: np.ndarray) -> float:
    """(mean y − mean x) over the pooled standard deviation sqrt((s²x + s²y) / 2); NaN when undefined."""
    if len(x) < 2 or len(y) < 2:
        return math.nan
    pooled = math.sqrt((np.var(x, ddof=1) + np.var(y, ddof=1)) / 2)
    return float((np.mean(y) - np.mean(x)) / pooled) if pooled > 0 else math.nan


def fisher_ratio(x: np.ndarray, y: np.ndarray) -> float:
    """(mean y − mean x)² / (s²x + s²y); NaN when undefined."""
    if len(x) < 2 or len(y) < 2:
        return math.nan
    spread = np.var(x, ddof=1) + np.var(y, ddof=1)
    return float((np.mean(y) - np.mean(x)) ** 2 / spread) if spread > 0 else math.nan


def spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Spearman's ρ and its two-sided p-value; NaN below three models or for a constant sample."""
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan
    result = stats.spearmanr(x, y)
    return float(result.statistic), float(result.pvalue)


def separability(dlbench: pd.DataFrame, other: pd.DataFrame, name: str) -> pd.DataFrame:
    """One row per technique both tables have LLM rows for: the statistics over the models that ran both."""
    rows = []
    techniques = sorted(set(dlbench["technique"]) & set(other["technique"]) - {REFERENCE})
    for technique in techniques:
        ours, theirs = model_scores(dlbench, technique), model_scores(other, technique)
        models = sorted(set(ours.index) & set(theirs.index))
        if not models:
            continue
        x, y = ours[models].to_numpy(), theirs[models].to_numpy()
        rho, p = spearman(x, y)
        rows.append([name, technique, len(models), float(np.mean(x)), float(np.mean(y)), cohens_d(x, y),
                     fisher_ratio(x, y), rho, p])  # fmt: skip
    return pd.DataFrame(rows, columns=SEPARABILITY_COLUMNS)


def separability_readable(frame: pd.DataFrame) -> pd.DataFrame:
    """For people: means in percent, the statistics to two decimals, "–" where undefined."""

    def number(value: float, digits: int = 2) -> str:
        return MISSING if value is None or not math.isfinite(value) else f"{value:.{digits}f}"

    return pd.DataFrame(
        [
            [
                r.benchmark,
                r.technique,
                int(r.models),
                number(100 * r.dlbench_mean, 1),
                number(100 * r.other_mean, 1),
                number(r.cohen_d),
                number(r.fisher_ratio),
                number(r.spearman_rho),
                number(r.spearman_p),
            ]  # fmt: skip
            for r in frame.itertuples(index=False)
        ],
        columns=[
            "benchmark",
            "technique",
            "models",
            "DL-Bench pass@1 (%)",
            "its pass@1 (%)",
            "Cohen's d",
            "Fisher's ratio",
            "Spearman's rho",
            "p",
        ],  # fmt: skip
    )
