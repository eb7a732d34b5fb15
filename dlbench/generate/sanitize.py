"""Code extraction from raw LLM answers: pure functions, one status per answer.

An answer may hold thinking text, prose, several fenced blocks, unfenced code, a whole
class where a method was asked, helpers and imports the function needs, or be cut off.
``extract_code`` picks the code that defines the requested function and says why when
there is none: ``no_code`` (nothing defines it), ``syntax_error`` (it does not parse) or
``truncated`` (it does not parse and the answer was cut: finish reason ``length`` or an
unclosed fence). An answer longer than ``MAX_ANSWER_CHARS`` is a ``syntax_error`` without
being parsed (finding the longest parsable stretch is quadratic), and so is code that
CPython's parser rejects in any way (too deeply nested, a lone surrogate, ...).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from dlbench.parsing import Unparsable, parse_ast
from dlbench.records import GenStatus

MAX_ANSWER_CHARS = 200_000  # ~50k tokens: far above any configured max_tokens

_THINK_RE = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)
_OPEN_THINK_RE = re.compile(r"<think(?:ing)?>", re.I)
_FENCE_RE = re.compile(r"^[ \t]*```[ \t]*([\w+.-]*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.S | re.M)
_OPEN_FENCE_RE = re.compile(r"^[ \t]*```[ \t]*([\w+.-]*)[^\n]*\n", re.M)
_CODE_START_RE = re.compile(r"^(?:async\s+def\s|def\s|class\s|@|import\s|from\s+[\w.]+\s+import\s)")
_PYTHON_TAGS = {"", "python", "py", "python3", "py3"}


@dataclass(frozen=True)
class Extraction:
    code: str | None
    status: GenStatus
    detail: str | None = None


def extract_code(raw: str | None, function: str, finish_reason: str | None = None) -> Extraction:
    """The code in ``raw`` that defines ``function`` (a plain or method name), with a status."""
    if raw is None or not raw.strip():
        return Extraction(None, GenStatus.NO_CODE, "empty answer")
    if len(raw) > MAX_ANSWER_CHARS:
        return _oversized(raw)
    text, thinking_cut = strip_thinking(raw)
    if thinking_cut:
        return _cut_or_missing(finish_reason, "the answer ends inside its thinking text")
    blocks, unclosed = fenced_blocks(text)
    candidates = blocks or _unfenced_candidates(text)
    if not candidates:
        return _cut_or_missing(finish_reason, "no code in the answer")
    cut = unclosed or finish_reason == "length"
    return _choose(candidates, function, cut)


def strip_thinking(raw: str) -> tuple[str, bool]:
    """Drop ``<think>…</think>`` parts; flag an opened but never closed one."""
    text = _THINK_RE.sub("", raw)
    opened = _OPEN_THINK_RE.search(text)
    if opened:
        return text[: opened.start()], True
    return text, False


def fenced_blocks(text: str) -> tuple[list[str], bool]:
    """Python fenced blocks in order, and whether a last fence was opened but never closed."""
    blocks, end = [], 0
    for match in _FENCE_RE.finditer(text):
        if match.group(1).lower() in _PYTHON_TAGS:
            blocks.append(match.group(2))
        end = match.end()
    tail = _OPEN_FENCE_RE.search(text, end)
    if tail and tail.group(1).lower() in _PYTHON_TAGS:
        blocks.append(text[tail.end() :])
        return blocks, True
    return blocks, False


def _unfenced_candidates(text: str) -> list[str]:
    """The longest stretch from the first code-looking line that parses (else all of it)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _CODE_START_RE.match(line)), None)
    if start is None:
        return []
    for end in range(len(lines), start, -1):
        chunk = "\n".join(lines[start:end]).rstrip() + "\n"
        if _parses(chunk) and defined_names(chunk):
            return [chunk]
    return ["\n".join(lines[start:]).rstrip() + "\n"]


def _choose(candidates: list[str], function: str, cut: bool) -> Extraction:
    """Last parsable block defining ``function``; else explain the best failure."""
    normalized = [textwrap.dedent(c).strip("\n") + "\n" for c in candidates]
    parsed = [c for c in normalized if _parses(c)]
    defining = [c for c in parsed if function in defined_names(c)]
    if defining:
        return Extraction(defining[-1], GenStatus.OK)
    broken = [c for c in normalized if not _parses(c) and re.search(rf"\bdef\s+{re.escape(function)}\b", c)]
    if broken:
        if cut:
            return Extraction(broken[-1], GenStatus.TRUNCATED, "the answer was cut off before the code ended")
        return Extraction(broken[-1], GenStatus.SYNTAX_ERROR, _syntax_error(broken[-1]))
    if cut and normalized and not _parses(normalized[-1]):
        return Extraction(normalized[-1], GenStatus.TRUNCATED, "the answer was cut off before the code ended")
    unparsable = [c for c in normalized if not _parses(c)]
    if unparsable and not parsed:
        return Extraction(unparsable[-1], GenStatus.SYNTAX_ERROR, _syntax_error(unparsable[-1]))
    return Extraction(None, GenStatus.NO_CODE, f"no code defines `{function}`")


def _cut_or_missing(finish_reason: str | None, why: str) -> Extraction:
    if finish_reason == "length":
        return Extraction(None, GenStatus.TRUNCATED, why + " (cut off at the token limit)")
    return Extraction(None, GenStatus.NO_CODE, why)


def defined_names(code: str) -> set[str]:
    """Names of functions defined at module level and as methods of module-level classes."""
    tree = parse_ast(code)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return names


def check_code(code: str, function: str) -> Extraction:
    """Status of code given as code (predictions files): parses and defines ``function``."""
    if not code.strip():
        return Extraction(None, GenStatus.NO_CODE, "empty code")
    if len(code) > MAX_ANSWER_CHARS:
        return _oversized(code)
    if not _parses(code):
        return Extraction(code, GenStatus.SYNTAX_ERROR, _syntax_error(code))
    if function not in defined_names(code):
        return Extraction(code, GenStatus.NO_CODE, f"no code defines `{function}`")
    return Extraction(code, GenStatus.OK)


def _oversized(text: str) -> Extraction:
    return Extraction(None, GenStatus.SYNTAX_ERROR, f"{len(text)} characters, over the limit of {MAX_ANSWER_CHARS}")


def _parses(code: str) -> bool:
    return _syntax_error(code) == "parses"


def _syntax_error(code: str) -> str:
    try:
        parse_ast(code)
    except Unparsable as exc:
        return str(exc)
    return "parses"
