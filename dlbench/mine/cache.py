"""Per-file parse summaries, cached by content hash and computed on a process pool.

A file's summary (``ast`` definitions, plus libcst body summaries for test code and test
support: helpers in ``tests/utils`` run as part of the tests that call them) depends only
on its bytes and on whether its path is test code, so the cache key is
``sha256(version, tag, bytes)``: a rerun after one file changed re-parses that file
only, and identical files in different checkouts share an entry. ``extract`` stores its
per-file extraction and blame results the same way. Entries are pickles written
atomically under ``storage.parse_cache`` (empty: no cache); an unreadable entry is
recomputed.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from dlbench.config import MineConfig
from dlbench.logs import Progress
from dlbench.mine.bodies import BodySummary, summarize_bodies
from dlbench.mine.paths import PytestLayout, read_layout
from dlbench.mine.symbols import (
    ModuleSummary,
    SymbolTable,
    list_python_files,
    summarize_source,
)
from dlbench.parsing import Unparsable, read_source
from dlbench.records import CloneRecord, CloneStatus, SkipKind, SkippedRecord
from dlbench.store import atomic_path, read_json
from dlbench.testfiles import in_test_dir, named_like_test

log = logging.getLogger(__name__)

CACHE_VERSION = "19"  # bump when a summary class changes shape or files are read differently
_POOL_MIN_FILES = 16
T = TypeVar("T")
J = TypeVar("J")
R = TypeVar("R")  # below this, starting worker processes costs more than it saves


@dataclass(slots=True)
class FileSummary:
    module: ModuleSummary
    bodies: dict[str, BodySummary] | None  # only for test code and test support (libcst)
    bodies_error: str | None = None  # why libcst could not summarize the bodies of test code


@dataclass(slots=True)
class ParseStats:
    files: int = 0
    lines: int = 0
    parsed: int = 0  # cache misses: files actually parsed in this run
    cached: int = 0


def summarize_file(source: str, test_code: bool) -> FileSummary:
    """Parse one file: ``ast`` for definitions; libcst bodies too when it is test code by
    its path or imports pytest (the files ``tests.is_test_support`` names)."""
    module = summarize_source(source)
    if not (test_code or "pytest" in module.imported_modules):
        return FileSummary(module, None)
    try:
        return FileSummary(module, summarize_bodies(source))
    except Unparsable as exc:  # its definitions still count; its test bodies call nothing we know
        log.warning("test code skipped, libcst cannot summarize it: %s", exc)
        return FileSummary(module, {}, str(exc))


def is_test_path(path: str, layout: PytestLayout) -> bool:
    """Test code or test support by its path alone."""
    return layout.is_test_code(path) or named_like_test(path) or in_test_dir(path)


def _summarize_job(job: tuple[str, bool]) -> FileSummary:
    path, test_code = job
    try:
        source = read_source(Path(path))
    except Unparsable as exc:  # undecodable: Python could not import it either
        return FileSummary(ModuleSummary(syntax_error=str(exc)), None)
    return summarize_file(source, test_code)


class ParseCache:
    """Content-addressed pickle store; ``None`` as directory disables caching."""

    def __init__(self, cache_dir: str | Path | None):
        self.root = Path(cache_dir) if cache_dir else None

    @staticmethod
    def key(data: bytes, tag: str) -> str:
        """Content address of ``data`` computed for purpose ``tag``."""
        digest = hashlib.sha256(f"{CACHE_VERSION}:{tag}:".encode())
        digest.update(data)
        return digest.hexdigest()

    def _file(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / f"{key}.pkl"

    def get(self, key: str, kind: type[T]) -> T | None:
        """The entry if present, readable and of type ``kind``; else None."""
        if self.root is None:
            return None
        try:
            with open(self._file(key), "rb") as fh:
                value = pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError, ImportError):
            return None
        return value if isinstance(value, kind) else None

    def put(self, key: str, value: object) -> None:
        if self.root is None:
            return
        with atomic_path(self._file(key)) as tmp:
            tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def load_summaries(
    root: Path, files: list[str], layout: PytestLayout, cfg: MineConfig, cache: ParseCache
) -> tuple[dict[str, FileSummary], ParseStats]:
    """Summaries of the checkout's Python ``files``, from the cache or parsed in parallel."""
    summaries: dict[str, FileSummary] = {}
    stats = ParseStats()
    misses: list[tuple[str, str]] = []  # (path, cache key)
    for path in files:
        data = (root / path).read_bytes()
        stats.files += 1
        stats.lines += data.count(b"\n")
        key = cache.key(data, f"summary:{int(is_test_path(path, layout))}")
        hit = cache.get(key, FileSummary)
        if hit is None:
            misses.append((path, key))
        else:
            summaries[path] = hit
    stats.cached = len(summaries)
    stats.parsed = len(misses)
    progress = Progress(len(misses), "parse files", unit="file")
    jobs = [(str(root / path), is_test_path(path, layout)) for path, _ in misses]
    for (path, key), summary in zip(misses, parallel_map(_summarize_job, jobs, cfg.workers), strict=True):
        cache.put(key, summary)
        summaries[path] = summary
        progress.advance()
    log.info("parsed %d files, %d from cache (%d lines)", stats.parsed, stats.cached, stats.lines)
    broken = sorted(p for p, s in summaries.items() if s.module.syntax_error)
    if broken:  # kept with empty summaries: they define nothing and call nothing
        log.warning(
            "%d files do not parse, e.g. %s: %s", len(broken), broken[0], summaries[broken[0]].module.syntax_error
        )
    return summaries, stats


def parallel_map(fn: Callable[[J], R], jobs: list[J], workers: int) -> Iterator[R]:
    """``map`` over a process pool (in order); serial when the pool would not pay off."""
    if workers <= 1 or len(jobs) < _POOL_MIN_FILES:
        yield from map(fn, jobs)
        return
    # Small chunks even out the cost of files (test files cost ~5x a library file).
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(fn, jobs, chunksize=max(1, min(32, len(jobs) // (workers * 8))))


@dataclass(slots=True)
class LoadedRepo:
    """A checkout's symbol table and test-code bodies, ready for the mining stages."""

    root: Path
    table: SymbolTable
    bodies: dict[str, dict[str, BodySummary]]
    stats: ParseStats
    cfg: MineConfig
    layout: PytestLayout  # the project's pytest collection options
    cache: ParseCache  # where the later stages keep their per-file results too
    skipped: dict[str, tuple[SkipKind, str]]  # path → what of it was not mined, and why


def skipped_files(summaries: dict[str, FileSummary], unreadable: dict[str, str]) -> dict[str, tuple[SkipKind, str]]:
    """Files left out whole (unreadable, undecodable, unparsable) or in part (test code
    libcst cannot take), by path."""
    found = {path: (SkipKind.FILE, why) for path, why in unreadable.items()}
    for path, summary in summaries.items():
        if summary.module.syntax_error:
            found[path] = (SkipKind.FILE, summary.module.syntax_error)
        elif summary.bodies_error:
            found[path] = (SkipKind.TEST_CODE, f"test code not followed: {summary.bodies_error}")
    return dict(sorted(found.items()))


def skipped_records(repo: LoadedRepo, name: str) -> list[SkippedRecord]:
    """The checkout's skipped files as records of repository ``name``."""
    return [SkippedRecord(repo=name, path=p, kind=kind, reason=why) for p, (kind, why) in repo.skipped.items()]


def load_repo(root: Path, cfg: MineConfig, parse_cache: str | Path) -> LoadedRepo:
    """The checkout at ``root``, its files summarised through the cache at ``parse_cache``."""
    cache = ParseCache(parse_cache)
    unreadable: dict[str, str] = {}
    files = list_python_files(root, unreadable)
    layout = read_layout(root, files)
    summaries, stats = load_summaries(root, files, layout, cfg, cache)
    table = SymbolTable({path: s.module for path, s in summaries.items()})
    bodies = {path: s.bodies for path, s in summaries.items() if s.bodies is not None}
    return LoadedRepo(root, table, bodies, stats, cfg, layout, cache, skipped_files(summaries, unreadable))


def load_clone(
    clone_json: str | Path, cfg: MineConfig, parse_cache: str | Path
) -> tuple[CloneRecord, LoadedRepo | None]:
    """A rule's clone record and its loaded checkout; None when the clone failed (the rule
    then writes an empty artifact so the DAG goes on)."""
    clone = read_json(clone_json, CloneRecord)
    if clone.status != CloneStatus.OK:
        log.warning("%s: clone status %s, writing an empty artifact", clone.full_name, clone.status)
        return clone, None
    return clone, load_repo(Path(clone.path), cfg, parse_cache)
