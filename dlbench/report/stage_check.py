"""The manual check of the stage classifier's predictions on other benchmarks (the paper checks
100 of its DS-1000 predictions by hand: 95.0 ± 5.3% at 99% confidence).

``export_check_sheet`` draws a seeded sample of each benchmark's predictions into a sheet
with a ``correct`` column; ``score_check`` reads the filled sheet back into each benchmark's
accuracy with its normal-approximation interval, with and without the finite-population
correction (the paper's 5.3% is the corrected margin of 100 checks among 1,000 predictions).
"""

from __future__ import annotations

import csv
import io
import logging
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.stats import norm

from dlbench.records import StageCheck, StagePrediction
from dlbench.store import read_jsonl, write_jsonl, write_text
from dlbench.tasks.sheets import SheetError, read_table, write_xlsx_table
from dlbench.tasks.vocab import STAGES

log = logging.getLogger(__name__)

CHECK_COLUMNS = ("benchmark", "task_id", "prompt", "predicted", "probability", "correct", "right_stage", "notes")
CHECK_FILLED = ("correct", "right_stage", "notes")
YES, NO = "yes", "no"
_ANSWERS = {
    "yes": True,
    "y": True,
    "true": True,
    "1": True,
    "x": True,
    "no": False,
    "n": False,
    "false": False,
    "0": False,
}


def check_sample(
    predictions: Sequence[StagePrediction], prompts: Sequence[tuple[str, str, str]], size: int, seed: int
) -> list[dict[str, str]]:
    """Sheet rows: per benchmark, a seeded sample of ``size`` of its predictions (all of them
    when it has fewer), in the benchmark's order, with the prompt each was predicted from."""
    text = {(benchmark, task_id): prompt for benchmark, task_id, prompt in prompts}
    rows = []
    for benchmark in sorted({p.repo for p in predictions}):
        theirs = [p for p in predictions if p.repo == benchmark and p.predicted]
        chosen = sorted(np.random.default_rng(seed).permutation(len(theirs))[:size].tolist())
        rows += [
            {
                "benchmark": benchmark, "task_id": theirs[i].task_id, "prompt": text.get((benchmark, theirs[i].task_id), ""),
                "predicted": theirs[i].predicted or "", "probability": f"{theirs[i].probability or 0:.4f}",
            } | dict.fromkeys(CHECK_FILLED, "")
            for i in chosen
        ]  # fmt: skip
    return rows


def export_check_sheet(
    predictions_file: str | Path, prompts: Sequence[tuple[str, str, str]], out_xlsx: str | Path,
    out_csv: str | Path, size: int, seed: int,
) -> int:  # fmt: skip
    """Rule entry: the manual-check sheet of other benchmarks' predicted stages (XLSX with
    drop-downs, and the same rows as CSV); returns the number of rows."""
    rows = check_sample(read_jsonl(predictions_file, StagePrediction), prompts, size, seed)
    choices = {"correct": (YES, NO), "right_stage": STAGES}
    widths = {"task_id": 24, "prompt": 80, "predicted": 22, "right_stage": 22, "notes": 30}
    write_xlsx_table(out_xlsx, rows, CHECK_COLUMNS, choices, ("prompt", "notes"), widths)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CHECK_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_text(out_csv, buffer.getvalue())
    log.info("stage check sheet: %d predictions of %d benchmarks", len(rows), len({r["benchmark"] for r in rows}))
    return len(rows)


def z_value(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence`` (0.99: 2.5758)."""
    return float(norm.ppf(0.5 + confidence / 2))


def normal_margin(correct: int, n: int, confidence: float, population: int | None = None) -> tuple[float, float]:
    """(z, half-width) of the normal-approximation interval of the accuracy ``correct``/``n``:
    z·sqrt(p(1−p)/n), times sqrt((N−n)/(N−1)) for a sample drawn without replacement from
    ``population`` N (None: an unlimited one)."""
    z = z_value(confidence)
    p = correct / n
    margin = z * math.sqrt(p * (1 - p) / n)
    if population is not None and population > 1:
        margin *= math.sqrt(max(population - n, 0) / (population - 1))
    return z, margin


def score_check(
    sheet: str | Path, predictions_file: str | Path, out: str | Path, confidence: float
) -> list[StageCheck]:
    """Rule entry: a filled check sheet → each benchmark's accuracy with its interval
    (``results/stages/check.jsonl``, one record per benchmark). A ``correct`` cell reads yes/no (also y/n, true/false,
    1/0, x); a blank one is not checked; anything else stops with the row named."""
    population = Counter(p.repo for p in read_jsonl(predictions_file, StagePrediction) if p.predicted)
    rows = read_table(sheet, "task_id")
    checks = []
    for benchmark in sorted({row.get("benchmark", "") for row in rows}):
        theirs = [row for row in rows if row.get("benchmark", "") == benchmark]
        answers = []
        for row in theirs:
            cell = str(row.get("correct", "")).strip().lower()
            if cell and cell not in _ANSWERS:
                raise SheetError(f"{sheet}: {benchmark} {row['task_id']}: 'correct' is {cell!r}, not yes or no")
            if cell:
                answers.append(_ANSWERS[cell])
        n, right, total = len(answers), sum(answers), population.get(benchmark, len(theirs))
        z, margin = z_value(confidence), normal_margin(right, n, confidence)[1] if n else None
        fpc = normal_margin(right, n, confidence, total)[1] if n else None
        accuracy = right / n if n else None
        checks.append(
            StageCheck(
                benchmark=benchmark, population=total, sampled=len(theirs), checked=n, correct=right,
                accuracy=_r(accuracy), confidence=confidence, z=round(z, 4), margin=_r(margin), margin_fpc=_r(fpc),
                ci_low=_r(max(0.0, accuracy - fpc)) if accuracy is not None and fpc is not None else None,
                ci_high=_r(min(1.0, accuracy + fpc)) if accuracy is not None and fpc is not None else None,
            )
        )  # fmt: skip
    write_jsonl(out, checks)
    for c in checks:
        log.info(
            "stage check %s: %s of %s correct, %s ± %s at %g%% confidence (without the finite-population correction: ± %s)",
            c.benchmark, c.correct, c.checked, c.accuracy, c.margin_fpc, 100 * confidence, c.margin,
        )  # fmt: skip
    return checks


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
