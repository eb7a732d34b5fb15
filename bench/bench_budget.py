"""Benchmark: the test budget (``evaluate.test_budget_s``) on a real repository's tasks.

The workflow's seeded sample of the repository's mined tasks (``evaluate.sample_tasks`` of the
paper config; ``--sample``: the first of that ranking), with its clone, image and gold runs
(each test timed) from ``results/`` (``bench_paper.py --mined`` leaves them there): seeded
single-point mutants of every task gold passes run against every test gold kept and against
the tests within the budget. Prints, per test set, the median and 90th percentile candidate
wall time, the share of it that is the tests' own time, and the mutant kill rate (target:
the budget's within 5 points of the full set's).

    python bench/bench_budget.py --repo GPflow__GPflow --budget 10 [--sample 8] [--mutants 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench_preload import ROOT, workflow_records

from dlbench.config import ModelConfig, load_config_file
from dlbench.generate.journal import Journal
from dlbench.generate.models import GenerationJob, MutantProvider
from dlbench.generate.techniques import REFERENCE
from dlbench.harness.evaluate import evaluate_repo, observed_by_gold
from dlbench.harness.testset import gold_test_sets, passes_on, sample_task_ids, scaled_timeouts
from dlbench.records import BenchmarkTask, EvalStatus, Evaluation, Generation
from dlbench.store import read_jsonl


def sampled_tasks(slug: str, size: int, seed: int) -> dict[str, BenchmarkTask]:
    tasks = {
        t.task_id: t for t in read_jsonl(ROOT / "results/benchmark/dlbench.jsonl", BenchmarkTask) if t.slug == slug
    }
    return {i: tasks[i] for i in sorted(sample_task_ids(tasks, size, seed))}


def mutant_generations(tasks: dict[str, BenchmarkTask], n: int, work: Path) -> list[Generation]:
    """The workflow's mutant model (``MutantProvider``), ``n`` per task."""
    provider = MutantProvider("mutant", ModelConfig(provider="mutant", n=n))
    job = GenerationJob("mutant", REFERENCE, "", list(tasks.values()), [], Journal(work / "journal.jsonl"))
    return provider.generate(job)


def summary(name: str, runs: list[Evaluation], tasks: dict[str, BenchmarkTask]) -> None:
    graded = [e for e in runs if e.status != EvalStatus.INFRA_ERROR]
    wall = sorted(e.duration_s for e in graded)
    tests = sum(sum(e.durations.values()) for e in graded) / max(1e-9, sum(wall))
    killed = sum(not e.passed for e in graded)
    count = statistics.mean(len(tasks[e.task_id].tests) for e in graded)
    print(f"{name:>12}: {len(graded)} mutants, {count:.1f} tests per task | wall median {statistics.median(wall):.2f} s, "
          f"p90 {wall[int(0.9 * (len(wall) - 1))]:.2f} s, tests' own time {tests:.0%} | killed {killed}/{len(graded)} "
          f"({killed / len(graded):.1%})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="slug, e.g. GPflow__GPflow")
    parser.add_argument("--budget", type=float, default=10.0, help="evaluate.test_budget_s to measure")
    parser.add_argument("--mutants", type=int, default=2, help="seeded mutants per task")
    parser.add_argument("--sample", type=int, help="tasks of the workflow's sample (default: all of it)")
    args = parser.parse_args()
    cfg = load_config_file(ROOT / "config/dlbench-paper.yaml", ROOT).evaluate
    tasks = sampled_tasks(args.repo, args.sample or cfg.sample_tasks, cfg.sample_seed)
    clone, image = workflow_records(args.repo)
    gold_file = ROOT / f"results/evaluations/gold/{REFERENCE}/{args.repo}.jsonl"
    gold = [e for e in read_jsonl(gold_file, Evaluation) if e.task_id in tasks]
    with tempfile.TemporaryDirectory(prefix="bench-budget-") as tmp:
        usable = {
            t: task for t, task in gold_test_sets(tasks, gold).items()
            if any(e.task_id == t for e in gold) and all(passes_on(e, task.tests) for e in gold if e.task_id == t)
        }  # fmt: skip
        gens = mutant_generations({t: tasks[t] for t in usable}, args.mutants, Path(tmp))
        print(f"{args.repo}: {len(tasks)} sampled tasks, {len(usable)} pass gold on the tests it kept; "
              f"{len(gens)} mutants; budget {args.budget:g} s of gold's test time")  # fmt: skip
        timeouts, allowed = scaled_timeouts(gold, cfg), observed_by_gold(gold)
        for name, budget in (("every test", 0.0), (f"budget {args.budget:g} s", args.budget)):
            sets = {t: task for t, task in gold_test_sets(tasks, gold, budget).items() if t in usable}
            runs = evaluate_repo(clone, sets, gens, image, "docker", cfg, cfg.jobs, Path(tmp) / name,
                                 timeouts=timeouts, allowed=allowed)  # fmt: skip
            summary(name, runs, sets)


if __name__ == "__main__":
    main()
