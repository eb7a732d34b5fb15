"""Task validation from gold and null evaluations (pure)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dlbench.harness.validate import validate_tasks, validation_table
from dlbench.records import BenchmarkTask, EvalStatus, Evaluation, TestOutcome
from dlbench.store import write_jsonl


def task(name: str) -> BenchmarkTask:
    return BenchmarkTask(
        task_id=f"o__r:m.py:{name}", repo="o/r", sha="s", path="m.py", function=name, class_name=None, signature="",
        prompt="", ground_truth="", tests=["t.py::test"], stage=None, task=None, data=None, first_added=None,
        last_modified=None, qualname=name, slug="o__r", start_line=1, end_line=2,
    )  # fmt: skip


def ev(name: str, model: str, status: EvalStatus, run: int = 0, exception: str | None = None) -> Evaluation:
    return Evaluation(
        task_id=f"o__r:m.py:{name}", model=model, technique="reference", run=run, status=status,
        passed=status == EvalStatus.PASS, tests={"t.py::test": TestOutcome.PASSED}, duration_s=0.1,
        detail="pip failed" if status == EvalStatus.IMAGE_ERROR else None, exception=exception,
    )  # fmt: skip


P, F = EvalStatus.PASS, EvalStatus.FAIL
CASES = {
    "ok": ([P, P], [F], True, None),
    "image": ([EvalStatus.IMAGE_ERROR], [EvalStatus.IMAGE_ERROR], False, "image: pip failed"),
    "goldfails": ([F, F], [F], False, "gold fails: fail: KeyError: 'x'"),
    "flaky": ([P, F], [F], False, "flaky: gold passed 1/2 runs"),
    "nullpasses": ([P, P], [P], False, "null passes"),
    "nogold": ([], [F], False, "no gold"),
    "nonull": ([P], [], False, "no null"),
}


def table() -> pd.DataFrame:
    tasks = [task(name) for name in CASES]
    gold = [
        ev(n, "gold", s, r, "KeyError: 'x'" if s == F else None) for n, (g, _, _, _) in CASES.items() for r, s in enumerate(g)
    ]
    null = [ev(n, "null", s) for n, (_, nl, _, _) in CASES.items() for s in nl]
    return validation_table(tasks, gold, null)


def test_every_reason_in_order() -> None:
    rows = table().set_index("task_id")
    for name, (_, _, usable, reason) in CASES.items():
        row = rows.loc[f"o__r:m.py:{name}"]
        assert bool(row["usable"]) is usable, name
        assert pd.isna(row["reason"]) if reason is None else str(row["reason"]).startswith(reason), (name, row["reason"])
    assert rows.loc["o__r:m.py:flaky", "gold_passes"] == 1 and rows.loc["o__r:m.py:flaky", "gold_runs"] == 2


def test_validate_tasks_writes_csv(tmp_path: Path) -> None:
    bench, gold, null = tmp_path / "b.jsonl", tmp_path / "g.jsonl", tmp_path / "n.jsonl"
    write_jsonl(bench, [task("ok"), task("nullpasses")])
    write_jsonl(gold, [ev("ok", "gold", P), ev("nullpasses", "gold", P)])
    write_jsonl(null, [ev("ok", "null", F), ev("nullpasses", "null", P)])
    validate_tasks(bench, [gold], [null], tmp_path / "validation.csv")
    frame = pd.read_csv(tmp_path / "validation.csv")
    assert frame["usable"].tolist() == [True, False]
    assert frame.columns[:4].tolist() == ["task_id", "repo", "usable", "reason"]


def test_evaluation_refuses_passed_contradicting_its_status() -> None:
    with pytest.raises(ValueError, match="contradicts status"):
        Evaluation.model_validate(ev("x", "gold", F).model_dump() | {"passed": True})
    with pytest.raises(ValueError, match="contradicts status"):
        Evaluation.model_validate(ev("x", "gold", P).model_dump() | {"passed": False})
