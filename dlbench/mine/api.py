"""One call for the whole mining chain on a checkout already on disk (``dlbench mine``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from dlbench.config import MineConfig
from dlbench.mine.cache import ParseStats, load_repo, skipped_records
from dlbench.mine.callgraph import build_calls
from dlbench.mine.extract import extract_functions
from dlbench.mine.history import head_sha
from dlbench.mine.tests import find_test_cases
from dlbench.records import CallRecord, FunctionRecord, SkippedRecord, TestCase
from dlbench.store import write_jsonl

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(slots=True)
class MineResult:
    tests: list[TestCase]
    calls: list[CallRecord]
    functions: list[FunctionRecord]
    skipped: list[SkippedRecord]  # files and functions left out, with why
    stats: ParseStats
    seconds: dict[str, float]  # wall time per phase


def mine(
    repo_path: Path,
    name: str,
    sha: str | None,
    min_tests: int,
    cfg: MineConfig,
    parse_cache: str | Path,
    dates: bool = True,
) -> MineResult:
    """Tests → call graph → extraction on one checkout (per-file results cached under
    ``parse_cache``); ``dates=False`` skips git blame."""
    clock = _Clock()
    repo = clock.time("parse", load_repo, Path(repo_path).resolve(), cfg, parse_cache)
    tests = clock.time("tests", find_test_cases, repo.table, name, repo.layout)
    calls = clock.time("call graph", build_calls, repo, tests, name)
    functions, dropped = clock.time("extract", extract_functions, repo, calls, name, sha, min_tests, dates)
    log.info("%s: %d tests, %d functions under test (%s)", name, len(tests), len(functions), clock)
    return MineResult(tests, calls, functions, skipped_records(repo, name) + dropped, repo.stats, clock.seconds)


class _Clock:
    """Wall time per mining phase (reported by the benchmark and in the log)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def time(self, phase: str, fn: Callable[..., T], *args: Any) -> T:
        start = time.perf_counter()
        result = fn(*args)
        self.seconds[phase] = time.perf_counter() - start
        return result

    def __str__(self) -> str:
        return ", ".join(f"{phase} {s:.2f}s" for phase, s in self.seconds.items())


def mine_checkout(
    repo_path: Path,
    out_dir: Path,
    parse_cache: str | Path,
    sha: str | None = None,
    name: str | None = None,
    min_tests: int = 3,
    cfg: MineConfig | None = None,
) -> Path:
    """Write ``tests.jsonl``, ``calls.jsonl``, ``functions.jsonl`` and ``skipped.jsonl`` for a
    checkout on disk.

    Per-file results are cached under ``parse_cache``; ``sha`` defaults to the checkout's
    HEAD (None outside git: no dates); ``name`` (the ``owner/name`` used in task ids)
    defaults to the folder's name.
    """
    repo_path = Path(repo_path).resolve()
    cfg = cfg or MineConfig(min_tests=min_tests)
    head = head_sha(repo_path)
    if sha and head and sha != head:  # the files on disk are what gets mined
        log.warning("%s: mining the checkout at HEAD %s, not the given commit %s", repo_path, head[:12], sha[:12])
    result = mine(repo_path, name or repo_path.name, sha or head, min_tests, cfg, parse_cache)
    out_dir = Path(out_dir)
    write_jsonl(out_dir / "tests.jsonl", result.tests)
    write_jsonl(out_dir / "calls.jsonl", result.calls)
    write_jsonl(out_dir / "functions.jsonl", result.functions)
    write_jsonl(out_dir / "skipped.jsonl", result.skipped)
    return out_dir / "functions.jsonl"
