"""Calls made inside library code, for ``mine.reach: transitive``.

A function under test runs its helpers (the paper's own task list has private helpers
such as ``_compute_luts``), so with transitive reach every repository function a reached
function calls is reached by the same tests, transitively. Only the files of reached
functions are read, on demand, with ``ast``: the symbol table's summaries stay free of
call lists, so direct reach costs nothing more. Callees resolve at module scope:
``f()``, ``mod.f()``, ``C()`` (its ``__init__``), ``self.m()``/``cls.m()`` through the
class's repository bases, and ``super().m()``; names bound inside the function (local
imports, variables) are not followed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from dlbench.parsing import Unparsable, parse_ast
from dlbench.mine.symbols import Symbol, SymbolTable, dotted_name, module_level

_SUPER = "super."  # ``super().m`` as ``dotted_name`` spells it


class LibraryCalls:
    """Callees of library functions (by ``path:qualname``), read and resolved on demand."""

    def __init__(self, root: Path, table: SymbolTable, support: set[str]):
        self.root = root
        self.table = table
        self.support = support  # test-support files: their functions are never candidates
        self._names: dict[str, dict[str, tuple[str, ...]]] = {}
        self._callees: dict[str, frozenset[str]] = {}

    def closure(self, keys: Iterable[str]) -> set[str]:
        """``keys`` and every repository function they call, transitively."""
        found = set(keys)
        work = list(found)
        while work:
            for callee in self.callees(work.pop()):
                if callee not in found:
                    found.add(callee)
                    work.append(callee)
        return found

    def callees(self, key: str) -> frozenset[str]:
        if key not in self._callees:
            path, _, qualname = key.partition(":")
            owner = qualname.rpartition(".")[0]
            targets = (self._resolve(path, owner, name) for name in self._called_names(path).get(qualname, ()))
            self._callees[key] = frozenset(t.key for t in map(self._as_function, targets) if self._candidate(t))
        return self._callees[key]

    def _candidate(self, target: Symbol | None) -> bool:
        return target is not None and target.kind == "function" and target.path not in self.support

    def _as_function(self, target: Symbol | None) -> Symbol | None:
        """Calling a class runs its ``__init__``."""
        if target is not None and target.kind == "class":
            return self.table.method(target, "__init__")
        return target

    def _resolve(self, path: str, owner: str, dotted: str) -> Symbol | None:
        head, _, attr = dotted.partition(".")
        if owner and attr and "." not in attr and head in ("self", "cls"):
            return self.table.method(Symbol("class", path, owner), attr)
        if owner and dotted.startswith(_SUPER):
            bases = self.table.mro(Symbol("class", path, owner))[1:]
            return next((m for b in bases if (m := self.table.method(b, attr)) is not None), None)
        return self.table.resolve(path, dotted)

    def _called_names(self, path: str) -> dict[str, tuple[str, ...]]:
        """Per top-level function and method of the file, the dotted names it calls."""
        if path not in self._names:
            self._names[path] = _file_calls(self.root / path)
        return self._names[path]


def _file_calls(path: Path) -> dict[str, tuple[str, ...]]:
    try:
        tree = parse_ast(path.read_bytes().decode("utf-8", errors="replace"))
    except (Unparsable, OSError):
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for node in module_level(tree.body):  # guarded definitions too, like the symbol table
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = _calls_in(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{item.name}"] = _calls_in(item)
    return found


def _calls_in(node: ast.AST) -> tuple[str, ...]:
    """Dotted callees of a function body (nested functions included: they run as its part)."""
    names = (dotted_name(n.func) for n in ast.walk(node) if isinstance(n, ast.Call))
    return tuple(dict.fromkeys(n for n in names if n))
