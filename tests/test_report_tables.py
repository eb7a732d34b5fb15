"""tables.csv from synthetic evaluation files: exact values, slices, categories, determinism."""

from __future__ import annotations

import csv
import dataclasses
import math
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from dlbench.config import ReportConfig
from dlbench.records import TABLE_COLUMNS, BenchmarkTask, EvalStatus, Evaluation, TestOutcome
from dlbench.report.render import write_live_table, write_report
from dlbench.report.slices import slice_names
from dlbench.report.tables import (
    adequacy_table,
    differences_table,
    load_inputs,
    long_table,
    read_validation,
    run_table,
    write_long_table,
)
from dlbench.store import write_jsonl

P, F, M = TestOutcome.PASSED, TestOutcome.FAILED, TestOutcome.MISSING
CUTOFFS = [date(2024, 1, 1), date(2024, 6, 1)]
CFG = ReportConfig(k=[1, 3], cutoffs=CUTOFFS, mutant_kill_threshold=0.5, paper_results=None)

# task id -> (repo, stage, task, data, last modified, tests)
TASKS = {
    "r1:a.py:t1": ("o__r1", "Training", "Classification", "Image", date(2024, 3, 1), ["t.py::a", "t.py::b"]),
    "r1:a.py:t2": ("o__r1", "Training", "Regression", "Text", date(2023, 5, 1), ["t.py::c"]),
    "r2:b.py:t3": ("o__r2", "Inference", "Classification", "Image", date(2024, 8, 1), ["t.py::d", "t.py::e"]),
    "r2:b.py:t4": ("o__r2", "Inference", None, None, date(2025, 2, 1), ["t.py::f"]),  # not usable
}


def task(task_id: str) -> BenchmarkTask:
    repo, stage, kind, data, modified, tests = TASKS[task_id]
    name = task_id.rsplit(":", 1)[1]
    return BenchmarkTask(
        task_id=task_id,
        repo=repo,
        sha="0" * 40,
        path="a.py",
        function=name,
        class_name=None,
        signature=f"def {name}(x):",
        prompt="p",
        ground_truth=f"def {name}(x):\n    if x:\n        return 1\n    return 0\n",
        tests=tests,
        stage=stage,
        task=kind,
        data=data,
        first_added=None,
        last_modified=modified,
        qualname=name,
        slug=repo,
        start_line=1,
        end_line=4,
    )


def ev(task_id: str, model: str, technique: str, sample: int, tests: dict, run: int = 0, exception: str | None = None):
    passed = all(o == P for o in tests.values())
    return Evaluation(
        task_id=task_id,
        model=model,
        technique=technique,
        run=run,
        sample=sample,
        status=EvalStatus.PASS if passed else EvalStatus.FAIL,
        passed=passed,
        tests=tests,
        duration_s=0.1,
        exception=None if passed else exception,
    )


def make_world(root: Path, with_mutant: bool = True) -> dict[str, Path]:
    """Benchmark, validation and evaluation files of the hand-built case (values in the tests below)."""
    write_jsonl(root / "benchmark.jsonl", [task(t) for t in TASKS])
    validation = root / "validation.csv"
    validation.write_text(
        "task_id,usable,reason\nr1:a.py:t1,True,\nr1:a.py:t2,True,\nr2:b.py:t3,true,\nr2:b.py:t4,False,gold fails\n"
    )
    t1, t2, t3, t4 = TASKS
    m = [
        ev(t1, "m", "zero-shot", 0, {"t.py::a": P, "t.py::b": P}),
        ev(t1, "m", "zero-shot", 1, {"t.py::a": P, "t.py::b": F}, exception="AssertionError: assert 1 == 2"),
        ev(t1, "m", "zero-shot", 2, {"t.py::a": M, "t.py::b": M}, exception="NameError: name 'q' is not defined"),
        *(ev(t2, "m", "zero-shot", s, {"t.py::c": F}, exception="TypeError: bad") for s in range(3)),
        *(ev(t3, "m", "zero-shot", s, {"t.py::d": P, "t.py::e": P}) for s in range(3)),
        *(ev(t4, "m", "zero-shot", s, {"t.py::f": P}) for s in range(3)),  # unusable: must not count
        ev("unknown:x.py:f", "m", "zero-shot", 0, {"t.py::z": P}),  # not in the benchmark: left out
    ]
    s = [
        ev(t1, "s", "zero-shot", 0, {"t.py::a": P, "t.py::b": P}, run=0),
        ev(t1, "s", "zero-shot", 0, {"t.py::a": F, "t.py::b": P}, run=1, exception="AssertionError"),
        ev(t2, "s", "zero-shot", 0, {"t.py::c": F}, run=0, exception="AssertionError"),
        ev(t2, "s", "zero-shot", 0, {"t.py::c": F}, run=1, exception="AssertionError"),
        ev(t3, "s", "zero-shot", 0, {"t.py::d": P, "t.py::e": P}, run=0),
        ev(t3, "s", "zero-shot", 0, {"t.py::d": P, "t.py::e": P}, run=1),
    ]
    gold = [ev(t, "gold", "reference", 0, dict.fromkeys(TASKS[t][5], P)) for t in TASKS]
    mutant = [
        *(ev(t1, "mutant", "reference", i, {"t.py::a": F, "t.py::b": P}, exception="AssertionError") for i in range(3)),
        ev(t1, "mutant", "reference", 3, {"t.py::a": P, "t.py::b": P}),
        *(ev(t2, "mutant", "reference", i, {"t.py::c": P}) for i in range(2)),
    ]
    files = {"m": m, "s": s, "gold": gold} | ({"mutant": mutant} if with_mutant else {})
    paths = []
    for model, records in files.items():
        path = root / "evaluations" / model / f"{records[0].technique}" / "repo.jsonl"
        write_jsonl(path, records)
        paths.append(path)
    return {"benchmark": root / "benchmark.jsonl", "validation": validation, "evaluations": paths}


@pytest.fixture
def world(tmp_path: Path) -> dict:
    return make_world(tmp_path)


def values(table: pd.DataFrame) -> dict[tuple, tuple[float, int]]:
    key = ["model", "technique", "slice", "dimension", "category", "metric"]
    return {tuple(r[key]): (r["value"], r["n_tasks"]) for _, r in table.iterrows()}


def test_hand_built_case_gives_exact_values(world):
    inputs = load_inputs(world["benchmark"], world["evaluations"], world["validation"])
    got = values(long_table(inputs, ["all", "after-2024-01-01", "after-2024-06-01"], [1, 3]))
    expected = {
        ("m", "zero-shot", "all", "overall", "all", "pass@1"): (4 / 9, 3),
        ("m", "zero-shot", "all", "overall", "all", "pass@3"): (2 / 3, 3),
        ("m", "zero-shot", "all", "overall", "all", "test_pass_ratio"): (0.5, 3),
        ("m", "zero-shot", "after-2024-01-01", "overall", "all", "pass@1"): (2 / 3, 2),
        ("m", "zero-shot", "after-2024-01-01", "overall", "all", "test_pass_ratio"): (0.75, 2),
        ("m", "zero-shot", "after-2024-06-01", "overall", "all", "pass@1"): (1.0, 1),
        ("m", "zero-shot", "all", "stage", "Training", "pass@1"): (1 / 6, 2),
        ("m", "zero-shot", "all", "stage", "Training", "pass@3"): (0.5, 2),
        ("m", "zero-shot", "all", "stage", "Inference", "pass@1"): (1.0, 1),
        ("m", "zero-shot", "all", "task", "Classification", "pass@1"): (2 / 3, 2),
        ("m", "zero-shot", "all", "task", "Regression", "pass@1"): (0.0, 1),
        ("m", "zero-shot", "all", "data", "Text", "test_pass_ratio"): (0.0, 1),
        ("m", "zero-shot", "after-2024-01-01", "data", "Image", "pass@1"): (2 / 3, 2),
        ("s", "zero-shot", "all", "overall", "all", "pass@1"): (0.5, 3),
        ("gold", "reference", "all", "overall", "all", "pass@1"): (1.0, 3),
        ("mutant", "reference", "all", "stage", "Training", "pass@1"): (0.625, 2),
    }
    for key, (value, n) in expected.items():
        assert key in got, key
        assert got[key][0] == pytest.approx(value, abs=1e-12), key
        assert got[key][1] == n, key
    # pass@3 needs three samples of every task in the group
    assert ("gold", "reference", "all", "overall", "all", "pass@3") not in got
    assert ("s", "zero-shot", "all", "overall", "all", "pass@3") not in got
    assert ("mutant", "reference", "all", "stage", "Training", "pass@3") not in got
    # the unusable task (and its unlabelled categories) never shows up
    assert not any(k[4] == "unlabelled" for k in got)
    assert {k[2] for k in got} == {"all", "after-2024-01-01", "after-2024-06-01"}
    assert all(0.0 <= v <= 1.0 for v, _ in got.values())


def test_a_group_with_a_task_lacking_candidates_is_not_scored(world, caplog):
    """mutant has no candidate for t3 (no mutation site): no figure averages t1 and t2 alone."""
    inputs = load_inputs(world["benchmark"], world["evaluations"], world["validation"])
    with caplog.at_level("WARNING"):
        got = values(long_table(inputs, ["all", "after-2024-06-01"], [1]))
    mutant = {k[2:5] for k in got if k[0] == "mutant"}
    assert ("all", "overall", "all") not in mutant and ("all", "stage", "Inference") not in mutant
    assert ("all", "task", "Classification") not in mutant and ("after-2024-06-01", "overall", "all") not in mutant
    assert mutant == {("all", "stage", "Training"), ("all", "task", "Regression"), ("all", "data", "Text")}
    assert not any(k[0] == "mutant" and k[5] == "test_pass_ratio" and k[3] == "overall" for k in got)
    assert "mutant/reference: no candidates for 1 usable task(s): r2:b.py:t3" in caplog.text
    assert ("m", "zero-shot", "all", "overall", "all", "pass@1") in got  # complete models are unaffected


def test_run_table_skips_a_model_lacking_a_usable_task(world):
    inputs = load_inputs(world["benchmark"], world["evaluations"], world["validation"])
    frame = inputs.candidates
    partial = dataclasses.replace(inputs, candidates=frame[~((frame.model == "s") & (frame.task_id == "r2:b.py:t3"))])
    assert list(run_table(inputs)["model"]) == ["s"]
    assert run_table(partial).empty


def test_unusable_tasks_count_without_a_validation_table(world):
    inputs = load_inputs(world["benchmark"], world["evaluations"], None)
    got = values(long_table(inputs, ["all"], [1]))
    assert got[("m", "zero-shot", "all", "overall", "all", "pass@1")] == (pytest.approx((1 / 3 + 0 + 1 + 1) / 4), 4)
    assert ("m", "zero-shot", "all", "task", "unlabelled", "pass@1") in got


def test_validation_table_needs_its_columns(tmp_path):
    bad = tmp_path / "validation.csv"
    bad.write_text("task,ok\nx,True\n")
    with pytest.raises(ValueError, match="lacks columns"):
        read_validation(bad, ["x"])
    good = tmp_path / "v.csv"
    good.write_text("task_id,usable,reason\nx,False,gold fails\n")
    assert read_validation(good, ["x", "y"]) == (
        {"x": False, "y": False},
        {"x": "gold fails", "y": "not in validation table"},
    )


def test_run_table_gives_mean_variance_and_std_of_per_run_pass1(world):
    runs = run_table(load_inputs(world["benchmark"], world["evaluations"], world["validation"]))
    assert list(runs["model"]) == ["s"]  # every other model has one run
    row = runs.iloc[0]
    assert (row["runs"], row["n_tasks"]) == (2, 3)
    assert row["mean"] == pytest.approx(0.5)
    assert row["variance"] == pytest.approx(1 / 18)
    assert row["std"] == pytest.approx(math.sqrt(1 / 18))


def test_adequacy_flags_tasks_whose_tests_kill_few_mutants(world):
    inputs = load_inputs(world["benchmark"], world["evaluations"], world["validation"])
    adequacy = adequacy_table(inputs, threshold=0.5).set_index("task_id")
    assert adequacy.loc["r1:a.py:t1", ["mutants", "killed"]].tolist() == [4, 3]
    assert adequacy.loc["r1:a.py:t1", "kill_rate"] == 0.75
    assert adequacy.loc["r1:a.py:t2", "kill_rate"] == 0.0
    assert pd.isna(adequacy.loc["r2:b.py:t3", "kill_rate"]) and not adequacy.loc["r2:b.py:t3", "flagged"]
    assert list(adequacy.index[adequacy["flagged"]]) == ["r1:a.py:t2"]


def report(world: dict, root: Path, **extra) -> pd.DataFrame:
    return write_report(
        world["benchmark"],
        world["evaluations"],
        world["validation"],
        root / "tables.csv",
        root / "tables",
        root / "plots",
        CFG,
        **extra,
    )


def test_tables_csv_has_exactly_the_contract_columns_and_recomputes_to_the_same_bytes(world, tmp_path):
    out = tmp_path / "out"
    report(world, out)
    with open(out / "tables.csv", newline="") as fh:
        assert next(csv.reader(fh)) == TABLE_COLUMNS
    first = (out / "tables.csv").read_bytes()
    (out / "tables.csv").unlink()
    report(world, out)
    assert (out / "tables.csv").read_bytes() == first
    # the evaluation files listed in another order change nothing either
    inputs = load_inputs(world["benchmark"], world["evaluations"][::-1], world["validation"])
    write_long_table(out / "reordered.csv", long_table(inputs, slice_names(CUTOFFS), CFG.k))
    assert (out / "reordered.csv").read_bytes() == first


def test_readable_tables_are_written_for_people(world, tmp_path):
    out = tmp_path / "out"
    paper = tmp_path / "paper.csv"
    paper.write_text(
        "# comment line\nmodel,technique,slice,dimension,category,metric,value,source\n"
        "M,Zero-Shot,all,overall,all,pass@1,50.0,Table 1\nOther,zero-shot,all,overall,all,pass@1,9.9,Table 1\n"
    )
    usage = tmp_path / "usage.csv"
    usage.write_text(
        "model,technique,input_tokens,output_tokens,cost_usd\nm,zero-shot,100,20,0.5\nm,zero-shot,50,5,0.25\n"
    )
    report(world, out, paper=paper, usage=usage)
    tables = out / "tables"
    for name in (
        "table1_overall",
        "table2_live",
        "table3_categories",
        "table7_passk",
        "table8_runs",
        "dataset",
        "failures",
        "paper_comparison",
        "usage",
    ):
        assert (tables / f"{name}.md").read_text().startswith("## "), name
        assert r"\begin{tabular}" in (tables / f"{name}.tex").read_text(), name
    table1 = (tables / "table1_overall.md").read_text()
    assert "| m | zero-shot | 44.4 ± 29.4 | [0.0, 100.0] | 50.0 ± 28.9 | 3 |" in table1
    assert "| s | zero-shot | 2 | 50.0 | 555.56 | 23.6 | 3 |" in (tables / "table8_runs.md").read_text()
    assert "| M" not in (tables / "paper_comparison.md").read_text()
    assert (
        "| m | zero-shot | all | overall | all | pass@1 | 44.4 | 50.0 | -5.6 | 3 | Table 1 |"
        in (tables / "paper_comparison.md").read_text()
    )
    assert "| m | zero-shot | 150 | 25 | 0.7500 |" in (tables / "usage.md").read_text()
    assert "| stage | Training | 2 | 2 | 4.0 | 2.0 | 1.0 |" in (tables / "dataset.md").read_text()
    failures = pd.read_csv(tables / "failures.csv")
    m = failures[failures["model"] == "m"].set_index("kind")["count"].to_dict()
    assert m == {"wrong_result": 1, "hallucinated_object": 1, "wrong_input_type": 3}
    assert "Classification" in (tables / "table3_categories.tex").read_text()


def test_standard_error_is_over_tasks_with_each_tasks_runs_inside_it(world):
    """s passes t1 in one run of two (task score 0.5), never t2 (0), always t3 (1): the error
    is that of three task scores, not of six run scores."""
    inputs = load_inputs(world["benchmark"], world["evaluations"], world["validation"])
    table = long_table(inputs, ["all"], [1])
    row = table[(table["model"] == "s") & (table["dimension"] == "overall") & (table["metric"] == "pass@1")].iloc[0]
    assert row["value"] == pytest.approx(0.5)
    assert row["stderr"] == pytest.approx(0.5 / math.sqrt(3))  # sd of (0.5, 0, 1) is 0.5
    assert 0.0 <= row["ci_low"] <= row["value"] <= row["ci_high"] <= 1.0
    one_task = table[(table["model"] == "s") & (table["category"] == "Inference")].iloc[0]
    assert one_task["n_tasks"] == 1 and pd.isna(one_task["stderr"]) and pd.isna(one_task["ci_low"])


def test_paired_differences_compare_models_on_their_common_tasks(world):
    inputs = load_inputs(world["benchmark"], world["evaluations"], world["validation"])
    table = differences_table(inputs, ["all"], [1])
    assert set(table["compared"]) == {"models"}  # one technique: no technique pairs; gold is not compared
    row = table.iloc[0]
    assert (row["a_model"], row["b_model"], row["n_tasks"]) == ("m", "s", 3)
    assert row["difference"] == pytest.approx(4 / 9 - 0.5)
    assert 0 < row["p_value"] <= 1 and row["p_holm"] == pytest.approx(row["p_value"])  # a family of one


def test_live_table_is_the_slice_of_its_cutoff(world, tmp_path):
    inputs = load_inputs(world["benchmark"], world["evaluations"], world["validation"])
    full = long_table(inputs, slice_names(CUTOFFS), CFG.k)
    live = write_live_table(
        world["benchmark"], world["evaluations"], world["validation"], date(2024, 6, 1), tmp_path / "live.csv", CFG
    )
    assert set(live["slice"]) == {"after-2024-06-01"}
    expected = full[full["slice"] == "after-2024-06-01"].reset_index(drop=True)
    pd.testing.assert_frame_equal(live.reset_index(drop=True), expected)
    # a cutoff the config does not list works as well: nothing is re-evaluated
    other = write_live_table(
        world["benchmark"], world["evaluations"], world["validation"], date(2023, 1, 1), tmp_path / "other.csv", CFG
    )
    assert other.loc[(other["model"] == "m") & (other["dimension"] == "overall"), "n_tasks"].unique().tolist() == [3]


def test_no_evaluations_yet_gives_a_header_only_table_and_every_readable_table(world, tmp_path):
    out = tmp_path / "out"
    table = write_report(
        world["benchmark"], [], world["validation"], out / "tables.csv", out / "tables", out / "plots", CFG
    )
    assert table.empty
    assert (out / "tables.csv").read_text() == ",".join(TABLE_COLUMNS) + "\n"
    assert (out / "tables/table1_overall.md").exists() and (out / "tables/dataset.md").exists()
    assert list((out / "plots").iterdir()) == []
