"""The paper's remaining tables and how our runs are matched to its published rows.

- Averages across models (Tables 1, 3 and 5): per technique, the mean over the LLMs the
  paper would average (``average_members``), as extra long-table rows of model ``average``.
  The paper averages its models sampled at temperature 0, each once, so: an LLM counts if
  it is sampled at temperature 0 or is a reasoning model (which has no temperature setting;
  ``models.<m>.family``); configurations of one underlying model (the same endpoint and
  ``model`` id) count as one model, whose value is the mean of theirs; a configuration at
  another temperature (the paper's Table 7 runs at 0.3) is left out. The reference models
  (gold, null, mutant: technique ``reference``) validate the benchmark and are left out. The
  tables' titles say which models the average covers (``average_note``).
- Table 4: the stage distribution of other benchmarks, predicted by the stage classifier
  (``results/stages/benchmarks.jsonl``), beside DL-Bench's own labels.
- Table 5: pass@1 of every model under zero-shot, three-shot (``few-shot``) and stage
  three-shot (``stage-few-shot``) prompting; a model run several times is averaged over its
  runs, each of which drew its own examples (the paper averaged two draws).
- Matching the paper's rows: the paper names models its own way (``models.<m>.paper_name``)
  and reports Table 7 at temperature 0.3, so a model sampled at a temperature other than 0
  is compared under ``<technique> (temperature T)``, the paper's label of those rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from dlbench.config import ModelConfig
from dlbench.generate.techniques import REFERENCE
from dlbench.records import BenchmarkTask, StagePrediction
from dlbench.report.cells import cell
from dlbench.report.external import load_benchmark
from dlbench.tasks.vocab import STAGES

AVERAGE = "average"
KEYS = ["technique", "slice", "dimension", "category", "metric"]
TABLE5_TECHNIQUES = {"zero-shot": "zero-shot", "few-shot": "three-shot", "stage-few-shot": "stage three-shot"}
DLBENCH = "DL-Bench"
UNLABELLED = "(unlabelled)"


# ---------------------------------------------------------------- averages across models


def average_members(models: Mapping[str, ModelConfig] | None, names: Iterable[str]) -> dict[str, str]:
    """Which of ``names`` (models with LLM rows) the averages cover: name → the underlying model
    it stands for. A name without a config (``models`` None or lacking it) stands for itself."""
    members = {}
    for name in sorted(set(names)):
        cfg = (models or {}).get(name)
        if cfg is None:
            members[name] = name
        elif cfg.request_family() == "reasoning" or cfg.temperature == 0:
            members[name] = f"{cfg.base_url or ''} {cfg.model}" if cfg.model else name
    return members


def _llm_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["technique"] != REFERENCE]


def average_rows(table: pd.DataFrame, models: Mapping[str, ModelConfig] | None = None) -> pd.DataFrame:
    """Long-table rows of model ``average``: per technique and group, the mean over the
    underlying models of ``average_members`` that have a value, each the mean of its
    configurations (``n_tasks``: the largest of theirs)."""
    llms = _llm_rows(table)
    members = average_members(models, llms["model"])
    llms = llms[llms["model"].isin(members)]
    if llms.empty:
        return table.iloc[0:0]
    aggregate = {"value": ("value", "mean"), "n_tasks": ("n_tasks", "max"), "n_excluded": ("n_excluded", "sum")}
    per_model = llms.assign(underlying=llms["model"].map(members)).groupby([*KEYS, "underlying"]).agg(**aggregate)
    means = per_model.groupby(KEYS, sort=True).agg(**aggregate)
    # an average over models has no spread over tasks of its own: its interval columns stay empty
    return means.reset_index().assign(model=AVERAGE).reindex(columns=table.columns)


def with_averages(table: pd.DataFrame, models: Mapping[str, ModelConfig] | None = None) -> pd.DataFrame:
    return pd.concat([table, average_rows(table, models)], ignore_index=True)


def average_note(table: pd.DataFrame, models: Mapping[str, ModelConfig] | None = None) -> str:
    """For a table's title: the models the average covers, the names counted with another as
    one model, and the LLMs left out with why."""
    names = sorted(set(_llm_rows(table)["model"]) - {AVERAGE})
    members = average_members(models, names)
    if not members:
        return "average: none (no LLM at temperature 0)"
    first: dict[str, str] = {}
    for name, underlying in members.items():
        first.setdefault(underlying, name)
    covered = [
        name + "".join(f" = {other}" for other, u in members.items() if u == underlying and other != name)
        for underlying, name in first.items()
    ]
    note = f"average: over {', '.join(covered)} (temperature 0 or reasoning, each model once)"
    left = [f"{n} at temperature {(models or {})[n].temperature:g}" for n in names if n not in members]
    return note + (f"; not in it: {', '.join(left)}" if left else "")


def averages_last(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 1 with the average rows after the models'."""
    is_average = frame["model"] == AVERAGE
    return pd.concat([frame[~is_average], frame[is_average]], ignore_index=True)


def average_columns_last(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 3 with the average columns after the models'."""
    averages = [c for c in frame.columns if str(c).startswith(f"{AVERAGE} (")]
    return frame[[c for c in frame.columns if c not in averages] + averages]


# ---------------------------------------------------------------- Table 4


def _shares(stages: Sequence[str | None]) -> dict[str, str]:
    counts = Counter(s or UNLABELLED for s in stages)
    total = max(len(stages), 1)
    return {stage: f"{n} ({100 * n / total:.1f}%)" for stage, n in counts.items()}


def benchmark_prompts(sources: Iterable[object]) -> list[tuple[str, str, str]]:
    """(benchmark, id, prompt) of every task of other benchmarks' files; a source has the
    ``name``, ``format`` and ``path`` of a ``compare.benchmarks`` entry."""
    return [(t.benchmark, t.task_id, t.prompt) for s in sources for t in load_benchmark(s.path, s.format, s.name)]  # type: ignore[attr-defined]


def table4_stages(tasks: Sequence[BenchmarkTask], predictions: Sequence[StagePrediction]) -> pd.DataFrame:
    """Table 4: tasks per stage, DL-Bench's labels beside each other benchmark's predicted stages."""
    columns = {f"{DLBENCH} (labelled, n={len(tasks)})": _shares([t.stage for t in tasks])}
    for name in sorted({p.repo for p in predictions}):
        theirs = [p.predicted for p in predictions if p.repo == name]
        columns[f"{name} (predicted, n={len(theirs)})"] = _shares(theirs)
    seen = {stage for shares in columns.values() for stage in shares}
    order = [*STAGES, *sorted(seen - set(STAGES) - {UNLABELLED}), UNLABELLED]
    rows = [
        [stage, *(shares.get(stage, "0 (0.0%)") for shares in columns.values())]
        for stage in order
        if stage in seen or stage in STAGES
    ]
    return pd.DataFrame(rows, columns=["stage", *columns])


# ---------------------------------------------------------------- Table 5


def table5_techniques(table: pd.DataFrame) -> pd.DataFrame:
    """Table 5: pass@1 (± standard error; all usable tasks) per model and prompting technique, with the average."""
    rows = table[(table["slice"] == "all") & (table["dimension"] == "overall") & (table["metric"] == "pass@1")]
    rows = rows[rows["technique"].isin(TABLE5_TECHNIQUES)]
    present = [t for t in TABLE5_TECHNIQUES if t in set(rows["technique"])]
    wide, errors = (
        rows.pivot_table(index="model", columns="technique", values=v, aggfunc="first", sort=True)
        for v in ("value", "stderr")
    )
    order = [m for m in wide.index if m != AVERAGE] + [m for m in wide.index if m == AVERAGE]
    data = [[model, *(cell(wide, errors, model, t) for t in present)] for model in order]
    return pd.DataFrame(data, columns=["model", *(f"{TABLE5_TECHNIQUES[t]} (%)" for t in present)])


# ---------------------------------------------------------------- matching the paper's rows


def paper_technique(technique: str, temperature: float) -> str:
    """The paper's label of a technique run at ``temperature`` (its Table 7: temperature 0.3)."""
    return technique if temperature == 0 else f"{technique} (temperature {temperature:g})"


def as_paper_names(table: pd.DataFrame, models: Mapping[str, ModelConfig]) -> pd.DataFrame:
    """``table`` with the paper's model and technique names in ``paper_model``/``paper_technique``
    (a model not in ``models``, e.g. the average, keeps its own name at temperature 0)."""
    names = {name: cfg.paper_name or name for name, cfg in models.items()}
    temperatures = {name: cfg.temperature for name, cfg in models.items()}
    return table.assign(
        paper_model=[names.get(m, m) for m in table["model"]],
        paper_technique=[
            paper_technique(t, temperatures.get(m, 0.0))
            for m, t in zip(table["model"], table["technique"], strict=True)
        ],
    )


def table7_matched(comparison: pd.DataFrame) -> pd.DataFrame:
    """Our runs beside the paper's Table 7 rows (pass@k at temperature 0.3)."""
    rows = comparison[comparison["source"] == "Table 7"]
    return rows.drop(columns=["slice", "dimension", "category", "source"]).reset_index(drop=True)
