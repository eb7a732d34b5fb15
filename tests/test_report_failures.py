"""The paper's failure taxonomy: automatic first pass, the sheet's round trip, Table 6."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter

from dlbench.records import BenchmarkTask, EvalStatus, Evaluation, FailureLabel, Generation
from dlbench.report import failures as fx
from dlbench.store import read_jsonl, write_jsonl
from dlbench.tasks.sheets import ANY, DEPENDENT_TITLE
from dlbench.tasks.vocab import label_key

GOLD = "def scale(x):\n    return x * 2\n"


@pytest.mark.parametrize(
    ("status", "exception", "category", "subtype"),
    [
        ("syntax_error", None, fx.SYNTAX_ERROR, None),
        ("timeout", None, fx.PERFORMANCE_ISSUE, None),
        ("error", "SyntaxError: invalid syntax (model.py, line 3)", fx.SYNTAX_ERROR, None),
        ("fail", "NameError: name 'conv2d' is not defined", fx.UNDEFINED_REFERENCE, None),
        ("fail", "UnboundLocalError: cannot access local variable 'y'", fx.UNDEFINED_REFERENCE, None),
        # a DL framework never imported: the authors' "not importing torch", under nonexistent objects
        ("fail", "NameError: name 'torch' is not defined", fx.HALLUCINATED_OBJECTS, fx.UNDEFINED_DL_MODULES),
        ("fail", "NameError: name 'F' is not defined", fx.HALLUCINATED_OBJECTS, fx.UNDEFINED_DL_MODULES),
        ("fail", "ModuleNotFoundError: No module named 'torch_sparse'", fx.HALLUCINATED_OBJECTS, fx.UNDEFINED_DL_MODULES),
        ("fail", "ModuleNotFoundError: No module named 'cv2'", fx.HALLUCINATED_OBJECTS, None),  # not a DL module
        ("fail", "AttributeError: module 'torch' has no attribute 'softmax2d'", fx.HALLUCINATED_OBJECTS, fx.UNDEFINED_DL_MODULES),
        ("fail", "AttributeError: module 'numpy' has no attribute 'interp2'", fx.HALLUCINATED_OBJECTS, None),
        # a name a DL module does not have: the authors' "import non-existent method", under wrong attributes
        (
            "fail",
            "ImportError: cannot import name 'Image' from 'torchvision.transforms.v2' (/x/__init__.py)",
            fx.WRONG_ATTRIBUTE,
            fx.WRONG_DL_IMPORT,
        ),
        ("fail", "ImportError: cannot import name 'norm1' from 'scipy.linalg'", fx.HALLUCINATED_OBJECTS, None),
        ("fail", "AttributeError: 'Tensor' object has no attribute 'numpy_'", fx.WRONG_ATTRIBUTE, fx.API_USAGE),
        ("fail", "AttributeError: 'Foo' object has no attribute 'bar'", fx.WRONG_ATTRIBUTE, None),
        ("fail", "TypeError: forward() takes 2 positional arguments but 3 were given", fx.WRONG_INPUT_TYPE, None),
        (
            "fail",
            "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)",
            fx.OPERATION_ERROR,
            fx.SHAPE_IN_OPERATIONS,
        ),
        (
            "fail",
            "ValueError: operands could not be broadcast together with shapes (3,4) (5,)",
            fx.OPERATION_ERROR,
            fx.SHAPE_IN_OPERATIONS,
        ),
        ("fail", "RuntimeError: expected scalar type Float but found Double", fx.WRONG_INPUT_TYPE, fx.TYPE_MISMATCH),
        (
            "fail",
            "numpy.core._exceptions._UFuncOutputCastingError: Cannot cast ufunc 'add' output from dtype('float64') "
            "to dtype('int64') with casting rule 'same_kind'",
            fx.OPERATION_ERROR,
            fx.DTYPE_CASTING,
        ),
        (
            "fail",
            "TypeError: softmax() received an invalid combination of arguments - got (Tensor, axis=int)",
            fx.WRONG_INPUT_TYPE,
            fx.LIBRARY_ARGUMENTS,
        ),
        ("fail", "AssertionError: assert 1 == 2", None, None),  # a wrong result: people decide which kind
        ("fail", "ZeroDivisionError: division by zero", None, None),
        ("fail", None, None, None),
        ("error", None, None, None),
    ],
)  # fmt: skip
def test_first_pass_decides_only_where_the_evidence_does(status, exception, category, subtype) -> None:
    guess = fx.first_pass(status, exception)
    assert (guess.category, guess.dl_subtype) == (category, subtype)
    assert bool(guess.evidence) == bool(category or subtype)
    assert subtype is None or fx.PARENT[subtype] == category  # a sub-type always comes with its parent


def test_a_shape_error_no_evidence_places_is_left_to_people_with_the_choices_named() -> None:
    guess = fx.first_pass("fail", "RuntimeError: shape '[2, 3]' is invalid for input of size 5")
    assert (guess.category, guess.dl_subtype) == (None, None)
    assert all(s in guess.evidence for s in fx.SHAPE_SUBTYPES) and "invalid for input of size 5" in guess.evidence


def test_the_vocabularies_are_the_papers() -> None:
    assert len(fx.CATEGORIES) == 14 and len(set(fx.CATEGORIES)) == 14
    # the 18 DL-specific rows of the authors' leaderboard (section 6), each under its category
    assert len(fx.DL_SUBTYPES) == 18 and len(set(fx.DL_SUBTYPES)) == 18
    assert {label_key(s) for s in fx.DL_SUBTYPES}.isdisjoint({label_key(fx.NOT_DL)})
    assert len({label_key(s) for s in fx.DL_SUBTYPES}) == 18  # no two read as one on a sheet
    assert set(fx.DL_SUBTYPES_BY_CATEGORY) <= set(fx.CATEGORIES)
    for subtype in fx.DL_SUBTYPES:  # under exactly one category
        assert [c for c, subs in fx.DL_SUBTYPES_BY_CATEGORY.items() if subtype in subs] == [fx.PARENT[subtype]]
    assert {c: len(s) for c, s in fx.DL_SUBTYPES_BY_CATEGORY.items()} == {
        fx.MISINTERPRETATION: 3, fx.MISSING_CORNER_CASE: 2, fx.WRONG_INPUT_TYPE: 3, fx.HALLUCINATED_OBJECTS: 2,
        fx.WRONG_ATTRIBUTE: 2, fx.OPERATION_ERROR: 3, fx.CONSTANT_VALUE_ERROR: 1, fx.PERFORMANCE_ISSUE: 1,
        fx.PROMPT_MISSING_INFORMATION: 1,
    }  # fmt: skip
    # the names issue 26 quotes from the paper, each under the parent the leaderboard gives it
    quoted = {
        "Incorrect DL/ML Functionality": fx.MISINTERPRETATION, "Type mismatch": fx.WRONG_INPUT_TYPE,
        "Incorrect ML/DL function library arguments": fx.WRONG_INPUT_TYPE,
        "Missing/Undefined DL Modules": fx.HALLUCINATED_OBJECTS, "Wrong DL Module import": fx.WRONG_ATTRIBUTE,
        "Incorrect API Usage": fx.WRONG_ATTRIBUTE, "Incorrect Algebraic Calculations": fx.OPERATION_ERROR,
        "DL performance issue": fx.PERFORMANCE_ISSUE, "Not defining correct DL library": fx.PROMPT_MISSING_INFORMATION,
        "Shape and Dimension Edge Cases": fx.MISSING_CORNER_CASE,
    }  # fmt: skip
    assert {s: fx.PARENT[s] for s in quoted} == quoted


# ---------------------------------------------------------------- the sheet's round trip


def task(name: str) -> BenchmarkTask:
    return BenchmarkTask(
        task_id=f"o__r:m.py:{name}", repo="o/r", sha="0" * 40, path="m.py", function=name, class_name=None,
        signature=f"def {name}(x):", prompt=f"Write {name}.", ground_truth=GOLD.replace("scale", name),
        tests=["t.py::a"], stage=None, task=None, data=None, first_added=None, last_modified=None,
        qualname=name, slug="o__r", start_line=1, end_line=2,
    )  # fmt: skip


def evaluation(
    name: str, model: str, status: EvalStatus, exception: str | None, technique: str = "zero-shot"
) -> Evaluation:
    passed = status == EvalStatus.PASS
    return Evaluation(
        task_id=f"o__r:m.py:{name}", model=model, technique=technique, status=status, passed=passed,
        tests={"t.py::a": "passed" if passed else "failed"}, duration_s=0.1, exception=exception,
        causes={} if passed else {"t.py::a": "assert 3 == 4"},
    )  # fmt: skip


def generation(name: str, model: str, code: str, technique: str = "zero-shot") -> Generation:
    return Generation(task_id=f"o__r:m.py:{name}", model=model, technique=technique, code=code)


CANDIDATES = [  # (task, model, status, exception, code)
    ("f1", "m1", EvalStatus.FAIL, "NameError: name 'y' is not defined", "def f1(x):\n    return y\n"),
    ("f2", "m1", EvalStatus.FAIL, "AssertionError: assert 3 == 4", "def f2(x):\n    return x + 2\n"),
    ("f3", "m1", EvalStatus.PASS, None, GOLD.replace("scale", "f3")),
    (
        "f1",
        "m2",
        EvalStatus.FAIL,
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied",
        "def f1(x):\n    return x @ x\n",
    ),
    ("f2", "m2", EvalStatus.INFRA_ERROR, None, "def f2(x):\n    return x * 2\n"),  # the harness's fault
]


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    write_jsonl(tmp_path / "benchmark.jsonl", [task(n) for n in ("f1", "f2", "f3")])
    evals = [evaluation(t, m, s, e) for t, m, s, e, _ in CANDIDATES]
    evals.append(evaluation("f1", "null", EvalStatus.FAIL, "NotImplementedError", technique="reference"))
    write_jsonl(tmp_path / "evaluations.jsonl", evals)
    write_jsonl(tmp_path / "generations.jsonl", [generation(t, m, c) for t, m, _, _, c in CANDIDATES])
    fx.export_failures(
        tmp_path / "benchmark.jsonl", [tmp_path / "evaluations.jsonl"], [tmp_path / "generations.jsonl"],
        tmp_path / "auto.jsonl", tmp_path / "sheet.xlsx",
    )  # fmt: skip
    return {"root": tmp_path, "auto": tmp_path / "auto.jsonl", "sheet": tmp_path / "sheet.xlsx"}


def sheet_rows(path: Path) -> dict[str, dict[str, object]]:
    ws = load_workbook(path)["tasks"]
    header = [c.value for c in ws[1]]
    return {row[0]: dict(zip(header, row, strict=True)) for row in ws.iter_rows(min_row=2, values_only=True)}


def test_sheet_lists_the_models_failures_with_code_diff_and_output(world) -> None:
    rows = sheet_rows(world["sheet"])
    # passing, infrastructure and reference-model candidates are not the models' failures
    assert sorted(rows) == [
        "m1/zero-shot/0/0/o__r:m.py:f1",
        "m1/zero-shot/0/0/o__r:m.py:f2",
        "m2/zero-shot/0/0/o__r:m.py:f1",
    ]
    first = rows["m1/zero-shot/0/0/o__r:m.py:f1"]
    assert first["code"] == "def f1(x):\n    return y\n"
    assert "-    return x * 2" in first["diff_to_gold"] and "+    return y" in first["diff_to_gold"]
    assert "NameError" in first["test_output"] and "t.py::a: assert 3 == 4" in first["test_output"]
    assert first["auto_category"] == fx.UNDEFINED_REFERENCE and first["category"] is None
    shape = rows["m2/zero-shot/0/0/o__r:m.py:f1"]
    assert (shape["auto_category"], shape["auto_dl_subtype"]) == (fx.OPERATION_ERROR, fx.SHAPE_IN_OPERATIONS)
    ws = load_workbook(world["sheet"])["tasks"]
    formulas = {v.formula1 for v in ws.data_validations.dataValidation}
    assert any(f.startswith("lists!") for f in formulas)  # 14 categories do not fit an inline list


def offered(wb, category: str | None) -> list[str]:
    """The sub-types Excel offers in a row whose category cell holds ``category``: the
    validation formula's OFFSET/MATCH/INDEX worked out on the hidden sheet's cells."""
    lists = wb[DEPENDENT_TITLE]
    header = [c.value for c in lists[1]]
    column = header.index(category) if category in header[1:] else 0  # MATCH, or IFERROR's 0: (any)
    height = lists.cell(row=2, column=column + 1).value  # INDEX(row 2, column + 1)
    return [lists.cell(row=3 + i, column=column + 1).value for i in range(height)]  # OFFSET(A3, 0, column, height)


def test_the_sheets_sub_type_drop_down_follows_the_rows_category(world) -> None:
    wb = load_workbook(world["sheet"])
    ws = wb["tasks"]
    header = [c.value for c in ws[1]]
    letter = {name: get_column_letter(i) for i, name in enumerate(header, 1)}
    (validation,) = [v for v in ws.data_validations.dataValidation if letter["dl_subtype"] in str(v.sqref)]
    last = get_column_letter(len(fx.CATEGORIES) + 1)
    match = f"IFERROR(MATCH(${letter['category']}2,{DEPENDENT_TITLE}!$B$1:${last}$1,0),0)"
    assert validation.formula1 == (
        f"OFFSET({DEPENDENT_TITLE}!$A$3,0,{match},INDEX({DEPENDENT_TITLE}!$A$2:${last}$2,1,{match}+1),1)"
    )
    assert len(validation.formula1) <= 255  # Excel's limit on a validation formula
    assert str(validation.sqref) == f"{letter['dl_subtype']}2:{letter['dl_subtype']}4"  # every candidate's row
    assert wb[DEPENDENT_TITLE].sheet_state == "hidden"
    for category in fx.CATEGORIES:  # each category offers its own sub-types, then "Not DL-related"
        assert offered(wb, category) == [*fx.DL_SUBTYPES_BY_CATEGORY.get(category, ()), fx.NOT_DL]
    assert offered(wb, fx.SYNTAX_ERROR) == [fx.NOT_DL]
    assert offered(wb, None) == [*fx.DL_SUBTYPES, fx.NOT_DL]  # no category yet: every sub-type
    assert [c.value for c in wb[DEPENDENT_TITLE][1]][0] == ANY


def fill(sheet: Path, to: Path, cells: dict[str, dict[str, str]]) -> Path:
    """Type into a copy of the exported workbook as a person would (candidate id → column → text)."""
    shutil.copy(sheet, to)
    wb = load_workbook(to)
    ws = wb["tasks"]
    column = {c.value: c.column for c in ws[1]}
    for row in ws.iter_rows(min_row=2):
        for name, text in cells.get(row[0].value, {}).items():
            ws.cell(row=row[0].row, column=column[name], value=text)
    wb.save(to)
    return to


def test_filled_sheets_merge_back_by_majority(world) -> None:
    f1, f2, g1 = "m1/zero-shot/0/0/o__r:m.py:f1", "m1/zero-shot/0/0/o__r:m.py:f2", "m2/zero-shot/0/0/o__r:m.py:f1"
    root = world["root"]
    sheets = [
        fill(world["sheet"], root / "ann_a.xlsx", {f2: {"category": "Silly Mistake", "notes": "off by one"},
                                                   g1: {"category": fx.OPERATION_ERROR, "dl_subtype": fx.SHAPE_IN_OPERATIONS}}),
        fill(world["sheet"], root / "ann_b.xlsx", {f2: {"category": "silly mistake"},  # typed, not chosen
                                                   g1: {"category": fx.MISINTERPRETATION, "dl_subtype": "none"}}),
        fill(world["sheet"], root / "ann_c.xlsx", {f2: {"category": fx.MISSING_CORNER_CASE}}),
    ]  # fmt: skip
    merged = {m.candidate_id: m for m in fx.merge_failures_files(world["auto"], sheets, root / "merged.jsonl")}
    assert read_jsonl(root / "merged.jsonl", FailureLabel) == list(merged.values())
    # nobody voted: the automatic pass stands
    assert (merged[f1].category, merged[f1].source) == (fx.UNDEFINED_REFERENCE, "auto")
    # two of three: the majority wins, whatever the spelling; notes travel along
    assert (merged[f2].category, merged[f2].source) == (fx.SILLY_MISTAKE, "annotators")
    assert merged[f2].votes["category"] == [fx.SILLY_MISTAKE, fx.SILLY_MISTAKE, fx.MISSING_CORNER_CASE]
    assert merged[f2].annotator_ids == ["ann_a", "ann_b", "ann_c"] and merged[f2].evidence == "off by one"
    # one against one: undecided, never the automatic guess
    assert merged[g1].category is None and merged[g1].dl_subtype is None and merged[g1].source == "annotators"


def label(**fields) -> FailureLabel:
    return FailureLabel(
        candidate_id="m/zero-shot/0/0/t", task_id="t", model="m", technique="zero-shot", status="fail",
        category=None, source="none",
    ).model_copy(update=fields)  # fmt: skip


def test_the_merge_holds_every_vote_to_the_hierarchy() -> None:
    def merged(*rows: dict[str, str]) -> tuple[str | None, str | None]:
        sheets = {f"ann{i}": [{"candidate_id": "m/zero-shot/0/0/t", **row}] for i, row in enumerate(rows)}
        (out,) = fx.merge_failures([label()], sheets)
        return out.category, out.dl_subtype

    # a sub-type alone votes for its parent
    assert merged({"dl_subtype": fx.TYPE_MISMATCH}) == (fx.WRONG_INPUT_TYPE, fx.TYPE_MISMATCH)
    # the leaderboard's spelling is the same sub-type; "none" is the earlier sheets' "not DL-specific"
    assert merged({"dl_subtype": "Type mismatch problem"}) == (fx.WRONG_INPUT_TYPE, fx.TYPE_MISMATCH)
    assert merged({"category": fx.SILLY_MISTAKE, "dl_subtype": "none"}) == (fx.SILLY_MISTAKE, fx.NOT_DL)
    # a sub-type under another category is no sub-type vote
    assert merged({"category": fx.SILLY_MISTAKE, "dl_subtype": fx.TYPE_MISMATCH}) == (fx.SILLY_MISTAKE, None)
    # the winning sub-type stands only under its own parent
    assert merged(
        {"category": fx.MISINTERPRETATION}, {"category": fx.MISINTERPRETATION}, {"dl_subtype": fx.ALGEBRAIC}
    ) == (fx.MISINTERPRETATION, None)
    assert merged(
        {"category": fx.OPERATION_ERROR, "dl_subtype": fx.ALGEBRAIC},
        {"dl_subtype": fx.ALGEBRAIC},
        {"category": fx.MISINTERPRETATION, "dl_subtype": fx.SHAPE_MISMATCH},
    ) == (fx.OPERATION_ERROR, fx.ALGEBRAIC)


def test_table6_counts_categories_and_dl_subtypes_per_model(world, tmp_path: Path) -> None:
    labels = read_jsonl(world["auto"], FailureLabel)
    table = fx.table6(labels).set_index(["category", "DL sub-type"])
    assert table.loc[(fx.UNDEFINED_REFERENCE, ""), "m1 (zero-shot)"] == 1
    assert table.loc[(fx.UNDEFINED_REFERENCE, fx.NO_SUBTYPE), "total"] == 1  # nobody said whether DL-specific
    assert table.loc[(fx.UNDECIDED, ""), "total"] == 1  # the wrong result
    assert table.loc[(fx.OPERATION_ERROR, ""), "m2 (zero-shot)"] == 1
    assert table.loc[(fx.OPERATION_ERROR, fx.SHAPE_IN_OPERATIONS), "m2 (zero-shot)"] == 1
    assert table.loc[(fx.OPERATION_ERROR, fx.ALGEBRAIC), "total"] == 0  # every sub-type has its row
    assert table.loc[("all", ""), "total"] == 3 and table.loc[("all", ""), "share (%)"] == "100.0"
    # every category, every sub-type under its parent, one "(no sub-type)" row, undecided, all
    assert len(table) == len(fx.CATEGORIES) + len(fx.DL_SUBTYPES) + 1 + 1 + 1
    assert [s for c, s in table.index if s in fx.PARENT] == list(fx.DL_SUBTYPES)
    assert all(fx.PARENT[s] == c for c, s in table.index if s in fx.PARENT)
    write_jsonl(tmp_path / "merged.jsonl", labels)
    fx.write_table6(tmp_path / "merged.jsonl", tmp_path / "tables")
    text = (tmp_path / "tables" / "table6_failures.md").read_text()
    assert text.startswith("## Table 6") and fx.CONSTANT_VALUE_ERROR in text
    assert all(s in text for s in fx.DL_SUBTYPES)
    assert (tmp_path / "tables" / "table6_failures.tex").is_file()


def test_table6_shows_not_dl_related_apart_from_no_answer() -> None:
    labels = [
        label(candidate_id="a", category=fx.SILLY_MISTAKE, dl_subtype=fx.NOT_DL, source="annotators"),
        label(candidate_id="b", category=fx.SILLY_MISTAKE, source="annotators"),
        label(candidate_id="c", category=fx.PERFORMANCE_ISSUE, dl_subtype=fx.DL_PERFORMANCE, source="annotators"),
    ]
    table = fx.table6(labels).set_index(["category", "DL sub-type"])["total"]
    assert table[(fx.SILLY_MISTAKE, "")] == 2
    assert (table[(fx.SILLY_MISTAKE, fx.NOT_DL)], table[(fx.SILLY_MISTAKE, fx.NO_SUBTYPE)]) == (1, 1)
    assert table[(fx.PERFORMANCE_ISSUE, fx.DL_PERFORMANCE)] == 1
    assert (fx.PERFORMANCE_ISSUE, fx.NOT_DL) not in table.index  # a zero row only for the paper's sub-types
