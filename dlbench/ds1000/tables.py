"""The DS-1000 track's validation and tables, from its evaluation files.

Gold and null decide which problems count, as they do for DL-Bench's tasks: a problem is
usable when every gold candidate passes and every null candidate fails
(``results/ds1000/validation.csv``, each other with why). The long table is DL-Bench's
(``report/tables.py``, the contract columns, pass@k and the test-call pass ratio with their
uncertainty) over the usable problems, overall only (DS-1000 has no stage, task or data
labels); Tables 1 and 5 get the track's rows under a ``benchmark`` column, as the main report
sets them beside DL-Bench's; ``libraries`` is pass@1 per library and perturbation, the
summary DS-1000's own evaluation prints.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from dlbench.config import ModelConfig, ReportConfig
from dlbench.generate.ds1000 import BENCHMARK
from dlbench.generate.techniques import REFERENCE
from dlbench.records import Ds1000Problem, Evaluation
from dlbench.report.beside import beside
from dlbench.report.cells import percent
from dlbench.report.paper_tables import average_note, averages_last, table5_techniques, with_averages
from dlbench.report.render import bootstrap_of, table1_overall, write_table
from dlbench.report.slices import ALL
from dlbench.report.tables import load_inputs, long_table, write_long_table
from dlbench.store import iter_jsonl, read_jsonl, write_frame

log = logging.getLogger(__name__)

VALIDATION_COLUMNS = ["task_id", "library", "perturbation_type", "usable", "reason"]


def validation(problems: Sequence[Ds1000Problem], evaluations: Iterable[Evaluation]) -> pd.DataFrame:
    """Every problem, usable or why not: gold must pass every run, null must fail every one."""
    gold: dict[str, list[Evaluation]] = {}
    null: dict[str, list[Evaluation]] = {}
    for e in evaluations:
        if e.technique == REFERENCE and e.model in ("gold", "null"):
            (gold if e.model == "gold" else null).setdefault(e.task_id, []).append(e)
    rows = []
    for p in problems:
        reason = _unusable(gold.get(p.task_id, []), null.get(p.task_id, []))
        rows.append([p.task_id, p.library, p.perturbation_type or "", reason is None, reason or ""])
    return pd.DataFrame(rows, columns=VALIDATION_COLUMNS)


def _unusable(gold: list[Evaluation], null: list[Evaluation]) -> str | None:
    if not gold:
        return "gold was not run"
    failed = next((e for e in gold if not e.passed), None)
    if failed is not None:
        return f"gold fails: {failed.status}: {failed.exception or failed.detail or ''}".strip()[:300]
    passed = next((e for e in null if e.passed), None)
    if passed is not None:
        return "null passes: the tests do not tell a wrong answer from the reference"
    return None


def libraries_table(problems: Sequence[Ds1000Problem], evaluations: Iterable[Evaluation], usable: Mapping[str, bool]) -> pd.DataFrame:  # fmt: skip
    """pass@1 (c/n over each problem's candidates, averaged over usable problems) per model,
    technique and library, and per perturbation type."""
    meta = {p.task_id: (p.library, p.perturbation_type or "") for p in problems}
    rows = [
        [e.model, e.technique, e.task_id, *meta[e.task_id], float(e.passed)]
        for e in evaluations
        if e.task_id in meta and usable.get(e.task_id)
    ]
    frame = pd.DataFrame(rows, columns=["model", "technique", "task_id", "library", "perturbation", "passed"])
    per_task = frame.groupby(["model", "technique", "task_id", "library", "perturbation"], as_index=False)[
        "passed"
    ].mean()
    out = []
    for column in ("library", "perturbation"):
        grouped = per_task.groupby(["model", "technique", column])["passed"].agg(["mean", "count"]).reset_index()
        for r in grouped.itertuples(index=False):
            out.append([r.model, r.technique, column, getattr(r, column), percent(r.mean), int(r.count)])
    return pd.DataFrame(out, columns=["model", "technique", "by", "category", "pass@1 (%)", "problems"])


def write_tables(
    benchmark: str | Path,
    problems: str | Path,
    evaluations: Sequence[str | Path],
    out_validation: str | Path,
    out_csv: str | Path,
    tables_dir: str | Path,
    cfg: ReportConfig,
    models: Mapping[str, ModelConfig] | None = None,
) -> pd.DataFrame:
    """The rule ``ds1000_tables``: validation, the long table, Tables 1 and 5's DS-1000 rows and the
    per-library summary; returns the long table."""
    found = read_jsonl(problems, Ds1000Problem)
    every = [e for path in evaluations for e in iter_jsonl(path, Evaluation)]
    checked = validation(found, every)
    write_frame(out_validation, checked)
    inputs = load_inputs(benchmark, evaluations, out_validation)
    table = long_table(inputs, [ALL], cfg.k, bootstrap_of(cfg))
    table = table[table["dimension"] == "overall"].reset_index(drop=True)
    write_long_table(out_csv, table)
    out = Path(tables_dir)
    averaged = with_averages(table, models)
    note = average_note(table, models)
    write_table(out, "table1_overall", f"Table 1, {BENCHMARK} rows: pass@1 per model (usable problems; {note})",
                beside({BENCHMARK: averages_last(table1_overall(averaged))}))  # fmt: skip
    write_table(out, "table5_techniques", f"Table 5, {BENCHMARK} rows: pass@1 per prompting technique ({note})",
                beside({BENCHMARK: table5_techniques(averaged)}))  # fmt: skip
    usable = dict(zip(checked["task_id"], checked["usable"], strict=True))
    write_table(out, "libraries", f"{BENCHMARK}: pass@1 per library and perturbation (usable problems)",
                libraries_table(found, every, usable))  # fmt: skip
    log.info("%s: %d of %d problems usable; %d table rows", BENCHMARK, sum(usable.values()), len(found), len(table))
    return table
