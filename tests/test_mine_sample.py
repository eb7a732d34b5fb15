"""Must-show: mining the sample libraries finds the functions under test of truth.jsonl.

Each bundle is cloned into a temporary folder and mined at its HEAD; the functions with
at least three tests are compared with the truth file (same rule, ≥ 3 tests). The test
prints precision and recall per library (run with ``-s`` to see them) and requires
both to be at least 0.95; it also prints how many test lists match exactly.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from dlbench.config import MineConfig
from dlbench.mine import extract
from dlbench.mine.api import mine

SAMPLE = Path(__file__).resolve().parent.parent / "resources" / "sample"
LIBRARIES = ("visionkit", "textkit", "recokit", "nnkit", "tskit")
MIN_TESTS = 3


def truth_for(repo: str, min_tests: int) -> dict[str, list[str]]:
    rows = [json.loads(line) for line in (SAMPLE / "truth.jsonl").read_text().splitlines() if line.strip()]
    return {
        f"{r['path']}:{r['qualname']}": r["tests"] for r in rows if r["repo"] == repo and len(r["tests"]) >= min_tests
    }


def score(found: dict[str, list[str]], truth: dict[str, list[str]]) -> tuple[float, float, int]:
    """Precision, recall and the number of hits whose test lists are identical."""
    hits = set(found) & set(truth)
    precision = len(hits) / len(found) if found else 0.0
    recall = len(hits) / len(truth) if truth else 0.0
    return precision, recall, sum(found[k] == truth[k] for k in hits)


@pytest.mark.parametrize("library", LIBRARIES)
def test_sample_precision_recall(library, tmp_path):
    checkout = tmp_path / library
    subprocess.run(
        ["git", "clone", "-q", str(SAMPLE / "bundles" / f"{library}.bundle"), str(checkout)],
        check=True,
        capture_output=True,
    )
    repo = f"dlbench-sample/{library}"
    # The sample's truth counts functions that fixtures and setUp call (its README's rule).
    cfg = MineConfig(tested_by="reached")
    result = mine(checkout, repo, None, MIN_TESTS, cfg, tmp_path / "cache", dates=False)
    found = {f"{f.path}:{f.qualname}": f.tests for f in result.functions}
    truth = truth_for(repo, MIN_TESTS)
    precision, recall, same = score(found, truth)
    # Every reached function (>= 1 test), straight from the call records.
    reached = extract.tests_by_function(result.calls)
    all_precision, all_recall, all_same = score(reached, truth_for(repo, 1))
    print(
        f"\n{library}: functions under test (>= {MIN_TESTS} tests): precision {precision:.3f} recall {recall:.3f} "
        f"(found {len(found)}, truth {len(truth)}, identical test lists {same}); "
        f"all reached: precision {all_precision:.3f} recall {all_recall:.3f} (identical test lists {all_same})"
    )
    for key in sorted(set(found) ^ set(truth)):
        print(f"  {'extra' if key in found else 'missed'}: {key}")
    assert truth, f"truth.jsonl lists no function of {repo} with >= {MIN_TESTS} tests"
    assert precision >= 0.95 and recall >= 0.95
    assert all_precision >= 0.95 and all_recall >= 0.95
