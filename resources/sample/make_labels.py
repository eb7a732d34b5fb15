#!/usr/bin/env python
"""Write the three synthetic annotators' label sheets from truth.jsonl (seeded).

Each sheet has one row per task (a truth function with >= MIN_TESTS_PER_TASK tests) and
the columns ``task_id,repo,stage,task,data,keep,edited_prompt,notes``. Starting from the
truth labels, every annotator disagrees on a share of cells, writes some labels in
other spellings, leaves a few cells blank, and a handful of fixed cases exercise the
merge step: three-way ties, ``keep=no`` by two annotators, an unknown label and
edited prompts (two of them identical between two annotators). See labels/README.md.
"""
import argparse
import csv
import json
import random
import sys
from pathlib import Path

from sample_world import LABELS_DIR, MIN_TESTS_PER_TASK, TRUTH

SEED = 20250801
COLUMNS = ["task_id", "repo", "stage", "task", "data", "keep", "edited_prompt", "notes"]
DIMENSIONS = {
    "stage": ["Pre/Post Processing", "Model Construction", "Training", "Inference",
              "Evaluation & Metrics"],
    "task": ["Classification", "Regression", "Object Detection", "Image Segmentation",
             "Time-Series Prediction", "Recommendation", "General"],
    "data": ["Image", "Text", "Structured Array", "Others"],
}
SPELLINGS = {
    "Pre/Post Processing": ["pre-processing", "Pre/post processing", "pre/post-processing"],
    "Model Construction": ["Model construction", "model construction"],
    "Evaluation & Metrics": ["eval & metrics", "Evaluation and Metrics"],
    "Training": ["training"], "Inference": ["inference"],
    "Structured Array": ["structured array", "Structured array"],
    "Text": ["TEXT", "text"], "Image": ["image"], "Others": ["other"],
    "General": ["general"], "Recommendation": ["recommendation"],
    "Object Detection": ["object detection"], "Time-Series Prediction": ["time series prediction"],
    "Classification": ["classification"], "Regression": ["regression"],
}
# Per annotator: probability that a cell disagrees with the truth, and that it is respelled.
PROFILES = {1: (0.12, 0.05), 2: (0.15, 0.05), 3: (0.14, 0.04)}
# Spellings that must appear somewhere: (annotator, dimension, truth label, spelling).
FORCED_SPELLINGS = [
    (1, "stage", "Pre/Post Processing", "pre-processing"),
    (2, "stage", "Model Construction", "Model construction"),
    (3, "stage", "Evaluation & Metrics", "eval & metrics"),
    (1, "data", "Structured Array", "structured array"),
    (2, "data", "Text", "TEXT"),
]
OWNER_SEP = "__"

# Fixed cases, keyed by "repo name:qualname".
THREE_WAY_TIES = {"visionkit:nms": "stage", "nnkit:Dense.forward": "stage",
                  "tskit:MinMaxScaler.fit": "task"}
KEEP_NO = {
    "visionkit:hflip": {1: "trivial wrapper around a numpy slice", 2: "too trivial (one line)"},
    "textkit:Vocabulary.size": {2: "trivial wrapper around len()", 3: "trivial wrapper"},
}
UNKNOWN_LABEL = ("nnkit:dropout", 2, "data", "Audio")
EDITED_PROMPTS = {
    "visionkit:iou": ({1, 3}, "Compute the pairwise intersection-over-union matrix between two sets "
                              "of boxes in (x1, y1, x2, y2) format. Return an (N, M) array; pairs "
                              "whose union is empty get 0."),
    "tskit:sliding_windows": ({2, 3}, "Cut a series into (input window, target) pairs with the given "
                                      "window, horizon and stride; raise ValueError when the series "
                                      "is too short for one window."),
    "recokit:ndcg_at_k": ({1}, "Binary-relevance NDCG@k: DCG of the top-k list divided by the DCG "
                               "of an ideal ranking; 0.0 when nothing is relevant."),
    "nnkit:Adam.step": ({2}, "Apply one in-place Adam update with bias-corrected first and second "
                             "moment estimates to every (param, grad) pair."),
}
SKIPPED_BY_3 = 5


def task_key(row: dict) -> str:
    return f"{row['repo'].split('/')[1]}:{row['qualname']}"


def task_id(row: dict) -> str:
    return f"{row['repo'].replace('/', OWNER_SEP)}:{row['path']}:{row['qualname']}"


def load_tasks() -> list:
    rows = [json.loads(line) for line in TRUTH.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if len(r["tests"]) >= MIN_TESTS_PER_TASK]


def noisy_cell(rng: random.Random, truth: str, dim: str, p_wrong: float, p_spell: float) -> str:
    if rng.random() < p_wrong:
        return rng.choice([c for c in DIMENSIONS[dim] if c != truth])
    if rng.random() < p_spell and truth in SPELLINGS:
        return rng.choice(SPELLINGS[truth])
    return truth


def base_sheet(rng: random.Random, tasks: list, annotator: int) -> dict:
    p_wrong, p_spell = PROFILES[annotator]
    sheet = {}
    for t in tasks:
        row = {"task_id": task_id(t), "repo": t["repo"], "keep": "yes", "edited_prompt": "", "notes": ""}
        for dim in DIMENSIONS:
            row[dim] = noisy_cell(rng, t[dim], dim, p_wrong, p_spell)
        sheet[task_key(t)] = row
    return sheet


def apply_fixed_cases(sheets: dict, tasks: list, rng: random.Random) -> None:
    truth = {task_key(t): t for t in tasks}
    special = set(THREE_WAY_TIES) | set(KEEP_NO) | set(EDITED_PROMPTS) | {UNKNOWN_LABEL[0]}
    for key, dim in THREE_WAY_TIES.items():
        others = [c for c in DIMENSIONS[dim] if c != truth[key][dim]]
        picks = [truth[key][dim]] + rng.sample(others, 2)
        for annotator, label in zip((1, 2, 3), picks):
            sheets[annotator][key][dim] = label
    for key, notes in KEEP_NO.items():
        for annotator, note in notes.items():
            sheets[annotator][key].update(keep="no", notes=note)
    key, annotator, dim, label = UNKNOWN_LABEL
    sheets[annotator][key][dim] = label
    for key, (annotators, prompt) in EDITED_PROMPTS.items():
        for annotator in annotators:
            sheets[annotator][key].update(edited_prompt=prompt, notes="clarified the edge case")
    free = [k for k in sorted(truth) if k not in special]
    for annotator, dim, label, spelling in FORCED_SPELLINGS:
        key = next(k for k in free if truth[k][dim] == label and sheets[annotator][k][dim] == label)
        sheets[annotator][key][dim] = spelling
        free.remove(key)  # later blanks and skips must not erase it
    for annotator in (1, 2):
        for key in rng.sample(free, 2):
            sheets[annotator][key][rng.choice(list(DIMENSIONS))] = ""
    for key in rng.sample(free, SKIPPED_BY_3):
        sheets[3][key].update(stage="", task="", data="", keep="", notes="skipped")


def write_sheet(path, rows: list) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=LABELS_DIR, help="folder for the CSV sheets")
    args = parser.parse_args(argv)
    rng = random.Random(SEED)
    tasks = load_tasks()
    sheets = {a: base_sheet(rng, tasks, a) for a in PROFILES}
    apply_fixed_cases(sheets, tasks, rng)
    args.out.mkdir(parents=True, exist_ok=True)
    for annotator, sheet in sheets.items():
        write_sheet(args.out / f"annotator_{annotator}.csv", [sheet[task_key(t)] for t in tasks])
    print(f"{len(tasks)} tasks x {len(sheets)} annotators written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
