"""Calls made inside library code, for ``mine.reach: transitive``.

A function under test runs its helpers (the paper's own task list has private helpers
such as ``_compute_luts``), so with transitive reach every repository function a reached
function calls is reached by the same tests, transitively. Only the files of reached
functions are read, on demand, with ``ast``: the symbol table's summaries stay free of
call lists, so direct reach costs nothing more. Callees resolve at module scope:
``f()``, ``mod.f()``, ``C()`` (its ``__init__``), ``self.m()``/``cls.m()`` through the
class's repository bases, and ``super().m()``; names bound inside the function (local
imports, variables) are not followed.

``nested_callees`` gives what a function's nested functions call: a decorator's wrapper
or the function a call returns (``engine.on(event)`` returns the decorator that calls
``self.add_event_handler``). Their frames are library code no one names, so what they
call runs as if its caller had called it (the call graph counts it for direct reach too).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from dlbench.mine.symbols import Symbol, SymbolTable, dotted_name
from dlbench.parsing import Unparsable, module_level, parse_ast, read_source

_SUPER = "super."  # ``super().m`` as ``dotted_name`` spells it


class LibraryCalls:
    """Callees of library functions (by ``path:qualname``), read and resolved on demand."""

    def __init__(self, root: Path, table: SymbolTable, support: set[str]):
        self.root = root
        self.table = table
        self.support = support  # test-support files: their functions are never candidates
        self._files: dict[str, FileCalls] = {}
        self._callees: dict[tuple[str, bool], frozenset[str]] = {}

    def closure(self, keys: Iterable[str], classes: Iterable[Symbol] = ()) -> set[str]:
        """``keys`` and every repository function they call, transitively. ``self.m()`` in a
        base class's method also runs the override of every *live* subclass: a class the
        test instantiates (``classes``) or one whose method is reached (a test that builds
        ``RandomHue`` and calls the inherited ``forward`` runs ``RandomHue.apply_transform``)."""
        found = set(keys)
        live = set(classes) | {c for k in found if (c := _owner(k)) is not None}
        work = list(found)
        while work:
            key = work.pop()
            for callee in self.callees(key) | self._overrides(key, live) | self._bound_calls(key, live):
                if callee in found:
                    continue
                found.add(callee)
                work.append(callee)
                owner = _owner(callee)
                if owner is not None and owner not in live:  # its bases' methods walked so far may call its overrides
                    live.add(owner)
                    bases = set(self.table.mro(owner)[1:])
                    work.extend(k for k in found if _owner(k) in bases and self._self_calls(k))
        return found

    def _overrides(self, key: str, live: set[Symbol]) -> frozenset[str]:
        """Overrides, in the live subclasses of the method's class, of what it calls on ``self``/``cls``."""
        attrs = self._self_calls(key)
        base = _owner(key)
        if not attrs or base is None:
            return frozenset()
        targets = (self.table.method(c, a) for c in live if c != base and base in self.table.mro(c) for a in attrs)
        return frozenset(t.key for t in targets if self._candidate(t))

    def _bound_calls(self, key: str, live: set[Symbol]) -> frozenset[str]:
        """``self.attr(...)`` where a method of the class (or a base) set ``self.attr = p.m``, a
        bound method of an object it was handed: ``m`` of the live classes (pyro's ``SVI`` keeps
        ``loss.loss_and_grads`` and calls it in ``step``; the test built the loss)."""
        owner = _owner(key)
        attrs = self._self_calls(key)
        if owner is None or not attrs:
            return frozenset()
        methods = {
            m
            for c in self.table.mro(owner)
            for a in attrs
            for m in self._file(c.path).bound.get(c.qualname, {}).get(a, ())
        }
        targets = (self.table.method(c, m) for c in live for m in methods)
        return frozenset(t.key for t in targets if self._candidate(t))

    def _self_calls(self, key: str) -> tuple[str, ...]:
        """Methods the function calls on ``self`` or ``cls``."""
        path, _, qualname = key.partition(":")
        names = self._called_names(path).get(qualname, Called((), ())).every
        heads = (n.split(".") for n in names)
        return tuple(parts[1] for parts in heads if len(parts) == 2 and parts[0] in ("self", "cls"))

    def callees(self, key: str) -> frozenset[str]:
        """Repository functions the function's body calls (its nested functions included)."""
        return self._resolved(key, nested=False)

    def nested_callees(self, key: str) -> frozenset[str]:
        """Repository functions that the function's nested functions call."""
        return self._resolved(key, nested=True)

    def _resolved(self, key: str, nested: bool) -> frozenset[str]:
        if (key, nested) not in self._callees:
            path, _, qualname = key.partition(":")
            owner = qualname.rpartition(".")[0]
            called = self._called_names(path).get(qualname, Called((), ()))
            names = called.nested if nested else called.every
            targets = (t for name in names for t in self._targets(path, owner, name))
            found = frozenset(t.key for t in targets if self._candidate(t))
            self._callees[key, nested] = found
        return self._callees[key, nested]

    def _candidate(self, target: Symbol | None) -> bool:
        return target is not None and target.kind == "function" and target.path not in self.support

    def _as_function(self, target: Symbol | None) -> Symbol | None:
        """Calling a class runs its ``__init__``."""
        if target is not None and target.kind == "class":
            return self.table.method(target, "__init__")
        return target

    def _targets(self, path: str, owner: str, dotted: str) -> list[Symbol]:
        """What calling ``dotted`` in a function of ``path`` (a method of ``owner``) runs."""
        target = self._as_function(self._resolve(path, owner, dotted))
        if target is not None:
            return [target]
        head, _, attr = dotted.partition(".")
        if owner and head == "self" and attr and "." not in attr:
            return self._attribute_calls(Symbol("class", path, owner), attr)
        return []

    def _attribute_calls(self, cls: Symbol, attr: str) -> list[Symbol]:
        """``self.attr(...)`` where a method of the class (or a base) set ``self.attr = C(...)``:
        what calling a ``C`` runs (a torch module's ``forward``: models are built of modules
        held in attributes, ``self.patch_embed(x, waves)`` in torchgeo's DOFA)."""
        found = []
        for item in self.table.mro(cls):
            for name in self._attributes(item.path).get(item.qualname, {}).get(attr, ()):
                made = self.table.resolve(item.path, name)
                if made is not None and made.kind == "class":
                    found += sorted(self.table.instance_call(made))
        return found

    def _resolve(self, path: str, owner: str, dotted: str) -> Symbol | None:
        head, _, attr = dotted.partition(".")
        if owner and attr and "." not in attr and head in ("self", "cls"):
            return self.table.method(Symbol("class", path, owner), attr)
        if owner and dotted.startswith(_SUPER):
            bases = self.table.mro(Symbol("class", path, owner))[1:]
            return next((m for b in bases if (m := self.table.method(b, attr)) is not None), None)
        return self.table.resolve(path, dotted)

    def _attributes(self, path: str) -> dict[str, dict[str, tuple[str, ...]]]:
        """Per class of the file, per attribute its methods set to a call's result
        (``self.attr = C(...)``), the dotted names called."""
        return self._file(path).attributes

    def _called_names(self, path: str) -> dict[str, Called]:
        """Per top-level function and method of the file, the dotted names it calls."""
        return self._file(path).calls

    def _file(self, path: str) -> FileCalls:
        if path not in self._files:
            self._files[path] = _file_calls(self.root / path)
        return self._files[path]


def _self_attributes(node: ast.ClassDef) -> dict[str, tuple[str, ...]]:
    """Attribute → the dotted names of the calls a method of the class assigns it."""
    attrs: dict[str, tuple[str, ...]] = {}
    for item in ast.walk(node):
        made = (
            dotted_name(item.value.func) if isinstance(item, ast.Assign) and isinstance(item.value, ast.Call) else None
        )
        for attr in _self_targets(item) if made else ():
            attrs[attr] = (*attrs.get(attr, ()), made)
    return attrs


def _bound_attributes(node: ast.ClassDef) -> dict[str, tuple[str, ...]]:
    """Attribute → the method names a method of the class assigns it from one of its
    parameters (``self.attr = param.m``: a bound method of an object the caller passed)."""
    attrs: dict[str, tuple[str, ...]] = {}
    for method in (n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        params = {a.arg for a in [*method.args.posonlyargs, *method.args.args, *method.args.kwonlyargs]}
        params -= {"self", "cls"}
        for item in ast.walk(method):
            value = item.value if isinstance(item, ast.Assign) else None
            if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in params:
                for attr in _self_targets(item):
                    attrs[attr] = (*attrs.get(attr, ()), value.attr)
    return attrs


def _self_targets(assign: ast.Assign) -> list[str]:
    """The attributes an assignment sets on ``self``."""
    return [
        t.attr
        for t in assign.targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    ]


class Called(NamedTuple):
    every: tuple[str, ...]  # dotted callees anywhere in the function
    nested: tuple[str, ...]  # dotted callees inside its nested functions


def _owner(key: str) -> Symbol | None:
    path, _, qualname = key.partition(":")
    owner = qualname.rpartition(".")[0]
    return Symbol("class", path, owner) if owner else None


class FileCalls(NamedTuple):
    calls: dict[str, Called]  # per top-level function and method
    attributes: dict[str, dict[str, tuple[str, ...]]]  # per class (``_self_attributes``)
    bound: dict[str, dict[str, tuple[str, ...]]]  # per class (``_bound_attributes``)


def _file_calls(path: Path) -> FileCalls:
    try:
        tree = parse_ast(read_source(path))
    except (Unparsable, OSError):
        return FileCalls({}, {}, {})
    found = FileCalls({}, {}, {})
    for node in module_level(tree.body):  # guarded definitions too, like the symbol table
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.calls[node.name] = _calls_in(node)
        elif isinstance(node, ast.ClassDef):
            found.attributes[node.name] = _self_attributes(node)
            found.bound[node.name] = _bound_attributes(node)
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.calls[f"{node.name}.{item.name}"] = _calls_in(item)
    return found


def _calls_in(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Called:
    """Dotted callees of a function body (nested functions included: they run as its part)."""
    nested = [n for item in node.body for n in ast.walk(item) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return Called(_callee_names(node), tuple(dict.fromkeys(c for n in nested for c in _callee_names(n))))


def _callee_names(node: ast.AST) -> tuple[str, ...]:
    names = (dotted_name(n.func) for n in ast.walk(node) if isinstance(n, ast.Call))
    return tuple(dict.fromkeys(n for n in names if n))
