"""Recall of the DL-Bench authors' task functions by mining, per configuration (paper rebuild).

Reads the authors' tasks resolved at the pins (``results/authors/tasks.jsonl``, rule
``import_authors``: named, Taxonomy and DLEval forms) and the clone records, then mines each
repository's checkout in process under each configuration of ``mine.reach``,
``mine.tested_by`` and ``mine.min_tests`` and reports, per repository and overall, the
distinct authors' functions present at the pin, how many each configuration makes tasks
(recall) and how many tasks it makes in all (the price in precision: every task beyond
theirs is one they did not choose). Parse results are cached, so a configuration costs its
call graph only. Writes ``docs/data/authors_recall.csv``.

    python bench/bench_authors_recall.py [--repos kornia cleanlab]
"""

from __future__ import annotations

import argparse
import re
import time
from collections import defaultdict
from functools import cache
from pathlib import Path

import pandas as pd

from dlbench.config import MineConfig, StorageConfig
from dlbench.mine.api import mine
from dlbench.records import AuthorsTask, CloneRecord
from dlbench.store import read_json, read_jsonl
from dlbench.testfiles import is_test_support_file

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {  # name → (reach, tested_by, min_tests, test_helpers)
    "direct/focused/3 (default)": ("direct", "focused", 3, False),
    "direct/focused/1": ("direct", "focused", 1, False),
    "direct/reached/1": ("direct", "reached", 1, False),
    "transitive/focused/3": ("transitive", "focused", 3, False),
    "transitive/focused/1": ("transitive", "focused", 1, False),
    "transitive/reached/1": ("transitive", "reached", 1, False),
    "transitive/focused/1 + test helpers": ("transitive", "focused", 1, True),
}


def present_functions(rows: list[AuthorsTask]) -> dict[str, set[tuple[str, str]]]:
    """owner/name → the distinct (path, qualname) of the authors' functions present at the pin."""
    present: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for r in rows:
        if r.status == "present" and r.repo:
            present[r.repo].add((r.path or "", r.qualname or ""))
    return present


def named_by_a_test(checkout: Path, key: str) -> bool:
    """Whether any test-support file of the checkout names the function (the last part of
    its qualname): one no test file names is reached, if at all, only through other code."""
    name = key.rpartition(":")[2].rpartition(".")[2]
    return re.search(rf"\b{re.escape(name)}\b", test_text(checkout)) is not None


@cache
def test_text(checkout: Path) -> str:
    files = (p for p in sorted(checkout.rglob("*.py")) if is_test_support_file(p.relative_to(checkout).as_posix()))
    return "\n".join(p.read_text(errors="replace") for p in files)


def measure(clone: CloneRecord, wanted: set[tuple[str, str]], configs: list[str]) -> list[dict]:
    rows = []
    for name in configs:
        reach, tested_by, min_tests, helpers = CONFIGS[name]
        cfg = MineConfig(reach=reach, tested_by=tested_by, min_tests=min_tests, test_helpers=helpers)
        start = time.monotonic()
        result = mine(Path(ROOT / clone.path), clone.full_name, clone.sha, min_tests, cfg,
                      ROOT / StorageConfig().parse_cache, dates=False)  # fmt: skip
        made = {(f.path, f.qualname) for f in result.functions}
        missed = sorted(f"{path}:{qualname}" for path, qualname in wanted - made)
        rows.append({
            "repo": clone.full_name, "config": name, "present": len(wanted), "found": len(wanted & made),
            "tasks": len(made), "seconds": round(time.monotonic() - start, 1), "missed": " ".join(missed),
            "missed_named_by_no_test": " ".join(m for m in missed if not named_by_a_test(ROOT / clone.path, m)),
        })  # fmt: skip
        print(f"{clone.full_name:38} {name:28} {len(wanted & made):4}/{len(wanted):<4} tasks {len(made):5}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", nargs="*", help="short names (default: every repository with authors' tasks)")
    parser.add_argument("--configs", nargs="*", choices=list(CONFIGS), default=list(CONFIGS), metavar="NAME",
                        help="mining configurations to measure (default: all)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "data" / "authors_recall.csv")
    parser.add_argument(
        "--authors", type=Path, default=ROOT / "results/authors/tasks.jsonl", help="their tasks at the pins"
    )
    args = parser.parse_args()
    present = present_functions(read_jsonl(args.authors, AuthorsTask))
    clones = {
        c.full_name: c for c in (read_json(p, CloneRecord) for p in sorted((ROOT / "results/repos").glob("*.json")))
    }
    chosen = [
        r for r in sorted(present) if not args.repos or r.rpartition("/")[2].lower() in {n.lower() for n in args.repos}
    ]
    table = pd.DataFrame(
        [row for repo in chosen if repo in clones for row in measure(clones[repo], present[repo], args.configs)]
    )
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    overall = table.groupby("config")[["present", "found", "tasks"]].sum()
    overall["recall"] = (overall["found"] / overall["present"]).round(3)
    per_repo = table.assign(recall=(table["found"] / table["present"]).round(2)).pivot(
        index="repo", columns="config", values="recall"
    )
    print("\n" + per_repo.to_string() + "\n\n" + overall.to_string())


if __name__ == "__main__":
    main()
