"""Functions under test with their context: exact source, signature, class skeleton, dates.

The output must be the code *as written*, so extraction uses libcst:
``Module.code_for_node`` renders a definition with its decorators, comments and
formatting intact, dedented to column 0 for methods (so the text parses on its own),
without the comment block that precedes it. To keep libcst's cost down only the
top-level definition holding a function under test is parsed (its lines from the ``ast``
summary: a top-level ``def`` or ``class`` parses alone, dedented when it sits in a
module-level ``if``/``try`` block), files
are spread over the process pool, and results are cached by file content. ``start_line``
is the first decorator's line and ``end_line`` follows from the extracted text.
Dates come from ``git blame`` of those lines at the pinned commit (cached per commit).
"""

from __future__ import annotations

import json
import logging
import textwrap
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import libcst as cst

from dlbench.config import MineConfig
from dlbench.logs import Progress
from dlbench.mine.cache import LoadedRepo, load_clone, parallel_map, skipped_records
from dlbench.mine.history import blame_dates
from dlbench.mine.symbols import ModuleSummary
from dlbench.parsing import Unparsable, check_cst_depth, describe, parse_cst, read_source
from dlbench.records import CallRecord, FunctionRecord, SkipKind, SkippedRecord, task_id_for
from dlbench.store import read_jsonl, write_jsonl

log = logging.getLogger(__name__)

_STUB = cst.SimpleStatementSuite([cst.Expr(cst.Ellipsis())])  # ``def f(...): ...``
Span = tuple[str, int, int]  # (qualname, first line, last line of its top-level definition)


@dataclass(frozen=True, slots=True)
class Extracted:
    """What libcst gives for one definition (everything but tests, ids and dates)."""

    function: str
    class_name: str | None
    signature: str
    source: str
    docstring: str | None
    class_context: str | None
    decorators: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FileExtraction:
    """One file's wanted functions: extracted, or dropped with why (qualname → reason)."""

    found: dict[str, Extracted]
    dropped: dict[str, str]


def tests_by_function(calls: list[CallRecord]) -> dict[str, list[str]]:
    """``path:qualname`` → sorted distinct node ids of the tests reaching it."""
    reached: dict[str, set[str]] = defaultdict(set)
    for record in calls:
        for key in record.calls:
            reached[key].add(record.node_id)
    return {key: sorted(ids) for key, ids in reached.items()}


def most_direct(tests: dict[str, list[str]], calls: list[CallRecord], max_tests: int) -> dict[str, list[str]]:
    """At most ``max_tests`` tests per function (0: all): those whose own code calls it first,
    then those reaching the fewest other repository functions (they check it most directly)."""
    if not max_tests:
        return tests
    size = {c.node_id: len(c.calls) for c in calls}
    own = {c.node_id: frozenset(c.direct if c.direct is not None else c.calls) for c in calls}

    def rank(key: str, node_id: str) -> tuple[bool, int, str]:
        return key not in own[node_id], size[node_id], node_id

    return {key: sorted(sorted(ids, key=lambda n: rank(key, n))[:max_tests]) for key, ids in tests.items()}


def extract_functions(
    repo: LoadedRepo, calls: list[CallRecord], name: str, sha: str | None, min_tests: int, dates: bool = True
) -> tuple[list[FunctionRecord], list[SkippedRecord]]:
    """Records of every function reached by ``min_tests`` or more tests, by path and line
    (with at most ``mine.max_tests`` of them, the most direct), and of those libcst could not
    extract, with why; ``dates`` blames each file at ``sha`` for ``first_added``/``last_modified``."""
    reached = {k: ids for k, ids in tests_by_function(calls).items() if len(ids) >= min_tests}
    chosen = most_direct(reached, calls, repo.cfg.max_tests)
    by_path: dict[str, list[str]] = defaultdict(list)
    for key in chosen:
        path, _, qualname = key.partition(":")
        by_path[path].append(qualname)
    extracted = _extract_all(repo, {p: spans(repo.table.summaries[p], q) for p, q in sorted(by_path.items())})
    records = [
        _record(repo, name, sha, path, qualname, piece, chosen[f"{path}:{qualname}"])
        for path, pieces in extracted.items()
        for qualname, piece in pieces.found.items()
    ]
    dropped = [
        SkippedRecord(repo=name, path=path, kind=SkipKind.FUNCTION, qualname=qualname, reason=why)
        for path, pieces in extracted.items()
        for qualname, why in sorted(pieces.dropped.items())
    ]
    if dates and sha is not None:
        _add_dates(repo, sha, records)
    return sorted(records, key=lambda r: (r.path, r.start_line)), dropped


def spans(summary: ModuleSummary, qualnames: list[str]) -> list[Span]:
    """Line spans of the top-level definitions holding ``qualnames`` (unknown ones dropped)."""
    found = []
    for qualname in sorted(qualnames):
        owner, _, _ = qualname.rpartition(".")
        top = summary.classes.get(owner) if owner else summary.functions.get(qualname)
        if top is None:
            log.warning("no top-level definition holds %s", qualname)
            continue
        found.append((qualname, top.lineno, top.end_lineno))
    return found


def _extract_all(repo: LoadedRepo, file_spans: dict[str, list[Span]]) -> dict[str, FileExtraction]:
    """Per file, the extracted definitions: from the cache, else parsed on the pool."""
    cache = repo.cache
    done: dict[str, FileExtraction] = {}
    misses: list[tuple[str, str]] = []
    for path, file_span in file_spans.items():
        key = cache.key((repo.root / path).read_bytes(), "extract:" + json.dumps(file_span))
        hit = cache.get(key, FileExtraction)
        if hit is None:
            misses.append((path, key))
        else:
            done[path] = hit
    jobs = [(str(repo.root / path), file_spans[path]) for path, _ in misses]
    progress = Progress(len(jobs), "extract files", unit="file")
    for (path, key), pieces in zip(misses, parallel_map(_extract_job, jobs, repo.cfg.workers), strict=True):
        cache.put(key, pieces)
        done[path] = pieces
        progress.advance()
    return {path: done[path] for path in sorted(done)}


def _extract_job(job: tuple[str, list[Span]]) -> FileExtraction:
    path, file_spans = job
    return extract_definitions(read_source(Path(path)), file_spans)


def extract_definitions(source: str, file_spans: list[Span]) -> FileExtraction:
    """Parse each top-level definition's lines once and extract the wanted functions."""
    try:  # the harness patches the whole module with libcst: what it cannot take is no task
        check_cst_depth(source)
    except Unparsable as exc:
        why = f"its module is too deep for libcst, which patches it: {exc}"
        log.warning("%s; skipping %s", why, [q for q, _, _ in file_spans])
        return FileExtraction({}, {q: why for q, _, _ in file_spans})
    lines = source.split("\n")  # line ends as Python counts them (splitlines also breaks at \f)
    wanted: dict[tuple[int, int], list[str]] = defaultdict(list)
    for qualname, start, end in file_spans:
        wanted[(start, end)].append(qualname)
    result = FileExtraction({}, {})
    for (start, end), qualnames in sorted(wanted.items()):
        text = "\n".join(lines[start - 1 : end]) + "\n"
        if text[:1].isspace():  # defined inside a module-level ``if``/``try`` block
            text = textwrap.dedent(text)
        try:
            _extract_span(parse_cst(text), qualnames, result)
        except (Unparsable, RecursionError) as exc:  # RecursionError: libcst's visitors on deep code
            problem = exc if isinstance(exc, Unparsable) else describe(exc)
            why = f"lines {start}-{end} do not parse on their own: {problem}"
            log.warning("%s; skipping %s", why, qualnames)
            result.dropped.update((q, why) for q in qualnames if q not in result.found)
    return result


def _extract_span(module: cst.Module, qualnames: list[str], into: FileExtraction) -> None:
    index = _definitions(module)
    for qualname in qualnames:
        if qualname in index:
            into.found[qualname] = _extracted(module, *index[qualname])
        else:
            into.dropped[qualname] = "libcst finds no such definition in its lines"


def _definitions(module: cst.Module) -> dict[str, tuple[cst.FunctionDef, cst.ClassDef | None]]:
    """Top-level functions and methods of top-level classes, by qualname."""
    index: dict[str, tuple[cst.FunctionDef, cst.ClassDef | None]] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            index[stmt.name.value] = (stmt, None)
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            for item in stmt.body.body:
                key = f"{stmt.name.value}.{item.name.value}" if isinstance(item, cst.FunctionDef) else None
                if key and not (key in index and _is_accessor(item)):
                    index[key] = (item, stmt)
    return index


def _is_accessor(node: cst.FunctionDef) -> bool:
    """``@p.setter``/``@p.deleter``: the property stays its getter, as in the symbol table
    (which gives the task its lines)."""
    return any(
        isinstance(d.decorator, cst.Attribute)
        and isinstance(d.decorator.value, cst.Name)
        and d.decorator.value.value == node.name.value
        and d.decorator.attr.value in ("setter", "deleter")
        for d in node.decorators
    )


def _extracted(module: cst.Module, node: cst.FunctionDef, cls: cst.ClassDef | None) -> Extracted:
    return Extracted(
        function=node.name.value,
        class_name=cls.name.value if cls else None,
        signature=signature(module, node),
        source=module.code_for_node(node.with_changes(leading_lines=())).rstrip() + "\n",
        docstring=node.get_docstring(),
        class_context=class_skeleton(module, cls, target=node.name.value) if cls else None,
        decorators=tuple(module.code_for_node(d.decorator) for d in node.decorators),
    )


def signature(module: cst.Module, node: cst.FunctionDef) -> str:
    """``def name(args) -> ret:`` exactly as written (``async`` kept, decorators dropped)."""
    header = node.with_changes(decorators=(), leading_lines=(), body=cst.SimpleStatementSuite([cst.Pass()]))
    return module.code_for_node(header).rstrip().removesuffix("pass").rstrip()


def class_skeleton(module: cst.Module, cls: cst.ClassDef, target: str | None = None) -> str:
    """Class header with bases and decorators, docstring, class attributes, ``__init__`` in
    full and every other method as its signature with ``...`` (comments above kept).

    The ``target`` method is always reduced to its signature: the skeleton goes into the
    task's prompt, which must not contain the answer (``__init__`` tasks included)."""
    assert isinstance(cls.body, cst.IndentedBlock)
    kept: list[cst.BaseStatement] = []
    for index, stmt in enumerate(cls.body.body):
        if isinstance(stmt, cst.FunctionDef):
            full = stmt.name.value == "__init__" and stmt.name.value != target
            kept.append(stmt if full else stmt.with_changes(body=_STUB))
        elif isinstance(stmt, cst.SimpleStatementLine) and _is_docstring_or_attribute(stmt, index):
            kept.append(stmt)
    skeleton = cls.with_changes(leading_lines=(), body=cls.body.with_changes(body=kept))
    return module.code_for_node(skeleton).rstrip() + "\n"


def _is_docstring_or_attribute(stmt: cst.SimpleStatementLine, index: int) -> bool:
    first = stmt.body[0]
    if (
        index == 0
        and isinstance(first, cst.Expr)
        and isinstance(first.value, cst.SimpleString | cst.ConcatenatedString)
    ):
        return True
    return isinstance(first, cst.Assign | cst.AnnAssign)


def _record(
    repo: LoadedRepo, name: str, sha: str | None, path: str, qualname: str, piece: Extracted, tests: list[str]
) -> FunctionRecord:
    info = repo.table.summaries[path]
    owner, _, fn = qualname.rpartition(".")
    start = (info.classes[owner].methods[fn] if owner else info.functions[fn]).lineno
    return record_of(piece, name, sha, path, qualname, start, tests)


def record_of(
    piece: Extracted, name: str, sha: str | None, path: str, qualname: str, start: int, tests: list[str]
) -> FunctionRecord:
    """The record of an extracted definition whose ``def`` line is ``start``."""
    return FunctionRecord(
        task_id=task_id_for(name, path, qualname),
        repo=name,
        sha=sha,
        path=path,
        function=piece.function,
        class_name=piece.class_name,
        qualname=qualname,
        signature=piece.signature,
        source=piece.source,
        docstring=piece.docstring,
        class_context=piece.class_context,
        start_line=start,
        end_line=start + piece.source.count("\n") - 1,
        tests=tests,
        decorators=list(piece.decorators),
    )


def _add_dates(repo: LoadedRepo, sha: str, records: list[FunctionRecord]) -> None:
    """Blame every file once (threads: each blame is a git process), cached per commit."""
    by_path: dict[str, list[FunctionRecord]] = defaultdict(list)
    for record in records:
        by_path[record.path].append(record)
    with ThreadPoolExecutor(max_workers=repo.cfg.workers) as pool:
        found = pool.map(lambda path: _file_dates(repo, sha, path, by_path[path]), sorted(by_path))
        for path, dates in zip(sorted(by_path), found, strict=True):
            for record in by_path[path]:
                record.first_added, record.last_modified = dates.get((record.start_line, record.end_line), (None, None))


def _file_dates(repo: LoadedRepo, sha: str, path: str, records: list[FunctionRecord]) -> dict:
    ranges = sorted({(r.start_line, r.end_line) for r in records})
    cache = repo.cache
    key = cache.key(json.dumps([sha, path, ranges]).encode(), "blame")  # a commit pins the history
    dates: dict[tuple[int, int], tuple[date, date]] | None = cache.get(key, dict)
    if dates is None:
        dates = blame_dates(repo.root, sha, path, ranges)
        if dates:
            cache.put(key, dates)
    return dates


def extract_functions_file(
    clone_json: str | Path,
    calls_jsonl: str | Path,
    out: str | Path,
    cfg: MineConfig,
    parse_cache: str | Path,
    skipped_out: str | Path,
) -> int:
    """Rule ``extract_functions``: clone record + calls (which carry the node ids) →
    ``functions.jsonl``, and ``skipped.jsonl``: the files and functions mining left out."""
    clone, repo = load_clone(clone_json, cfg, parse_cache)
    calls = read_jsonl(calls_jsonl, CallRecord)
    records, dropped = extract_functions(repo, calls, clone.full_name, clone.sha, cfg.min_tests) if repo else ([], [])
    skipped = skipped_records(repo, clone.full_name) + dropped if repo else []
    log.info("%s: %d functions under test, %d files or functions skipped", clone.full_name, len(records), len(skipped))
    write_jsonl(skipped_out, skipped)
    return write_jsonl(out, records)
