"""The paper's Tables 4 and 5, averages across models, and matching our runs to its rows."""

from __future__ import annotations

import pandas as pd
import pytest

from dlbench.config import ModelConfig
from dlbench.records import TABLE_COLUMNS, StagePrediction
from dlbench.report.paper_tables import (
    average_columns_last,
    average_members,
    average_note,
    average_rows,
    averages_last,
    table4_stages,
    table5_techniques,
    table7_matched,
    with_averages,
)
from dlbench.report.render import paper_comparison, read_paper, table1_overall, table3_categories, write_report
from dlbench.store import write_jsonl
from tests.conftest import ROOT
from tests.test_report_tables import CFG, make_world, task


def row(
    model: str,
    technique: str,
    value: float,
    metric: str = "pass@1",
    dimension: str = "overall",
    category: str = "all",
    n: int = 10,
) -> dict:
    return dict(
        zip(
            TABLE_COLUMNS,
            [model, technique, "all", dimension, category, metric, value, n, 0, None, None, None],
            strict=True,
        )
    )


def long(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=TABLE_COLUMNS)


TABLE = long(
    row("a", "zero-shot", 0.30), row("b", "zero-shot", 0.20), row("gold", "reference", 1.0),
    row("a", "few-shot", 0.40), row("b", "few-shot", 0.30), row("a", "stage-few-shot", 0.50),
    row("a", "zero-shot", 0.10, dimension="stage", category="Training"), row("b", "zero-shot", 0.30, dimension="stage", category="Training"),
)  # fmt: skip


def test_averages_are_over_the_llms_per_technique_and_leave_the_reference_models_out():
    averages = average_rows(TABLE).set_index(["technique", "dimension", "metric"])["value"]
    assert averages[("zero-shot", "overall", "pass@1")] == 0.25  # gold's 1.0 is not in it
    assert averages[("few-shot", "overall", "pass@1")] == 0.35
    assert averages[("stage-few-shot", "overall", "pass@1")] == 0.5  # one model: itself
    assert "reference" not in set(average_rows(TABLE)["technique"])
    assert average_rows(long(row("gold", "reference", 1.0))).empty


PAPER_MODELS = {  # the README's example: GPT-4o greedy and at the paper's Table 7 temperature
    "gpt-4o": ModelConfig(provider="openai", model="gpt-4o"),
    "gpt4o-t03": ModelConfig(provider="openai", model="gpt-4o", temperature=0.3, n=5),
    "gpt4o-again": ModelConfig(provider="openai", model="gpt-4o", max_tokens=2048),  # the same model, named twice
    "o3-mini": ModelConfig(provider="openai", model="o3-mini"),  # reasoning: no temperature of its own
    "claude": ModelConfig(provider="openai", model="claude-3-5-sonnet", base_url="http://proxy/v1"),
}


def test_the_average_counts_each_model_at_temperature_0_once():
    table = long(
        row("gpt-4o", "zero-shot", 0.30), row("gpt4o-t03", "zero-shot", 0.90), row("gpt4o-again", "zero-shot", 0.40),
        row("o3-mini", "zero-shot", 0.50), row("claude", "zero-shot", 0.20), row("gold", "reference", 1.0),
    )  # fmt: skip
    members = average_members(PAPER_MODELS, table["model"][table["technique"] != "reference"])
    assert members == {
        "claude": "http://proxy/v1 claude-3-5-sonnet", "gpt-4o": " gpt-4o", "gpt4o-again": " gpt-4o",
        "o3-mini": " o3-mini",
    }  # fmt: skip
    (average,) = average_rows(table, PAPER_MODELS)["value"]
    # GPT-4o once (its two greedy configurations: their mean, 0.35), o3-mini, Claude; not the 0.3 run
    assert average == pytest.approx((0.35 + 0.50 + 0.20) / 3)
    assert average_rows(table)["value"].iloc[0] == pytest.approx((0.30 + 0.90 + 0.40 + 0.50 + 0.20) / 5)  # no configs
    note = average_note(table, PAPER_MODELS)
    assert note == (
        "average: over claude, gpt-4o = gpt4o-again, o3-mini (temperature 0 or reasoning, each model once); "
        "not in it: gpt4o-t03 at temperature 0.3"
    )


def test_table1_ends_with_the_averages_and_table3_with_their_columns():
    table1 = averages_last(table1_overall(with_averages(TABLE)))
    assert list(table1["model"]) == ["a", "a", "a", "b", "b", "gold", "average", "average", "average"]
    assert table1.iloc[-1].tolist()[:3] == ["average", "zero-shot", "25.0"]
    table3 = average_columns_last(table3_categories(with_averages(TABLE)))
    assert list(table3.columns)[-1] == "average (zero-shot)" and table3.iloc[0]["average (zero-shot)"] == "20.0"


def test_table5_sets_the_three_techniques_side_by_side():
    table5 = table5_techniques(with_averages(TABLE))
    assert list(table5.columns) == ["model", "zero-shot (%)", "three-shot (%)", "stage three-shot (%)"]
    assert table5.values.tolist() == [
        ["a", "30.0", "40.0", "50.0"], ["b", "20.0", "30.0", "–"], ["average", "25.0", "35.0", "50.0"],
    ]  # fmt: skip


def test_table4_sets_other_benchmarks_predicted_stages_beside_dlbenchs_labels():
    tasks = [task(t) for t in ("r1:a.py:t1", "r1:a.py:t2", "r2:b.py:t3")]  # Training, Training, Inference
    predictions = [
        StagePrediction(task_id=str(i), repo="DS-1000", stage=None, predicted=stage)
        for i, stage in enumerate(["Pre/Post Processing", "Pre/Post Processing", "Training", "Evaluation & Metrics"])
    ]
    table = table4_stages(tasks, predictions).set_index("stage")
    assert list(table.columns) == ["DL-Bench (labelled, n=3)", "DS-1000 (predicted, n=4)"]
    assert table.loc["Training"].tolist() == ["2 (66.7%)", "1 (25.0%)"]
    assert table.loc["Pre/Post Processing"].tolist() == ["0 (0.0%)", "2 (50.0%)"]
    assert table.loc["Model Construction"].tolist() == ["0 (0.0%)", "0 (0.0%)"]  # every stage of the vocabulary
    assert list(table4_stages(tasks, []).columns) == ["stage", "DL-Bench (labelled, n=3)"]


def test_a_temperature_03_run_meets_the_papers_table7_rows_and_a_greedy_run_its_table1():
    paper = read_paper(ROOT / "resources/paper_results.csv")
    ours = long(
        row("gpt4o-t03", "zero-shot", 0.31), row("gpt4o-t03", "zero-shot", 0.35, metric="pass@3"),
        row("gpt-4o", "zero-shot", 0.29),
    )  # fmt: skip
    models = {
        "gpt4o-t03": ModelConfig(provider="openai", model="gpt-4o", temperature=0.3, n=5, paper_name="GPT-4o"),
        "gpt-4o": ModelConfig(provider="openai", model="gpt-4o"),
    }
    comparison = paper_comparison(ours, paper, models)
    matched = {(r.model, r.technique, r.metric, r.source): r._7 for r in comparison.itertuples(index=False)}
    assert matched == {
        ("gpt4o-t03", "zero-shot (temperature 0.3)", "pass@1", "Table 7"): "30.5",
        ("gpt4o-t03", "zero-shot (temperature 0.3)", "pass@3", "Table 7"): "33.9",
        ("gpt-4o", "zero-shot", "pass@1", "Table 1"): "30.2",  # temperature 0: the paper's Table 1, not its Table 7
    }
    table7 = table7_matched(comparison)
    assert table7.values.tolist() == [
        ["gpt4o-t03", "zero-shot (temperature 0.3)", "pass@1", "31.0", "30.5", "+0.5", 10],
        ["gpt4o-t03", "zero-shot (temperature 0.3)", "pass@3", "35.0", "33.9", "+1.1", 10],
    ]
    assert paper_comparison(ours, paper).query("model == 'gpt4o-t03'").empty  # no paper name, no match


def test_write_report_writes_tables_4_5_and_the_temperature_match(tmp_path):
    world = make_world(tmp_path)
    stages = tmp_path / "stages.jsonl"
    write_jsonl(stages, [StagePrediction(task_id="1", repo="AICoderEval", stage=None, predicted="Inference")])
    out = tmp_path / "out"
    write_report(
        world["benchmark"], world["evaluations"], world["validation"], out / "tables.csv", out / "tables", out / "plots",
        CFG, paper=ROOT / "resources/paper_results.csv", models={"m": ModelConfig(provider="openai", model="x", temperature=0.3)}, stages=stages,
    )  # fmt: skip
    tables = out / "tables"
    assert "| Inference | 2 (50.0%) | 1 (100.0%) |" in (tables / "table4_stages.md").read_text()
    assert "| m | 44.4 ± 29.4 |" in (tables / "table5_techniques.md").read_text()
    table1 = (tables / "table1_overall.md").read_text()
    # m runs at temperature 0.3: the paper averages none such; s has no config here and stands for itself
    assert "| average | zero-shot | 50.0 |" in table1 and "| s | zero-shot | 50.0 ± 28.9 |" in table1
    assert table1.startswith(
        "## Table 1: pass@1 per model (all usable tasks; average: over s (temperature 0 or reasoning, each model "
        "once); not in it: m at temperature 0.3)"
    )
    assert (
        (tables / "table7_temperature.md").read_text().startswith("## Table 7: our runs at the paper's temperature 0.3")
    )
    # the shipped published figures beside ours: Table 4's DL-Bench stage counts, Table 5's rows
    assert (
        "| Pre/Post Processing | 0 (0.0%) | 210 (40.4%) | Table 4; Leaderboard.md §1"
        in (tables / "table4_beside_paper.md").read_text()
    )
    assert (tables / "table5_beside_paper.md").read_text().startswith("## Table 5: pass@1 per prompting technique")
