"""Parsing code we did not write (repository files, ground truths, LLM answers) safely.

Every stage that reads such code parses it here (the ground floor: imports nothing of ours).

Pathological code must become a recorded reason, never a crashed job. CPython's parser
rejects deep nesting (about 200 levels) in microseconds, with SyntaxError, MemoryError or
RecursionError; libcst's native parser instead overflows its stack and kills the process
with a segfault (a few thousand unclosed ``(`` or unary ``-``). So every libcst parse
first passes ``compile(..., PyCF_ONLY_AST)``, plus one check CPython cannot make for us:
``ast`` keeps ``a and b and ...`` flat while libcst nests it, one level per operand.

Repository files are read here too (``read_source``), as the interpreter reads them, so
that mining and the harness's patcher see the same text.
"""

from __future__ import annotations

import ast
import io
import re
import threading
import tokenize
from collections.abc import Iterator, Sequence
from pathlib import Path

import libcst as cst

# What CPython's parser raises on bad input (UnicodeError, e.g. a lone surrogate, is a
# ValueError; OverflowError where a literal or an offset overflows a C integer).
PARSE_ERRORS = (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError)
MAX_BOOL_OPERANDS = 1000  # libcst nests one level per operand: its visitors overflow beyond, its parser at ~8000
_BOOL_WORD_RE = re.compile(r"\b(?:and|or)\b")
# PEP 263: a coding declaration on line 1, or on line 2 below a blank or comment line 1.
_COOKIE_RE = re.compile(r"^([ \t\f]*#.*?coding[:=][ \t]*)([-\w.]+)", re.ASCII)
_BLANK_OR_COMMENT_RE = re.compile(r"^[ \t\f]*(?:#.*)?$")
# CPython 3.11 keeps the AST converter's recursion depth in shared state: two threads
# building ASTs at once can fail with "SystemError: AST constructor recursion depth
# mismatch" (gh-106905, fixed in 3.12). The evaluator patches on one thread while sessions
# run on others, so parses take turns.
_AST_LOCK = threading.Lock()


class Unparsable(ValueError):
    """Source that does not parse, or that libcst cannot parse without crashing."""


class TooDeep(Unparsable):
    """Valid Python that libcst cannot take: nested deeper than its recursion allows."""


def read_source(path: Path) -> str:
    """A Python file's text as the interpreter reads it (``decode_source``); OSError when it
    cannot be read, Unparsable when it does not decode."""
    return decode_source(path.read_bytes())


def decode_source(data: bytes) -> str:
    """Source bytes decoded as ``tokenize.open`` does: the encoding its coding cookie names
    (PEP 263), else UTF-8, a UTF-8 BOM dropped, newlines made ``\\n``. Bytes that do not
    decode are Unparsable: Python refuses to import such a module, so no task can come of it."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError) as exc:  # SyntaxError: an unknown or contradictory cookie
        raise Unparsable(f"cannot decode: {exc}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def utf8_cookie(source: str) -> str:
    """``source`` with its coding declaration, if any, naming utf-8 (in place: no line
    moves), for text that is written back as UTF-8."""
    lines = source.split("\n", 2)
    for i, line in enumerate(lines[:2]):
        if _COOKIE_RE.match(line):
            lines[i] = _COOKIE_RE.sub(r"\g<1>utf-8", line, count=1)
            return "\n".join(lines)
        if not _BLANK_OR_COMMENT_RE.match(line):
            break
    return source


def parse_ast(source: str, max_chars: int | None = None) -> ast.Module:
    """``ast`` of ``source``; Unparsable (with the reason) for anything CPython rejects, or
    for source longer than ``max_chars`` (a bound on what one parse may cost)."""
    if max_chars is not None and len(source) > max_chars:
        raise Unparsable(f"too large ({len(source)} characters, at most {max_chars})")
    try:
        with _AST_LOCK:
            return compile(source, "<source>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except PARSE_ERRORS as exc:
        raise Unparsable(describe(exc)) from None


def parse_cst(source: str, max_chars: int | None = None) -> cst.Module:
    """libcst module of ``source`` once CPython has accepted it; Unparsable otherwise."""
    check_cst_depth(source, parse_ast(source, max_chars))
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise Unparsable(f"ParserSyntaxError: {exc.message} (line {exc.raw_line})") from None
    except PARSE_ERRORS as exc:
        raise Unparsable(describe(exc)) from None


def check_cst_depth(source: str, tree: ast.Module | None = None) -> None:
    """TooDeep when libcst would nest ``source`` beyond what it takes (``tree``: its ``ast``,
    parsed here only when the cheap filter cannot rule a long chain out)."""
    if len(_BOOL_WORD_RE.findall(source)) <= MAX_BOOL_OPERANDS:  # cheap filter before the walk
        return
    tree = tree or parse_ast(source)
    longest = max((len(n.values) for n in ast.walk(tree) if isinstance(n, ast.BoolOp)), default=0)
    if longest > MAX_BOOL_OPERANDS:
        raise TooDeep(f"an and/or chain of {longest} operands (limit {MAX_BOOL_OPERANDS})")


def describe(exc: BaseException) -> str:
    """One line naming a parse failure (MemoryError and RecursionError mean: nested too deeply)."""
    if isinstance(exc, MemoryError | RecursionError):
        return f"{type(exc).__name__}: nested too deeply to parse"
    return f"{type(exc).__name__}: {exc}"


def imported_modules(tree: ast.Module) -> frozenset[str]:
    """Every module an absolute ``import``/``from ... import`` anywhere in ``tree`` names."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return frozenset(names)


def module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Top-level statements, looking inside ``if``/``try``/``with`` blocks (guarded imports
    and definitions); a ``try``'s handlers come after its other blocks (the symbol table's
    last binding of a name is its fallback's)."""
    for node in body:
        if isinstance(node, ast.If):
            yield from module_level(node.body + node.orelse)
        elif isinstance(node, ast.Try | ast.TryStar):
            yield from module_level(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                yield from module_level(handler.body)
        elif isinstance(node, ast.With):
            yield from module_level(node.body)
        else:
            yield node


def cst_module_level(body: Sequence[cst.BaseStatement]) -> Iterator[cst.BaseStatement]:
    """The libcst form of ``module_level`` (the same blocks), in the order of the source."""
    for stmt in body:
        if isinstance(stmt, cst.If | cst.Try | cst.TryStar | cst.With):
            yield from cst_module_level(_blocks(stmt))
        else:
            yield stmt


def _blocks(stmt: cst.If | cst.Try | cst.TryStar | cst.With) -> list[cst.BaseStatement]:
    """Statements of a compound statement's blocks (an ``elif`` stays a nested ``If``)."""
    suites = [stmt.body]
    extra: list[cst.BaseStatement] = []
    if isinstance(stmt, cst.Try | cst.TryStar):
        suites += [h.body for h in stmt.handlers]
        suites += [part.body for part in (stmt.orelse, stmt.finalbody) if part is not None]
    elif isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.If):
        extra.append(stmt.orelse)
    elif isinstance(stmt, cst.If) and stmt.orelse is not None:
        suites.append(stmt.orelse.body)
    return [s for suite in suites if isinstance(suite, cst.IndentedBlock) for s in suite.body] + extra
