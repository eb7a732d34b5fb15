"""Figures of the report (matplotlib, Agg backend: no display needed).

- ``pass1_<dimension>.png``: pass@1 per category of a dimension, one bar per model;
- ``pass1_cutoff.png``: pass@1 against the live-slice cutoff date, one line per model;
- ``mutant_kill_<dimension>.png``: mean mutant kill rate of the tasks of each category
  (only when the ``mutant`` reference model was evaluated).
"""

from __future__ import annotations

import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import pandas as pd  # noqa: E402

from dlbench.report.slices import slice_cutoff  # noqa: E402
from dlbench.report.tables import ALL, UNLABELLED  # noqa: E402
from dlbench.store import atomic_path  # noqa: E402

log = logging.getLogger(__name__)

CATEGORY_DIMENSIONS = ("stage", "task", "data")


def _save(fig: plt.Figure, path: Path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return path


def _label(model: str, technique: str) -> str:
    return f"{model} ({technique})"


def plot_categories(table: pd.DataFrame, dimension: str, path: Path) -> Path | None:
    """Grouped bars: pass@1 per category of ``dimension`` on all tasks, one bar per model."""
    rows = table[(table["slice"] == ALL) & (table["dimension"] == dimension) & (table["metric"] == "pass@1")]
    if rows.empty:
        log.info("no pass@1 rows for dimension %s: no plot", dimension)
        return None
    rows = rows.assign(label=[_label(m, t) for m, t in zip(rows["model"], rows["technique"], strict=True)])
    wide = rows.pivot_table(index="category", columns="label", values="value", aggfunc="first", sort=True)
    errors = rows.pivot_table(index="category", columns="label", values="stderr", aggfunc="first", sort=True)
    errors = errors.reindex(index=wide.index, columns=wide.columns).fillna(0)  # one task: no bar
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(wide.index) + 2), 4.5))
    (100 * wide).plot.bar(ax=ax, width=0.8, yerr=100 * errors, capsize=2, error_kw={"elinewidth": 0.8})
    ax.set_ylabel("pass@1 (%, bars: ± one standard error over tasks)")
    ax.set_xlabel(dimension)
    ax.set_ylim(0, 105)
    ax.set_title(f"pass@1 per {dimension} category")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.tick_params(axis="x", labelrotation=30)
    return _save(fig, path)


def plot_cutoffs(table: pd.DataFrame, path: Path) -> Path | None:
    """pass@1 on each live slice against its cutoff date, one line per model."""
    rows = table[(table["slice"] != ALL) & (table["dimension"] == "overall") & (table["metric"] == "pass@1")]
    if rows.empty:
        log.info("no live-slice rows: no cutoff plot")
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (model, technique), part in rows.groupby(["model", "technique"], sort=True):
        dates = [slice_cutoff(s) for s in part["slice"]]
        points = sorted(zip(dates, 100 * part["value"], strict=True))
        ax.plot([d for d, _ in points], [v for _, v in points], marker="o", label=_label(model, technique))
    ax.set_xlabel("cutoff (tasks last modified after)")
    ax.set_ylabel("pass@1 (%)")
    ax.set_ylim(0, 105)
    ax.set_title("pass@1 on live slices")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.autofmt_xdate()
    return _save(fig, path)


def plot_kill_rates(adequacy: pd.DataFrame, dimension: str, threshold: float, path: Path) -> Path | None:
    """Mean mutant kill rate of the usable tasks of each category, with the flagging threshold."""
    measured = adequacy[adequacy["usable"].astype(bool) & adequacy["kill_rate"].notna()]
    if measured.empty:
        log.info("no mutant candidates on usable tasks: no kill-rate plot for %s", dimension)
        return None
    rates = measured.assign(category=measured[dimension].fillna(UNLABELLED)).groupby("category")["kill_rate"].mean()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(rates) + 2), 4.5))
    ax.bar(rates.index.astype(str), 100 * rates.to_numpy(), color="tab:gray")
    ax.axhline(100 * threshold, color="tab:red", linestyle="--", label=f"flag threshold {100 * threshold:.0f}%")
    ax.set_ylabel("mutants killed (%)")
    ax.set_xlabel(dimension)
    ax.set_ylim(0, 105)
    ax.set_title(f"mutant kill rate per {dimension} category")
    ax.legend(fontsize="small")
    ax.tick_params(axis="x", labelrotation=30)
    return _save(fig, path)


def write_plots(table: pd.DataFrame, adequacy: pd.DataFrame, threshold: float, directory: str | Path) -> list[Path]:
    """Write every figure the data allows into ``directory``; return the files written."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = [plot_categories(table, d, out / f"pass1_{d}.png") for d in CATEGORY_DIMENSIONS]
    written.append(plot_cutoffs(table, out / "pass1_cutoff.png"))
    if adequacy["mutants"].sum() == 0:
        log.info("model 'mutant' was not evaluated: no mutant kill-rate plots")
    else:
        written += [plot_kill_rates(adequacy, d, threshold, out / f"mutant_kill_{d}.png") for d in CATEGORY_DIMENSIONS]
    return [p for p in written if p is not None]
