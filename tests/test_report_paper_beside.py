"""The paper's published figures of Tables 4, 5 and 6 and the separability statistics beside ours."""

from __future__ import annotations

import io

import pandas as pd

from dlbench.records import FailureLabel
from dlbench.report.failures import table6_beside_paper
from dlbench.report.paper_beside import published, separability_beside_paper, table4_beside_paper
from dlbench.report.render import read_paper, table5_beside_paper
from tests.conftest import ROOT
from tests.test_report_paper_tables import long, row
from tests.test_report_tables import task

# a hand-built published file in resources/paper_results.csv's format
PAPER = read_paper(
    io.StringIO(
        "# comment lines are skipped\n"
        "model,technique,slice,dimension,category,metric,value,source,benchmark\n"
        ",,all,stage,Training,tasks,3,Table 4; T,DL-Bench\n"
        ",,all,stage,Inference,tasks,1,Table 4; T,DL-Bench\n"
        "GPT-4o,zero-shot,all,overall,all,pass@1,30.2,Table 1,DL-Bench\n"
        "GPT-4o,few-shot,all,overall,all,pass@1,33.0,Table 5; T,DL-Bench\n"
        "GPT-4o,zero-shot,all,overall,all,pass@1,51.1,Table 5; W,DS-1000\n"
        "all,,all,failure category,Wrong Input Type,failures,6,Table 6; L,DL-Bench\n"
        'all,,all,DL sub-type,"Wrong Input Type / Type mismatch",failures,4,Table 6; L,DL-Bench\n'
        "all,,all,failure category,Syntax Error,failures,2,Table 6; L,DL-Bench\n"
        ",,all,separability,all,cohen_d,3.13,I,DS-1000\n"
    )
)


def label(category: str | None, subtype: str | None = None) -> FailureLabel:
    return FailureLabel(
        candidate_id="c", task_id="t", model="m", technique="zero-shot", status="fail", category=category,
        dl_subtype=subtype, source="annotators",
    )  # fmt: skip


def test_the_shipped_file_reads_with_every_row_sourced_and_a_benchmark():
    paper = read_paper(ROOT / "resources/paper_results.csv")
    assert (paper["source"] != "").all() and set(paper["benchmark"]) == {"DL-Bench", "DS-1000"}
    assert sorted(published(paper, metric="tasks")["value"]) == [58, 58, 75, 119, 210]  # Leaderboard §1: 520 tasks
    counts = published(paper, metric="failures", dimension="failure category")
    assert len(counts) == 14 and counts["value"].sum() == 421  # Leaderboard §6.1-6.14
    assert published(paper, "DS-1000", metric="pass@1").set_index("model")["value"].to_dict() == {
        "O3-Mini": 61.0,
        "GPT-4o": 51.1,
    }


def test_a_file_without_the_benchmark_column_is_all_dlbenchs():
    old = read_paper(
        io.StringIO("model,technique,slice,dimension,category,metric,value,source\nA,z,all,o,all,pass@1,1,T\n")
    )
    assert old["benchmark"].tolist() == ["DL-Bench"] and len(published(old)) == 1


def test_table4_sets_the_papers_stage_counts_beside_our_labels():
    tasks = [task(t) for t in ("r1:a.py:t1", "r1:a.py:t2", "r2:b.py:t3")]  # Training, Training, Inference
    table = table4_beside_paper(tasks, PAPER).set_index("stage")
    assert list(table.columns) == ["ours (n=3)", "paper (n=4)", "source"]
    assert table.loc["Training"].tolist() == ["2 (66.7%)", "3 (75.0%)", "Table 4; T"]
    assert table.loc["Inference"].tolist() == ["1 (33.3%)", "1 (25.0%)", "Table 4; T"]
    assert table.loc["Model Construction"].tolist() == ["0 (0.0%)", "–", "–"]  # the paper gives none here


def test_table5_sets_each_benchmarks_published_rows_beside_ours():
    ours = long(
        row("GPT-4o", "zero-shot", 0.31),
        row("GPT-4o", "few-shot", 0.35),
        row("GPT-4o", "zero-shot", 0.4, metric="pass@3"),
    )
    ds1000 = long(row("GPT-4o", "zero-shot", 0.50))
    table = table5_beside_paper({"DL-Bench": ours, "DS-1000": ds1000}, PAPER)
    shown = [tuple(r) for r in table[["benchmark", "technique", "ours (%)", "paper (%)", "source"]].values.tolist()]
    assert shown == [
        ("DL-Bench", "few-shot", "35.0", "33.0", "Table 5; T"),
        ("DL-Bench", "zero-shot", "31.0", "30.2", "Table 1"),
        ("DS-1000", "zero-shot", "50.0", "51.1", "Table 5; W"),  # DS-1000's published row beside DS-1000's run only
    ]


def test_table6_sets_the_papers_counts_beside_ours_under_the_same_category_and_subtype():
    labels = [label("Wrong Input Type", "Type mismatch"), label("Wrong Input Type", "Not DL-related"), label(None)]
    labels += [label("Misinterpretation", "Shape and dimension mismatch")]
    table = table6_beside_paper(labels, PAPER)
    rows = {(r[0], r[1]): r[2:] for r in table.values.tolist()}
    assert list(table.columns) == ["category", "DL sub-type", "ours (n=3)", "paper (n=8)", "source"]
    assert rows[("Wrong Input Type", "")] == ["2 (66.7%)", "6 (75.0%)", "Table 6; L"]
    assert rows[("Wrong Input Type", "Type mismatch")] == ["1 (33.3%)", "4 (50.0%)", "Table 6; L"]
    assert rows[("Syntax Error", "")] == ["0 (0.0%)", "2 (25.0%)", "Table 6; L"]
    assert rows[("Misinterpretation", "")] == ["1 (33.3%)", "–", "–"]  # ours without a published figure stays


def test_separability_sets_the_papers_statistics_beside_ours_for_the_same_benchmark():
    ours = pd.DataFrame(
        [["DS-1000", "zero-shot", 3, 0.3, 0.5, 2.5, 3.125, 0.5, 0.67], ["AICoderEval", "zero-shot", 3, 0.3, 0.4, 1.0, 0.5, 1.0, 0.0]],
        columns=["benchmark", "technique", "models", "dlbench_mean", "other_mean", "cohen_d", "fisher_ratio",
                 "spearman_rho", "spearman_p"],
    )  # fmt: skip
    table = separability_beside_paper(ours, PAPER)
    assert table.values.tolist() == [["DS-1000", "zero-shot", 3, "cohen_d", "2.50", "3.13", "I"]]
