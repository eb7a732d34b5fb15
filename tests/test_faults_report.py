"""Infrastructure outcomes are not scored (issue 15, item 1): a candidate whose endpoint,
harness or image failed is left out of pass@k, the test pass ratio and the mutant kill
rate, and every row of tables.csv says how many candidates of its tasks were left out."""

from __future__ import annotations

import pandas as pd
import pytest

from dlbench.records import TABLE_COLUMNS, EvalStatus, Evaluation
from dlbench.report.render import failure_counts, failure_table
from dlbench.report.tables import (
    adequacy_table,
    load_inputs,
    long_table,
    write_long_table,
)
from dlbench.report.taxonomy import INFRASTRUCTURE, classify
from dlbench.store import write_jsonl
from tests.test_report_tables import TASKS, P, ev, task

T1, T2, T3, _ = TASKS
OUTCOMES = {T1: {"t.py::a": P, "t.py::b": P}, T2: {"t.py::c": P}, T3: {"t.py::d": P, "t.py::e": P}}


def fault(task_id: str, model: str, sample: int, status: EvalStatus, technique: str = "zero-shot") -> Evaluation:
    return Evaluation(
        task_id=task_id,
        model=model,
        technique=technique,
        sample=sample,
        status=status,
        passed=False,
        tests={},
        duration_s=0.0,
        detail="HTTP 500: injected server_error",
    )


@pytest.fixture()
def inputs(tmp_path):
    write_jsonl(tmp_path / "benchmark.jsonl", [task(t) for t in TASKS])
    (tmp_path / "validation.csv").write_text(f"task_id,usable\n{T1},True\n{T2},True\n{T3},True\n")
    evaluations = [
        ev(T1, "m", "zero-shot", 0, OUTCOMES[T1]),
        fault(T1, "m", 1, EvalStatus.API_ERROR),  # the endpoint never answered
        ev(T2, "m", "zero-shot", 0, OUTCOMES[T2]),
        ev(T2, "m", "zero-shot", 1, OUTCOMES[T2]),
        ev(T3, "m", "zero-shot", 0, {"t.py::d": P, "t.py::e": "failed"}),
        fault(T3, "m", 1, EvalStatus.INFRA_ERROR),  # the sandbox failed
        *(ev(t, "mutant", "reference", 0, OUTCOMES[t]) for t in (T1, T2, T3)),
        fault(T1, "mutant", 1, EvalStatus.IMAGE_ERROR, "reference"),
    ]
    write_jsonl(tmp_path / "m.jsonl", evaluations)
    return load_inputs(tmp_path / "benchmark.jsonl", [tmp_path / "m.jsonl"], tmp_path / "validation.csv")


def test_infrastructure_statuses_are_their_own_kind() -> None:
    for status in (EvalStatus.API_ERROR, EvalStatus.INFRA_ERROR, EvalStatus.IMAGE_ERROR):
        assert classify(str(status), {}, None, "HTTP 500") == INFRASTRUCTURE
    assert classify("no_code", {}, None, None) != INFRASTRUCTURE


def test_faults_are_left_out_of_pass_at_k_and_counted_per_row(inputs) -> None:
    table = long_table(inputs, ["all"], [1, 2])
    assert list(table.columns) == TABLE_COLUMNS
    overall = table[(table["model"] == "m") & (table["dimension"] == "overall")].set_index("metric")
    # scored: t1 1/1, t2 2/2, t3 0/1 -> pass@1 = 2/3; counted as failures it would be 1.5/3
    assert overall.loc["pass@1", "value"] == pytest.approx(2 / 3)
    assert "pass@2" not in overall.index  # t1 and t3 keep one scored sample: n < k, not reported
    assert overall.loc["pass@1", "n_tasks"] == 3 and overall.loc["pass@1", "n_excluded"] == 2
    t1_row = table[(table["model"] == "m") & (table["dimension"] == "stage") & (table["category"] == "Training")]
    assert set(t1_row["n_excluded"]) == {1}  # t1's api_error; t2 has none
    mutant = table[(table["model"] == "mutant") & (table["dimension"] == "overall")]
    assert set(mutant["n_excluded"]) == {1}


def test_mutant_kill_rate_ignores_image_errors(inputs) -> None:
    adequacy = adequacy_table(inputs, 0.5).set_index("task_id")
    assert adequacy.loc[T1, "mutants"] == 1 and adequacy.loc[T1, "killed"] == 0


def test_tables_csv_header_keeps_the_contract_columns_first(inputs, tmp_path) -> None:
    write_long_table(tmp_path / "tables.csv", long_table(inputs, ["all"], [1]))
    header = list(pd.read_csv(tmp_path / "tables.csv").columns)
    assert header[:8] == ["model", "technique", "slice", "dimension", "category", "metric", "value", "n_tasks"]
    assert header[8:] == ["n_excluded", "stderr", "ci_low", "ci_high"]


def test_failure_taxonomy_shares_leave_infrastructure_apart(inputs) -> None:
    counts = failure_counts(inputs)
    assert counts[(counts["model"] == "m") & (counts["kind"] == INFRASTRUCTURE)]["count"].tolist() == [2]
    table = failure_table(counts).set_index("model")
    assert table.loc["m", "failures"] == 1 and table.loc["m", "infrastructure (not scored)"] == 2
    assert table.loc["m", "wrong_result [Functional] (%)"] == "100.0"  # t3's failed test: the one model failure
    assert not any(column.startswith(f"{INFRASTRUCTURE} [") for column in table.columns)  # no share of its own
