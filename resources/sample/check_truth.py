#!/usr/bin/env python
"""Check (or regenerate) truth.jsonl by tracing the sample libraries' own test suites.

For every library this runs its pytest suite in a subprocess with the
``dlbench_truth_tracer`` plugin, which records each library function or method called
directly from test code (test functions, test-module helpers, test-class methods,
unittest ``setUp`` and fixtures a test requests), attributed to the test's node id.
That dynamic view must equal the static rule documented in README.md; the test suite
is written so the two coincide.

Usage:
    check_truth.py [--repos-root DIR] [--write]

``--repos-root`` holds checkouts named after the libraries (default: ``src/``).
``--write`` rewrites truth.jsonl, taking stage/task/data from expert_labels.csv.
Exit status 1 and a diff on stderr when the traced view and truth.jsonl differ.
Needs Python >= 3.11 (the tracer reads ``co_qualname``).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from sample_world import EXPERT_LABELS, HERE, LIBRARIES, OWNER, SRC, SUITE_ARGS, SUITE_ENV, TRUTH

TRACER_DIR = HERE / "tracer"


def trace_library(repo_dir: Path, package: str) -> dict:
    """Run one library's suite under the tracer; return {path::qualname: [node ids]}."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "trace.json"
        env = dict(
            os.environ,
            **SUITE_ENV,
            PYTHONPATH=os.pathsep.join([str(TRACER_DIR), str(repo_dir)]),
            DLBENCH_TRUTH_OUT=str(out),
            DLBENCH_TRUTH_PACKAGE=package,
        )
        cmd = [sys.executable, *SUITE_ARGS, "-p", "dlbench_truth_tracer", "tests"]
        proc = subprocess.run(cmd, cwd=repo_dir, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{package}: test suite failed\n{proc.stdout}\n{proc.stderr}")
        return json.loads(out.read_text(encoding="utf-8"))


def traced_records(repos_root: Path) -> dict:
    """Map (repo, path, qualname) to sorted node ids for every library."""
    records = {}
    for name in LIBRARIES:
        for key, ids in trace_library(repos_root / name, name).items():
            path, qualname = key.split("::")
            records[(f"{OWNER}/{name}", path, qualname)] = ids
    return records


def load_truth(path: Path = TRUTH) -> dict:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return {(r["repo"], r["path"], r["qualname"]): r for r in rows}


def diff(truth: dict, traced: dict) -> list:
    """Human-readable differences between truth.jsonl and the traced view."""
    problems = []
    for key in sorted(set(truth) | set(traced)):
        if key not in traced:
            problems.append(f"only in truth: {key}")
        elif key not in truth:
            problems.append(f"only in trace: {key} {traced[key]}")
        elif truth[key]["tests"] != traced[key]:
            problems.append(f"tests differ for {key}: truth={truth[key]['tests']} trace={traced[key]}")
    return problems


def load_expert_labels() -> dict:
    with EXPERT_LABELS.open(newline="", encoding="utf-8") as fh:
        return {(r["repo"], r["path"], r["qualname"]): r for r in csv.DictReader(fh)}


def truth_row(key: tuple, tests: list, label: dict) -> dict:
    repo, path, qualname = key
    class_name, _, function = qualname.rpartition(".")
    return {
        "repo": repo, "path": path, "function": function, "class_name": class_name or None,
        "qualname": qualname, "tests": tests,
        "stage": label["stage"], "task": label["task"], "data": label["data"],
    }


def write_truth(traced: dict) -> None:
    labels = load_expert_labels()
    missing = [key for key in traced if key not in labels]
    if missing:
        raise SystemExit("no expert label for:\n" + "\n".join(map(str, sorted(missing))))
    lines = [json.dumps(truth_row(key, traced[key], labels[key])) for key in sorted(traced)]
    TRUTH.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos-root", type=Path, default=SRC)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    traced = traced_records(args.repos_root)
    if args.write:
        write_truth(traced)
        return 0
    problems = diff(load_truth(), traced)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"{len(traced)} functions traced, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
