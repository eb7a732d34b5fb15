"""labels/annotator_*.csv: reproducible, one row per task, and the disagreements the merge must handle."""

from __future__ import annotations

import csv
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parent.parent / "resources" / "sample"
sys.path.insert(0, str(SAMPLE))  # the sample scripts are plain modules, not a package

import make_labels  # noqa: E402
import sample_world as sw  # noqa: E402

ANNOTATORS = (1, 2, 3)
DIMS = tuple(make_labels.DIMENSIONS)
TASKS = make_labels.load_tasks()
CANONICAL = {v.lower(): k for k, vs in make_labels.SPELLINGS.items() for v in vs} | {
    label.lower(): label for labels in make_labels.DIMENSIONS.values() for label in labels
}


def read_sheet(annotator: int) -> list[dict]:
    with (sw.LABELS_DIR / f"annotator_{annotator}.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


SHEETS = {a: read_sheet(a) for a in ANNOTATORS}


def test_sheets_are_reproducible(tmp_path):
    subprocess.run(
        [sys.executable, str(SAMPLE / "make_labels.py"), "--out", str(tmp_path)], check=True, capture_output=True
    )
    for a in ANNOTATORS:
        assert (tmp_path / f"annotator_{a}.csv").read_bytes() == (sw.LABELS_DIR / f"annotator_{a}.csv").read_bytes()


@pytest.mark.parametrize("annotator", ANNOTATORS)
def test_one_row_per_task(annotator):
    with (sw.LABELS_DIR / f"annotator_{annotator}.csv").open(encoding="utf-8") as fh:
        assert fh.readline().strip() == ",".join(make_labels.COLUMNS)
    rows = SHEETS[annotator]
    assert [r["task_id"] for r in rows] == [make_labels.task_id(t) for t in TASKS]
    assert [r["repo"] for r in rows] == [t["repo"] for t in TASKS]
    assert {r["keep"] for r in rows} <= {"yes", "no", ""}


@pytest.mark.parametrize("annotator", ANNOTATORS)
def test_disagreement_rate(annotator):
    cells = wrong = 0
    for row, truth in zip(SHEETS[annotator], TASKS):
        for dim in DIMS:
            cells += 1
            wrong += bool(row[dim]) and CANONICAL.get(row[dim].lower()) != truth[dim]
    assert 0.10 <= wrong / cells <= 0.20


def test_merge_cases_are_present():
    rows = list(zip(*(SHEETS[a] for a in ANNOTATORS)))
    ties = [r for r in rows for d in DIMS if len({CANONICAL.get(x[d].lower(), x[d]) for x in r if x[d]}) == 3]
    assert len(ties) >= 2
    keep_no = [r for r in rows if sum(x["keep"] == "no" for x in r) == 2]
    assert len(keep_no) == 2 and all(x["notes"] for r in keep_no for x in r if x["keep"] == "no")
    skipped = [x for x in SHEETS[3] if not any(x[d] for d in DIMS)]
    assert len(skipped) == 5
    labels = {x[d] for sheet in SHEETS.values() for x in sheet for d in DIMS}
    assert "Audio" in labels
    assert {"pre-processing", "Model construction", "eval & metrics", "structured array", "TEXT"} <= labels
    prompts = Counter(x["edited_prompt"] for sheet in SHEETS.values() for x in sheet if x["edited_prompt"])
    assert sum(prompts.values()) == 6 and sorted(prompts.values()) == [1, 1, 2, 2]
