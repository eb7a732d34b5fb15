"""``results/tables.csv``: pass@k and test pass ratio per model, slice, dimension and category.

The long table has exactly the contract columns ``TABLE_COLUMNS`` (DESIGN.md "Contracts").
It is computed only from evaluation files, the benchmark and the validation table, over
usable tasks only, with rows in a fixed order and exactly rounded sums, so recomputing it
from the same inputs gives the same bytes.

A model is scored on a group (slice × category) only when it has candidates for every
usable task in it: a task without candidates has n = 0 < k, so like any task with fewer
than k samples it leaves pass@k unreported, and the group gets no rows at all (its test
pass ratio would average a subset too). Counting the task as a failure instead would
invent samples; averaging the tasks that are there would compare models on different
tasks. The missing task ids are logged once per model; e.g. the ``mutant`` model has
no candidates for a function without mutation sites. ``run_table`` follows the same rule.

Infrastructure outcomes (``api_error``, ``infra_error``, ``image_error``: the endpoint,
harness or image failed, not the model) are left out of every score, like samples never
drawn; each row's ``n_excluded`` says how many candidates of its tasks were left out.
"""

from __future__ import annotations

import csv
import logging
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.generate.techniques import REFERENCE
from dlbench.records import TABLE_COLUMNS, BenchmarkTask, Evaluation, TableRow
from dlbench.report.metrics import (
    RunCount,
    RunSpread,
    group_pass_at_k,
    mean,
    run_spread,
    share_of_tests_passed,
)
from dlbench.report.slices import ALL, in_slice
from dlbench.report.taxonomy import INFRASTRUCTURE, classify
from dlbench.report.uncertainty import Bootstrap, Spread, holm, paired, spread
from dlbench.store import iter_jsonl, read_jsonl, write_frame

log = logging.getLogger(__name__)

DIMENSIONS = ("overall", "stage", "task", "data")
UNLABELLED = "unlabelled"  # category of a task whose annotators gave no label on a dimension
ADEQUACY_FILE = "adequacy.csv"  # adequacy_table in results/tables/ (the dataset card reads it)

DEFAULT_BOOTSTRAP = Bootstrap()
SPREAD_COLUMNS = ("stderr", "ci_low", "ci_high")  # empty (NaN) where fewer than two tasks


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True)
class ReportInputs:
    """Everything the report reads: tasks with their usability, and one row per candidate."""

    tasks: dict[str, BenchmarkTask]
    usable: dict[str, bool]
    reasons: dict[str, str]
    candidates: pd.DataFrame  # CANDIDATE_COLUMNS, one row per evaluated candidate


CANDIDATE_COLUMNS = ["task_id", "model", "technique", "run", "sample", "status", "passed", "ratio", "kind", "exception"]


def read_validation(path: str | Path | None, task_ids: Iterable[str]) -> tuple[dict[str, bool], dict[str, str]]:
    """Usability of every task from ``validation.csv`` (``task_id``, ``usable``, ``reason``).

    Without a validation file every task counts as usable (with a warning); a task the file
    does not list counts as not usable, since nothing showed that its gold passes.
    """
    ids = list(task_ids)
    if path is None or not Path(path).exists():
        log.warning("no validation table (%s): every task counts as usable", path)
        return dict.fromkeys(ids, True), dict.fromkeys(ids, "")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    missing = {"task_id", "usable"} - set(rows[0] if rows else {"task_id": "", "usable": ""})
    if missing:
        raise ValueError(f"{path}: validation table lacks columns {sorted(missing)}")
    listed = {r["task_id"]: (_truthy(r["usable"]), r.get("reason") or "") for r in rows}
    unlisted = [t for t in ids if t not in listed]
    if unlisted:
        log.warning("%d tasks missing from %s count as not usable", len(unlisted), path)
    usable = {t: listed.get(t, (False, ""))[0] for t in ids}
    reasons = {t: listed[t][1] if t in listed else "not in validation table" for t in ids}
    return usable, reasons


def _truthy(value: str) -> bool:
    return str(value).strip().lower() in {"true", "1", "yes", "y"}


def load_inputs(
    benchmark: str | Path, evaluations: Iterable[str | Path], validation: str | Path | None
) -> ReportInputs:
    """Read the benchmark, every evaluation file and the validation table."""
    tasks = {t.task_id: t for t in read_jsonl(benchmark, BenchmarkTask)}
    usable, reasons = read_validation(validation, tasks)
    read = (ev for path in sorted(str(p) for p in evaluations) for ev in iter_jsonl(path, Evaluation))
    return ReportInputs(tasks=tasks, usable=usable, reasons=reasons, candidates=candidates_of(tasks, read))


def candidates_of(tasks: Mapping[str, BenchmarkTask], evaluations: Iterable[Evaluation]) -> pd.DataFrame:
    """One row per candidate (``CANDIDATE_COLUMNS``) of the evaluations that name a task."""
    rows: dict[tuple, list] = {}
    unknown = 0
    for ev in evaluations:
        task = tasks.get(ev.task_id)
        if task is None:
            unknown += 1
            continue
        # a rerun that wrote the same candidate twice counts once (the later verdict)
        rows[(ev.task_id, ev.model, ev.technique, ev.run, ev.sample)] = _candidate_row(ev, task)
    if unknown:
        log.warning("%d evaluations name tasks not in the benchmark; left out", unknown)
    frame = pd.DataFrame([rows[key] for key in sorted(rows)], columns=CANDIDATE_COLUMNS)
    infra = int((frame["kind"] == INFRASTRUCTURE).sum())
    if infra:
        log.warning(
            "%d candidates failed on infrastructure (endpoint/image/harness), not on the model: not scored", infra
        )
    return frame


def _candidate_row(ev: Evaluation, task: BenchmarkTask) -> list:
    outcomes = {node: str(outcome) for node, outcome in ev.tests.items()}
    kind = "" if ev.passed else classify(str(ev.status), outcomes, ev.exception, ev.detail)
    ratio = share_of_tests_passed(outcomes, task.tests)
    return [
        ev.task_id,
        ev.model,
        ev.technique,
        ev.run,
        ev.sample,
        str(ev.status),
        ev.passed,
        ratio,
        kind,
        ev.exception or "",
    ]


# ---------------------------------------------------------------- per-task scores


@dataclass(frozen=True)
class TaskScore:
    """One model's candidates on one task: pass counts per run and mean test pass ratio."""

    runs: tuple[RunCount, ...]
    ratio: float


Scores = dict[tuple[str, str], dict[str, TaskScore]]  # (model, technique) -> task_id -> score


def scored(candidates: pd.DataFrame) -> pd.DataFrame:
    """The candidates a model is scored on: all but infrastructure faults."""
    return candidates[candidates["kind"] != INFRASTRUCTURE]


def excluded_counts(candidates: pd.DataFrame) -> dict[tuple[str, str], Counter[str]]:
    """Per (model, technique): infrastructure faults per task id."""
    infra = candidates[candidates["kind"] == INFRASTRUCTURE]
    return {(str(m), str(t)): Counter(part["task_id"]) for (m, t), part in infra.groupby(["model", "technique"])}


def task_scores(candidates: pd.DataFrame, task_ids: Iterable[str]) -> Scores:
    """Per (model, technique) and task: samples and passes of every run, mean test pass ratio."""
    keep = scored(candidates)
    keep = keep[keep["task_id"].isin(set(task_ids))]
    key = ["model", "technique", "task_id"]
    counts = keep.groupby([*key, "run"], sort=True)["passed"].agg(["size", "sum"])
    ratios = keep.groupby(key, sort=True)["ratio"].agg(lambda s: mean(s.tolist()))
    runs: dict[tuple[str, str, str], list[RunCount]] = defaultdict(list)
    for (model, technique, task_id, run), n, c in zip(counts.index, counts["size"], counts["sum"], strict=True):
        runs[(model, technique, task_id)].append(RunCount(run=int(run), n=int(n), c=int(c)))
    scores: Scores = defaultdict(dict)
    for (model, technique, task_id), task_runs in runs.items():
        scores[(str(model), str(technique))][str(task_id)] = TaskScore(
            tuple(task_runs), float(ratios[(model, technique, task_id)])
        )
    return dict(scores)


def usable_ids(inputs: ReportInputs) -> list[str]:
    return sorted(t for t, ok in inputs.usable.items() if ok)


# ---------------------------------------------------------------- long table


def category_of(task: BenchmarkTask, dimension: str) -> str:
    if dimension == "overall":
        return ALL
    return getattr(task, dimension) or UNLABELLED


def groups(tasks: Sequence[BenchmarkTask], slices: Sequence[str]) -> list[tuple[str, str, str, list[str]]]:
    """Every (slice, dimension, category) with the ids of its tasks, in table order."""
    out = []
    for name in slices:
        members = [t for t in tasks if in_slice(t, name)]
        for dimension in DIMENSIONS:
            by_category: dict[str, list[str]] = defaultdict(list)
            for t in members:
                by_category[category_of(t, dimension)].append(t.task_id)
            out.extend((name, dimension, category, ids) for category, ids in sorted(by_category.items()))
    return out


@dataclass(frozen=True)
class MetricRow:
    metric: str
    value: float
    n_tasks: int
    spread: Spread


def metric_rows(
    score: dict[str, TaskScore], task_ids: Sequence[str], ks: Sequence[int], boot: Bootstrap
) -> list[MetricRow]:
    """The metrics of one model on one group, each with its uncertainty over tasks; none
    unless every task has candidates, pass@k only where every task has n ≥ k."""
    if not task_ids or any(t not in score for t in task_ids):
        return []
    present = [score[t] for t in task_ids]
    per_metric: list[tuple[str, list[float]]] = []
    for k in sorted(set(ks)):
        values = group_pass_at_k([s.runs for s in present], k)
        if values is not None:
            per_metric.append((f"pass@{k}", values))
    per_metric.append(("test_pass_ratio", [s.ratio for s in present]))
    return [MetricRow(metric, mean(values), len(values), spread(values, boot)) for metric, values in per_metric]


def long_table(
    inputs: ReportInputs, slices: Sequence[str], ks: Sequence[int], boot: Bootstrap = DEFAULT_BOOTSTRAP
) -> pd.DataFrame:
    """The contract table over usable tasks: one row per model×technique×slice×dimension×category×metric."""
    ids = usable_ids(inputs)
    tasks = [inputs.tasks[t] for t in ids]
    scores = task_scores(inputs.candidates, ids)
    excluded = excluded_counts(inputs.candidates)
    rows = []
    for (model, technique), score in sorted(scores.items()):
        _warn_missing(model, technique, score, ids)
        faults = excluded.get((model, technique), Counter())
        for name, dimension, category, members in groups(tasks, slices):
            for m in metric_rows(score, members, ks, boot):
                row = TableRow(
                    model=model,
                    technique=technique,
                    slice=name,
                    dimension=dimension,
                    category=category,
                    metric=m.metric,
                    value=m.value,
                    n_tasks=m.n_tasks,
                    n_excluded=sum(faults[t] for t in members),
                    stderr=_finite(m.spread.stderr),
                    ci_low=_finite(m.spread.ci_low),
                    ci_high=_finite(m.spread.ci_high),
                )
                rows.append(row.model_dump(include=set(TABLE_COLUMNS)))
    return pd.DataFrame(rows, columns=TABLE_COLUMNS).astype({c: float for c in SPREAD_COLUMNS})


def evaluated_table(
    tasks: Mapping[str, BenchmarkTask], evaluations: Iterable[Evaluation], ks: Sequence[int],
    boot: Bootstrap = DEFAULT_BOOTSTRAP,
) -> pd.DataFrame:  # fmt: skip
    """``long_table`` over the tasks a run of ``dlbench evaluate`` scored (those with a
    candidate that met no infrastructure fault), on the whole benchmark slice only: no gold
    run validated them here, as ``validation.csv`` does in the workflow."""
    candidates = candidates_of(tasks, evaluations)
    evaluated = set(scored(candidates)["task_id"])
    usable = {t: t in evaluated for t in tasks}
    inputs = ReportInputs(tasks=dict(tasks), usable=usable, reasons=dict.fromkeys(tasks, ""), candidates=candidates)
    return long_table(inputs, [ALL], ks, boot)


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value


def _warn_missing(model: str, technique: str, score: dict[str, TaskScore], task_ids: Sequence[str]) -> list[str]:
    """Usable tasks without candidates of this model (logged): groups holding them go unscored."""
    missing = [t for t in task_ids if t not in score]
    if missing:
        shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
        log.warning(
            "%s/%s: no candidates for %d usable task(s): %s; groups holding them are not scored",
            model,
            technique,
            len(missing),
            shown,
        )
    return missing


def write_long_table(path: str | Path, table: pd.DataFrame) -> None:
    """Write the contract table atomically, with exactly ``TABLE_COLUMNS``."""
    if list(table.columns) != TABLE_COLUMNS:
        raise ValueError(f"tables.csv columns must be {TABLE_COLUMNS}, got {list(table.columns)}")
    write_frame(path, table)


def run_table(inputs: ReportInputs) -> pd.DataFrame:
    """pass@1 spread across runs per model (the paper's Table 8), over every usable task."""
    rows = []
    ids = usable_ids(inputs)
    for (model, technique), score in sorted(task_scores(inputs.candidates, ids).items()):
        if _warn_missing(model, technique, score, ids):
            continue
        across: RunSpread | None = run_spread([s.runs for s in score.values()])
        if across is not None:
            rows.append([model, technique, across.runs, across.mean, across.variance, across.std, len(score)])
    return pd.DataFrame(rows, columns=["model", "technique", "runs", "mean", "variance", "std", "n_tasks"])


# ---------------------------------------------------------------- paired differences

DIFFERENCE_COLUMNS = [
    "slice", "metric", "compared", "a_model", "a_technique", "b_model", "b_technique", "n_tasks",
    "difference", "stderr", "ci_low", "ci_high", "p_value", "p_holm",
]  # fmt: skip


def compared_pairs(configs: Iterable[tuple[str, str]]) -> list[tuple[str, tuple[str, str], tuple[str, str]]]:
    """Pairs worth a test: two models under one technique, two techniques of one model
    (the reference models validate the benchmark and are not compared)."""
    llms = sorted(c for c in configs if c[1] != REFERENCE)
    pairs = []
    for i, a in enumerate(llms):
        for b in llms[i + 1 :]:
            if a[1] == b[1]:
                pairs.append(("models", a, b))
            elif a[0] == b[0]:
                pairs.append(("techniques", a, b))
    return pairs


def differences_table(
    inputs: ReportInputs, slices: Sequence[str], ks: Sequence[int], boot: Bootstrap = DEFAULT_BOOTSTRAP
) -> pd.DataFrame:
    """A − B per compared pair, slice and pass@k on the usable tasks both have, with a paired
    permutation p-value and Holm's adjustment over the whole table."""
    ids = usable_ids(inputs)
    scores = task_scores(inputs.candidates, ids)
    rows = []
    for name in slices:
        members = [t for t in ids if in_slice(inputs.tasks[t], name)]
        for compared, a, b in compared_pairs(scores):
            common = [t for t in members if t in scores[a] and t in scores[b]]
            for k in sorted(set(ks)):
                a_values = group_pass_at_k([scores[a][t].runs for t in common], k)
                b_values = group_pass_at_k([scores[b][t].runs for t in common], k)
                if a_values is None or b_values is None:
                    continue
                d = paired(a_values, b_values, boot)
                rows.append([name, f"pass@{k}", compared, *a, *b, d.n_tasks, d.difference,
                             d.spread.stderr, d.spread.ci_low, d.spread.ci_high, d.p_value, math.nan])  # fmt: skip
    table = pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)
    table["p_holm"] = holm(table["p_value"].tolist())
    return table


# ---------------------------------------------------------------- benchmark adequacy


def adequacy_table(inputs: ReportInputs, threshold: float) -> pd.DataFrame:
    """Per task: how many ``mutant`` candidates its tests kill; tasks killing too few are flagged.

    A task without mutant candidates has no kill rate and is not flagged (nothing measured).
    """
    mutants = scored(inputs.candidates)
    mutants = mutants[mutants["model"] == "mutant"]
    counts = mutants.groupby("task_id")["passed"].agg(["size", "sum"])
    rows = []
    for task_id in sorted(inputs.tasks):
        task = inputs.tasks[task_id]
        n = int(counts.loc[task_id, "size"]) if task_id in counts.index else 0
        killed = n - int(counts.loc[task_id, "sum"]) if n else 0
        rate = killed / n if n else None
        rows.append(
            [
                task_id,
                task.repo,
                task.stage,
                task.task,
                task.data,
                inputs.usable[task_id],
                n,
                killed,
                rate,
                rate is not None and rate < threshold,
            ]
        )
    columns = ["task_id", "repo", "stage", "task", "data", "usable", "mutants", "killed", "kill_rate", "flagged"]
    return pd.DataFrame(rows, columns=columns)
