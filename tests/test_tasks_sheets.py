"""Annotation sheets: export (CSV, XLSX, Label Studio) and a person's XLSX back through merge."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET

from openpyxl import load_workbook

from dlbench.config import LabelsConfig, PromptsConfig, StorageConfig
from dlbench.records import MergedLabel
from dlbench.store import read_jsonl, write_jsonl
from dlbench.tasks.merge import MISSING_VOTES, TIE, UNKNOWN_LABEL, MergePaths, merge_labels_files
from dlbench.tasks.prompts import draft_prompts
from dlbench.tasks.sheets import SHEET_COLUMNS, SheetPaths, export_sheets_files, read_sheet
from dlbench.tasks.vocab import DATA, STAGES, TASKS
from tests.test_tasks_prompts import make_function

FUNCTIONS = [make_function(qualname=q) for q in ("Dense.forward", "Dense.backward", "Conv.forward")]
PROMPTS = draft_prompts(FUNCTIONS, PromptsConfig(llm=None), StorageConfig().llm_cache)


def export(tmp_path) -> SheetPaths:
    write_jsonl(tmp_path / "prompts.jsonl", PROMPTS)
    write_jsonl(tmp_path / "functions.jsonl", FUNCTIONS)
    out = SheetPaths(
        *(tmp_path / "out" / n for n in ("sheet.csv", "sheet.xlsx", "labelstudio.json", "labelstudio_config.xml"))
    )
    assert export_sheets_files([tmp_path / "prompts.jsonl"], [tmp_path / "functions.jsonl"], out) == 3
    return out


def test_export_writes_every_format(tmp_path):
    out = export(tmp_path)
    with open(out.csv, newline="", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert list(table[0]) == list(SHEET_COLUMNS)
    assert [r["task_id"] for r in table] == sorted(f.task_id for f in FUNCTIONS)
    assert table[0]["code"] == next(f.source for f in FUNCTIONS if f.task_id == table[0]["task_id"])
    assert all(r["stage"] == "" and r["prompt"] for r in table)

    tasks = json.loads(out.labelstudio.read_text())
    assert [t["data"]["task_id"] for t in tasks] == [r["task_id"] for r in table]
    assert set(tasks[0]["data"]) == {"task_id", "repo", "code", "prompt"}
    view = ET.fromstring(out.labelstudio_config.read_text())
    choices = {c.get("name"): [x.get("value") for x in c] for c in view.iter("Choices")}
    assert choices == {"stage": list(STAGES), "task": list(TASKS), "data": list(DATA), "keep": ["yes", "no"]}
    assert {t.get("name") for t in view.iter("TextArea")} == {"edited_prompt", "notes"}


def test_xlsx_has_dropdowns_frozen_header_and_wrapped_code(tmp_path):
    ws = load_workbook(export(tmp_path).xlsx)["tasks"]
    assert ws.freeze_panes == "B2"
    assert [c.value for c in ws[1]] == list(SHEET_COLUMNS)
    code_col = SHEET_COLUMNS.index("code") + 1
    assert ws.cell(row=2, column=code_col).alignment.wrap_text
    lists = {str(v.sqref): v.formula1 for v in ws.data_validations.dataValidation}
    assert lists["E2:E4"] == '"' + ",".join(STAGES) + '"'
    assert lists["F2:F4"] == '"' + ",".join(TASKS) + '"'
    assert lists["G2:G4"] == '"' + ",".join(DATA) + '"'
    assert lists["H2:H4"] == '"yes,no"'


def fill_like_a_person(path, name: str, cells: dict[int, dict[str, object]]) -> None:
    """Open the exported workbook, type into some cells (row index → column → value), save as ``name``."""
    wb = load_workbook(path)
    ws = wb["tasks"]
    column = {c.value: c.column for c in ws[1]}
    for row, values in cells.items():
        for key, value in values.items():
            ws.cell(row=row + 2, column=column[key], value=value)
    wb.save(path.parent / name)


def test_a_filled_in_xlsx_round_trips_through_merge(tmp_path):
    out = export(tmp_path)
    ids = sorted(f.task_id for f in FUNCTIONS)
    fill_like_a_person(
        out.xlsx,
        "alice.xlsx",
        {
            0: {"stage": "Training", "task": "Classification", "data": "Image", "keep": "yes"},  # drop-down values
            1: {
                "stage": "inference",
                "task": "general",
                "data": "structured array",
                "notes": 42,
            },  # typed, a number in notes
            2: {"keep": "no", "notes": "tests only check shapes"},
        },
    )
    fill_like_a_person(
        out.xlsx,
        "bob.xlsx",
        {
            0: {"stage": "training", "task": "classification", "data": "images"},
            1: {
                "stage": "Model Construction",
                "task": "General",
                "data": "Structured Array",
                "edited_prompt": "Write `Dense.backward`.",
            },
            2: {"keep": "No", "stage": "Deployment"},  # an unknown label
        },
    )
    rows = read_sheet(tmp_path / "out" / "alice.xlsx")
    assert [(r.task_id, r.notes) for r in rows] == [(ids[0], ""), (ids[1], "42"), (ids[2], "tests only check shapes")]
    write_jsonl(tmp_path / "prompts.jsonl", PROMPTS)
    paths = MergePaths(tmp_path / "merged.jsonl", tmp_path / "agreement.csv", tmp_path / "disagreements.csv")
    merge_labels_files(
        [tmp_path / "prompts.jsonl"],
        [tmp_path / "out" / "alice.xlsx", tmp_path / "out" / "bob.xlsx"],
        paths,
        LabelsConfig(),
    )
    merged = {m.task_id: m for m in read_jsonl(paths.merged, MergedLabel)}
    first, second, third = (merged[i] for i in ids)
    assert (first.stage, first.task, first.data, first.keep) == ("Training", "Classification", "Image", True)
    assert (second.stage, second.task, second.data) == (None, "General", "Structured Array")
    assert (second.prompt, second.prompt_source) == ("Write `Dense.backward`.", "edited")
    assert not third.keep and third.discard_reason == "discarded by 2 of 2 annotators: alice: tests only check shapes"
    report = list(csv.DictReader(open(paths.disagreements, encoding="utf-8")))
    found = {(r["task_id"], r["dimension"], r["reason"]) for r in report}
    assert {(ids[1], "stage", TIE), (ids[2], "stage", UNKNOWN_LABEL)} <= found
    assert (ids[0], "stage", MISSING_VOTES) not in found
    agreement = {r["dimension"]: r for r in csv.DictReader(open(paths.agreement, encoding="utf-8"))}
    assert agreement["stage"]["units"] == "2" and agreement["stage"]["annotators"] == "2"
