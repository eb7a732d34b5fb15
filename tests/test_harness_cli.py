"""``dlbench evaluate`` through the real command line: a run with an infrastructure fault
writes the evaluations it has and ends non-zero with one line saying so (it printed
"N/M candidates passed" and exited 0, as if every verdict were the candidates')."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.records import CloneRecord, EvalStatus, Evaluation
from dlbench.store import read_jsonl, write_json, write_jsonl
from tests.test_harness_run import GOLD_RELU, RELU, SLUG, TASKS, clone  # noqa: F401 (clone: fixture)


def command_in(root: Path, clone: CloneRecord) -> list[str]:
    """Tasks, predictions (one runs, one names no task) and the checkout where the command
    looks by default (results/repos under the working folder); the command's arguments."""
    repos = root / "results" / "repos"
    repos.mkdir(parents=True)
    (repos / SLUG).symlink_to(clone.path)
    write_json(repos / f"{SLUG}.json", clone.model_copy(update={"path": str(repos / SLUG)}))
    write_jsonl(root / "tasks.jsonl", TASKS.values())
    predictions = [{"task_id": RELU.task_id, "code": GOLD_RELU}, {"task_id": "missing:task", "code": "pass"}]
    (root / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    return ["evaluate", "--tasks", "tasks.jsonl", "--predictions", "preds.jsonl", "--out", "evals.jsonl",
            "--backend", "local", "--jobs", "1"]  # fmt: skip


def test_an_infrastructure_fault_ends_non_zero_and_keeps_the_evaluations(
    clone: CloneRecord, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = command_in(tmp_path, clone)
    with monkeypatch.context() as machine:
        machine.setattr(tempfile, "tempdir", str(tmp_path / "gone"))  # the temp folder is gone: no supervisor starts
        assert main(argv) == 1
    out, err = capsys.readouterr()
    assert "0/2 candidates passed" in out
    [summary] = [line for line in err.splitlines() if line.startswith("dlbench:")]
    assert "1 of 2 candidates met an infrastructure fault" in summary and "could not start" in summary, summary
    statuses = [e.status for e in read_jsonl(tmp_path / "evals.jsonl", Evaluation)]
    assert statuses == [EvalStatus.INFRA_ERROR, EvalStatus.PATCH_ERROR]

    assert main(argv) == 0  # the machine mended: the faulted candidate runs again, the rest is kept
    assert "1/2 candidates passed" in capsys.readouterr().out
    statuses = [e.status for e in read_jsonl(tmp_path / "evals.jsonl", Evaluation)]
    assert statuses == [EvalStatus.PASS, EvalStatus.PATCH_ERROR]


def test_version(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("dlbench 0.")
