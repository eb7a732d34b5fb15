#!/usr/bin/env python
"""Mining on the four bundled real repositories: tasks, ``__init__`` share, DL-Bench coverage.

For each repository of ``../shared/realworld`` (cloned from its git bundle when missing)
this mines the checkout at HEAD with the ``dlbench mine`` command line (the default
configuration) and, in process, with every other combination of ``mine.tested_by`` and
``mine.reach``; then reports, per repository and configuration, the test cases, the tasks
(functions with >= min_tests tests), the share of tasks that are ``__init__`` methods and
how many of the DL-Bench authors' own tasks for that repository (``dleval/``) mining finds
as tasks. A DL-Bench task names its function by line (``blob/<sha>/<path>#L<line>``,
upstream commit ids mapped through ``NAME.shamap.tsv``) or only by file, when the function
is the first name its prompt introduces (``called X``, ``named `X```...) that the file
defined then (the resolution of the importer, ``dlbench.tasks.published``). ``--mined DIR`` scores existing outputs (``DIR/NAME/functions.jsonl``, e.g.
from an older version) instead of mining.

    python bench/bench_dleval_coverage.py [--realworld ../shared/realworld] [--work /tmp/mine-rw]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from dlbench.tasks.published import checkout_of, locate, read_published, read_shamap

REPOS = ("cleanlab", "Laplace", "small-text", "ignite")
MIN_TESTS = 3
DEFAULT = "default (dlbench mine)"


@dataclass(frozen=True)
class Expected:
    """One DL-Bench task: where its ground truth lives and which function it is."""

    source: str  # the dleval file
    repo: str
    path: str
    qualname: str | None  # None: no definition found (reason says why)
    reason: str = ""


# ---------------------------------------------------------------- the DL-Bench tasks


def expected_tasks(realworld: Path, checkouts: dict[str, Path]) -> dict[str, list[Expected]]:
    """The DL-Bench tasks of each repository, located by the importer's resolution (dlbench.tasks.published)."""
    shamaps = {repo: read_shamap(realworld / f"{repo}.shamap.tsv") for repo in checkouts}
    expected: dict[str, list[Expected]] = defaultdict(list)
    for published in read_published(realworld / "dleval"):
        where = locate(published, checkouts, shamaps)
        qualname = None if where.reason else where.qualname
        expected[where.repo or ""].append(
            Expected(published.source, where.repo or "", where.path, qualname, where.reason)
        )
    return expected


# ---------------------------------------------------------------- mining


def mine_cli(checkout: Path, out: Path) -> float:
    """``dlbench mine`` as a user runs it (default configuration, dates included)."""
    start = time.perf_counter()
    command = [
        sys.executable,
        "-m",
        "dlbench.cli",
        "mine",
        "--repo",
        str(checkout),
        "--out",
        str(out),
        "--min-tests",
        str(MIN_TESTS),
    ]
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def mine_variant(checkout: Path, out: Path, tested_by: str, reach: str) -> float:
    from dlbench.config import MineConfig, StorageConfig
    from dlbench.mine.api import mine
    from dlbench.store import write_jsonl

    start = time.perf_counter()
    cfg = MineConfig(tested_by=tested_by, reach=reach)
    result = mine(checkout, checkout.name, None, MIN_TESTS, cfg, StorageConfig().parse_cache, dates=False)
    seconds = time.perf_counter() - start
    write_jsonl(out / "tests.jsonl", result.tests)
    write_jsonl(out / "calls.jsonl", result.calls)
    write_jsonl(out / "functions.jsonl", result.functions)
    return seconds


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def tests_per_function(out: Path) -> dict[str, int]:
    counts: dict[str, set[str]] = defaultdict(set)
    for record in read_rows(out / "calls.jsonl"):
        for key in record["calls"]:
            counts[key].add(record["node_id"])
    return {key: len(ids) for key, ids in counts.items()}


def score(out: Path, expected: list[Expected]) -> dict:
    """Figures of one mining output folder against the repository's DL-Bench tasks."""
    functions = read_rows(out / "functions.jsonl")
    tasks = {f"{f['path']}:{f['qualname']}" for f in functions}
    reached = tests_per_function(out)
    found, missed = [], []
    for item in expected:
        key = f"{item.path}:{item.qualname}"
        if item.qualname is not None and key in tasks:
            found.append(key)
        else:
            why = item.reason or f"{reached.get(key, 0)} tests reach it"
            missed.append(f"{item.qualname or item.path} ({why})")
    return {
        "tests": len(read_rows(out / "tests.jsonl")),
        "tasks": len(tasks),
        "init_share": sum(f["function"] == "__init__" for f in functions) / len(tasks) if tasks else 0.0,
        "found": len(found),
        "reached": sum(reached.get(f"{i.path}:{i.qualname}", 0) > 0 for i in expected),
        "expected": len(expected),
        "missed": missed,
    }


# ---------------------------------------------------------------- report


def table(rows: list[tuple[str, str, dict, float | None]]) -> str:
    lines = [
        "| repository | configuration | tests | tasks | `__init__` share | DL-Bench tasks found | DL-Bench reached by >= 1 test | mining s |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for repo, label, figures, seconds in rows:
        lines.append(
            f"| {repo} | {label} | {figures['tests']} | {figures['tasks']} | {figures['init_share']:.0%} | "
            f"{figures['found']}/{figures['expected']} | {figures['reached']}/{figures['expected']} | "
            f"{'' if seconds is None else f'{seconds:.1f}'} |"
        )
    return "\n".join(lines)


def totals(rows: list[tuple[str, str, dict, float | None]]) -> str:
    by_label: dict[str, list[dict]] = defaultdict(list)
    for _, label, figures, _ in rows:
        by_label[label].append(figures)
    lines = []
    for label, items in by_label.items():
        tasks = sum(i["tasks"] for i in items)
        inits = sum(i["init_share"] * i["tasks"] for i in items)
        found, expected = sum(i["found"] for i in items), sum(i["expected"] for i in items)
        lines.append(
            f"- {label}: {tasks} tasks, {inits / tasks if tasks else 0:.0%} `__init__`, DL-Bench {found}/{expected}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parent.parent
    parser.add_argument("--realworld", type=Path, default=here.parent / "shared" / "realworld")
    parser.add_argument("--work", type=Path, default=Path("/tmp/mine-rw"), help="checkouts (cloned when missing)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/mine-rw-out"), help="mining outputs")
    parser.add_argument("--mined", type=Path, help="score DIR/NAME/ outputs instead of mining")
    args = parser.parse_args(argv)
    checkouts = {repo: checkout_of(args.realworld, args.work, repo) for repo in REPOS}
    expected = expected_tasks(args.realworld, checkouts)
    rows = []
    for repo in REPOS:
        if args.mined:
            rows.append((repo, str(args.mined), score(args.mined / repo, expected[repo]), None))
            continue
        seconds = mine_cli(checkouts[repo], args.out / "default" / repo)
        rows.append((repo, DEFAULT, score(args.out / "default" / repo, expected[repo]), seconds))
        for tested_by in ("reached", "called", "focused"):
            for reach in ("direct", "transitive"):
                out = args.out / f"{tested_by}-{reach}" / repo
                seconds = mine_variant(checkouts[repo], out, tested_by, reach)
                rows.append((repo, f"tested_by={tested_by}, reach={reach}", score(out, expected[repo]), seconds))
    print(table(rows), "", totals(rows), "", "DL-Bench tasks as identified:", sep="\n")
    for repo in REPOS:
        for item in expected[repo]:
            print(f"- {repo}: {item.path}:{item.qualname or '?'} {item.reason}".rstrip())
    print("\nMissed (first configuration of each repository):")
    for repo, _, figures, _ in rows[:: 1 if args.mined else 7]:
        print(f"- {repo}: " + "; ".join(figures["missed"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
