"""The paper's failure taxonomy (its Table 6): automatic first pass, annotation sheet, merge, table.

The paper sorts the failures of LLM-written DL code into 14 categories (``CATEGORIES``)
and marks the ones specific to deep learning with a sub-type (``DL_SUBTYPES``). People
made that call; here the evidence the harness keeps decides it where it can
(``first_pass``) and people confirm or correct every failing candidate on a sheet:

=============================================  ===================================================
category / DL sub-type                         automatic evidence
=============================================  ===================================================
Syntax Error                                   status ``syntax_error``; SyntaxError, IndentationError
Incorrect/Undefined Variable/Method References NameError, UnboundLocalError
Hallucinated Objects                           ImportError, ModuleNotFoundError, AttributeError on a
                                               *module* ("module 'x' has no attribute")
Wrong Attribute                                any other AttributeError
Wrong Input Type                               TypeError
Performance Issue                              status ``timeout``; TimeoutError
sub-type Shape/Dimension Mismatch              a shape, size, broadcast or axis error (numpy, torch)
sub-type Incorrect DL Library Usage           torch's "received an invalid combination of arguments"
sub-type Data Type Casting                     an error about dtypes ("expected scalar type", "dtype")
=============================================  ===================================================

Everything else (wrong results, other exceptions, missing code) is left blank for people:
the categories that need reading the prompt and the code (Misinterpretation, Silly
Mistake, Missing Corner Case...) have no automatic evidence. Infrastructure faults and the
reference models' candidates (gold, null, mutant: technique ``reference``) are not the
models' failures and never reach the sheet.

Merge, like the label sheets (``dlbench.tasks.merge``): per candidate, the category and the
sub-type with the most annotators' votes win; a tie stays undecided (``category`` None,
``source: annotators``); a candidate no annotator voted on keeps the automatic pass
(``source: auto``, or ``none`` where the pass left it blank). Cells are matched to the
vocabularies ignoring case and punctuation; an unknown spelling is no vote.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.generate.techniques import REFERENCE
from dlbench.records import BenchmarkTask, Evaluation, FailureLabel, Generation
from dlbench.report import taxonomy as tx
from dlbench.report.render import write_table
from dlbench.store import iter_jsonl, read_jsonl, write_jsonl
from dlbench.tasks.merge import majority
from dlbench.tasks.sheets import read_table, write_xlsx_table
from dlbench.tasks.vocab import label_key

log = logging.getLogger(__name__)

MISINTERPRETATION = "Misinterpretation"
SYNTAX_ERROR = "Syntax Error"
SILLY_MISTAKE = "Silly Mistake"
PROMPT_BIASED = "Prompt-biased Code"
MISSING_CORNER_CASE = "Missing Corner Case"
WRONG_INPUT_TYPE = "Wrong Input Type"
HALLUCINATED_OBJECTS = "Hallucinated Objects"
WRONG_ATTRIBUTE = "Wrong Attribute"
NON_PROMPTED = "Non-Prompted Consideration"
OPERATION_ERROR = "Operation/Calculation Error"
PERFORMANCE_ISSUE = "Performance Issue"
PROMPT_MISSING_INFORMATION = "Prompt Missing Information"
UNDEFINED_REFERENCE = "Incorrect/Undefined Variable/Method References"
CONSTANT_VALUE_ERROR = "Constant Value Error"
CATEGORIES = (
    MISINTERPRETATION, SYNTAX_ERROR, SILLY_MISTAKE, PROMPT_BIASED, MISSING_CORNER_CASE, WRONG_INPUT_TYPE,
    HALLUCINATED_OBJECTS, WRONG_ATTRIBUTE, NON_PROMPTED, OPERATION_ERROR, PERFORMANCE_ISSUE,
    PROMPT_MISSING_INFORMATION, UNDEFINED_REFERENCE, CONSTANT_VALUE_ERROR,
)  # fmt: skip

SHAPE = "Shape/Dimension Mismatch"
LIBRARY_USAGE = "Incorrect DL Library Usage"
TENSOR_EDGE_CASES = "Tensor Type/Value Edge Cases"
DTYPE_CASTING = "Data Type Casting"
TENSOR_CONSTANT = "Incorrect Tensor Constant"
DL_SUBTYPES = (SHAPE, LIBRARY_USAGE, TENSOR_EDGE_CASES, DTYPE_CASTING, TENSOR_CONSTANT)
NOT_DL = "none"  # a sub-type cell meaning "not DL-specific" (distinct from a blank: no vote)

TASK_COLUMNS = (
    "candidate_id",
    "task_id",
    "model",
    "technique",
    "status",
    "prompt",
    "code",
    "diff_to_gold",
    "test_output",
)
SUGGESTION_COLUMNS = ("auto_category", "auto_dl_subtype", "auto_evidence")
LABEL_COLUMNS = ("category", "dl_subtype", "notes")
SHEET_COLUMNS = TASK_COLUMNS + SUGGESTION_COLUMNS + LABEL_COLUMNS
_WIDTHS = {"candidate_id": 30, "task_id": 30, "prompt": 60, "code": 70, "diff_to_gold": 70, "test_output": 60,
           "category": 30, "dl_subtype": 26, "notes": 30, "auto_evidence": 30}  # fmt: skip
_WRAPPED = ("prompt", "code", "diff_to_gold", "test_output", "auto_evidence", "notes")
OUTPUT_LIMIT = 4000  # characters of test output per cell: enough to read, small enough for Excel (32,767 max)

_NAME_CATEGORY = {
    "SyntaxError": SYNTAX_ERROR,
    "IndentationError": SYNTAX_ERROR,
    "TabError": SYNTAX_ERROR,
    "NameError": UNDEFINED_REFERENCE,
    "UnboundLocalError": UNDEFINED_REFERENCE,
    "ImportError": HALLUCINATED_OBJECTS,
    "ModuleNotFoundError": HALLUCINATED_OBJECTS,
    "TypeError": WRONG_INPUT_TYPE,
    "TimeoutError": PERFORMANCE_ISSUE,
}
_KIND_CATEGORY = {
    tx.HALLUCINATED_OBJECT: HALLUCINATED_OBJECTS,
    tx.WRONG_ATTRIBUTE: WRONG_ATTRIBUTE,
}  # AttributeError: module or not
_STATUS_CATEGORY = {"syntax_error": SYNTAX_ERROR, "timeout": PERFORMANCE_ISSUE}
_DTYPE_WORDS = re.compile(
    r"dtype|scalar type|expected .*(?:Float|Double|Long|Int|Half)\b|cannot cast|casting", re.IGNORECASE
)
_LIBRARY_MISUSE = re.compile(r"received an invalid combination of arguments")  # torch's message for a wrong call


# ---------------------------------------------------------------- automatic first pass


@dataclass(frozen=True)
class Suggestion:
    category: str | None
    dl_subtype: str | None
    evidence: str


def first_pass(status: str, exception: str | None, detail: str | None = None) -> Suggestion:
    """The category and DL sub-type the harness's evidence supports (see the module docstring)."""
    if status in _STATUS_CATEGORY:
        return Suggestion(_STATUS_CATEGORY[status], None, f"status {status}")
    # a failing run's detail only lists failing node ids (as in taxonomy.classify): not evidence
    found = tx.exception_name(exception if status == "fail" else exception or detail)
    if found is None:
        return Suggestion(None, None, "")
    name, message = found
    kind = tx.kind_of_exception(name, message)
    category = _NAME_CATEGORY.get(name) or _KIND_CATEGORY.get(kind)
    subtype = None
    if kind == tx.SHAPE_MISMATCH:
        subtype = SHAPE
    elif _LIBRARY_MISUSE.search(message):
        subtype = LIBRARY_USAGE
    elif _DTYPE_WORDS.search(message):
        subtype = DTYPE_CASTING
    evidence = f"{name}: {message}"[:200] if category or subtype else ""
    return Suggestion(category, subtype, evidence)


# ---------------------------------------------------------------- failing candidates


@dataclass(frozen=True)
class Failure:
    """A failing candidate with what people need to judge it."""

    evaluation: Evaluation
    task: BenchmarkTask
    code: str | None


def candidate_id(ev: Evaluation | FailureLabel) -> str:
    return f"{ev.model}/{ev.technique}/{ev.run}/{ev.sample}/{ev.task_id}"


def failing_candidates(
    tasks: Mapping[str, BenchmarkTask], evaluations: Iterable[Evaluation], generations: Iterable[Generation]
) -> list[Failure]:
    """Failing candidates of the models under test (not the reference models, not infrastructure faults)."""
    code = {(g.task_id, g.model, g.technique, g.run, g.sample): g.code for g in generations}
    failures = {}
    for ev in evaluations:
        if ev.passed or ev.technique == REFERENCE or ev.task_id not in tasks:
            continue
        if tx.classify(str(ev.status), {}, None) == tx.INFRASTRUCTURE:  # decided by the status alone
            continue
        key = (ev.task_id, ev.model, ev.technique, ev.run, ev.sample)
        failures[candidate_id(ev)] = Failure(ev, tasks[ev.task_id], code.get(key))
    return [failures[k] for k in sorted(failures)]


def auto_label(failure: Failure) -> FailureLabel:
    ev = failure.evaluation
    guess = first_pass(str(ev.status), ev.exception, ev.detail)
    return FailureLabel(
        candidate_id=candidate_id(ev), task_id=ev.task_id, model=ev.model, technique=ev.technique, run=ev.run,
        sample=ev.sample, status=str(ev.status), category=guess.category, dl_subtype=guess.dl_subtype,
        source="auto" if guess.category or guess.dl_subtype else "none", evidence=guess.evidence,
    )  # fmt: skip


def diff_to_gold(gold: str, code: str | None) -> str:
    """Unified diff from the ground truth to the candidate (the candidate's whole answer)."""
    if not code:
        return "(no code)"
    lines = difflib.unified_diff(gold.splitlines(), code.splitlines(), "gold", "candidate", lineterm="")
    return "\n".join(lines)


def test_output(ev: Evaluation) -> str:
    """Why the candidate failed, as the harness recorded it: exception, per-test causes, detail."""
    parts = [ev.exception or ""]
    parts += [f"{node}: {why}" for node, why in sorted(ev.causes.items())]
    parts.append(ev.detail or "")
    text = "\n".join(p for p in parts if p)
    return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + "\n[...]"


def sheet_row(failure: Failure, label: FailureLabel) -> dict[str, str]:
    ev, task = failure.evaluation, failure.task
    return {
        "candidate_id": label.candidate_id, "task_id": ev.task_id, "model": ev.model, "technique": ev.technique,
        "status": str(ev.status), "prompt": task.prompt, "code": failure.code or "",
        "diff_to_gold": diff_to_gold(task.ground_truth, failure.code), "test_output": test_output(ev),
        "auto_category": label.category or "", "auto_dl_subtype": label.dl_subtype or "", "auto_evidence": label.evidence,
    } | dict.fromkeys(LABEL_COLUMNS, "")  # fmt: skip


def write_sheet(path: str | Path, rows: Sequence[dict[str, str]]) -> None:
    choices = {"category": CATEGORIES, "dl_subtype": (*DL_SUBTYPES, NOT_DL)}
    write_xlsx_table(path, rows, SHEET_COLUMNS, choices, _WRAPPED, _WIDTHS)


def export_failures(
    benchmark: str | Path, evaluations: Sequence[str | Path], generations: Sequence[str | Path],
    out_auto: str | Path, out_sheet: str | Path,
) -> int:  # fmt: skip
    """Rule entry point: the automatic pass over every failing candidate and its annotation sheet."""
    tasks = {t.task_id: t for t in read_jsonl(benchmark, BenchmarkTask)}
    evals = (ev for path in sorted(map(str, evaluations)) for ev in iter_jsonl(path, Evaluation))
    gens = (g for path in sorted(map(str, generations)) for g in iter_jsonl(path, Generation))
    failures = failing_candidates(tasks, evals, gens)
    labels = [auto_label(f) for f in failures]
    write_jsonl(out_auto, labels)
    write_sheet(out_sheet, [sheet_row(f, label) for f, label in zip(failures, labels, strict=True)])
    decided = sum(label.category is not None for label in labels)
    log.info("failure sheet: %d failing candidates, %d with an automatic category", len(labels), decided)
    return len(labels)


# ---------------------------------------------------------------- merge


_CATEGORY_KEYS = {label_key(c): c for c in CATEGORIES}
_SUBTYPE_KEYS = {label_key(s): s for s in (*DL_SUBTYPES, NOT_DL)}


def vote(cell: str, vocabulary: Mapping[str, str]) -> str | None:
    """A typed cell as a vocabulary entry; blank or unknown is no vote."""
    return vocabulary.get(label_key(cell)) if cell else None


def merge_failures(
    auto: Sequence[FailureLabel], sheets: Mapping[str, Sequence[Mapping[str, str]]]
) -> list[FailureLabel]:
    """Annotators' sheets (annotator → rows) over the automatic pass: majority per candidate."""
    annotators = sorted(sheets)
    cells = {name: {row["candidate_id"]: row for row in rows} for name, rows in sheets.items()}
    unknown = {cid for rows in cells.values() for cid in rows} - {label.candidate_id for label in auto}
    if unknown:
        log.warning(
            "%d sheet rows name candidates not in the automatic pass (left out), e.g. %s", len(unknown), min(unknown)
        )
    return [
        _merged(label, [cells[name].get(label.candidate_id, {}) for name in annotators], annotators) for label in auto
    ]


def _merged(label: FailureLabel, rows: Sequence[Mapping[str, str]], annotators: Sequence[str]) -> FailureLabel:
    categories = [vote(row.get("category", ""), _CATEGORY_KEYS) for row in rows]
    subtypes = [vote(row.get("dl_subtype", ""), _SUBTYPE_KEYS) for row in rows]
    if not any(categories) and not any(subtypes):
        return label
    category, _ = majority(categories)
    subtype, _ = majority(subtypes)
    notes = "; ".join(row["notes"] for row in rows if row.get("notes"))
    return label.model_copy(update={
        "category": category, "dl_subtype": None if subtype == NOT_DL else subtype, "source": "annotators",
        "evidence": notes, "votes": {"category": categories, "dl_subtype": subtypes}, "annotator_ids": list(annotators),
    })  # fmt: skip


def merge_failures_files(auto: str | Path, sheet_paths: Sequence[str | Path], out: str | Path) -> list[FailureLabel]:
    """Rule entry point: automatic pass + filled sheets (the file name is the annotator) → merged labels."""
    sheets = {Path(p).stem: read_table(p, "candidate_id") for p in sheet_paths}
    merged = merge_failures(read_jsonl(auto, FailureLabel), sheets)
    write_jsonl(out, merged)
    by_source = pd.Series([m.source for m in merged], dtype=object).value_counts().to_dict()
    log.info("failure labels merged from %d sheets: %s", len(sheets), by_source)
    return merged


# ---------------------------------------------------------------- Table 6


UNDECIDED = "(undecided)"


def table6(labels: Sequence[FailureLabel]) -> pd.DataFrame:
    """Table 6: failing candidates per category (and DL sub-type within it), one column per model."""
    frame = pd.DataFrame(
        [(f"{m.model} ({m.technique})", m.category or UNDECIDED, m.dl_subtype or "") for m in labels],
        columns=["model", "category", "dl_subtype"],
    )
    models = sorted(set(frame["model"]))
    rows = []
    for category in (*CATEGORIES, UNDECIDED):
        part = frame[frame["category"] == category]
        rows.append(_count_row(category, "", part, models))
        for subtype in DL_SUBTYPES:
            sub = part[part["dl_subtype"] == subtype]
            if len(sub):
                rows.append(_count_row(category, subtype, sub, models))
    rows.append(_count_row("all", "", frame, models))
    return pd.DataFrame(rows, columns=["category", "DL sub-type", *models, "total", "share (%)"]).pipe(
        _shares, len(frame)
    )


def _count_row(category: str, subtype: str, part: pd.DataFrame, models: Sequence[str]) -> list:
    counts = part["model"].value_counts()
    return [category, subtype, *(int(counts.get(m, 0)) for m in models), len(part), 0.0]


def _shares(table: pd.DataFrame, total: int) -> pd.DataFrame:
    table["share (%)"] = [f"{100 * n / total:.1f}" if total else "–" for n in table["total"]]
    return table


def write_table6(merged: str | Path, tables_dir: str | Path) -> None:
    """``tables/table6_failures.md`` and ``.tex`` from the merged failure labels."""
    labels = read_jsonl(merged, FailureLabel)
    write_table(
        tables_dir, "table6_failures", "Table 6: failure categories of the models' failing candidates", table6(labels)
    )
