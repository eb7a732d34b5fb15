#!/usr/bin/env python
"""The stage classifier on the DL-Bench authors' own tasks: their prompts and stage labels.

Reads the published task files (``../shared/realworld/dleval``: stage, prompt, link), keeps
those whose stage is in the paper's vocabulary, and runs the classifier's rule entry on
them with the ``stages`` settings (the paper's by default: 10 epochs, lr 2e-5, batch 8,
5 stratified folds), timing it. The report (k-fold weighted F1) goes to ``--out``; the
figure is in docs/REALWORLD.md (the paper's own is in its section 6).

    python bench/bench_stage_classifier.py [--tasks ../shared/realworld/dleval] [--out /tmp/stages] [--epochs N] [--folds K]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dlbench.config import StagesConfig
from dlbench.generate.classifier import classify_stages_file
from dlbench.records import BenchmarkTask
from dlbench.store import write_jsonl
from dlbench.tasks.published import PublishedFile, labels_of, read_published

ROOT = Path(__file__).resolve().parents[1]


def as_task(published: PublishedFile) -> BenchmarkTask | None:
    """A benchmark record carrying what the classifier reads (prompt, stage, repository)."""
    stage = labels_of(published)["stage"]
    if stage is None:
        return None
    repo = published.source.split("_")[2] if published.ref != "master" else published.path.split("/")[0]
    return BenchmarkTask(
        task_id=published.source, repo=repo, sha=None, path=published.path, function="", class_name=None,
        signature="", prompt=published.prompt, ground_truth="", tests=["-"], stage=stage, task=None, data=None,
        first_added=None, last_modified=None, qualname="", slug=repo, start_line=0, end_line=0,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=ROOT.parent / "shared/realworld/dleval")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench_stages"))
    paper = StagesConfig()
    parser.add_argument("--epochs", type=int, default=paper.epochs)
    parser.add_argument("--folds", type=int, default=paper.folds)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    tasks = [t for t in map(as_task, read_published(args.tasks)) if t is not None]
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "dlbench.jsonl", tasks)
    cfg = paper.model_copy(update={"epochs": args.epochs, "folds": args.folds})
    start = time.perf_counter()
    report = classify_stages_file(
        args.out / "dlbench.jsonl",
        args.out / "predictions.jsonl",
        args.out / "report.json",
        args.out / "model",
        cfg,
        args.threads,
    )
    print(f"{report.n_labelled} labelled tasks of {report.n_repos} repositories, stages {report.labels}")
    print(
        f"{report.folds}-fold weighted F1 {report.weighted_f1}, macro F1 {report.macro_f1}, accuracy {report.accuracy}"
    )
    print(f"settings {report.training}; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
