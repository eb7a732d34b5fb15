"""Unreadable inputs give one line naming the file and the problem (issue 15, item 7):
binary or empty annotation sheets, binary tasks/predictions/config for ``dlbench
evaluate``, a prediction without ``code``, an unknown technique in the config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.config import ConfigError, load_config
from dlbench.tasks.sheets import SheetError, read_sheet
from tests.test_report_tables import TASKS, task

BINARY = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # not UTF-8 from its first line, not a zip archive


def one_line_error(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


@pytest.fixture()
def files(tmp_path) -> dict[str, Path]:
    """A readable tasks file, predictions file and config for ``dlbench evaluate``."""
    tasks = tmp_path / "tasks.jsonl"
    first = task(next(iter(TASKS)))
    tasks.write_text(first.model_dump_json() + "\n")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"task_id": first.task_id, "code": first.ground_truth}) + "\n")
    config = tmp_path / "config.yaml"
    config.write_text("evaluate:\n  timeout_s: 10\n")
    return {"tasks": tasks, "predictions": predictions, "config": config}


def evaluate_argv(files: dict[str, Path], tmp_path: Path) -> list[str]:
    return [
        "evaluate", "--tasks", str(files["tasks"]), "--predictions", str(files["predictions"]),
        "--config", str(files["config"]), "--out", str(tmp_path / "out.jsonl"), "--backend", "local",
    ]  # fmt: skip


@pytest.mark.parametrize("which", ["tasks", "predictions", "config"])
def test_binary_file_for_evaluate_is_named_in_one_line(files, tmp_path, capsys, which):
    files[which].write_bytes(BINARY)
    err = one_line_error(evaluate_argv(files, tmp_path), capsys)
    assert str(files[which]) in err and "not UTF-8 text" in err
    assert not (tmp_path / "out.jsonl").exists()


def test_prediction_without_code_names_the_field(files, tmp_path, capsys):
    files["predictions"].write_text(json.dumps({"task_id": "x", "sample": 0}) + "\n")
    err = one_line_error(evaluate_argv(files, tmp_path), capsys)
    assert f"{files['predictions']}:1: not a Prediction: field 'code': Field required" in err


@pytest.mark.parametrize("content", [b"", BINARY], ids=["empty", "binary"])
def test_unreadable_xlsx_sheet_is_named(tmp_path, content):
    sheet = tmp_path / "annotator.xlsx"
    sheet.write_bytes(content)
    with pytest.raises(SheetError) as info:
        read_sheet(sheet)
    assert str(info.value) == f"{sheet}: not an .xlsx workbook (File is not a zip file)"


def test_unknown_technique_fails_config_validation():
    with pytest.raises(ConfigError) as info:
        load_config({"topics": "resources/topics.txt", "generate": {"techniques": ["zero-shot", "few_shot"]}})
    assert str(info.value).startswith("config key 'generate.techniques.1': Input should be 'zero-shot'")
    assert "(got 'few_shot')" in str(info.value)
