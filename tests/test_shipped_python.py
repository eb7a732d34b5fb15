"""The code shipped into project images runs on the image's Python, which is the project's:
3.8 is the floor (docs/ENVIRONMENTS.md). CI cannot run it there (no Debian release ships 3.8,
and Ubuntu's archive is not sure to be reachable), so its source is checked against 3.8 here:
the grammar, and the standard library's names that came later. nlp-architect's image
(Python 3.8) lost 4 of 20 tasks to ``str.removesuffix`` in the plugin: every session ended in
``INTERNALERROR> AttributeError: 'str' object has no attribute 'removesuffix'``."""

from __future__ import annotations

import ast

import pytest

from dlbench.harness.code import ds1000_support_files, support_files
from dlbench.trace.container import PLUGIN_SOURCE

FLOOR = (3, 8)
# Methods of builtins and modules the floor lacks (their names are rare enough elsewhere).
LATER_ATTRIBUTES = {
    "removeprefix": "3.9", "removesuffix": "3.9", "is_relative_to": "3.9", "with_stem": "3.9",
    "randbytes": "3.9", "unparse": "3.9", "lcm": "3.9", "bit_count": "3.10", "pairwise": "3.10",
    "aclose": "3.10", "batched": "3.12", "to_thread": "3.9",
}  # fmt: skip
LATER_NAMES = {"functools.cache": "3.9", "zoneinfo": "3.9", "graphlib": "3.9", "tomllib": "3.11"}
LATER_KEYWORDS = {("zip", "strict"): "3.10", ("dataclass", "slots"): "3.10", ("dataclass", "kw_only"): "3.10"}
BUILTIN_GENERICS = {"list", "dict", "tuple", "set", "frozenset", "type"}  # subscripted at run time: 3.9
TYPE_NAMES = {"int", "str", "float", "bool", "bytes", *BUILTIN_GENERICS}


def shipped() -> dict[str, str]:
    """The supervisor, its plugin and the protocol; DS-1000's runner; the trace stage's plugin."""
    files = support_files() | ds1000_support_files() | {"trace/plugin.py": PLUGIN_SOURCE.read_bytes()}
    return {name: source.decode() for name, source in files.items()}


def later_than_floor(source: str) -> list[str]:
    """Where ``source`` needs a Python after the floor: its grammar, then the names above,
    outside annotations (``from __future__ import annotations`` keeps those unevaluated)."""
    tree = ast.parse(source, feature_version=FLOOR)  # a newer grammar is a SyntaxError here
    hints = [hint for node in ast.walk(tree) if (hint := _annotation(node)) is not None]
    annotations = {id(n) for hint in hints for n in ast.walk(hint)}
    found = []
    for node in ast.walk(tree):
        if id(node) in annotations:
            continue
        if isinstance(node, ast.Attribute) and node.attr in LATER_ATTRIBUTES:
            found.append(f"line {node.lineno}: .{node.attr} ({LATER_ATTRIBUTES[node.attr]})")
        if isinstance(node, ast.Attribute | ast.Name) and ast.unparse(node) in LATER_NAMES:
            found.append(f"line {node.lineno}: {ast.unparse(node)} ({LATER_NAMES[ast.unparse(node)]})")
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"line {node.lineno}: import {m} ({LATER_NAMES[m]})" for m in modules if m in LATER_NAMES]
            if isinstance(node, ast.ImportFrom) and node.module == "functools" and "cache" in {a.name for a in node.names}:  # fmt: skip
                found.append(f"line {node.lineno}: functools.cache (3.9)")
        if isinstance(node, ast.Call):
            callee = ast.unparse(node.func).rpartition(".")[2]
            found += [f"line {node.lineno}: {callee}({k.arg}=) ({LATER_KEYWORDS[callee, k.arg]})"
                      for k in node.keywords if (callee, k.arg) in LATER_KEYWORDS]  # fmt: skip
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in BUILTIN_GENERICS:
            found.append(f"line {node.lineno}: {node.value.id}[...] evaluated (3.9)")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) and _is_type_union(node):
            found.append(f"line {node.lineno}: a | b of types evaluated (3.10)")
    return sorted(found, key=lambda line: int(line.split(":")[0].removeprefix("line ")))


def _annotation(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.arg | ast.AnnAssign):
        return node.annotation
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return node.returns
    return None


def _is_type_union(node: ast.BinOp) -> bool:
    """``int | None``, ``A | B`` where both sides read as types (CapWords names, builtins, None;
    not flag constants like ``os.O_RDWR``)."""

    def typelike(side: ast.expr) -> bool:
        if isinstance(side, ast.Constant):
            return side.value is None
        name = ast.unparse(side).rpartition(".")[2]
        return (name[:1].isupper() and not name.isupper()) or name in TYPE_NAMES

    return typelike(node.left) and typelike(node.right)


@pytest.mark.parametrize("name", sorted(shipped()))
def test_shipped_code_runs_on_the_oldest_python_an_image_has(name: str) -> None:
    assert later_than_floor(shipped()[name]) == []


def test_the_check_finds_what_came_after_the_floor() -> None:
    """The check itself: each kind it looks for, found; the same names in annotations, not."""
    later = """
from __future__ import annotations
import functools
def f(x: list[int], y: int | None) -> dict[str, int]:
    z: tuple[int, ...] = ()
    a = "s::".removesuffix("::")
    b = isinstance(x, int | str)
    c = list[int]
    d = zip(x, x, strict=True)
    return functools.cache(f)
"""
    found = later_than_floor(later)
    assert [line.split(": ", 1)[1] for line in found] == [
        ".removesuffix (3.9)", "a | b of types evaluated (3.10)", "list[...] evaluated (3.9)",
        "zip(strict=) (3.10)", "functools.cache (3.9)",
    ], found  # fmt: skip
    with pytest.raises(SyntaxError):
        later_than_floor("match x:\n    case 1:\n        pass\n")
