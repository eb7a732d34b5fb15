"""DL-Bench beside another benchmark (the DS-1000 track): Tables 1 and 5 with a benchmark column,
and the separability statistics as docs/DS1000.md defines them, checked on hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dlbench.report.beside import (
    beside,
    cohens_d,
    fisher_ratio,
    read_long_table,
    separability,
    separability_readable,
    spearman,
)
from dlbench.report.render import write_report
from tests.test_report_paper_tables import long, row
from tests.test_report_tables import CFG, make_world


def test_cohens_d_and_fishers_ratio_over_two_samples_by_hand():
    x, y = np.array([0.2, 0.3, 0.4]), np.array([0.5, 0.6, 0.7])  # s² = 0.01 each, means 0.3 and 0.6
    assert cohens_d(x, y) == pytest.approx(0.3 / math.sqrt(0.01))  # 3.0 pooled standard deviations
    assert fisher_ratio(x, y) == pytest.approx(0.09 / 0.02)  # 4.5
    assert fisher_ratio(x, y) == pytest.approx(cohens_d(x, y) ** 2 / 2)  # as the paper's 3.13 and 4.9
    assert math.isnan(cohens_d(x[:1], y[:1])) and math.isnan(fisher_ratio(np.ones(3), np.ones(3)))


def test_spearman_over_seven_models_gives_the_papers_p_for_its_rho():
    x = np.arange(7) / 10
    y = np.array([0, 1, 3, 6, 5, 4, 2]) / 10  # ranks agreeing as the paper's models: ρ = 0.5
    rho, p = spearman(x, y)
    assert rho == pytest.approx(0.5) and p == pytest.approx(0.2532, abs=1e-4)  # the paper: 0.50, p = 0.25
    assert all(math.isnan(v) for v in spearman(x[:2], y[:2]))


DLBENCH = long(
    row("a", "zero-shot", 0.30), row("b", "zero-shot", 0.20), row("c", "zero-shot", 0.25), row("gold", "reference", 1.0),
    row("a", "few-shot", 0.40), row("b", "few-shot", 0.30),
)  # fmt: skip
DS1000 = long(
    row("a", "zero-shot", 0.60), row("b", "zero-shot", 0.50), row("c", "zero-shot", 0.70), row("gold", "reference", 1.0),
    row("a", "few-shot", 0.65), row("average", "zero-shot", 0.6),
)  # fmt: skip


def test_separability_is_over_the_llms_that_ran_both_per_technique():
    frame = separability(DLBENCH, DS1000, "DS-1000").set_index("technique")
    zero = frame.loc["zero-shot"]
    assert zero.models == 3  # gold and the average are no models
    assert zero.dlbench_mean == pytest.approx(0.25) and zero.other_mean == pytest.approx(0.6)
    assert zero.cohen_d == pytest.approx(0.35 / math.sqrt((0.0025 + 0.01) / 2))
    assert zero.spearman_rho == pytest.approx(0.5)
    few = frame.loc["few-shot"]
    assert few.models == 1 and math.isnan(few.cohen_d)  # one model ran both: nothing to say
    readable = separability_readable(frame.reset_index()).set_index("technique")
    assert readable.loc["few-shot", "Cohen's d"] == "–" and readable.loc["zero-shot", "DL-Bench pass@1 (%)"] == "25.0"


def test_beside_puts_the_benchmark_first():
    joined = beside({"DL-Bench": pd.DataFrame({"model": ["a"]}), "DS-1000": pd.DataFrame({"model": ["a", "b"]})})
    assert list(joined.columns) == ["benchmark", "model"] and list(joined["benchmark"]) == ["DL-Bench", "DS-1000", "DS-1000"]  # fmt: skip


def test_write_report_sets_ds1000s_rows_in_tables_1_and_5_and_writes_the_statistics(tmp_path):
    world = make_world(tmp_path)
    theirs = tmp_path / "ds1000.csv"
    long(
        row("m", "zero-shot", 0.9), row("s", "zero-shot", 0.6), row("gold", "reference", 1.0), row("null", "reference", 0.0)
    ).to_csv(theirs, index=False)  # fmt: skip
    out = tmp_path / "out"
    write_report(
        world["benchmark"], world["evaluations"], world["validation"], out / "tables.csv", out / "tables", out / "plots",
        CFG, others={"DS-1000": theirs},
    )  # fmt: skip
    table1 = (out / "tables/table1_overall.md").read_text()
    assert table1.startswith("## Table 1: pass@1 per model and benchmark")
    assert "| benchmark | model | technique |" in table1
    assert (
        "| DL-Bench | gold | reference | 100.0 ± 0.0 |" in table1 and "| DS-1000 | gold | reference | 100.0 |" in table1
    )
    assert "| DS-1000 | null | reference | 0.0 |" in table1 and "| DS-1000 | average | zero-shot | 75.0 |" in table1
    table5 = (out / "tables/table5_techniques.md").read_text()
    assert "| DL-Bench | m |" in table5 and "| DS-1000 | m | 90.0 |" in table5
    stats = read_long_table(out / "tables.csv")  # DL-Bench's contract table is DL-Bench's alone
    assert set(stats["model"]) == {"m", "s", "gold", "mutant"}
    separated = pd.read_csv(out / "tables/separability.csv")
    assert separated.loc[0, "models"] == 2 and separated.loc[0, "other_mean"] == pytest.approx(0.75)
    assert "Cohen's d" in (out / "tables/separability.md").read_text()


def test_write_report_without_other_benchmarks_is_unchanged(tmp_path):
    world = make_world(tmp_path)
    out = tmp_path / "out"
    write_report(world["benchmark"], world["evaluations"], world["validation"], out / "tables.csv", out / "tables", out / "plots", CFG)  # fmt: skip
    assert "| model | technique |" in (out / "tables/table1_overall.md").read_text()
    assert not (out / "tables/separability.csv").exists()
