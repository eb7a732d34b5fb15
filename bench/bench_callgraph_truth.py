#!/usr/bin/env python
"""Precision and recall of the static call graph against the dynamic truth, on the four
bundled real repositories.

For each repository of ``../shared/realworld`` (cloned from its bundle and checked out at
the SHA its README lists) this builds (or reuses) the project image evaluation uses, runs
the repository's tests once in it with the tracer (``dlbench.trace``; a seeded sample of
test files with ``--max-files``, each test limited to ``--timeout`` seconds and the session
to ``--budget``), and scores the static call graph's (test, function) pairs against the
traced ones over the tests that passed in the traced run:

- ``direct``: static ``tested_by=reached, reach=direct`` against what test code (test,
  helpers, setup, fixtures) called;
- ``called``: static ``tested_by=called`` against what the test body called;
- ``transitive``: static ``reach=transitive`` against everything the test executed.

It also counts the tasks of the default mining configuration that the dynamic check would
drop. A repository's raw trace is kept in ``--work`` and reused unless ``--retrace``.

    python bench/bench_callgraph_truth.py [--repos cleanlab Laplace] [--max-files 40] [--examples 5]
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dlbench.config import ImagesConfig, MineConfig, StorageConfig, TraceConfig
from dlbench.harness.code import support_files
from dlbench.images.build import build_project_image, docker_client
from dlbench.mine.api import mine
from dlbench.mine.cache import LoadedRepo, load_repo
from dlbench.mine.callgraph import build_calls, is_property
from dlbench.mine.symbols import Symbol
from dlbench.mine.tests import find_test_cases
from dlbench.mine.trace_check import dynamic_check
from dlbench.records import CallRecord, ImageStatus, TestCase, TraceRecord
from dlbench.trace.container import trace_in_image
from dlbench.trace.plan import TracePlan, plan_trace
from dlbench.trace.truth import Score, TraceField, score, trace_records

REPOS = ("cleanlab", "Laplace", "small-text", "ignite")
BASE_IMAGE = "dlbench/base:bookworm"
MIN_TESTS = 3
PARSE_CACHE = StorageConfig().parse_cache
# (label, static tested_by, static reach, dynamic set)
COMPARISONS: tuple[tuple[str, str, str, TraceField], ...] = (
    ("direct", "reached", "direct", "direct"),
    ("called", "called", "direct", "called"),
    ("transitive", "reached", "transitive", "executed"),
)
MISS_KINDS = ("constructor", "special method", "property", "other")
_ROW = re.compile(
    r"^\|\s*(?P<bundle>[\w.-]+)\.bundle\s*\|[^|]*\|\s*(?P<sha>[0-9a-f]{40})\s*\|",
    re.MULTILINE,
)


@dataclass
class Result:
    repo: str
    plan: TracePlan
    traces: list[TraceRecord]
    scores: dict[str, tuple[Score, list[CallRecord]]]
    tasks: int
    dropped: int
    trace_seconds: float
    misses: Counter[str]  # missed direct pairs by kind
    listed: int  # test cases mining finds in the traced files (the budget may stop before the last)


def pinned_shas(realworld: Path) -> dict[str, str]:
    """Repository → the SHA the realworld README lists as the bundle's HEAD."""
    return {m["bundle"]: m["sha"] for m in _ROW.finditer((realworld / "README.md").read_text())}


def checkout(realworld: Path, work: Path, repo: str, sha: str) -> Path:
    path = work / repo
    if not path.exists():
        subprocess.run(
            ["git", "clone", "-q", str(realworld / f"{repo}.bundle"), str(path)],
            check=True,
        )
    subprocess.run(["git", "-C", str(path), "checkout", "-q", sha], check=True)
    return path


def image_tag(path: Path, repo: str, sha: str, work: Path, reuse: bool) -> str:
    """The project image evaluation uses (the same support files: the same content hash);
    ``reuse``: the newest project image already built for this commit, when there is one
    (a tracer needs the commit's code and test environment, not today's recipe)."""
    if reuse and (tag := newest_project_image(sha)) is not None:
        print(f"{repo}: tracing in the existing image {tag}", file=sys.stderr)
        return tag
    record = build_project_image(path, repo.lower(), sha, BASE_IMAGE, work / f"{repo}.build.log", support_files(), images=ImagesConfig())  # fmt: skip
    if record.status != ImageStatus.OK or record.tag is None:
        raise SystemExit(f"{repo}: image build failed: {record.error}")
    return record.tag


def newest_project_image(sha: str) -> str | None:
    images = docker_client().images.list(filters={"label": ["dlbench.layer=project", f"dlbench.sha={sha}"]})
    tagged = sorted((i for i in images if i.tags), key=lambda i: i.attrs.get("Created", ""), reverse=True)
    return tagged[0].tags[0] if tagged else None


def traced_lines(args: argparse.Namespace, path: Path, repo: str, sha: str, plan: TracePlan, cfg: TraceConfig) -> tuple[list[str], float]:  # fmt: skip
    """The raw trace of this sample and these limits kept in ``--work``, else a traced run in the project image (built when missing)."""
    raw = args.work / f"{repo}.trace.files{cfg.max_files}-seed{cfg.seed}-t{cfg.timeout_s:g}-b{cfg.budget_s:g}.raw.jsonl"
    if raw.exists() and not args.retrace:
        return raw.read_text().splitlines(), 0.0
    tag = image_tag(path, repo, sha, args.work, args.reuse_image)
    start = time.monotonic()
    lines = trace_in_image(tag, plan, cfg, raw.with_suffix(".log"))
    raw.write_text("".join(f"{line}\n" for line in lines))
    return lines, time.monotonic() - start


def static_calls(path: Path, cases: list[TestCase], name: str, tested_by: str, reach: str) -> list[CallRecord]:
    repo = load_repo(path, MineConfig(tested_by=tested_by, reach=reach), PARSE_CACHE)  # type: ignore[arg-type]
    return build_calls(repo, cases, name)


def run_repo(args: argparse.Namespace, repo: str, sha: str) -> Result:
    path = checkout(args.realworld, args.work, repo, sha)
    loaded: LoadedRepo = load_repo(path, MineConfig(), PARSE_CACHE)
    cases = find_test_cases(loaded.table, repo, loaded.layout)
    cfg = TraceConfig(
        timeout_s=args.timeout,
        budget_s=args.budget,
        max_files=args.max_files,
        seed=args.seed,
    )
    plan = plan_trace(loaded, cases, cfg)
    lines, seconds = traced_lines(args, path, repo, sha, plan, cfg)
    traces = trace_records(lines, repo, plan.candidates)
    scores = {}
    for label, tested_by, reach, field in COMPARISONS:
        static = static_calls(path, cases, repo, tested_by, reach)
        scores[label] = (score(static, traces, field), static)
    functions = mine(path, repo, sha, MIN_TESTS, MineConfig(), PARSE_CACHE, dates=False).functions
    _, dropped = dynamic_check(functions, traces)
    misses = miss_kinds(loaded, scores["direct"][1], traces)
    listed = sum(case.file in set(plan.files) for case in cases)
    return Result(repo, plan, traces, scores, len(functions), len(dropped), seconds, misses, listed)


def miss_kinds(repo: LoadedRepo, static: list[CallRecord], traces: list[TraceRecord]) -> Counter[str]:
    """Direct pairs the static graph misses, by what the function is: a constructor, a
    special method run by syntax (``len(x)``, ``a == b``), a property (read, not called),
    or anything else."""
    calls = {c.node_id: set(c.calls) for c in static}
    kinds: Counter[str] = Counter()
    for trace in traces:
        if trace.outcome == "passed" and trace.node_id in calls:
            kinds.update(miss_kind(repo, key) for key in set(trace.direct) - calls[trace.node_id])
    return kinds


def miss_kind(repo: LoadedRepo, key: str) -> str:
    path, _, qualname = key.partition(":")
    name = qualname.rpartition(".")[2]
    if name == "__init__":
        return "constructor"
    if name.startswith("__") and name.endswith("__"):
        return "special method"
    info = repo.table.function_info(Symbol("function", path, qualname))
    return "property" if info is not None and is_property(info) else "other"


def table(results: list[Result]) -> str:
    comparisons = " | ".join(f"{label} P / R" for label, *_ in COMPARISONS)
    misses = " / ".join(MISS_KINDS)
    lines = [
        f"| repository | test files traced | tests traced of listed (passed) | {comparisons} | direct misses: {misses} | tasks dropped by the check |",
        "|---" * (5 + len(COMPARISONS)) + "|",
    ]
    for r in results:
        files = f"{len(r.plan.files)}" + (" (sample)" if r.plan.sampled else "")
        passed = sum(t.outcome == "passed" for t in r.traces)
        cells = " | ".join(f"{s.precision:.2f} / {s.recall:.2f}" for s, _ in r.scores.values())
        missed = " / ".join(str(r.misses[kind]) for kind in MISS_KINDS)
        lines.append(f"| {r.repo} | {files} | {len(r.traces)} of {r.listed} ({passed}) | {cells} | {missed} | {r.dropped} of {r.tasks} |")  # fmt: skip
    return "\n".join(lines)


def examples(result: Result, label: str, field: TraceField, count: int, seed: int) -> list[str]:
    """A few disagreements (missed and extra pairs) of one comparison, for reading."""
    static = {c.node_id: set(c.calls) for c in result.scores[label][1]}
    missed, extra = [], []
    for trace in result.traces:
        if trace.outcome == "passed" and trace.node_id in static:
            truth = set(getattr(trace, field))
            missed += [f"missed {key}  <- {trace.node_id}" for key in sorted(truth - static[trace.node_id])]
            extra += [f"extra  {key}  <- {trace.node_id}" for key in sorted(static[trace.node_id] - truth)]
    rng = random.Random(seed)
    return rng.sample(missed, min(count, len(missed))) + rng.sample(extra, min(count, len(extra)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--realworld",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared/realworld",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path("/tmp/trace-rw"),
        help="checkouts, raw traces, logs",
    )
    parser.add_argument("--repos", nargs="+", default=list(REPOS), choices=REPOS)
    parser.add_argument(
        "--max-files",
        type=int,
        default=0,
        help="seeded sample of test files per repository (0: all)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per test")
    parser.add_argument(
        "--budget",
        type=float,
        default=900.0,
        help="seconds per repository's traced session",
    )
    parser.add_argument("--reuse-image", action="store_true", help="trace in an existing project image of the commit")
    parser.add_argument(
        "--retrace",
        action="store_true",
        help="trace again even where a raw trace is kept",
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=0,
        help="print this many missed and extra direct pairs",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args.work.mkdir(parents=True, exist_ok=True)
    shas = pinned_shas(args.realworld)
    results = []
    for repo in args.repos:
        result = run_repo(args, repo, shas[repo])
        results.append(result)
        print(
            f"{repo}: {len(result.traces)} tests traced in {result.trace_seconds:.0f}s (0: reused)",
            file=sys.stderr,
        )
        for line in examples(result, "direct", "direct", args.examples, args.seed):
            print(f"  {line}", file=sys.stderr)
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
