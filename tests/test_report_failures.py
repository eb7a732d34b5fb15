"""The paper's failure taxonomy: automatic first pass, the sheet's round trip, Table 6."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from openpyxl import load_workbook

from dlbench.records import BenchmarkTask, EvalStatus, Evaluation, FailureLabel, Generation
from dlbench.report import failures as fx
from dlbench.store import read_jsonl, write_jsonl

GOLD = "def scale(x):\n    return x * 2\n"


@pytest.mark.parametrize(
    ("status", "exception", "category", "subtype"),
    [
        ("syntax_error", None, fx.SYNTAX_ERROR, None),
        ("timeout", None, fx.PERFORMANCE_ISSUE, None),
        ("error", "SyntaxError: invalid syntax (model.py, line 3)", fx.SYNTAX_ERROR, None),
        ("fail", "NameError: name 'conv2d' is not defined", fx.UNDEFINED_REFERENCE, None),
        ("fail", "UnboundLocalError: cannot access local variable 'y'", fx.UNDEFINED_REFERENCE, None),
        ("fail", "ModuleNotFoundError: No module named 'torchvision'", fx.HALLUCINATED_OBJECTS, None),
        ("fail", "AttributeError: module 'torch' has no attribute 'softmax2d'", fx.HALLUCINATED_OBJECTS, None),
        ("fail", "AttributeError: 'Tensor' object has no attribute 'numpy_'", fx.WRONG_ATTRIBUTE, None),
        ("fail", "TypeError: forward() takes 2 positional arguments but 3 were given", fx.WRONG_INPUT_TYPE, None),
        ("fail", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)", None, fx.SHAPE),
        ("fail", "ValueError: operands could not be broadcast together with shapes (3,4) (5,)", None, fx.SHAPE),
        ("fail", "RuntimeError: expected scalar type Float but found Double", None, fx.DTYPE_CASTING),
        (
            "fail",
            "TypeError: softmax() received an invalid combination of arguments - got (Tensor, axis=int)",
            fx.WRONG_INPUT_TYPE,
            fx.LIBRARY_USAGE,
        ),
        ("fail", "AssertionError: assert 1 == 2", None, None),  # a wrong result: people decide which kind
        ("fail", "ZeroDivisionError: division by zero", None, None),
        ("fail", None, None, None),
        ("error", None, None, None),
    ],
)
def test_first_pass_decides_only_where_the_evidence_does(status, exception, category, subtype) -> None:
    guess = fx.first_pass(status, exception)
    assert (guess.category, guess.dl_subtype) == (category, subtype)
    assert bool(guess.evidence) == bool(category or subtype)


def test_the_vocabularies_are_the_papers() -> None:
    assert len(fx.CATEGORIES) == 14 and len(set(fx.CATEGORIES)) == 14
    assert len(fx.DL_SUBTYPES) == 5


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
    assert rows["m2/zero-shot/0/0/o__r:m.py:f1"]["auto_dl_subtype"] == fx.SHAPE
    ws = load_workbook(world["sheet"])["tasks"]
    formulas = {v.formula1 for v in ws.data_validations.dataValidation}
    assert any(f.startswith("lists!") for f in formulas)  # 14 categories do not fit an inline list


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
                                                   g1: {"category": fx.OPERATION_ERROR, "dl_subtype": fx.SHAPE}}),
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


def test_table6_counts_categories_and_dl_subtypes_per_model(world, tmp_path: Path) -> None:
    labels = read_jsonl(world["auto"], FailureLabel)
    table = fx.table6(labels).set_index(["category", "DL sub-type"])
    assert table.loc[(fx.UNDEFINED_REFERENCE, ""), "m1 (zero-shot)"] == 1
    assert table.loc[(fx.UNDECIDED, ""), "total"] == 2  # the wrong result and the shape error
    assert table.loc[(fx.UNDECIDED, fx.SHAPE), "m2 (zero-shot)"] == 1
    assert table.loc[("all", ""), "total"] == 3 and table.loc[("all", ""), "share (%)"] == "100.0"
    assert len(table) == len(fx.CATEGORIES) + 1 + 1 + 1  # every category, undecided, one sub-type row, all
    write_jsonl(tmp_path / "merged.jsonl", labels)
    fx.write_table6(tmp_path / "merged.jsonl", tmp_path / "tables")
    text = (tmp_path / "tables" / "table6_failures.md").read_text()
    assert text.startswith("## Table 6") and fx.CONSTANT_VALUE_ERROR in text
    assert (tmp_path / "tables" / "table6_failures.tex").is_file()
