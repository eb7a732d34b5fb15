"""The paper's own repositories under the default selection criteria (docs/SELECTION.md).

For every repository of ``config/dlbench-paper.yaml`` whose bare mirror is in its
``local_mirrors``, at the default branch's last commit on or before each day given (the
paper's snapshot 2024-09-12 and the authors' harness pin 2025-06-04 by default), applies the
checks ``SelectConfig()`` makes: recency as for a pinned repository (the commit's committer
day after GPT-4o's cutoff; beside it the last commit on any branch by that day, the nearest a
mirror comes to GitHub's ``pushed_at`` then), and the content checks (framework, tests,
documentation, contribution guidelines) through the same ``inspect_tree`` selection runs on
GitHub's tree, reading files from the mirror. Metadata the mirror lacks (stars, license,
archived) is not judged. Writes ``docs/data/paper_selection.csv`` and prints a Markdown table.

    python bench/bench_paper_selection.py [--as-of 2024-09-12 2025-06-04]
"""

from __future__ import annotations

import argparse
import subprocess
from datetime import date
from pathlib import Path

import pandas as pd
import yaml

from dlbench.collect.select import PinnedCommit, Verdict, content_verdict, inspect_tree, recency_check
from dlbench.config import SelectConfig, mirror_of

ROOT = Path(__file__).resolve().parents[1]
PAPER_CONFIG = ROOT / "config" / "dlbench-paper.yaml"
OUT = ROOT / "docs" / "data" / "paper_selection.csv"
CHECKS = ("pushed", "framework", "tests", "docs", "contributing")


def git(git_dir: str, *args: str) -> str:
    run = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, errors="replace")
    return run.stdout if run.returncode == 0 else ""


def judge(name: str, git_dir: str, day: date, cfg: SelectConfig) -> dict[str, object]:
    """The default checks on ``name`` at its last first-parent commit on or before ``day``."""
    before = f"--before={day.isoformat()}T23:59:59Z"
    sha = git(git_dir, "rev-list", "-1", "--first-parent", before, "HEAD").strip()
    row: dict[str, object] = {"repo": name, "as_of": day.isoformat(), "commit": sha[:12]}
    if not sha:
        return row | {"keep": False, "reasons": "no commit on or before the day"}
    committed = date.fromisoformat(git(git_dir, "show", "-s", "--format=%cs", sha).strip())
    any_branch = git(git_dir, "log", "-1", "--all", before, "--format=%cs").strip()
    blobs = git(git_dir, "ls-tree", "-r", "--name-only", sha).splitlines()
    found = inspect_tree(blobs, lambda path: git(git_dir, "show", f"{sha}:{path}") or None, cfg.frameworks)
    verdict = Verdict()
    recency_check(verdict, cfg.pushed_after, None, PinnedCommit(sha, day=committed))
    content_verdict(verdict, found, cfg)
    failed = {r.split(":")[0] for r in verdict.fails}
    return row | {
        "committed": committed.isoformat(),
        "last_commit_any_branch": any_branch,
        **{check: check not in failed for check in CHECKS},
        "keep": not verdict.fails,
        "reasons": "; ".join(verdict.fails or verdict.passes),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--as-of", nargs="+", type=date.fromisoformat, default=[date(2024, 9, 12), date(2025, 6, 4)])
    args = parser.parse_args(argv)
    raw = yaml.safe_load(PAPER_CONFIG.read_text())
    mirrors = str((PAPER_CONFIG.parent.parent / raw["local_mirrors"]).resolve())
    cfg = SelectConfig()
    rows = []
    for entry in raw["local_repos"]:
        git_dir = mirror_of(mirrors, entry["name"])
        if git_dir is None:
            continue
        rows.extend(judge(entry["name"], git_dir, day, cfg) for day in args.as_of)
    table = pd.DataFrame(rows)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT, index=False)
    summary = table.groupby("as_of")[[*CHECKS, "keep"]].sum().astype(int)
    summary.insert(0, "repositories", table.groupby("as_of").size())
    print(summary.to_markdown())
    print()
    failing = table[~table["keep"]][["repo", "as_of", "committed", "last_commit_any_branch", "reasons"]]
    print(failing.to_markdown(index=False))


if __name__ == "__main__":
    main()
