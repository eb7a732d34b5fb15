"""Put a candidate into the module of its task (libcst; pure functions over source text).

The candidate replaces the target function or method (found by qualname). It may be a bare
function, a method, or a whole class when a method was asked (the method is taken). What it
brings along is kept: imports (placed after the module docstring and ``__future__``
imports), helper functions and classes and module constants with new names (in their
order, before the target), helper methods when they came inside the class. Other
top-level statements (example calls, ``if __name__ == "__main__":``) are dropped. The original's decorators stay when
the candidate has none. Names the module already defines are not replaced, so a helper the
candidate re-declares cannot break other code of the module.

The patched module is written as UTF-8 (``parsing.read_source`` decoded the original as
its coding cookie says), so a cookie naming another encoding is made to name utf-8.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from functools import lru_cache

import libcst as cst

from dlbench.harness.screen import MAX_CODE_BYTES
from dlbench.parsing import TooDeep, Unparsable, cst_module_level, module_level, parse_ast, parse_cst, utf8_cookie


class PatchError(ValueError):
    """The candidate cannot be put into the module (status ``patch_error``)."""


class CandidateSyntaxError(PatchError):
    """The candidate (or the patched module) is not valid Python (status ``syntax_error``)."""


_MODULE_GAP = (cst.EmptyLine(), cst.EmptyLine())
_CLASS_GAP = (cst.EmptyLine(),)


def patch_source(
    original: str, qualname: str, candidate: str, filename: str = "<module>", line: int | None = None
) -> str:
    """The module ``original`` with ``qualname`` replaced by the candidate's definition.
    Where the module defines that name more than once (a property's getter and setter; a
    fallback in a ``try``/``if`` block), the definition holding ``line`` (the task's first
    line) is replaced, else the last function (the first class) of that name.

    ``parse_cst`` lets CPython parse the candidate first: it refuses, fast and safely, what
    crashes or hangs libcst (thousands of nested brackets, ten thousands of chained
    operators, lone surrogates, huge inputs). Valid Python too deep for libcst is a patch
    error, not the candidate's syntax error."""
    try:
        cand = parse_cst(candidate, MAX_CODE_BYTES)
    except TooDeep as exc:
        raise PatchError(f"candidate is nested too deeply to patch ({exc})") from None
    except Unparsable as exc:
        raise CandidateSyntaxError(f"candidate is not valid Python: {exc}") from None
    module = _parse_original(original, filename)
    path = qualname.split(".")
    if "<locals>" in path:
        raise PatchError(f"nested functions cannot be patched: {qualname}")
    try:
        patched = utf8_cookie(_patched_code(module, cand, path, qualname, _occurrence(original, tuple(path), line)))
    except RecursionError:  # libcst walks recursively: valid but deeply nested code, e.g. a 3,000-operand chain
        raise PatchError("candidate is nested too deeply to patch (RecursionError)") from None
    try:
        compile(patched, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise CandidateSyntaxError(f"patched module does not compile: {exc.msg} (line {exc.lineno})") from None
    return patched


def _patched_code(module: cst.Module, cand: cst.Module, path: list[str], qualname: str, occurrence: tuple[int, int]) -> str:  # fmt: skip
    func, methods, source = _candidate_function(cand, path)
    defined = _defined_names(list(cst_module_level(module.body)))
    extras = [_spaced(s) for s in cand.body if s is not source and _is_extra(s, defined)]
    body = list(module.body)
    index, target = _site(body, path, qualname, occurrence[0])
    replaced = _replace(target, path, func, methods, occurrence[1])
    # A definition inside a module-level if/try/with block is replaced where it is; the
    # candidate's helpers go before that block, at module level.
    body[index] = replaced if body[index] is target else body[index].deep_replace(target, replaced)
    body[index:index] = extras
    body = _with_imports(body, _imports(cand, module))
    return module.with_changes(body=body).code


@lru_cache(maxsize=32)
def _parse_original(original: str, filename: str) -> cst.Module:
    """Parsed once per module text: every candidate of a task patches the same module."""
    try:
        return parse_cst(original)
    except Unparsable as exc:
        raise PatchError(f"{filename} is not valid Python: {exc}") from None


def _candidate_function(
    cand: cst.Module, path: list[str]
) -> tuple[cst.FunctionDef, list[cst.FunctionDef], cst.CSTNode]:
    """(the function to use, other methods of the class it came in, its top-level statement).

    A name defined twice is taken at its last definition: the one Python binds."""
    name = path[-1]
    for stmt in reversed(cand.body):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt, [], stmt
    classes = [s for s in reversed(cand.body) if isinstance(s, cst.ClassDef)]
    wanted = path[-2] if len(path) > 1 else None
    classes.sort(key=lambda c: c.name.value != wanted)  # the asked-for class first (stable: last first)
    for cls in classes:
        defs = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
        match = next((d for d in reversed(defs) if d.name.value == name), None)
        if match is not None:
            return match, [d for d in defs if d is not match], cls
    raise PatchError(f"candidate defines no function or method named {name!r}")


def _is_extra(stmt: cst.CSTNode, defined: set[str]) -> bool:
    """Helper functions and classes, and constants, with names the module does not define.
    Other top-level statements (example calls, ``if __name__ == ...``) are dropped."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return stmt.name.value not in defined
    names = _assigned_names(stmt)
    return bool(names) and not names & defined


def _spaced(stmt: cst.CSTNode) -> cst.CSTNode:
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return stmt.with_changes(leading_lines=_MODULE_GAP)
    return stmt


@lru_cache(maxsize=32)  # every candidate of a task asks the same of the same module
def _occurrence(original: str, path: tuple[str, ...], line: int | None) -> tuple[int, int]:
    """Which of the same-named definitions is the task's, as (which module-level one named
    ``path[0]``, looking inside if/try/with blocks, in source order; which of the same-named
    functions at the innermost level): those whose lines hold ``line``, else the last
    function (the one Python binds) of the first class. Read with ``ast``: libcst has no line
    numbers without a metadata pass."""
    try:
        body = parse_ast(original).body if line is not None else []
    except Unparsable:
        body = []
    kind = ast.ClassDef if len(path) > 1 else (ast.FunctionDef, ast.AsyncFunctionDef)
    sites = sorted((s for s in module_level(body) if isinstance(s, kind) and s.name == path[0]), key=_def_start)
    site = _holding(sites, line, -1 if len(path) == 1 else 0)
    if len(path) == 1:
        return site, site
    body = sites[site].body if sites else []
    for name in path[1:-1]:
        body = next((s.body for s in body if isinstance(s, ast.ClassDef) and s.name == name), [])
    defs = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == path[-1]]
    return site, _holding(defs, line, -1)


def _holding(defs: Sequence[ast.stmt], line: int | None, default: int) -> int:
    """Index of the definition whose lines (decorators included) hold ``line``."""
    return next((i for i, d in enumerate(defs) if _def_start(d) <= (line or 0) <= (d.end_lineno or 0)), default)


def _def_start(node: ast.stmt) -> int:
    return min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])


def _nth(body: Sequence[cst.CSTNode], kind: type, name: str, occurrence: int) -> int | None:
    """Index in ``body`` of the ``occurrence``-th ``kind`` definition named ``name`` (-1: the last)."""
    found = [i for i, s in enumerate(body) if isinstance(s, kind) and s.name.value == name]
    return found[occurrence] if -len(found) <= occurrence < len(found) else (found[-1] if found else None)


def _site(body: Sequence[cst.BaseStatement], path: list[str], qualname: str, occurrence: int) -> tuple[int, cst.CSTNode]:  # fmt: skip
    """(index of the module-level statement holding the definition, the definition): the
    ``occurrence``-th module-level function (class) named ``path[0]``, in source order."""
    kind = cst.ClassDef if len(path) > 1 else cst.FunctionDef
    sites = [(i, s) for i, top in enumerate(body) for s in cst_module_level([top])
             if isinstance(s, kind) and s.name.value == path[0]]  # fmt: skip
    if not sites:
        raise PatchError(f"{qualname} not found at the top level of the module")
    return sites[occurrence] if -len(sites) <= occurrence < len(sites) else sites[-1]


def _replace(node: cst.CSTNode, path: list[str], func: cst.FunctionDef, methods: list[cst.FunctionDef], occurrence: int) -> cst.CSTNode:  # fmt: skip
    if len(path) == 1:
        assert isinstance(node, cst.FunctionDef)
        return _adopt(node, func)
    assert isinstance(node, cst.ClassDef)
    inner = list(node.body.body)
    kind = cst.ClassDef if len(path) > 2 else cst.FunctionDef
    index = _nth(inner, kind, path[1], occurrence if len(path) == 2 else 0)
    if index is None:
        raise PatchError(f"{'.'.join(path)}: {path[1]!r} not found in class {path[0]!r}")
    inner[index] = _replace(inner[index], path[1:], func, methods if len(path) == 2 else [], occurrence)
    if len(path) == 2:
        present = _defined_names(inner)
        extra = [m.with_changes(leading_lines=_CLASS_GAP) for m in methods if m.name.value not in present]
        inner[index + 1 : index + 1] = extra
    return node.with_changes(body=node.body.with_changes(body=inner))


def _adopt(old: cst.FunctionDef, new: cst.FunctionDef) -> cst.FunctionDef:
    """The candidate's definition in the original's place (its comments, its decorators if none)."""
    decorators = new.decorators or old.decorators
    return new.with_changes(decorators=decorators, leading_lines=old.leading_lines)


def _defined_names(body: Sequence[cst.CSTNode]) -> set[str]:
    names: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        names |= _assigned_names(stmt)
    return names


def _assigned_names(stmt: cst.CSTNode) -> set[str]:
    """Plain names a module-level ``x = ...`` / ``x: T = ...`` statement binds."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return set()
    names = set()
    for small in stmt.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
        if isinstance(small, cst.AnnAssign):
            targets = [small.target]
        names |= {t.value for t in targets if isinstance(t, cst.Name)}
    return names


def _is_import(stmt: cst.CSTNode, future: bool | None = None) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Import) and future is not True:
            return True
        if isinstance(small, cst.ImportFrom):
            is_future = isinstance(small.module, cst.Name) and small.module.value == "__future__"
            if future is None or future == is_future:
                return True
    return False


def _imports(cand: cst.Module, module: cst.Module) -> list[cst.SimpleStatementLine]:
    """Candidate imports (not ``__future__``) the module does not already have verbatim."""
    have = {module.code_for_node(s).strip() for s in module.body if _is_import(s)}
    found = []
    for stmt in cand.body:
        code = cand.code_for_node(stmt).strip()
        if _is_import(stmt, future=False) and code not in have:
            have.add(code)
            found.append(stmt.with_changes(leading_lines=()))
    return found


def _with_imports(body: list[cst.CSTNode], imports: list[cst.SimpleStatementLine]) -> list[cst.CSTNode]:
    """Insert after the module docstring and any ``from __future__`` imports."""
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    while index < len(body) and _is_import(body[index], future=True):
        index += 1
    return body[:index] + imports + body[index:]


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
