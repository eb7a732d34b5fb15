"""Annotation sheets: written for people (CSV, XLSX, Label Studio) and read back for merging.

Every format carries the same columns (``SHEET_COLUMNS``): the task (id, repo, code, draft
prompt) and the cells an annotator fills in (stage, task, data, keep, edited_prompt, notes).
Readers accept any subset of the columns beyond ``task_id`` and return raw cell text;
normalising the labels is the merge's job (``dlbench.tasks.vocab``).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import zipfile
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from xml.sax.saxutils import escape, quoteattr

from openpyxl import Workbook, load_workbook
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from dlbench.records import FunctionRecord, PromptRecord
from dlbench.store import atomic_path, read_jsonl, write_text
from dlbench.tasks.vocab import VOCABULARIES, cell_text

log = logging.getLogger(__name__)
T = TypeVar("T")

TASK_COLUMNS = ("task_id", "repo", "code", "prompt")
LABEL_COLUMNS = ("stage", "task", "data", "keep", "edited_prompt", "notes")
SHEET_COLUMNS = TASK_COLUMNS + LABEL_COLUMNS
CHOICE_COLUMNS = ("stage", "task", "data", "keep")
SHEET_TITLE = "tasks"
LISTS_TITLE = "lists"  # hidden sheet of drop-down vocabularies too long to write inline
DEPENDENT_TITLE = "dependent_lists"  # hidden sheet of drop-downs that depend on another column
ANY = "(any)"  # its first column: the list offered while the other column is blank or unknown
_WIDTHS = {"task_id": 40, "repo": 24, "code": 80, "prompt": 60, "edited_prompt": 60, "notes": 30}


class SheetError(ValueError):
    """An annotation sheet that cannot be read (names the file and the problem)."""


@dataclass(frozen=True)
class SheetRow:
    """One annotator's raw cells for one task."""

    annotator: str
    task_id: str
    stage: str = ""
    task: str = ""
    data: str = ""
    keep: str = ""
    edited_prompt: str = ""
    notes: str = ""
    line: int = 0  # row in the sheet (1 = header), for messages


# ---------------------------------------------------------------- export


def sheet_rows(prompts: Sequence[PromptRecord], functions: Sequence[FunctionRecord]) -> list[dict[str, str]]:
    """One blank annotation row per drafted prompt, sorted by task id."""
    code = {fn.task_id: fn.source for fn in functions}
    missing = sorted(p.task_id for p in prompts if p.task_id not in code)
    if missing:
        raise SheetError(f"{len(missing)} prompts have no function record, e.g. {missing[0]}")
    rows = []
    for p in sorted(prompts, key=lambda p: p.task_id):
        rows.append(
            {"task_id": p.task_id, "repo": p.repo, "code": code[p.task_id], "prompt": p.prompt}
            | dict.fromkeys(LABEL_COLUMNS, "")
        )
    return rows


def write_csv_sheet(path: str | Path, rows: Sequence[dict[str, str]]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SHEET_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_text(path, buffer.getvalue())


def write_xlsx_sheet(path: str | Path, rows: Sequence[dict[str, str]]) -> None:
    """XLSX with a frozen header, wrapped code/prompt cells and drop-down lists for labels."""
    choices = {name: VOCABULARIES[name] for name in CHOICE_COLUMNS}
    write_xlsx_table(path, rows, SHEET_COLUMNS, choices, ("code", "prompt", "edited_prompt"), _WIDTHS)


def write_xlsx_table(
    path: str | Path,
    rows: Sequence[dict[str, str]],
    columns: Sequence[str],
    choices: Mapping[str, Sequence[str]],
    wrapped: Collection[str],
    widths: Mapping[str, int],
    dependent: Mapping[str, tuple[str, Mapping[str, Sequence[str]]]] | None = None,
) -> None:
    """Any annotation sheet as XLSX: bold frozen header, wrapped long cells, drop-down lists.
    ``dependent``: column → (other column, its value → the list offered): a drop-down whose
    list follows the other column's cell in the same row (``dependent_validation``)."""
    wb = Workbook()
    ws = wb.active
    ws.title = SHEET_TITLE
    ws.append(list(columns))
    for cell in ws[1]:
        cell.font = Font(bold=True)
    for row in rows:
        ws.append([row[c] for c in columns])
    wrap = Alignment(wrap_text=True, vertical="top")
    for idx, name in enumerate(columns, 1):
        letter = get_column_letter(idx)
        ws.column_dimensions[letter].width = widths.get(name, 18)
        if name in wrapped:
            for (cell,) in ws.iter_rows(min_row=2, min_col=idx, max_col=idx):
                cell.alignment = wrap
    last = max(len(rows) + 1, 2)
    for name, values in choices.items():
        letter = get_column_letter(list(columns).index(name) + 1)
        validation = _choice_validation(wb, name, values)
        ws.add_data_validation(validation)
        validation.add(f"{letter}2:{letter}{last}")
    for name, (parent, lists) in (dependent or {}).items():
        letter = get_column_letter(list(columns).index(name) + 1)
        validation = dependent_validation(wb, name, get_column_letter(list(columns).index(parent) + 1), lists)
        ws.add_data_validation(validation)
        validation.add(f"{letter}2:{letter}{last}")
    ws.freeze_panes = "B2"
    with atomic_path(path) as tmp:
        wb.save(tmp)


def _choice_validation(wb: Workbook, column: str, values: Sequence[str]) -> DataValidation:
    """Drop-down list of a vocabulary: inline where Excel allows it (255 characters, no
    commas), else a range on a hidden sheet of lists."""
    inline = '"' + ",".join(values) + '"'
    fits = len(inline) <= 255 and not any("," in v for v in values)
    return DataValidation(
        type="list",
        formula1=inline if fits else _list_range(wb, values),
        allow_blank=True,
        showErrorMessage=False,  # a typed variant is allowed; merge normalises and reports it
        promptTitle=column,
        prompt="Choose from the list (typed spellings are normalised).",
    )


def dependent_validation(
    wb: Workbook, column: str, parent_letter: str, lists: Mapping[str, Sequence[str]]
) -> DataValidation:
    """Drop-down list of ``column`` that follows the ``parent_letter`` cell of its row.

    The hidden ``dependent_lists`` sheet holds one column per parent value: its name in row 1,
    its list's length in row 2, the list from row 3; column A is ``(any)`` (``lists[ANY]``, else
    every value once), offered while the parent cell is blank or holds no listed value. The validation formula
    finds the parent's column (MATCH, case-insensitive as Excel's) and offers that column's
    cells (OFFSET), relative to the row: the cascading drop-down Excel users know.
    """
    if DEPENDENT_TITLE in wb.sheetnames:
        raise ValueError("one dependent drop-down per workbook")
    ws = wb.create_sheet(DEPENDENT_TITLE)
    ws.sheet_state = "hidden"
    every = lists.get(ANY) or list(dict.fromkeys(v for values in lists.values() for v in values))
    parents = [(name, values) for name, values in lists.items() if name != ANY]
    for index, (name, values) in enumerate([(ANY, every), *parents], 1):
        ws.cell(row=1, column=index, value=name)
        ws.cell(row=2, column=index, value=len(values))
        for row, value in enumerate(values, 3):
            ws.cell(row=row, column=index, value=value)
    last = get_column_letter(len(parents) + 1)
    sheet = f"{DEPENDENT_TITLE}!"
    offset = f"IFERROR(MATCH(${parent_letter}2,{sheet}$B$1:${last}$1,0),0)"
    formula = f"OFFSET({sheet}$A$3,0,{offset},INDEX({sheet}$A$2:${last}$2,1,{offset}+1),1)"
    return DataValidation(
        type="list",
        formula1=formula,
        allow_blank=True,
        showErrorMessage=False,  # a typed variant is allowed; merge normalises and reports it
        promptTitle=column,
        prompt="Choose from the list (it follows the row's category; typed spellings are normalised).",
    )


def _list_range(wb: Workbook, values: Sequence[str]) -> str:
    """Write ``values`` into the next column of the hidden ``lists`` sheet; its range as a formula."""
    if LISTS_TITLE in wb.sheetnames:
        ws = wb[LISTS_TITLE]
        column = ws.max_column + 1
    else:
        ws = wb.create_sheet(LISTS_TITLE)
        ws.sheet_state = "hidden"
        column = 1
    for index, value in enumerate(values, 1):
        ws.cell(row=index, column=column, value=value)
    letter = get_column_letter(column)
    return f"{LISTS_TITLE}!${letter}$1:${letter}${len(values)}"


def labelstudio_tasks(rows: Sequence[dict[str, str]]) -> list[dict]:
    """Label Studio import: one task per row with the code and draft prompt as data."""
    return [{"data": {c: row[c] for c in TASK_COLUMNS}} for row in rows]


def labelstudio_config() -> str:
    """Label Studio labeling config: code and prompt shown, choices and text areas to fill."""
    lines = [
        "<View>",
        '  <Header value="$task_id"/>',
        '  <Text name="code" value="$code"/>',
        '  <Text name="prompt_text" value="$prompt"/>',
    ]
    for name in CHOICE_COLUMNS:
        lines.append(f'  <Header value="{name}"/>')
        lines.append(f'  <Choices name="{name}" toName="code" choice="single" showInline="true">')
        lines += [f"    <Choice value={quoteattr(v)}/>" for v in VOCABULARIES[name]]
        lines.append("  </Choices>")
    for name, rows in (("edited_prompt", 6), ("notes", 2)):
        lines.append(f'  <Header value="{escape(name)}"/>')
        lines.append(f'  <TextArea name="{name}" toName="code" rows="{rows}" editable="true" maxSubmissions="1"/>')
    lines.append("</View>")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SheetPaths:
    csv: Path
    xlsx: Path
    labelstudio: Path
    labelstudio_config: Path


def export_sheets(prompts: Sequence[PromptRecord], functions: Sequence[FunctionRecord], out: SheetPaths) -> int:
    """Write the CSV, XLSX and Label Studio files for all tasks; return the number of rows."""
    rows = sheet_rows(prompts, functions)
    write_csv_sheet(out.csv, rows)
    write_xlsx_sheet(out.xlsx, rows)
    write_text(out.labelstudio, json.dumps(labelstudio_tasks(rows), indent=1, ensure_ascii=False) + "\n")
    write_text(out.labelstudio_config, labelstudio_config())
    return len(rows)


def export_sheets_files(
    prompt_paths: Sequence[str | Path], function_paths: Sequence[str | Path], out: SheetPaths
) -> int:
    """Rule entry point: all repositories' prompts and functions → the annotation sheets."""
    prompts = [p for path in prompt_paths for p in read_jsonl(path, PromptRecord)]
    functions = [f for path in function_paths for f in read_jsonl(path, FunctionRecord)]
    count = export_sheets(prompts, functions, out)
    log.info("annotation sheets with %d tasks written", count)
    return count


# ---------------------------------------------------------------- import


def read_sheet(path: str | Path) -> list[SheetRow]:
    """An annotator's sheet by extension: ``.csv``, ``.xlsx`` or Label Studio export ``.json``."""
    path = Path(path)
    readers = {".csv": _read_csv, ".xlsx": _read_xlsx, ".json": _read_labelstudio}
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise SheetError(f"{path}: unsupported sheet format {path.suffix!r} (use .csv, .xlsx or Label Studio .json)")
    try:
        return reader(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise SheetError(f"{path}: cannot read sheet: {exc}") from None
    except zipfile.BadZipFile as exc:  # an .xlsx is a zip archive: empty, binary or another format
        raise SheetError(f"{path}: not an .xlsx workbook ({exc})") from None


def annotator_name(path: str | Path) -> str:
    return Path(path).stem


def _rows_from_table(path: Path, header: Sequence[object], body) -> list[SheetRow]:
    rows = []
    for cells in table_rows(path, header, body, "task_id"):
        labels = {name: cells[name] for name in LABEL_COLUMNS if name in cells}
        rows.append(
            SheetRow(annotator=annotator_name(path), task_id=cells["task_id"], line=int(cells["line"]), **labels)
        )
    return rows


def table_rows(
    path: Path, header: Sequence[object], body: Iterable[Sequence[object]], key: str
) -> list[dict[str, str]]:
    """Rows as cell text by lower-cased column name, plus ``line`` (1 = header); rows
    without a ``key`` cell are skipped."""
    columns = [cell_text(h).lower() for h in header]
    if key not in columns:
        raise SheetError(f"{path}: no {key!r} column (columns: {', '.join(c for c in columns if c)})")
    rows = []
    for line, values in enumerate(body, 2):
        values = list(values) + [None] * (len(columns) - len(values))
        cells = {name: cell_text(value) for name, value in zip(columns, values) if name}
        if cells[key]:
            rows.append(cells | {"line": str(line)})
    return rows


def read_table(path: str | Path, key: str) -> list[dict[str, str]]:
    """A CSV or XLSX sheet's rows (see ``table_rows``), for sheets other than the label sheet."""
    path = Path(path)
    readers = {".csv": _csv_table, ".xlsx": _xlsx_table}
    if path.suffix.lower() not in readers:
        raise SheetError(f"{path}: unsupported sheet format {path.suffix!r} (use .csv or .xlsx)")
    try:
        return readers[path.suffix.lower()](path, lambda header, body: table_rows(path, header, body, key))
    except (OSError, UnicodeDecodeError) as exc:
        raise SheetError(f"{path}: cannot read sheet: {exc}") from None
    except zipfile.BadZipFile as exc:
        raise SheetError(f"{path}: not an .xlsx workbook ({exc})") from None


def _read_csv(path: Path) -> list[SheetRow]:
    return _csv_table(path, lambda header, body: _rows_from_table(path, header, body))


def _read_xlsx(path: Path) -> list[SheetRow]:
    return _xlsx_table(path, lambda header, body: _rows_from_table(path, header, body))


def _csv_table(path: Path, rows: Callable[[Sequence[object], Iterable[Sequence[object]]], list[T]]) -> list[T]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise SheetError(f"{path}: empty sheet")
        return rows(header, reader)


def _xlsx_table(path: Path, rows: Callable[[Sequence[object], Iterable[Sequence[object]]], list[T]]) -> list[T]:
    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        ws = wb[SHEET_TITLE] if SHEET_TITLE in wb.sheetnames else wb.worksheets[0]
        body = ws.iter_rows(values_only=True)
        header = next(body, None)
        if header is None:
            raise SheetError(f"{path}: empty sheet")
        return rows(header, body)
    finally:
        wb.close()


def _read_labelstudio(path: Path) -> list[SheetRow]:
    """Label Studio export (JSON or JSON-MIN): one SheetRow per (task, non-cancelled annotation)."""
    tasks = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(tasks, list):
        raise SheetError(f"{path}: a Label Studio export is a JSON list of tasks")
    rows = []
    for index, task in enumerate(tasks, 1):
        if "data" not in task and "task_id" in task:  # the JSON-MIN export: one flat row per annotation
            who = _labelstudio_annotator(task.get("annotator"))
            cells = {name: _min_cell(task.get(name)) for name in LABEL_COLUMNS if name in task}
            rows.append(
                SheetRow(
                    annotator=f"{annotator_name(path)}/{who}", task_id=cell_text(task["task_id"]), line=index, **cells
                )
            )
            continue
        task_id = cell_text((task.get("data") or {}).get("task_id"))
        if not task_id:
            raise SheetError(f"{path}: task #{index} has no data.task_id")
        for annotation in task.get("annotations") or []:
            if annotation.get("was_cancelled"):
                continue
            cells = _labelstudio_cells(annotation.get("result") or [])
            who = _labelstudio_annotator(annotation.get("completed_by"))
            rows.append(SheetRow(annotator=f"{annotator_name(path)}/{who}", task_id=task_id, line=index, **cells))
    return rows


def _labelstudio_cells(result: list[dict]) -> dict[str, str]:
    cells: dict[str, str] = {}
    for item in result:
        name, value = item.get("from_name"), item.get("value") or {}
        if name in CHOICE_COLUMNS and value.get("choices"):
            cells[name] = cell_text(value["choices"][0])
        elif name in ("edited_prompt", "notes") and value.get("text"):
            text = value["text"]
            cells[name] = "\n".join(text) if isinstance(text, list) else cell_text(text)
    return cells


def _min_cell(value: object) -> str:
    if isinstance(value, dict):  # JSON-MIN keeps multi-choice answers as {"choices": [...]}
        value = (value.get("choices") or value.get("text") or [""])[0]
    if isinstance(value, list):
        value = "\n".join(cell_text(v) for v in value)
    return cell_text(value)


def _labelstudio_annotator(completed_by: object) -> str:
    if isinstance(completed_by, dict):
        return cell_text(completed_by.get("email") or completed_by.get("id"))
    return cell_text(completed_by) or "unknown"
