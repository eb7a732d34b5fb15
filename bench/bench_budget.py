"""Benchmark: the test budget (``evaluate.test_budget_s``) on a real repository's tasks.

The workflow's seeded sample of the repository's mined tasks (``evaluate.sample_tasks`` of the
paper config; ``--sample``: the first of that ranking), with its clone, image and gold runs
(each test timed) from ``results/`` (``bench_paper.py --mined`` leaves them there): seeded
single-point mutants of every task gold passes (and with ``--gold`` the reference itself) run
against every test gold kept and against the tests within the budget (chosen by gold's times
alone, and with the tests null fails first, as the workflow does), in one invocation.
Prints, per test set and model, the median and 90th percentile candidate wall time, the share
of it that is the tests' own time, the mutant kill rate (target: the budget's within 5 points
of the full set's) and gold's passes (the same verdicts under the budget).

    python bench/bench_budget.py --repo GPflow__GPflow --budget 10 [--sample 8] [--mutants 2] [--gold]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench_preload import ROOT, workflow_records

from dlbench.config import ModelConfig, load_config_file
from dlbench.generate.journal import Journal
from dlbench.generate.models import GenerationJob, GoldProvider, MutantProvider
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


def reference_generations(model: str, tasks: dict[str, BenchmarkTask], n: int, work: Path) -> list[Generation]:
    """The workflow's reference model ``model`` (gold: ``GoldProvider``, mutant: ``MutantProvider``), ``n`` per task."""
    provider = {"gold": GoldProvider, "mutant": MutantProvider}[model](model, ModelConfig(provider=model, n=n))
    job = GenerationJob(model, REFERENCE, "", list(tasks.values()), [], Journal(work / f"{model}.journal.jsonl"))
    return provider.generate(job)


def summary(name: str, runs: list[Evaluation], tasks: dict[str, BenchmarkTask]) -> None:
    """Per model (gold, mutant): wall time per candidate and its tests' share; gold's passes, the mutants' kills."""
    for model in ("gold", "mutant"):
        graded = [e for e in runs if e.model == model and e.status != EvalStatus.INFRA_ERROR]
        if not graded:
            continue
        wall = sorted(e.duration_s for e in graded)
        tests = sum(sum(e.durations.values()) for e in graded) / max(1e-9, sum(wall))
        failed = sum(not e.passed for e in graded)
        verdict = (
            f"passed {len(graded) - failed}/{len(graded)}" if model == "gold" else f"killed {failed}/{len(graded)}"
        )
        count = statistics.mean(len(tasks[e.task_id].tests) for e in graded)
        print(f"{name:>12}: {len(graded)} {model} runs, {count:.1f} tests per task | wall median "
              f"{statistics.median(wall):.2f} s, p90 {wall[int(0.9 * (len(wall) - 1))]:.2f} s, tests' own time "
              f"{tests:.0%} | {verdict} ({failed / len(graded):.1%} failed)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="slug, e.g. GPflow__GPflow")
    parser.add_argument("--budget", type=float, default=10.0, help="evaluate.test_budget_s to measure")
    parser.add_argument("--mutants", type=int, default=2, help="seeded mutants per task")
    parser.add_argument("--sample", type=int, help="tasks of the workflow's sample (default: all of it)")
    parser.add_argument("--gold", action="store_true",
                        help="also run gold once per task under both test sets (its time and that it still passes)")  # fmt: skip
    args = parser.parse_args()
    cfg = load_config_file(ROOT / "config/dlbench-paper.yaml", ROOT).evaluate
    tasks = sampled_tasks(args.repo, args.sample or cfg.sample_tasks, cfg.sample_seed)
    clone, image = workflow_records(args.repo)
    gold_file = ROOT / f"results/evaluations/gold/{REFERENCE}/{args.repo}.jsonl"
    gold = [e for e in read_jsonl(gold_file, Evaluation) if e.task_id in tasks]
    null_file = (
        ROOT / f"results/evaluations/null/{REFERENCE}/{args.repo}.jsonl"
    )  # the budget takes what null fails first
    null = [e for e in read_jsonl(null_file, Evaluation) if e.task_id in tasks] if null_file.is_file() else []
    with tempfile.TemporaryDirectory(prefix="bench-budget-") as tmp:
        usable = {
            t: task for t, task in gold_test_sets(tasks, gold).items()
            if any(e.task_id == t for e in gold) and all(passes_on(e, task.tests) for e in gold if e.task_id == t)
        }  # fmt: skip
        chosen = {t: tasks[t] for t in usable}
        gens = reference_generations("mutant", chosen, args.mutants, Path(tmp))
        gens += reference_generations("gold", chosen, 1, Path(tmp)) if args.gold else []
        print(f"{args.repo}: {len(tasks)} sampled tasks, {len(usable)} pass gold on the tests it kept; "
              f"{len(gens)} candidates; budget {args.budget:g} s of gold's test time, {len(null)} null runs")  # fmt: skip
        timeouts, allowed = scaled_timeouts(gold, cfg), observed_by_gold(gold)
        # the budget as before null's failures came first (gold's times only), and as the workflow now has it
        choices = (("every test", 0.0, []), (f"{args.budget:g} s, by time", args.budget, []),
                   (f"{args.budget:g} s, null's first", args.budget, null))  # fmt: skip
        for name, budget, noticed_by in choices:
            sets = {t: task for t, task in gold_test_sets(tasks, gold, budget, noticed_by).items() if t in usable}
            runs = evaluate_repo(clone, sets, gens, image, "docker", cfg, cfg.jobs, Path(tmp) / name,
                                 timeouts=timeouts, allowed=allowed)  # fmt: skip
            summary(name, runs, sets)


if __name__ == "__main__":
    main()
