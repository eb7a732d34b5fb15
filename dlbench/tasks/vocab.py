"""The paper's label vocabularies and the normalisation of annotators' spellings.

Annotators type labels by hand ("pre-processing", "eval", "time series"), so every cell is
reduced to a key (lower case, letters and digits only, "&" read as "and") and looked up in
the aliases below. A cell that matches nothing is *unknown*: it counts as a missing vote
and is listed in the disagreement report, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STAGES = ("Pre/Post Processing", "Model Construction", "Training", "Inference", "Evaluation & Metrics")
TASKS = (
    "Classification",
    "Regression",
    "Object Detection",
    "Image Segmentation",
    "Time-Series Prediction",
    "Recommendation",
    "General",
)
DATA = ("Image", "Text", "Structured Array", "Others")
KEEP = ("yes", "no")
LABEL_DIMENSIONS = ("stage", "task", "data")
VOCABULARIES: dict[str, tuple[str, ...]] = {"stage": STAGES, "task": TASKS, "data": DATA, "keep": KEEP}

# Extra spellings per canonical label (the canonical spelling's own key is always accepted).
_ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "stage": {
        "Pre/Post Processing": (
            "prepost",
            "preprocessing",
            "postprocessing",
            "preandpostprocessing",
            "prepostprocess",
            "processing",
            "dataprocessing",
            "preproc",
            "pre",
            "post",
        ),
        "Model Construction": (
            "model",
            "construction",
            "modelbuilding",
            "modeldefinition",
            "architecture",
            "modelconstr",
        ),
        "Training": ("train", "trainer", "fitting", "fit"),
        "Inference": ("infer", "predict", "serving"),
        "Evaluation & Metrics": (
            "evaluation",
            "evaluationmetrics",
            "evaluationmetric",
            "evalandmetrics",
            "evalmetrics",
            "eval",
            "metrics",
            "metric",
            "evaluatingandmetrics",  # the DL-Bench authors' published task files
        ),
    },
    "task": {
        "Classification": ("classify", "classifier", "cls"),
        "Regression": ("regress", "reg"),
        "Object Detection": ("detection", "objdetection", "objectdetect", "od"),
        "Image Segmentation": ("segmentation", "imgsegmentation", "imagesegment", "seg"),
        "Time-Series Prediction": (
            "timeseries",
            "timeseriesforecasting",
            "timeseriesforecast",
            "forecasting",
            "forecast",
            "tsprediction",
            "ts",
        ),
        "Recommendation": ("recommender", "recommendersystem", "recommendersystems", "recsys", "recommend"),
        "General": ("generic", "gen"),
    },
    "data": {
        "Image": ("images", "img", "vision", "picture"),
        "Text": ("texts", "nlp", "language", "string"),
        "Structured Array": (
            "structured",
            "array",
            "arrays",
            "structuredarrays",
            "tabular",
            "table",
            "tensor",
            "numeric",
        ),
        "Others": ("other", "misc", "miscellaneous"),
    },
    "keep": {
        "yes": ("y", "true", "1", "keep", "kept", "ok"),
        "no": ("n", "false", "0", "discard", "drop", "remove", "reject"),
    },
}


def label_key(text: str) -> str:
    """Spelling-insensitive key of a label: ``"Pre-/Post processing"`` → ``"prepostprocessing"``."""
    return re.sub(r"[^a-z0-9]", "", text.lower().replace("&", "and"))


def _lookup() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for dimension, labels in VOCABULARIES.items():
        keys = table.setdefault(dimension, {})
        for label in labels:
            for spelling in (label, *_ALIASES[dimension].get(label, ())):
                keys[label_key(spelling)] = label
    return table


_LOOKUP = _lookup()


@dataclass(frozen=True)
class Normalized:
    """One cell after normalisation: a canonical label, or nothing (blank or unknown)."""

    value: str | None
    raw: str
    unknown: bool = False


def canonical_label(dimension: str, raw: object) -> Normalized:
    """Map a typed cell to the canonical label of ``dimension`` (stage, task, data, keep)."""
    if dimension not in _LOOKUP:
        raise ValueError(f"unknown label dimension {dimension!r} (known: {', '.join(VOCABULARIES)})")
    text = cell_text(raw)
    if not text:
        return Normalized(None, text)
    value = _LOOKUP[dimension].get(label_key(text))
    return Normalized(value, text, unknown=value is None)


def cell_text(raw: object) -> str:
    """A spreadsheet cell as text: None → "", 3.0 → "3", surrounding blanks stripped."""
    if raw is None:
        return ""
    if isinstance(raw, bool):
        return "yes" if raw else "no"
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return str(raw).strip()
