"""Readable tables for people: Markdown and LaTeX renderings of the report.

Each table is a small pandas frame of display strings (percentages with one decimal),
written as ``results/tables/<name>.md`` and ``<name>.tex``. The paper's numbering is kept
in the names: Table 1 (overall, with the average over the LLMs), Table 2 (live cutoffs),
Table 3 (categories, with the average), Table 4 (stages of other benchmarks), Table 5
(prompting techniques), Table 7 (pass@k, and our temperature-0.3 runs beside the paper's),
Table 8 (runs), plus dataset statistics, the comparison with the published figures, the
failure taxonomy and token usage (``paper_tables.py`` holds Tables 4, 5 and the matching).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

import pandas as pd

from dlbench.config import ModelConfig, ReportConfig
from dlbench.records import StagePrediction
from dlbench.report.beside import DLBENCH, beside, read_long_table, separability, separability_readable
from dlbench.report.cells import MISSING, at, cell, interval, percent, with_error
from dlbench.report.paper_beside import published, separability_beside_paper, table4_beside_paper
from dlbench.report.paper_tables import (
    TABLE5_TECHNIQUES,
    as_paper_names,
    average_columns_last,
    average_note,
    averages_last,
    table4_stages,
    table5_techniques,
    table7_matched,
    with_averages,
)
from dlbench.report.plots import write_plots
from dlbench.report.slices import slice_name, slice_names
from dlbench.report.stats import INSTRUMENTS, cognitive_complexity, cyclomatic_complexity, lines_of_code
from dlbench.report.tables import (
    ADEQUACY_FILE,
    ALL,
    DIMENSIONS,
    UNLABELLED,
    ReportInputs,
    adequacy_table,
    differences_table,
    load_inputs,
    long_table,
    run_table,
    write_long_table,
)
from dlbench.report.taxonomy import DL_SPECIFIC, INFRASTRUCTURE, KINDS, TOP_LEVEL
from dlbench.report.uncertainty import Bootstrap
from dlbench.store import read_jsonl, write_frame, write_text

log = logging.getLogger(__name__)

TEXT_COLUMNS = frozenset(
    {"model", "technique", "slice", "dimension", "category", "metric", "source", "kind", "top_level"}
)


# ---------------------------------------------------------------- renderers


def markdown(frame: pd.DataFrame, title: str) -> str:
    """A GitHub-flavoured Markdown table under a heading."""
    header = [str(c) for c in frame.columns]
    lines = [f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def _md_cell(value: object) -> str:
    return str(value).replace("|", "\\|")


_LATEX_SPECIAL = re.compile(r"([&%$#_{}])")


def latex_escape(text: object) -> str:
    value = str(text).replace("\\", r"\textbackslash{}")
    value = _LATEX_SPECIAL.sub(r"\\\1", value)
    return value.replace("~", r"\textasciitilde{}").replace("^", r"\textasciicircum{}").replace(MISSING, "--")


def latex(frame: pd.DataFrame, caption: str, label: str) -> str:
    """A booktabs ``table`` environment; name columns left-aligned, figures right-aligned."""
    spec = "".join("l" if c in TEXT_COLUMNS else "r" for c in frame.columns)
    body = [" & ".join(latex_escape(v) for v in row) + r" \\" for row in frame.itertuples(index=False)]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{latex_escape(caption)}}}",
        rf"\label{{tab:{label}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in frame.columns) + r" \\",
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def write_table(directory: str | Path, name: str, title: str, frame: pd.DataFrame) -> None:
    """Write ``<name>.md`` and ``<name>.tex`` into ``directory``."""
    out = Path(directory)
    write_text(out / f"{name}.md", markdown(frame, title))
    write_text(out / f"{name}.tex", latex(frame, title, name))


def model_label(model: str, technique: str) -> str:
    return f"{model} ({technique})"


# ---------------------------------------------------------------- tables over tables.csv


def _pick(table: pd.DataFrame, **where: str) -> pd.DataFrame:
    mask = pd.Series(True, index=table.index)
    for column, value in where.items():
        mask &= table[column] == value
    return table[mask]


def _pivot(rows: pd.DataFrame, index: Sequence[str], columns: str, values: str = "value") -> pd.DataFrame:
    return rows.pivot_table(index=list(index), columns=columns, values=values, aggfunc="first", sort=True)


def _models(table: pd.DataFrame) -> list[tuple[str, str]]:
    return sorted(set(zip(table["model"], table["technique"], strict=True)))


def table1_overall(table: pd.DataFrame) -> pd.DataFrame:
    """Table 1: pass@1 (± standard error, 95% interval) and test pass ratio per model."""
    rows = _pick(table, slice=ALL, dimension="overall")
    index = ["model", "technique"]
    wide, errors = _pivot(rows, index, "metric"), _pivot(rows, index, "metric", "stderr")
    low, high = _pivot(rows, index, "metric", "ci_low"), _pivot(rows, index, "metric", "ci_high")
    counts = rows.groupby(index)["n_tasks"].max()
    return pd.DataFrame(
        [
            [
                model,
                technique,
                cell(wide, errors, (model, technique), "pass@1"),
                interval(at(low, (model, technique), "pass@1"), at(high, (model, technique), "pass@1")),
                cell(wide, errors, (model, technique), "test_pass_ratio"),
                int(counts[(model, technique)]),
            ]
            for model, technique in wide.index
        ],
        columns=["model", "technique", "pass@1 (%)", "95% interval", "test pass ratio (%)", "tasks"],
    )


def table2_live(table: pd.DataFrame, slices: Sequence[str]) -> pd.DataFrame:
    """Table 2: pass@1 (± standard error) per model on each live slice (tasks last modified after each cutoff)."""
    rows = _pick(table, dimension="overall", metric="pass@1")
    present = [s for s in slices if s in set(rows["slice"])]
    index = ["model", "technique"]
    wide, errors = _pivot(rows, index, "slice"), _pivot(rows, index, "slice", "stderr")
    counts = rows.groupby("slice")["n_tasks"].max()
    header = [f"{s} (n={int(counts[s])})" for s in present]
    data = [[m, t, *(cell(wide, errors, (m, t), s) for s in present)] for m, t in wide.index]
    return pd.DataFrame(data, columns=["model", "technique", *header])


def table3_categories(table: pd.DataFrame) -> pd.DataFrame:
    """Table 3: pass@1 (± standard error) per stage, task and data category, one column per model."""
    rows = _pick(table, slice=ALL, metric="pass@1")
    rows = rows[rows["dimension"] != "overall"]
    models = _models(rows)
    labelled = rows.assign(label=[model_label(m, t) for m, t in zip(rows["model"], rows["technique"], strict=True)])
    index = ["dimension", "category"]
    wide, errors = _pivot(labelled, index, "label"), _pivot(labelled, index, "label", "stderr")
    counts = rows.groupby(index)["n_tasks"].max()
    order = sorted(wide.index, key=lambda dc: (DIMENSIONS.index(dc[0]), dc[1]))
    labels = [model_label(m, t) for m, t in models]
    data = [[d, c, int(counts[(d, c)]), *(cell(wide, errors, (d, c), label) for label in labels)] for d, c in order]
    return pd.DataFrame(data, columns=["dimension", "category", "tasks", *labels])


def table7_passk(table: pd.DataFrame) -> pd.DataFrame:
    """Table 7: pass@k (± standard error) per model for every k that all tasks support."""
    rows = _pick(table, slice=ALL, dimension="overall")
    rows = rows[rows["metric"].str.startswith("pass@")]
    metrics = sorted(set(rows["metric"]), key=lambda m: int(m.removeprefix("pass@")))
    index = ["model", "technique"]
    wide, errors = _pivot(rows, index, "metric"), _pivot(rows, index, "metric", "stderr")
    data = [[m, t, *(cell(wide, errors, (m, t), k) for k in metrics)] for m, t in wide.index]
    return pd.DataFrame(data, columns=["model", "technique", *(f"{k} (%)" for k in metrics)])


def passk_by_stage(table: pd.DataFrame) -> pd.DataFrame:
    """pass@k (± standard error) per pipeline stage and model, for every k its tasks support."""
    rows = _pick(table, slice=ALL, dimension="stage")
    rows = rows[rows["metric"].str.startswith("pass@")]
    metrics = sorted(set(rows["metric"]), key=lambda m: int(m.removeprefix("pass@")))
    index = ["category", "model", "technique"]
    wide, errors = _pivot(rows, index, "metric"), _pivot(rows, index, "metric", "stderr")
    counts = rows.groupby(index)["n_tasks"].max()
    data = [[*key, int(counts[key]), *(cell(wide, errors, key, k) for k in metrics)] for key in wide.index]
    return pd.DataFrame(data, columns=["stage", "model", "technique", "tasks", *(f"{k} (%)" for k in metrics)])


def scores_summary(table: pd.DataFrame) -> str:
    """pass@1 with its interval and the test pass ratio per model, pass@k when k > 1 is
    reported, and pass@k per pipeline stage: Markdown, for a terminal."""
    parts = [markdown(table1_overall(table), "pass@1 per model")]
    passk = table7_passk(table)
    if len(passk.columns) > 3:  # model, technique, pass@1: only when a larger k is reported
        parts.append(markdown(passk, "pass@k per model"))
    stages = passk_by_stage(table)
    if not stages.empty:
        parts.append(markdown(stages, "pass@k per pipeline stage"))
    return "\n".join(parts)


def differences_readable(differences: pd.DataFrame) -> pd.DataFrame:
    """The paired comparisons on all tasks: difference ± standard error, interval, p-values."""
    rows = differences[differences["slice"] == ALL]
    data = [
        [
            r.metric,
            model_label(r.a_model, r.a_technique),
            model_label(r.b_model, r.b_technique),
            r.n_tasks,
            with_error(r.difference, r.stderr),
            interval(r.ci_low, r.ci_high),
            _p_text(r.p_value),
            _p_text(r.p_holm),
        ]
        for r in rows.itertuples(index=False)
    ]
    columns = ["metric", "A", "B", "tasks", "A − B (points)", "95% interval", "p", "p (Holm)"]
    return pd.DataFrame(data, columns=columns)


def _p_text(p: float) -> str:
    return MISSING if pd.isna(p) else f"{p:.3f}" if p >= 0.001 else "<0.001"


def table8_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Table 8: pass@1 across repeated runs: mean, variance and standard deviation."""
    data = [
        [r.model, r.technique, r.runs, percent(r.mean), f"{10000 * r.variance:.2f}", percent(r.std), r.n_tasks]
        for r in runs.itertuples(index=False)
    ]
    return pd.DataFrame(data, columns=["model", "technique", "runs", "mean (%)", "variance (%²)", "std (%)", "tasks"])


# ---------------------------------------------------------------- dataset statistics


def code_statistics(inputs: ReportInputs) -> pd.DataFrame:
    """Per task: category labels, usability (and why not), lines of code, cyclomatic and cognitive complexity."""
    rows = []
    for task_id in sorted(inputs.tasks):
        task = inputs.tasks[task_id]
        source = task.ground_truth
        rows.append(
            [
                task_id,
                task.stage,
                task.task,
                task.data,
                inputs.usable[task_id],
                inputs.reasons[task_id],
                lines_of_code(source),
                cyclomatic_complexity(source),
                cognitive_complexity(source),
            ]
        )
    columns = ["task_id", "stage", "task", "data", "usable", "reason", "loc", "cyclomatic", "cognitive"]
    return pd.DataFrame(rows, columns=columns)


def dataset_table(stats: pd.DataFrame) -> pd.DataFrame:
    """Dataset statistics per dimension and category: counts and mean code measures."""
    rows = []
    for dimension in DIMENSIONS:
        labels = stats[dimension].fillna(UNLABELLED) if dimension != "overall" else pd.Series(ALL, index=stats.index)
        for category in sorted(set(labels)):
            part = stats[labels == category]
            rows.append(
                [
                    dimension,
                    category,
                    len(part),
                    int(part["usable"].sum()),
                    _mean_text(part["loc"]),
                    _mean_text(part["cyclomatic"]),
                    _mean_text(part["cognitive"]),
                ]
            )
    columns = ["dimension", "category", "tasks", "usable", "mean LOC", "mean cyclomatic", "mean cognitive"]
    return pd.DataFrame(rows, columns=columns)


def _mean_text(values: pd.Series) -> str:
    known = values.dropna()
    return MISSING if known.empty else f"{known.mean():.1f}"


# ---------------------------------------------------------------- paper comparison


def loose_name(name: str) -> str:
    """Compare model and technique names loosely: ``GPT-4o`` matches ``gpt4o``."""
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def read_paper(path: str | Path) -> pd.DataFrame:
    """The paper's published figures, as shipped in ``resources/paper_results.csv`` (a file
    without the ``benchmark`` column is all DL-Bench's)."""
    paper = pd.read_csv(path, comment="#", keep_default_na=False)
    if "benchmark" not in paper:
        paper["benchmark"] = DLBENCH
    return paper.assign(value=paper["value"].astype(float))


def paper_comparison(
    table: pd.DataFrame,
    paper: pd.DataFrame,
    models: Mapping[str, ModelConfig] | None = None,
    benchmark: str = DLBENCH,
) -> pd.DataFrame:
    """Our figures beside the paper's pass@k figures of ``benchmark`` for models, slices,
    categories and metrics present in both. A model is matched by its paper name, and a run at
    a temperature other than 0 by the paper's label of such runs (``paper_tables.as_paper_names``)."""
    keys = ["slice", "dimension", "category", "metric"]
    named = as_paper_names(table, models or {})
    ours = named.assign(
        _model=named["paper_model"].map(loose_name), _technique=named["paper_technique"].map(loose_name)
    )
    paper = published(paper, benchmark)
    paper = paper[paper["metric"].str.startswith("pass@")]
    theirs = paper.assign(_model=paper["model"].map(loose_name), _technique=paper["technique"].map(loose_name))
    both = ours.merge(theirs, on=["_model", "_technique", *keys], suffixes=("", "_paper"))
    both = both.sort_values(["model", "technique", *keys, "source"])
    data = [
        [
            r.model,
            r.paper_technique,
            r.slice,
            r.dimension,
            r.category,
            r.metric,
            percent(r.value),
            f"{r.value_paper:.1f}",
            f"{100 * r.value - r.value_paper:+.1f}",
            r.n_tasks,
            r.source,
        ]
        for r in both.itertuples(index=False)
    ]
    columns = [
        "model",
        "technique",
        "slice",
        "dimension",
        "category",
        "metric",
        "ours (%)",
        "paper (%)",
        "difference",
        "tasks",
        "source",
    ]
    return pd.DataFrame(data, columns=columns)


def table5_beside_paper(
    tables: Mapping[str, pd.DataFrame], paper: pd.DataFrame, models: Mapping[str, ModelConfig] | None = None
) -> pd.DataFrame:
    """Table 5 beside the paper's: per benchmark (DL-Bench's long table and each other's,
    DS-1000's), our overall pass@1 per prompting technique beside the paper's figure."""
    parts = []
    for name, table in tables.items():
        matched = paper_comparison(table, paper, models, benchmark=name)
        base = matched["technique"].str.replace(r" \(temperature .*\)$", "", regex=True)
        keep = (matched["slice"] == "all") & (matched["dimension"] == "overall") & (matched["metric"] == "pass@1")
        keep &= base.isin(TABLE5_TECHNIQUES)
        parts.append(matched[keep].drop(columns=["slice", "dimension", "category", "metric"]).assign(benchmark=name))
    if not parts:
        return pd.DataFrame(columns=["benchmark", "model", "technique"])
    frame = pd.concat(parts, ignore_index=True)
    return frame[["benchmark", *[c for c in frame.columns if c != "benchmark"]]]


# ---------------------------------------------------------------- failures and usage


def failure_counts(inputs: ReportInputs) -> pd.DataFrame:
    """Failing candidates per model and fine-grained kind, over usable tasks (long form)."""
    usable = {t for t, ok in inputs.usable.items() if ok}
    failing = inputs.candidates[~inputs.candidates["passed"] & inputs.candidates["task_id"].isin(usable)]
    counts = failing.groupby(["model", "technique", "kind"]).size()
    rows = [
        [model, technique, kind, TOP_LEVEL[kind], kind in DL_SPECIFIC, int(n)]
        for (model, technique, kind), n in counts.items()
    ]
    return pd.DataFrame(rows, columns=["model", "technique", "kind", "top_level", "dl_specific", "count"])


def failure_table(counts: pd.DataFrame) -> pd.DataFrame:
    """Failure taxonomy distribution: share of each kind among a model's failing candidates.
    Infrastructure faults are not the model's failures: counted apart, not in the shares."""
    kinds = [k for k in KINDS if k in set(counts["kind"]) and k != INFRASTRUCTURE]
    data = []
    for (model, technique), part in counts.groupby(["model", "technique"], sort=True):
        by_kind = dict(zip(part["kind"], part["count"], strict=True))
        faults = int(by_kind.pop(INFRASTRUCTURE, 0))
        total = int(sum(by_kind.values()))
        shares = [percent(by_kind.get(k, 0) / total if total else None) for k in kinds]
        data.append([model, technique, total, faults, *shares])
    header = [f"{k} [{TOP_LEVEL[k]}] (%)" for k in kinds]
    return pd.DataFrame(data, columns=["model", "technique", "failures", "infrastructure (not scored)", *header])


def usage_table(usage: pd.DataFrame) -> pd.DataFrame:
    """Token usage and cost per model: sums of every numeric column of ``results/usage.csv``."""
    keys = [c for c in ("model", "technique") if c in usage.columns]
    if "model" not in keys:
        raise ValueError(f"usage table needs a 'model' column (has {list(usage.columns)})")
    numeric = [c for c in usage.select_dtypes("number").columns if c not in keys]
    summed = usage.groupby(keys, sort=True)[numeric].sum().reset_index()
    for column in numeric:
        summed[column] = summed[column].map(lambda v: f"{v:.4f}" if "cost" in column or "usd" in column else f"{v:.0f}")
    return summed


# ---------------------------------------------------------------- the whole report

DIFFERENCES_FILE = "differences.csv"
SEPARABILITY_FILE = "separability.csv"


def bootstrap_of(cfg: ReportConfig) -> Bootstrap:
    return Bootstrap(cfg.intervals.resamples, cfg.intervals.level, cfg.intervals.seed)


def write_report(
    benchmark: str | Path,
    evaluations: Sequence[str | Path],
    validation: str | Path | None,
    out_csv: str | Path,
    tables_dir: str | Path,
    plots_dir: str | Path,
    cfg: ReportConfig,
    paper: str | Path | None = None,
    usage: str | Path | None = None,
    models: Mapping[str, ModelConfig] | None = None,
    stages: str | Path | None = None,
    others: Mapping[str, str | Path] | None = None,
) -> pd.DataFrame:
    """Compute ``tables.csv`` and write every readable table and plot; return the long table.
    ``models`` name our models the paper's way; ``stages`` are other benchmarks' predicted stages;
    ``others`` name other benchmarks' ``tables.csv`` (DS-1000's): their rows join Tables 1 and 5,
    and the separability statistics are written (``report/beside.py``)."""
    theirs = {name: read_long_table(path) for name, path in (others or {}).items()}
    inputs = load_inputs(benchmark, evaluations, validation)
    slices = slice_names(cfg.cutoffs)
    boot = bootstrap_of(cfg)
    table = long_table(inputs, slices, cfg.k, boot)
    write_long_table(out_csv, table)
    log.info("tables.csv: %d rows over %d usable tasks", len(table), sum(inputs.usable.values()))
    out = Path(tables_dir)
    out.mkdir(parents=True, exist_ok=True)
    averaged = with_averages(table, models)
    note = average_note(table, models)  # which models the averages cover
    write_table(
        out,
        "table1_overall",
        f"Table 1: pass@1 per model{' and benchmark' if theirs else ''} (all usable tasks; {note})",
        _beside_others(averages_last(table1_overall(averaged)), theirs, models, table1_overall),
    )
    write_table(
        out,
        "table2_live",
        "Table 2: pass@1 on live slices (tasks last modified after the cutoff)",
        table2_live(table, slices),
    )
    write_table(
        out,
        "table3_categories",
        f"Table 3: pass@1 per stage, task and data category ({note})",
        average_columns_last(table3_categories(averaged)),
    )
    predicted = read_jsonl(stages, StagePrediction) if stages is not None else []
    write_table(
        out,
        "table4_stages",
        "Table 4: tasks per stage, DL-Bench's labels beside other benchmarks' predicted stages",
        table4_stages(list(inputs.tasks.values()), predicted),
    )
    write_table(
        out,
        "table5_techniques",
        f"Table 5: pass@1 per prompting technique{' and benchmark' if theirs else ''} ({note})",
        _beside_others(table5_techniques(averaged), theirs, models, table5_techniques),
    )
    if theirs:
        separated = pd.concat([separability(table, t, name) for name, t in theirs.items()], ignore_index=True)
        write_frame(out / SEPARABILITY_FILE, separated)
        write_table(
            out,
            "separability",
            "Separability: DL-Bench beside other benchmarks over the models that ran both (definitions: docs/DS1000.md)",
            separability_readable(separated),
        )
    write_table(out, "table7_passk", "Table 7: pass@k per model (± standard error)", table7_passk(table))
    differences = differences_table(inputs, slices, cfg.k, boot)
    write_frame(out / DIFFERENCES_FILE, differences)
    write_table(
        out,
        "differences",
        "Paired differences on the same tasks (bootstrap interval over tasks; sign-flip permutation p-value)",
        differences_readable(differences),
    )
    runs = run_table(inputs)
    write_frame(out / "runs.csv", runs)
    write_table(out, "table8_runs", "Table 8: pass@1 across runs (models with two runs or more)", table8_runs(runs))
    stats = code_statistics(inputs)
    write_frame(out / "dataset_tasks.csv", stats)
    write_table(
        out,
        "dataset",
        f"Dataset statistics per category (code measures of the ground truth; {INSTRUMENTS})",
        dataset_table(stats),
    )
    counts = failure_counts(inputs)
    write_frame(out / "failures.csv", counts)
    write_table(out, "failures", "Failure taxonomy: share of each kind among failing candidates", failure_table(counts))
    adequacy = adequacy_table(inputs, cfg.mutant_kill_threshold)
    write_frame(out / ADEQUACY_FILE, adequacy)
    if paper is not None and Path(paper).exists():
        published_rows = read_paper(paper)
        comparison = paper_comparison(table, published_rows, models)
        write_table(out, "paper_comparison", "Our figures beside the paper's (percent)", comparison)
        write_paper_beside(out, inputs, table, theirs, published_rows, models)
        write_table(
            out,
            "table7_temperature",
            "Table 7: our runs at the paper's temperature 0.3 beside its pass@k (percent)",
            table7_matched(comparison),
        )
        log.info("paper comparison: %d matching rows", len(comparison))
    if usage is not None and Path(usage).exists():
        write_table(
            out, "usage", "Token usage and cost per model", usage_table(pd.read_csv(usage, keep_default_na=False))
        )
    written = write_plots(table, adequacy, cfg.mutant_kill_threshold, plots_dir)
    log.info("plots: %s", ", ".join(p.name for p in written) or "none")
    return table


def write_paper_beside(
    out: Path,
    inputs: ReportInputs,
    table: pd.DataFrame,
    theirs: Mapping[str, pd.DataFrame],
    paper: pd.DataFrame,
    models: Mapping[str, ModelConfig] | None,
) -> None:
    """Tables 4 and 5 and the separability statistics beside the paper's published figures
    (Table 6's: ``failures.write_table6``; Tables 1, 2, 3 and 7: ``paper_comparison``)."""
    write_table(
        out,
        "table4_beside_paper",
        "Table 4: DL-Bench's tasks per stage, ours beside the paper's",
        table4_beside_paper(list(inputs.tasks.values()), paper),
    )
    write_table(
        out,
        "table5_beside_paper",
        "Table 5: pass@1 per prompting technique and benchmark, ours beside the paper's (percent)",
        table5_beside_paper({DLBENCH: table, **theirs}, paper, models),
    )
    if theirs:
        separated = pd.concat([separability(table, t, name) for name, t in theirs.items()], ignore_index=True)
        write_table(
            out,
            "separability_beside_paper",
            "Separability of DL-Bench and other benchmarks, ours beside the paper's",
            separability_beside_paper(separated, paper),
        )


def _beside_others(ours: pd.DataFrame, theirs: Mapping[str, pd.DataFrame], models, make) -> pd.DataFrame:  # noqa: ANN001
    """``ours`` alone, or beside the same table made of each other benchmark's long table."""
    if not theirs:
        return ours
    made = {name: make(with_averages(table, models)) for name, table in theirs.items()}
    return beside({DLBENCH: ours, **{name: averages_last(frame) for name, frame in made.items()}})


def write_live_table(
    benchmark: str | Path,
    evaluations: Sequence[str | Path],
    validation: str | Path | None,
    cutoff: date,
    out_csv: str | Path,
    cfg: ReportConfig,
) -> pd.DataFrame:
    """``results/live/{cutoff}/tables.csv``: the contract table of one live slice, from existing evaluations."""
    inputs = load_inputs(benchmark, evaluations, validation)
    table = long_table(inputs, [slice_name(cutoff)], cfg.k, bootstrap_of(cfg))
    write_long_table(out_csv, table)
    log.info("live slice %s: %d rows", slice_name(cutoff), len(table))
    return table
