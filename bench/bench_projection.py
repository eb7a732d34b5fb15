"""What a paper-scale evaluation would cost, from measured gold runs (issue: evaluation cost).

Reads the gold evaluations this machine made (``results/paper/*.gold.jsonl``: the authors'
named tasks; ``results/evaluations/gold/reference/*.jsonl``: the workflow's mined samples),
each with its wall time and every test node's own time (``durations``), and per repository
reports the distribution of a candidate's wall time (median, 90th percentile, mean), the
share that is the tests' own time, and the harness's overhead beyond it. Under a test budget
(``evaluate.test_budget_s``) a candidate runs the tests ``harness.testset.within_budget``
picks from gold's times; its cost is estimated as the overhead plus those tests' time.

The projection: ``models × runs`` candidates per task (the paper: 7 × 5) plus gold and null,
over ``--tasks`` tasks drawn like the measured ones (each repository weighs by its share of
the authors' named tasks in ``results/authors/repos.csv``, else equally), run ``--slots`` at a
time on one node (16 cores, one sandbox per core). Every figure is a measurement or a product
of measurements; the per-repository rows are written to ``docs/data/projection.csv``, with
the median of each part of a run where its evidence records them (copy, the child's start,
pytest's start-up and collection, the tests, exit, the checks after, cleanup).

    python bench/bench_projection.py --budget 10
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

import pandas as pd

from dlbench.harness.testset import COMPLETE, within_budget
from dlbench.records import Evaluation
from dlbench.store import iter_jsonl

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("results/paper/*.gold.jsonl", "results/evaluations/gold/reference/*.jsonl")
OUT = ROOT / "docs" / "data" / "projection.csv"


def gold_runs() -> dict[str, list[Evaluation]]:
    """Complete gold runs with per-node times, by repository slug."""
    runs: dict[str, list[Evaluation]] = defaultdict(list)
    for pattern in SOURCES:
        for path in sorted(ROOT.glob(pattern)):
            for e in iter_jsonl(path, Evaluation):
                if e.status in COMPLETE and e.durations:
                    runs[e.task_id.split(":", 1)[0]].append(e)
    return runs


def budgeted_seconds(run: Evaluation, budget_s: float) -> float:
    """The run's overhead plus the time of the tests the budget keeps (from this run's times)."""
    tests = sum(run.durations.values())
    if not budget_s:
        return run.duration_s
    kept = within_budget(sorted(run.durations), dict(run.durations), budget_s)
    return run.duration_s - tests + sum(run.durations[t] for t in kept)


def repository_row(slug: str, runs: list[Evaluation], budget_s: float) -> dict:
    wall = [e.duration_s for e in runs]
    tests = [sum(e.durations.values()) for e in runs]
    budgeted = [budgeted_seconds(e, budget_s) for e in runs]
    return {
        "repo": slug,
        "runs": len(runs),
        "tasks": len({e.task_id for e in runs}),
        "median_s": statistics.median(wall),
        "p90_s": float(pd.Series(wall).quantile(0.9)),
        "mean_s": statistics.fmean(wall),
        "tests_share": sum(tests) / sum(wall),
        "overhead_median_s": statistics.median(w - t for w, t in zip(wall, tests, strict=True)),
        "budget_median_s": statistics.median(budgeted),
        "budget_mean_s": statistics.fmean(budgeted),
        **phase_medians(slug),
    }


PHASES = ("copy", "start", "collect", "import", "tests", "exit", "check", "cleanup", "harness")
RECENT = ("import", "harness")  # runs before the tenth session have no import phase: not counted as 0
WALL = ("copy", "session", "check", "cleanup")  # the supervisor's marks: together, the run's wall time


def phase_medians(slug: str) -> dict[str, float]:
    """Median seconds of each part of the repository's gold runs, from their evidence
    (``run.json``'s ``phases``, kept by runs since they were recorded): where the overhead
    beyond the tests' own time goes. ``exit``: the session less the child's stamped parts;
    ``import``: the part of ``collect`` executing the repository's own modules (runs since
    the tenth session); ``harness``: the overhead beyond the tests and those imports."""
    found: dict[str, list[float]] = defaultdict(list)
    for path in ROOT.glob(f"results/evidence/gold/*/{slug}/*/*/run.json"):
        phases = json.loads(path.read_text()).get("phases") or {}
        if not {"session", "start", "collect", "tests"} <= phases.keys():
            continue
        phases["exit"] = phases["session"] - phases["start"] - phases["collect"] - phases["tests"]
        if "import" in phases:
            phases["harness"] = sum(phases.get(k, 0.0) for k in WALL) - phases["tests"] - phases["import"]
        for name in PHASES:
            if name in phases or name not in RECENT:
                found[name].append(phases.get(name, 0.0))
    return {f"{name}_median_s": statistics.median(found[name]) if found[name] else float("nan") for name in PHASES}


def with_earlier_rows(table: pd.DataFrame) -> pd.DataFrame:
    """This run's rows and, for repositories it did not measure, the rows an earlier run kept
    in ``OUT`` (``results/`` does not outlive the machine; the measured rows do)."""
    if not OUT.is_file():
        return table
    earlier = pd.read_csv(OUT)
    kept = earlier[~earlier["repo"].isin(table["repo"])]
    return pd.concat([table, kept], ignore_index=True).sort_values("repo", ignore_index=True)


def weights(slugs: list[str]) -> dict[str, float]:
    """Each repository's share of the authors' named tasks (equal when unknown)."""
    path = ROOT / "results" / "authors" / "repos.csv"
    if path.is_file():
        table = pd.read_csv(path)
        named = {str(r.repo).replace("/", "__"): float(r.named) for r in table.itertuples() if r.named > 0}
        known = {s: named[s] for s in slugs if s in named}
        if known:
            total = sum(known.values())
            return {s: known[s] / total for s in known}
    return {s: 1 / len(slugs) for s in slugs}


def projection_hours(table: pd.DataFrame, column: str, tasks: int, candidates: int, slots: int) -> float:
    w = weights(list(table["repo"]))
    mean = sum(w[s] * v for s, v in zip(table["repo"], table[column], strict=True) if s in w)
    return tasks * candidates * mean / slots / 3600


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=10.0, help="evaluate.test_budget_s of the budgeted column")
    parser.add_argument("--tasks", type=int, default=520, help="tasks of the benchmark (the paper: 520)")
    parser.add_argument("--models", type=int, default=7)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--slots", type=int, default=16, help="sandboxes at once on the node")
    args = parser.parse_args()
    runs = gold_runs()
    if not runs:
        raise SystemExit("no gold runs with per-test times under results/: run bench/bench_paper.py first")
    table = with_earlier_rows(pd.DataFrame([repository_row(s, r, args.budget) for s, r in sorted(runs.items())]))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    table.round(3).to_csv(OUT, index=False)
    print(table.round(2).to_string(index=False))
    candidates = args.models * args.runs + 2  # the models' runs, gold and null
    every = pd.Series([s for r in runs.values() for s in (e.duration_s for e in r)])
    print(
        f"\nthis run's repositories: median {every.median():.1f} s, p90 {every.quantile(0.9):.1f} s per gold candidate"
    )
    for label, column in (("full test sets", "mean_s"), (f"test budget {args.budget:g} s", "budget_mean_s")):
        hours = projection_hours(table, column, args.tasks, candidates, args.slots)
        print(
            f"projection, {label}: {args.tasks} tasks x {candidates} candidates on {args.slots} slots = {hours:.1f} h"
        )


if __name__ == "__main__":
    main()
