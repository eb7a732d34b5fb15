"""The paper's failure taxonomy (its Table 6): automatic first pass, annotation sheet, merge, table.

The paper sorts the failures of LLM-written DL code into 14 categories (``CATEGORIES``) and,
within nine of them, marks the DL-specific ones with a sub-type (``DL_SUBTYPES_BY_CATEGORY``:
18 sub-types, each under exactly one parent; ``NOT_DL`` says a failure is not DL-specific).
People made that call; here the evidence the harness keeps decides it where it can
(``first_pass``) and people confirm or correct every failing candidate on a sheet whose
sub-type drop-down lists the sub-types of the category chosen in the same row.

Sources of the vocabularies (the paper's text is not reachable offline: docs/TAXONOMY.md):

- categories: the DL-Bench authors' annotation sheet (github.com/alirezadaghigh99/DL-Bench,
  ``Taxonomy-Data/taxonomy.xlsx``, sheet ``taxes``, categories 1-14), named as Tambon et
  al. (2024) name the bug patterns the paper's taxonomy extends;
- sub-types and their parents: the authors' leaderboard of the same study
  (github.com/Smart-System-testing-lab/DL-Bench, ``Leaderboard.md`` at c7a4c63, section 6,
  the rows marked DL-specific), spelt as issue 26 quotes the paper where it quotes it
  ("Type mismatch", "Missing/Undefined DL Modules", "Shape and Dimension Edge Cases"); the
  leaderboard's spellings are accepted on the sheets (``SUBTYPE_ALIASES``).

Automatic evidence (each sub-type comes with its parent category):

=======================================================  ==============================================
category / DL sub-type                                   automatic evidence
=======================================================  ==============================================
Syntax Error                                             status ``syntax_error``; SyntaxError,
                                                         IndentationError
Hallucinated Objects / Missing/Undefined DL Modules      NameError naming a DL framework or its alias
                                                         (``torch``, ``nn``, ``F``, ``tf``...); "No module
                                                         named" a DL module; AttributeError "module
                                                         'torch...' has no attribute"
Hallucinated Objects                                     any other ImportError, ModuleNotFoundError,
                                                         AttributeError on a *module*
Wrong Attribute / Wrong DL Module import                 ImportError "cannot import name 'x' from" a DL
                                                         module
Wrong Attribute / Incorrect API Usage                    AttributeError on a tensor ("'Tensor' object
                                                         has no attribute")
Wrong Attribute                                          any other AttributeError
Incorrect/Undefined Variable/Method References           any other NameError, UnboundLocalError
Wrong Input Type / Incorrect ML/DL function library      torch's "received an invalid combination of
arguments                                                arguments"
Wrong Input Type / Type mismatch                         a dtype error ("expected scalar type Float
                                                         but found Double", "dtype")
Wrong Input Type                                         any other TypeError
Operation/Calculation Error / Data Type Casting Issues   numpy's "Cannot cast ... casting rule"
Operation/Calculation Error / Shape and Dimension        a matrix product or broadcast of incompatible
Errors in Operations                                     shapes ("cannot be multiplied", "could not be
                                                         broadcast", "must match the size of tensor")
Performance Issue                                        status ``timeout``; TimeoutError
=======================================================  ==============================================

How the authors placed such failures by hand backs these rows (``taxonomy.xlsx``, sheet
``Final``: "not importing torch" seven times and "torch_sparse does not exist" under
nonexistent objects, "import non-existent method" under wrong attributes, "type mismatch"
22 times and "wrong arguments" 14 times under wrong input types, "matrix multiplication"
under arithmetic errors). Any other shape or dimension error is left to people (the authors
put those under four categories, most under misinterpretation, which takes reading the
prompt); its ``evidence`` names the shape sub-types to choose from. Everything else (wrong
results, other exceptions, missing code) is left blank for people: the categories that need
reading the prompt and the code (Misinterpretation, Silly Mistake, Missing Corner Case...)
have no automatic evidence. Infrastructure faults and the reference models' candidates
(gold, null, mutant: technique ``reference``) are not the models' failures and never reach
the sheet.

Merge, like the label sheets (``dlbench.tasks.merge``): per candidate, the category and the
sub-type with the most annotators' votes win; a tie stays undecided (``category`` None,
``source: annotators``); a candidate no annotator voted on keeps the automatic pass
(``source: auto``, or ``none`` where the pass left it blank). Cells are matched to the
vocabularies ignoring case and punctuation; an unknown spelling is no vote. The hierarchy
holds in every vote: a sub-type alone also votes for its parent category, a sub-type under
another category than the one its annotator chose is no sub-type vote, and a winning
sub-type whose parent is not the winning category is dropped.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.generate.techniques import REFERENCE
from dlbench.records import BenchmarkTask, Evaluation, FailureLabel, Generation
from dlbench.report import taxonomy as tx
from dlbench.report.cells import MISSING
from dlbench.report.paper_beside import count_share, published
from dlbench.report.render import read_paper, write_table
from dlbench.store import iter_jsonl, read_jsonl, write_jsonl
from dlbench.tasks.merge import majority
from dlbench.tasks.sheets import ANY, read_table, write_xlsx_table
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

# The DL sub-types under their parent categories (module docstring: sources)
DL_LIBRARY_USAGE = "Incorrect DL library or framework usage"
SHAPE_MISMATCH = "Shape and dimension mismatch"
DL_FUNCTIONALITY = "Incorrect DL/ML Functionality"
TENSOR_EDGE_CASES = "Tensor Type and Value Edges"
SHAPE_EDGE_CASES = "Shape and Dimension Edge Cases"
TENSOR_SHAPE_MISMATCH = "Tensor shape mismatch"
LIBRARY_ARGUMENTS = "Incorrect ML/DL function library arguments"
TYPE_MISMATCH = "Type mismatch"
UNDEFINED_DL_MODULES = "Missing/Undefined DL Modules"
DL_MODULE_USAGE = "Incorrect Usage of DL Modules"
WRONG_DL_IMPORT = "Wrong DL Module import"
API_USAGE = "Incorrect API Usage"
DTYPE_CASTING = "Data Type Casting Issues"
SHAPE_IN_OPERATIONS = "Shape and Dimension Errors in Operations"
ALGEBRAIC = "Incorrect Algebraic Calculations"
TENSOR_CONSTANT = "Incorrect Tensor Constant Value"
DL_PERFORMANCE = "DL performance issue"
DL_LIBRARY_UNDEFINED = "Not defining correct DL library"
DL_SUBTYPES_BY_CATEGORY: dict[str, tuple[str, ...]] = {
    MISINTERPRETATION: (DL_LIBRARY_USAGE, SHAPE_MISMATCH, DL_FUNCTIONALITY),
    MISSING_CORNER_CASE: (TENSOR_EDGE_CASES, SHAPE_EDGE_CASES),
    WRONG_INPUT_TYPE: (TENSOR_SHAPE_MISMATCH, LIBRARY_ARGUMENTS, TYPE_MISMATCH),
    HALLUCINATED_OBJECTS: (UNDEFINED_DL_MODULES, DL_MODULE_USAGE),
    WRONG_ATTRIBUTE: (WRONG_DL_IMPORT, API_USAGE),
    OPERATION_ERROR: (DTYPE_CASTING, SHAPE_IN_OPERATIONS, ALGEBRAIC),
    PERFORMANCE_ISSUE: (DL_PERFORMANCE,),
    PROMPT_MISSING_INFORMATION: (DL_LIBRARY_UNDEFINED,),
    CONSTANT_VALUE_ERROR: (TENSOR_CONSTANT,),
}  # in the order of CATEGORIES
DL_SUBTYPES = tuple(s for subtypes in DL_SUBTYPES_BY_CATEGORY.values() for s in subtypes)
PARENT = {s: category for category, subtypes in DL_SUBTYPES_BY_CATEGORY.items() for s in subtypes}
NOT_DL = "Not DL-related"  # a sub-type cell meaning "not DL-specific" (distinct from a blank: no vote)
# the leaderboard's spellings where they differ, and this project's earlier cell for NOT_DL
SUBTYPE_ALIASES = {
    "Tensor Type and Value Edge Cases": TENSOR_EDGE_CASES,
    "Shape and Dimension Edges": SHAPE_EDGE_CASES,
    "Type mismatch problem": TYPE_MISMATCH,
    "Missing or Undefined DL Modules": UNDEFINED_DL_MODULES,
    "Incorrect Tensor Constant": TENSOR_CONSTANT,
    "none": NOT_DL,
    "non-DL": NOT_DL,
}
SHAPE_SUBTYPES = (SHAPE_MISMATCH, SHAPE_EDGE_CASES, TENSOR_SHAPE_MISMATCH, SHAPE_IN_OPERATIONS)

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
# a deep-learning framework's top-level module (torchvision, torch_sparse...) or the usual alias of one
_DL = r"(?:torch\w*|tensorflow\w*|keras\w*|jax\w*|flax|optax|haiku|mxnet|paddle\w*)"
_DL_MODULE = re.compile(rf"^{_DL}(?:\.|$)")
_DL_NAME = re.compile(rf"^(?:{_DL}|nn|F|tf|tfp|jnp)$")
_QUOTED = re.compile(r"'([\w.]+)'")
_IMPORT_NAME = re.compile(r"cannot import name '[\w.]+' from '([\w.]+)'")
_TENSOR_ATTRIBUTE = re.compile(r"'(?:Tensor|Parameter|EagerTensor|ResourceVariable)' object has no attribute")
_LIBRARY_MISUSE = re.compile(r"received an invalid combination of arguments")  # torch's message for a wrong call
_CASTING = re.compile(r"cannot cast .* casting rule", re.IGNORECASE)  # numpy: an operation's result cast
_DTYPE_WORDS = re.compile(
    r"dtype|scalar type|expected .*(?:Float|Double|Long|Int|Half)\b|cannot cast|casting", re.IGNORECASE
)
_OPERATION_SHAPES = re.compile(
    r"cannot be multiplied|could not be broadcast|must match the size of tensor|not aligned|size mismatch",
    re.IGNORECASE,
)
_SHAPE_HINT = "a shape or dimension error: " + "; ".join(f"{PARENT[s]} / {s}" for s in SHAPE_SUBTYPES)


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
    subtype = _dl_subtype(name, kind, message)
    category = PARENT[subtype] if subtype else _NAME_CATEGORY.get(name) or _KIND_CATEGORY.get(kind)
    if category is None and kind == tx.SHAPE_MISMATCH:
        return Suggestion(None, None, f"{name}: {message}"[:200] + f" ({_SHAPE_HINT})")
    evidence = f"{name}: {message}"[:200] if category else ""
    return Suggestion(category, subtype, evidence)


def _dl_subtype(name: str, kind: str, message: str) -> str | None:
    """The DL sub-type an exception shows (its parent is then the category), if any."""
    quoted = _QUOTED.search(message)
    if name == "NameError" and quoted and _DL_NAME.match(quoted.group(1)):
        return UNDEFINED_DL_MODULES  # the authors' "not importing torch"
    if name in {"ImportError", "ModuleNotFoundError"}:
        source = _IMPORT_NAME.search(message)
        if source:
            return WRONG_DL_IMPORT if _DL_MODULE.match(source.group(1)) else None
        return UNDEFINED_DL_MODULES if quoted and _DL_MODULE.match(quoted.group(1)) else None
    if name == "AttributeError":
        if kind == tx.HALLUCINATED_OBJECT:  # "module 'x' has no attribute"
            return UNDEFINED_DL_MODULES if quoted and _DL_MODULE.match(quoted.group(1)) else None
        return API_USAGE if _TENSOR_ATTRIBUTE.search(message) else None
    if _LIBRARY_MISUSE.search(message):
        return LIBRARY_ARGUMENTS
    if _CASTING.search(message):
        return DTYPE_CASTING
    if kind == tx.SHAPE_MISMATCH:
        return SHAPE_IN_OPERATIONS if _OPERATION_SHAPES.search(message) else None
    if _DTYPE_WORDS.search(message):
        return TYPE_MISMATCH
    return None


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


def subtype_choices() -> dict[str, tuple[str, ...]]:
    """Each category's sub-type drop-down (its DL sub-types, then ``NOT_DL``), and with no
    category chosen yet (``ANY``) every sub-type."""
    return {ANY: (*DL_SUBTYPES, NOT_DL)} | {c: (*DL_SUBTYPES_BY_CATEGORY.get(c, ()), NOT_DL) for c in CATEGORIES}


def write_sheet(path: str | Path, rows: Sequence[dict[str, str]]) -> None:
    """The sheet: categories from a drop-down, sub-types from the chosen category's drop-down."""
    dependent = {"dl_subtype": ("category", subtype_choices())}
    write_xlsx_table(path, rows, SHEET_COLUMNS, {"category": CATEGORIES}, _WRAPPED, _WIDTHS, dependent)


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
_SUBTYPE_KEYS = {label_key(s): s for s in (*DL_SUBTYPES, NOT_DL)} | {
    label_key(alias): s for alias, s in SUBTYPE_ALIASES.items()
}


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


def row_votes(row: Mapping[str, str]) -> tuple[str | None, str | None]:
    """One annotator's (category, sub-type) votes, held to the hierarchy: a DL sub-type alone
    votes for its parent too; a DL sub-type under another category is no sub-type vote."""
    category = vote(row.get("category", ""), _CATEGORY_KEYS)
    subtype = vote(row.get("dl_subtype", ""), _SUBTYPE_KEYS)
    if subtype in PARENT:
        if category is None:
            category = PARENT[subtype]
        elif PARENT[subtype] != category:
            subtype = None
    return category, subtype


def _merged(label: FailureLabel, rows: Sequence[Mapping[str, str]], annotators: Sequence[str]) -> FailureLabel:
    votes = [row_votes(row) for row in rows]
    categories, subtypes = [c for c, _ in votes], [s for _, s in votes]
    if not any(categories) and not any(subtypes):
        return label
    category, _ = majority(categories)
    subtype, _ = majority(subtypes)
    if category is None or (subtype in PARENT and PARENT[subtype] != category):
        subtype = None  # a sub-type only stands under its own parent
    notes = "; ".join(row["notes"] for row in rows if row.get("notes"))
    return label.model_copy(update={
        "category": category, "dl_subtype": subtype, "source": "annotators", "evidence": notes,
        "votes": {"category": categories, "dl_subtype": subtypes}, "annotator_ids": list(annotators),
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


NO_SUBTYPE = "(no sub-type)"


def table6(labels: Sequence[FailureLabel]) -> pd.DataFrame:
    """Table 6: failing candidates per category, and within it per DL sub-type (every one of
    the category's, zero or not), ``NOT_DL`` and ``NO_SUBTYPE`` (nobody said) where any;
    one column per model."""
    frame = pd.DataFrame(
        [(f"{m.model} ({m.technique})", m.category or UNDECIDED, m.dl_subtype or NO_SUBTYPE) for m in labels],
        columns=["model", "category", "dl_subtype"],
    )
    models = sorted(set(frame["model"]))
    rows = []
    for category in (*CATEGORIES, UNDECIDED):
        part = frame[frame["category"] == category]
        rows.append(_count_row(category, "", part, models))
        if category == UNDECIDED:
            continue
        for subtype in (*DL_SUBTYPES_BY_CATEGORY.get(category, ()), NOT_DL, NO_SUBTYPE):
            sub = part[part["dl_subtype"] == subtype]
            if subtype in PARENT or len(sub):
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


PUBLISHED_FAILURES = "failures"  # resources/paper_results.csv's metric of Table 6's counts


def table6_beside_paper(labels: Sequence[FailureLabel], paper: pd.DataFrame) -> pd.DataFrame:
    """Table 6 beside the paper's: per category, and under it per DL sub-type the paper
    counts, our failing candidates (all models pooled, as the paper's counts are) beside the
    paper's count, each with its share of the failures categorised (ours: every label with a
    category; the paper's: the sum of its category counts)."""
    theirs = published(paper, metric=PUBLISHED_FAILURES)
    categories = theirs[theirs["dimension"] == "failure category"]
    subtypes = theirs[theirs["dimension"] == "DL sub-type"]
    decided = [m for m in labels if m.category]
    ours = Counter((m.category, m.dl_subtype) for m in decided)
    ours_total, their_total = len(decided), int(categories["value"].sum())
    rows = []
    for category in [*CATEGORIES, *sorted(set(categories["category"]) - set(CATEGORIES))]:
        published_category = categories[categories["category"] == category]
        mine = sum(n for (c, _), n in ours.items() if c == category)
        their = int(published_category["value"].iloc[0]) if len(published_category) else None
        source = published_category["source"].iloc[0] if len(published_category) else MISSING
        rows.append([category, "", count_share(mine, ours_total), count_share(their, their_total), source])
        for r in subtypes[subtypes["category"].str.startswith(f"{category} / ")].itertuples(index=False):
            subtype = r.category.split(" / ", 1)[1]
            n = ours.get((category, subtype), 0)
            rows.append(
                [category, subtype, count_share(n, ours_total), count_share(int(r.value), their_total), r.source]
            )
    columns = ["category", "DL sub-type", f"ours (n={ours_total})", f"paper (n={their_total})", "source"]
    return pd.DataFrame(rows, columns=columns)


def write_table6(merged: str | Path, tables_dir: str | Path, paper: str | Path | None = None) -> None:
    """``tables/table6_failures.md`` and ``.tex`` from the merged failure labels, and with the
    paper's published figures ``tables/table6_beside_paper``."""
    labels = read_jsonl(merged, FailureLabel)
    write_table(
        tables_dir, "table6_failures", "Table 6: failure categories of the models' failing candidates", table6(labels)
    )
    if paper is not None and Path(paper).exists():
        write_table(
            tables_dir,
            "table6_beside_paper",
            "Table 6: failing candidates per category and DL sub-type, ours (all models) beside the paper's",
            table6_beside_paper(labels, read_paper(paper)),
        )
