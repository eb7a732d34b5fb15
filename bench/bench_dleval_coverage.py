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
defined then. ``--mined DIR`` scores existing outputs (``DIR/NAME/functions.jsonl``, e.g.
from an older version) instead of mining.

    python bench/bench_dleval_coverage.py [--realworld ../shared/realworld] [--work /tmp/mine-rw]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPOS = ("cleanlab", "Laplace", "small-text", "ignite")
MIN_TESTS = 3
DEFAULT = "default (dlbench mine)"
DLEVAL_DATE = "2024-09-12"  # the date of the DL-Bench release zip (realworld/README.md)
_GROUND_TRUTH = re.compile(r"ground truth:\s*blob/(?P<ref>[^/\s]+)/(?P<path>[^#\s]+)(?:#L(?P<line>\d+))?", re.IGNORECASE)
_WORD = re.compile(r"`?[A-Za-z_]\w*`?")
_INTRODUCING = frozenset({"called", "named", "function", "method"})


@dataclass(frozen=True)
class Expected:
    """One DL-Bench task: where its ground truth lives and which function it is."""

    source: str  # the dleval file
    repo: str
    path: str
    qualname: str | None  # None: no definition found (reason says why)
    reason: str = ""


# ---------------------------------------------------------------- the DL-Bench tasks


def git(checkout: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True, check=True).stdout


def has_commit(checkout: Path, sha: str) -> bool:
    proc = subprocess.run(["git", "-C", str(checkout), "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True, check=False)
    return proc.returncode == 0


def bundle_sha(realworld: Path, repo: str, sha: str) -> str:
    shamap = realworld / f"{repo}.shamap.tsv"
    if shamap.is_file():
        for line in shamap.read_text().splitlines()[1:]:
            upstream, _, ours = line.partition("\t")
            if upstream == sha:
                return ours.strip()
    return sha


def master_when_published(checkout: Path) -> str:
    """"master" in a DL-Bench link: the default branch when they built the set."""
    return git(checkout, "rev-list", "-1", f"--before={DLEVAL_DATE}", "HEAD").strip()


def definitions(source: str) -> dict[str, tuple[int, int]]:
    """Qualname → (first line with decorators, last line) of every function; nested ones
    as ``outer.<locals>.inner`` (these can never be tasks: mining takes top-level code)."""
    found: dict[str, tuple[int, int]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found[prefix + node.name] = (first, node.end_lineno or node.lineno)
                visit(node.body, f"{prefix}{node.name}.<locals>.")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body + node.orelse + getattr(node, "finalbody", []), prefix)

    visit(ast.parse(source).body, "")
    return found


def at_line(defs: dict[str, tuple[int, int]], line: int) -> str | None:
    """The innermost definition holding ``line``."""
    holding = [(end - start, q) for q, (start, end) in defs.items() if start <= line <= end]
    return min(holding)[1] if holding else None


def named_in_prompt(prompt: str, defs: dict[str, tuple[int, int]]) -> str | None:
    """The function a prompt asks for: the first introduced name the file defines, exact
    then ignoring case; among methods of that name, the one whose class the prompt
    introduces, else names."""
    words = _WORD.findall(prompt)
    introduced = [w.strip("`") for prev, w in zip(["", *words], words, strict=False) if w[0] == "`" or prev in _INTRODUCING]
    plain = [w.strip("`") for w in words]
    for names in (introduced, plain):
        for fold in (str, str.lower):
            for name in names:
                matches = [q for q in defs if "<locals>" not in q and fold(q.rpartition(".")[2]) == fold(name)]
                if matches:
                    owner_rank = {**{n: 1 for n in plain}, **{n: 0 for n in introduced}}
                    return min(matches, key=lambda q: owner_rank.get(q.rpartition(".")[0], 2))
    return None


def expected_task(realworld: Path, work: Path, text_file: Path) -> Expected | None:
    text = text_file.read_text(encoding="utf-8", errors="replace")
    match = _GROUND_TRUTH.search(text)
    if match is None:
        return None
    ref, path, line = match["ref"], match["path"], match["line"]
    if ref == "master":  # ``master/<repo>/<path>``
        repo, _, path = path.partition("/")
    else:
        repo = next((r for r in REPOS if has_commit(work / r, bundle_sha(realworld, r, ref))), "")
    checkout = work / repo
    if not (checkout / path).is_file():
        return Expected(text_file.name, repo, path, None, "file gone at HEAD")
    commit = master_when_published(checkout) if ref == "master" else bundle_sha(realworld, repo, ref)
    then = definitions(git(checkout, "show", f"{commit}:{path}"))
    if line is not None:
        qualname = at_line(then, int(line))
    else:
        qualname = named_in_prompt(text.partition("ground Truth")[0], then)
    if qualname is not None and qualname not in definitions((checkout / path).read_text()):
        return Expected(text_file.name, repo, path, None, f"{qualname} gone at HEAD")
    return Expected(text_file.name, repo, path, qualname, "" if qualname else "no definition found")


# ---------------------------------------------------------------- mining


def clone(realworld: Path, work: Path, repo: str) -> Path:
    checkout = work / repo
    if not checkout.is_dir():
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", str(realworld / f"{repo}.bundle"), str(checkout)], check=True, capture_output=True)
    return checkout


def mine_cli(checkout: Path, out: Path) -> float:
    """``dlbench mine`` as a user runs it (default configuration, dates included)."""
    start = time.perf_counter()
    command = [sys.executable, "-m", "dlbench.cli", "mine", "--repo", str(checkout), "--out", str(out), "--min-tests", str(MIN_TESTS)]
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def mine_variant(checkout: Path, out: Path, tested_by: str, reach: str) -> float:
    from dlbench.config import MineConfig
    from dlbench.mine.api import mine
    from dlbench.store import write_jsonl

    start = time.perf_counter()
    result = mine(checkout, checkout.name, None, MIN_TESTS, MineConfig(tested_by=tested_by, reach=reach), dates=False)
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
        lines.append(f"- {label}: {tasks} tasks, {inits / tasks if tasks else 0:.0%} `__init__`, DL-Bench {found}/{expected}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parent.parent
    parser.add_argument("--realworld", type=Path, default=here.parent / "shared" / "realworld")
    parser.add_argument("--work", type=Path, default=Path("/tmp/mine-rw"), help="checkouts (cloned when missing)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/mine-rw-out"), help="mining outputs")
    parser.add_argument("--mined", type=Path, help="score DIR/NAME/ outputs instead of mining")
    args = parser.parse_args(argv)
    expected: dict[str, list[Expected]] = defaultdict(list)
    checkouts = {repo: clone(args.realworld, args.work, repo) for repo in REPOS}
    for text_file in sorted((args.realworld / "dleval").glob("*.txt")):
        item = expected_task(args.realworld, args.work, text_file)
        if item is not None:
            expected[item.repo].append(item)
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
