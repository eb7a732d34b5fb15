"""Repository symbol table: modules, definitions and import bindings, resolved by name.

Every Python file of a checkout gets an ``ast`` summary (definitions with exact line
ranges, decorators with their ``parametrize`` values, bases, imports, return hints).
``ast`` is the right tool here: it
gives positions for free at about five times libcst's parse speed, and definitions are
all the library side needs (libcst is kept for test bodies and exact-source extraction).
A summary holds nothing that depends on the file's path (relative imports stay
relative), so it is cached by content hash alone. ``SymbolTable`` names every module
(packages with or without ``__init__.py``, ``src/`` layouts, pytest's rootdir-less test
folders) and resolves dotted names through imports, aliases, star imports,
re-exports in ``__init__.py`` and guarded import factories (``Lab = _lab_factory()``),
transitively; methods through bases in Python's C3 order.
"""

from __future__ import annotations

import ast
import itertools
import logging
import math
import os
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import NamedTuple

from dlbench.parsing import PARSE_ERRORS, Unparsable, module_level, parse_ast

SKIP_DIRS = frozenset({"node_modules", "site-packages", "__pycache__", "venv", "htmlcov"})
SRC_LAYOUT = "src"  # setuptools' name for the folder holding a project's packages
SKIP_TOP_DIRS = frozenset({"build", "dist"})  # setuptools output: copies of the package
_STDLIB = frozenset(sys.stdlib_module_names)

log = logging.getLogger(__name__)

MAX_ALIAS_HOPS = 8  # re-exports and aliases followed for an external name
# (base prefix, base suffix, inherited entry point, the subclass's method it runs)
INHERITED_DISPATCH = (("torch.autograd", ".Function", "apply", "forward"),)
# (base prefix, base suffix, method): frameworks whose ``__call__`` runs a user method.
FRAMEWORK_DISPATCH = (
    ("torch.", ".Module", "forward"),
    ("torch.distributions", ".Transform", "_call"),
    ("keras", ".Layer", "call"),
    ("keras", ".Model", "call"),
)


def list_python_files(root: Path, unreadable: dict[str, str] | None = None) -> list[str]:
    """Repository-relative POSIX paths of the ``.py`` files worth mining, sorted; a dangling
    or looping symlink is skipped, logged and put in ``unreadable`` with why (one odd file
    never stops a repository)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames if _wanted_dir(d) and not (rel == Path(".") and d in SKIP_TOP_DIRS))
        for name in sorted(n for n in filenames if n.endswith(".py")):
            path = (rel / name).as_posix()
            if (Path(dirpath) / name).is_file():  # follows symlinks; False on a dangling link or a loop
                found.append(path)
                continue
            problem = _link_problem(Path(dirpath) / name)
            log.warning("skipped %s: %s", path, problem)
            if unreadable is not None:
                unreadable[path] = problem
    return sorted(found)


def _link_problem(path: Path) -> str:
    try:
        path.stat()
    except OSError as exc:
        return f"unreadable symlink ({exc.strerror})"
    return "not a regular file"


def _wanted_dir(name: str) -> bool:
    return name not in SKIP_DIRS and not name.startswith(".") and not name.endswith(".egg-info")


# ---------------------------------------------------------------- per-file summary


@dataclass(frozen=True, slots=True)
class Decorator:
    name: str  # dotted name of the decorator callable, e.g. "pytest.mark.parametrize"
    args: tuple[str, ...] = ()  # constant string positional arguments (lists flattened)
    kwargs: tuple[tuple[str, str], ...] = ()  # constant keyword arguments, as str()
    # ``parametrize`` only: (argname, dotted names of the values it takes), for the values
    # that are names (classes, functions), written inline or in a module-level list.
    values: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class FunctionInfo:
    name: str
    qualname: str
    class_name: str | None
    lineno: int  # first line, decorators included
    def_lineno: int
    end_lineno: int
    params: tuple[str, ...]
    annotations: tuple[tuple[str, str], ...]  # (param, dotted annotation)
    returns: str | None  # dotted return annotation
    return_elements: tuple[str | None, ...]  # ``-> tuple[Tensor, Kron]``: the class of each element
    return_calls: tuple[str, ...]  # dotted callees whose result is returned or yielded
    # Classes or functions returned as values, bound by an import inside the function
    # (``from .impl import C as _C; return _C``: a guarded optional import).
    return_imports: tuple[ImportRef, ...]
    decorators: tuple[Decorator, ...]


@dataclass(frozen=True, slots=True)
class ClassInfo:
    name: str
    lineno: int
    end_lineno: int
    bases: tuple[str, ...]
    methods: dict[str, FunctionInfo]
    decorators: tuple[Decorator, ...]
    test_disabled: bool  # ``__test__ = False`` in the class body
    method_aliases: dict[str, str]  # ``__rmul__ = __mul__``: the name runs that method


@dataclass(frozen=True, slots=True)
class ImportRef:
    level: int  # 0 for absolute imports
    module: str  # "" for ``from . import x``
    name: str | None  # None for ``import module``


@dataclass(slots=True)
class ModuleSummary:
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    imports: dict[str, ImportRef] = field(default_factory=dict)
    stars: list[ImportRef] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # ``name = other.name``
    factories: dict[str, str] = field(default_factory=dict)  # ``name = make()``: what make returns
    exports: tuple[str, ...] | None = None  # ``__all__``: what a star import takes
    imported_modules: set[str] = field(default_factory=set)  # absolute top-level names
    # Marks on every test of the module, as decorators: ``pytestmark = ...`` and an
    # unconditional top-level ``pytest.skip(..., allow_module_level=True)``.
    marks: tuple[Decorator, ...] = ()
    syntax_error: str | None = None


def summarize_source(source: str) -> ModuleSummary:
    """``ast`` summary of one file; a file that does not parse gets an empty summary."""
    summary = ModuleSummary()
    try:
        tree = parse_ast(source)
    except Unparsable as exc:
        summary.syntax_error = str(exc)
        return summary
    sequences: Sequences = {}
    for node in module_level(tree.body):
        _add_statement(summary, node, sequences)
    summary.marks = tuple(mark for node in tree.body for mark in _module_marks(node))
    return summary


def _module_marks(node: ast.stmt) -> list[Decorator]:
    """Marks one unconditional top-level statement puts on the module's tests."""
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
        values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
        return [_decorator(value, {}) for value in values]
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and any(k.arg == "allow_module_level" for k in node.value.keywords)
    ):
        return [_decorator(node.value, {})]
    return []


def _add_statement(summary: ModuleSummary, node: ast.stmt, sequences: Sequences) -> None:
    """Add one module-level statement; ``sequences``: the module's list literals bound so
    far (a decorator sees the binding of its name at the point of the ``def``)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        summary.functions[node.name] = _function_info(node, None, sequences)
    elif isinstance(node, ast.ClassDef):
        summary.classes[node.name] = _class_info(node, sequences)
    elif isinstance(node, ast.Import):
        for alias in node.names:
            summary.imported_modules.add(alias.name.split(".")[0])
            if alias.asname:  # ``import a.b as c`` binds c to a.b
                summary.imports[alias.asname] = ImportRef(0, alias.name, None)
            else:  # ``import a.b`` binds a
                top = alias.name.split(".")[0]
                summary.imports[top] = ImportRef(0, top, None)
    elif isinstance(node, ast.ImportFrom):
        _add_from_import(summary, node)
    elif _assigns_all(node):
        summary.exports = _exports(summary, node)
    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        target = dotted_name(node.value)
        if target and isinstance(node.value, ast.Name | ast.Attribute):
            summary.aliases[node.targets[0].id] = target
        elif target and isinstance(node.value, ast.Call) and not node.value.args and not node.value.keywords:
            summary.factories[node.targets[0].id] = target
        _bind_sequence(sequences, node.targets[0].id, node.value)


def _assigns_all(node: ast.stmt) -> bool:
    target = node.target if isinstance(node, ast.AugAssign | ast.AnnAssign) else None
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    return isinstance(target, ast.Name) and target.id == "__all__"


def _exports(summary: ModuleSummary, node: ast.stmt) -> tuple[str, ...] | None:
    """``__all__ = [...]`` sets the exported names, ``__all__ += [...]`` extends them; a
    computed ``__all__`` is unknown (None: star imports then take the public names)."""
    value = getattr(node, "value", None)
    if not isinstance(value, ast.List | ast.Tuple):
        return None
    names = tuple(_constant_strings(value))
    if isinstance(node, ast.AugAssign):
        return None if summary.exports is None else summary.exports + names
    return names


def _add_from_import(summary: ModuleSummary, node: ast.ImportFrom) -> None:
    module = node.module or ""
    if node.level == 0:
        summary.imported_modules.add(module.split(".")[0])
    for alias in node.names:
        if alias.name == "*":
            summary.stars.append(ImportRef(node.level, module, None))
        else:
            summary.imports[alias.asname or alias.name] = ImportRef(node.level, module, alias.name)


def _class_info(node: ast.ClassDef, sequences: Sequences) -> ClassInfo:
    methods: dict[str, FunctionInfo] = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and not _extends_property(item, methods):
            methods[item.name] = _function_info(item, node.name, sequences)
    return ClassInfo(
        name=node.name,
        lineno=min([node.lineno] + [d.lineno for d in node.decorator_list]),
        end_lineno=node.end_lineno or node.lineno,
        bases=tuple(b for b in map(dotted_name, node.bases) if b),
        methods=methods,
        decorators=tuple(_decorator(d, sequences) for d in node.decorator_list),
        test_disabled=_sets_test_false(node.body),
        method_aliases=_method_aliases(node.body, methods),
    )


def _method_aliases(body: list[ast.stmt], methods: dict[str, FunctionInfo]) -> dict[str, str]:
    aliases = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in methods:
            aliases.update((t.id, stmt.value.id) for t in stmt.targets if isinstance(t, ast.Name))
    return aliases


def _extends_property(node: ast.FunctionDef | ast.AsyncFunctionDef, methods: dict[str, FunctionInfo]) -> bool:
    """``@p.setter``/``@p.deleter`` after the getter ``p``: the property stays the getter
    (what a read runs and what its return annotation types)."""
    accessors = {f"{node.name}.setter", f"{node.name}.deleter"}
    return node.name in methods and any(dotted_name(d) in accessors for d in node.decorator_list)


def _sets_test_false(body: list[ast.stmt]) -> bool:
    return any(
        isinstance(s, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__test__" for t in s.targets)
        and isinstance(s.value, ast.Constant)
        and not s.value.value
        for s in body
    )


def _function_info(
    node: ast.FunctionDef | ast.AsyncFunctionDef, class_name: str | None, sequences: Sequences
) -> FunctionInfo:
    args = node.args
    every = args.posonlyargs + args.args + args.kwonlyargs
    annotations = tuple((a.arg, ann) for a in every if a.annotation and (ann := annotation_name(a.annotation)))
    return FunctionInfo(
        name=node.name,
        qualname=f"{class_name}.{node.name}" if class_name else node.name,
        class_name=class_name,
        lineno=min([node.lineno] + [d.lineno for d in node.decorator_list]),
        def_lineno=node.lineno,
        end_lineno=node.end_lineno or node.lineno,
        params=tuple(a.arg for a in every),
        annotations=annotations,
        returns=annotation_name(node.returns) if node.returns else None,
        return_elements=tuple_annotation(node.returns) if node.returns else (),
        return_calls=_return_calls(node),
        return_imports=_return_imports(node),
        decorators=tuple(_decorator(d, sequences) for d in node.decorator_list),
    )


def _own_statements(body: list[ast.stmt]):
    """Statements of a function body, nested blocks included, nested definitions not
    (statements only: walking every expression node costs several times more)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _own_statements(getattr(stmt, name, []))
        for block in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
            yield from _own_statements(block.body)


def _return_calls(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """Callees whose result the function returns: ``return C(...)`` or ``x = C(...); return x``."""
    bound: dict[str, str] = {}
    returned: list[ast.expr] = []
    for stmt in _own_statements(node.body):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            callee = dotted_name(stmt.value.func)
            for target in stmt.targets:
                if isinstance(target, ast.Name) and callee:
                    bound[target.id] = callee
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            returned.append(stmt.value)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield) and stmt.value.value is not None:
            returned.append(stmt.value.value)
    calls = []
    for value in returned:
        if isinstance(value, ast.Call) and (callee := dotted_name(value.func)):
            calls.append(callee)
        elif isinstance(value, ast.Name) and value.id in bound:
            calls.append(bound[value.id])
    return tuple(dict.fromkeys(calls))


def _return_imports(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[ImportRef, ...]:
    """Imports inside the function whose bound name it returns."""
    imported: dict[str, ImportRef] = {}
    returned: list[ImportRef] = []
    for stmt in _own_statements(node.body):
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                imported[alias.asname or alias.name] = ImportRef(stmt.level, stmt.module or "", alias.name)
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Name) and stmt.value.id in imported:
            returned.append(imported[stmt.value.id])
    return tuple(returned)


def _decorator(node: ast.expr, sequences: Sequences) -> Decorator:
    if not isinstance(node, ast.Call):
        return Decorator(dotted_name(node) or "")
    args: list[str] = []
    for arg in node.args:
        args.extend(_constant_strings(arg))
    kwargs = tuple((k.arg, str(k.value.value)) for k in node.keywords if k.arg and isinstance(k.value, ast.Constant))
    name = dotted_name(node.func) or ""
    values = _parametrize_values(node, sequences) if name.rpartition(".")[2] == "parametrize" else ()
    return Decorator(name, tuple(args), kwargs, values)


# A list literal's elements as ``parametrize`` reads them: a dotted name, a tuple of
# such elements, or None (no name).
Row = str | tuple["Row", ...] | None
Sequences = dict[str, tuple[Row, ...]]
_PRODUCT = frozenset({"product", "itertools.product"})
_MAX_PRODUCT = 10_000  # rows of a ``product`` worth reading (pytest would run that many cases)


def _parametrize_values(node: ast.Call, sequences: Sequences) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``parametrize("a, b", [(A, B), pytest.param(C, D)])``: the names each argname takes
    (``indirect`` values go to fixtures, not to the test's arguments)."""
    if len(node.args) < 2 or any(k.arg == "indirect" for k in node.keywords):
        return ()
    argnames = [n.strip() for arg in _constant_strings(node.args[0]) for n in arg.split(",") if n.strip()]
    rows = _sequence_rows(node.args[1], sequences) or ()
    found = []
    for index, argname in enumerate(argnames):
        if len(argnames) == 1:
            found += _argument_values(argname, list(rows))
        else:
            found += _argument_values(
                argname, [row[index] for row in rows if isinstance(row, tuple) and len(row) == len(argnames)]
            )
    return tuple(found)


def _argument_values(argname: str, items: list[Row]) -> list[tuple[str, tuple[str, ...]]]:
    """The names an argument takes, and for tuple values those of each position, as
    ``argname[i]`` (``parametrize("pair", [(A, B)])`` then ``a, b = pair``)."""
    names = tuple(dict.fromkeys(item for item in items if isinstance(item, str)))
    found = [(argname, names)] if names else []
    tuples = [item for item in items if isinstance(item, tuple)]
    for position in range(max(map(len, tuples), default=0)):
        found += _argument_values(f"{argname}[{position}]", [t[position] for t in tuples if position < len(t)])
    return found


def _bind_sequence(sequences: Sequences, name: str, value: ast.expr) -> None:
    rows = _sequence_rows(value, sequences)
    if rows is None:
        sequences.pop(name, None)  # rebound to something else
    else:
        sequences[name] = rows


def _sequence_rows(node: ast.expr, sequences: Sequences) -> tuple[Row, ...] | None:
    """Elements of a list or tuple literal, a module-level name bound to one, or a sum of
    those; None for anything else (a comprehension, a call)."""
    if isinstance(node, ast.List | ast.Tuple):
        return tuple(map(_row, node.elts))
    if isinstance(node, ast.Name):
        return sequences.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _sequence_rows(node.left, sequences), _sequence_rows(node.right, sequences)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.Call) and dotted_name(node.func) in _PRODUCT and not node.keywords:
        return _product_rows([_sequence_rows(arg, sequences) for arg in node.args])
    return None


def _product_rows(parts: list[tuple[Row, ...] | None]) -> tuple[Row, ...] | None:
    """``itertools.product(A, B)``: a row per combination (a tuple of one element of each)."""
    known = [p for p in parts if p is not None]
    if not known or len(known) < len(parts) or math.prod(map(len, known)) > _MAX_PRODUCT:
        return None
    return tuple(itertools.product(*known))


def _row(node: ast.expr) -> Row:
    if isinstance(node, ast.Call) and (dotted_name(node.func) or "").rpartition(".")[2] == "param":
        parts = tuple(map(_row, node.args))  # ``pytest.param(A, B, marks=...)``
        return parts[0] if len(parts) == 1 else parts
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(map(_row, node.elts))
    return dotted_name(node) if isinstance(node, ast.Name | ast.Attribute) else None


def _constant_strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.List | ast.Tuple):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


_TUPLES = frozenset({"tuple", "Tuple", "typing.Tuple"})


def dotted_name(node: ast.expr | None) -> str | None:
    """``a.b.c`` for Name/Attribute chains (and the callee of a call), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call):
        return dotted_name(node.func)
    return None


def tuple_annotation(node: ast.expr) -> tuple[str | None, ...]:
    """Element classes of ``tuple[A, B]``/``Tuple[A, B]`` (string annotations too); () else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return tuple_annotation(ast.parse(node.value, mode="eval").body)
        except PARSE_ERRORS:
            return ()
    if isinstance(node, ast.Subscript) and dotted_name(node.value) in _TUPLES and isinstance(node.slice, ast.Tuple):
        return tuple(map(annotation_name, node.slice.elts))
    return ()


def annotation_name(node: ast.expr) -> str | None:
    """The class an annotation names: ``C``, ``"C"``, ``m.C``, ``Optional[C]``, ``C | None``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return annotation_name(ast.parse(node.value, mode="eval").body)
        except PARSE_ERRORS:
            return None
    if isinstance(node, ast.Subscript) and dotted_name(node.value) in ("Optional", "typing.Optional"):
        return annotation_name(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return annotation_name(node.left) or annotation_name(node.right)
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    return dotted_name(node) if isinstance(node, ast.Name | ast.Attribute) else None


# ---------------------------------------------------------------- the table


class Symbol(NamedTuple):  # a tuple: hashed in C, as the call graph hashes millions of them
    kind: str  # "module" | "function" | "class"
    path: str
    qualname: str = ""

    @property
    def key(self) -> str:
        """``path:qualname``, the repository-wide name used in call records."""
        return f"{self.path}:{self.qualname}"


class SymbolTable:
    """Name resolution over the summaries of every file of one checkout."""

    def __init__(self, summaries: dict[str, ModuleSummary]):
        self.summaries = summaries
        self._package_dirs = {p.rpartition("/")[0] for p in summaries if p.endswith("__init__.py")}
        self.module_name: dict[str, str] = {}
        self.basedir: dict[str, str] = {}
        self._by_name: dict[str, str] = {}
        for path in sorted(summaries, key=lambda p: (p.count("/"), p)):
            self._register(path)
        self._mro = cache(self._compute_mro)

    # ---- module naming

    def _register(self, path: str) -> None:
        parts = path[: -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        start = len(parts) - 1 if not path.endswith("__init__.py") else len(parts)
        while start > 0 and "/".join(parts[:start]) in self._package_dirs:
            start -= 1
        # ``start`` indexes the top package; its parent is the folder Python puts on sys.path.
        self.basedir[path] = "/".join(parts[:start])
        canonical = ".".join(parts[start:])
        self.module_name[path] = canonical
        for begin in range(start, -1, -1):  # longer names: namespace packages up to the root
            name = ".".join(parts[begin:])
            if not name or not all(p.isidentifier() for p in parts[begin:]):
                continue
            if begin == start and "." not in name and name in _STDLIB:
                continue
            self._by_name.setdefault(name, path)
        if start == 0 and parts[0] == SRC_LAYOUT and len(parts) > 1:
            # ``src/`` is the folder an installed src layout puts on sys.path, even with a stray
            # ``src/__init__.py`` (sparseml's): its tests import ``sparseml``, never ``src.sparseml``.
            self._by_name.setdefault(".".join(parts[1:]), path)

    def module_path(self, module: str, basedir: str | None = None) -> str | None:
        """File of a module, trying the importer's own sys.path entry first."""
        if basedir is not None:
            stem = f"{basedir}/{module.replace('.', '/')}" if basedir else module.replace(".", "/")
            for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
                if candidate in self.summaries:
                    return candidate
        return self._by_name.get(module)

    # ---- resolution

    def import_module(self, path: str, ref: ImportRef) -> str:
        """Absolute dotted name of the module an import statement imports (its ``from`` part)."""
        if ref.level == 0:
            return ref.module
        package = self.module_name.get(path, "").split(".")
        if not path.endswith("__init__.py"):
            package = package[:-1]
        package = package[: len(package) - ref.level + 1]
        return ".".join(p for p in [*package, *ref.module.split(".")] if p)

    def import_target(self, path: str, ref: ImportRef) -> str:
        """Absolute dotted name an import binding refers to."""
        base = self.import_module(path, ref)
        return f"{base}.{ref.name}" if ref.name and base else (ref.name or base)

    def resolve(self, path: str, dotted: str) -> Symbol | None:
        """Resolve a dotted name as written in file ``path`` (module scope)."""
        return self._in_module(path, dotted.split("."), frozenset())

    def resolve_global(self, dotted: str, basedir: str | None = None, seen: frozenset = frozenset()) -> Symbol | None:
        """Resolve an absolute dotted name as Python evaluates ``a.b.c``: import the top
        module, then take attributes; None when it leaves the repository (numpy, stdlib)."""
        parts = dotted.split(".")
        for cut in range(1, len(parts) + 1):  # shortest first: namespace packages have no file
            path = self.module_path(".".join(parts[:cut]), basedir)
            if path is not None:
                rest = parts[cut:]
                return self._in_module(path, rest, seen) if rest else Symbol("module", path)
        return None

    def resolve_import(
        self, path: str, ref: ImportRef, rest: list[str], seen: frozenset = frozenset()
    ) -> Symbol | None:
        """What ``bound.rest`` names, ``bound`` being bound by import ``ref`` in file ``path``.

        ``import m`` binds the module m; ``from m import n`` binds m's attribute n (what m's
        ``__init__`` binds under that name) and only failing that its submodule m.n."""
        module = self.module_path(self.import_module(path, ref), self.basedir[path])
        if module is None:
            return None
        if ref.name is None:
            return self._in_module(module, rest, seen) if rest else Symbol("module", module)
        if module == path:  # ``from . import sub`` in a package's own ``__init__``
            return self._submodule(path, [ref.name, *rest], seen)
        return self._in_module(module, [ref.name, *rest], seen)

    def _in_module(self, path: str, parts: list[str], seen: frozenset) -> Symbol | None:
        """``module.parts`` in Python's order: the module's own bindings (definitions,
        imports, aliases, star imports), then, for a package, its submodules."""
        if (path, tuple(parts)) in seen or path not in self.summaries:
            return None
        seen = seen | {(path, tuple(parts))}
        summary = self.summaries[path]
        head, rest = parts[0], parts[1:]
        if head in summary.classes:
            return self._in_class(Symbol("class", path, head), rest)
        if head in summary.functions:
            return None if rest else Symbol("function", path, head)
        if head in summary.imports:
            return self.resolve_import(path, summary.imports[head], rest, seen)
        if head in summary.aliases:
            return self._in_module(path, summary.aliases[head].split(".") + rest, seen)
        if head in summary.factories:
            return self._factory_value(path, summary.factories[head], rest, seen)
        for star in summary.stars:
            star_path = self.module_path(self.import_module(path, star), self.basedir[path])
            if star_path and self._exports(star_path, head) and (found := self._in_module(star_path, parts, seen)):
                return found
        return self._submodule(path, parts, seen)

    def _factory_value(self, path: str, callee: str, rest: list[str], seen: frozenset) -> Symbol | None:
        """``name = make()`` where ``make`` returns an imported class or function."""
        factory = self._in_module(path, callee.split("."), seen)
        info = self.function_info(factory) if factory is not None and factory.kind == "function" else None
        for ref in info.return_imports if info and factory else ():
            if (found := self.resolve_import(factory.path, ref, rest, seen)) is not None:
                return found
        return None

    def _exports(self, path: str, name: str) -> bool:
        """Whether ``from module import *`` binds ``name``: ``__all__``, else public names."""
        exports = self.summaries[path].exports
        return name in exports if exports is not None else not name.startswith("_")

    def _submodule(self, path: str, parts: list[str], seen: frozenset) -> Symbol | None:
        """``package.parts`` through the package's submodule ``parts[0]``."""
        if not path.endswith("__init__.py"):
            return None
        module = self.module_path(f"{self.module_name[path]}.{parts[0]}", self.basedir[path])
        if module is None:
            return None
        return self._in_module(module, parts[1:], seen) if parts[1:] else Symbol("module", module)

    def _in_class(self, cls: Symbol, rest: list[str]) -> Symbol | None:
        if not rest:
            return cls
        method = self.method(cls, rest[0])
        return method if method is not None and len(rest) == 1 else None

    def absolute_name(self, path: str, dotted: str, depth: int = 0) -> str:
        """Expand a name's first component through the file's imports and module-level
        aliases, into the repository module it names when that one aliases it in turn
        (kornia's ``from ._backend import Module``, where ``Module = torch.nn.Module``)."""
        head, _, rest = dotted.partition(".")
        summary = self.summaries.get(path)
        if summary is None or depth > MAX_ALIAS_HOPS:
            return dotted
        if head in summary.aliases:
            return self.absolute_name(path, ".".join(filter(None, (summary.aliases[head], rest))), depth + 1)
        ref = summary.imports.get(head)
        if ref is None:
            return dotted
        target = self.import_target(path, ref)
        module, _, name = target.rpartition(".")
        source = self.module_path(module, self.basedir.get(path)) if module else None
        held = self.summaries.get(source) if source is not None and source != path else None
        if held is not None and (name in held.aliases or name in held.imports):
            target = self.absolute_name(source, name, depth + 1)
        return f"{target}.{rest}" if rest else target

    # ---- classes

    def class_info(self, cls: Symbol) -> ClassInfo:
        return self.summaries[cls.path].classes[cls.qualname]

    def function_info(self, fn: Symbol) -> FunctionInfo | None:
        summary = self.summaries.get(fn.path)
        if summary is None:
            return None
        owner, _, name = fn.qualname.rpartition(".")
        if owner:
            cls = summary.classes.get(owner)
            return cls.methods.get(name) if cls else None
        return summary.functions.get(name)

    def mro(self, cls: Symbol) -> tuple[Symbol, ...]:
        """The class and its repository bases in Python's order (C3 linearization: in a
        diamond ``C(A, B)``, ``A(Base)``, ``B(Base)`` a method of B comes before Base's)."""
        return self._mro(cls)

    def _compute_mro(self, cls: Symbol, _active: frozenset = frozenset()) -> tuple[Symbol, ...]:
        bases = [b for b in self.repo_bases(cls) if b not in _active | {cls}]
        lines = [list(self._compute_mro(b, _active | {cls})) for b in bases]
        merged = _c3_merge([*lines, bases])
        if merged is None:  # an order Python itself rejects: depth-first, no duplicates
            merged = list(dict.fromkeys(item for line in lines for item in line))
        return (cls, *merged)

    def repo_bases(self, cls: Symbol) -> list[Symbol]:
        """The class's direct bases that are repository classes, in declaration order."""
        found = []
        for base in self.class_info(cls).bases:
            resolved = self.resolve(cls.path, base)
            if resolved is not None and resolved.kind == "class":
                found.append(resolved)
        return found

    def external_bases(self, cls: Symbol) -> set[str]:
        """Absolute names of bases outside the repository, over the whole MRO."""
        names = set()
        for item in self.mro(cls):
            for base in self.class_info(item).bases:
                resolved = self.resolve(item.path, base)
                if resolved is None:
                    names.add(self.absolute_name(item.path, base))
        return names

    def method(self, cls: Symbol, name: str) -> Symbol | None:
        """The method ``name`` as found through the class's repository MRO (an alias in
        the class body names the method it is bound to)."""
        for item in self.mro(cls):
            info = self.class_info(item)
            if name in info.methods:
                return Symbol("function", item.path, f"{item.qualname}.{name}")
            if name in info.method_aliases:
                return Symbol("function", item.path, f"{item.qualname}.{info.method_aliases[name]}")
        return self._inherited_dispatch(cls, name)

    def instance_call(self, cls: Symbol) -> set[Symbol]:
        """``obj(...)``: the class's ``__call__``, and the method a framework's ``__call__``
        dispatches to (torch ``nn.Module`` → ``forward``, Keras ``Layer`` → ``call``), which a
        repository ``__call__`` on the way reaches through ``super().__call__`` (kornia's
        ``ImageModule.__call__`` converts the inputs, then torch runs ``forward``)."""
        found = {own} if (own := self.method(cls, "__call__")) is not None else set()
        for base in self.external_bases(cls):
            for prefix, suffix, method in FRAMEWORK_DISPATCH:
                if base.startswith(prefix) and base.endswith(suffix) and (target := self.method(cls, method)):
                    found.add(target)
        return found

    def _inherited_dispatch(self, cls: Symbol, name: str) -> Symbol | None:
        """A framework method the class inherits only to run one of its own (``apply`` of a
        torch ``autograd.Function`` runs its ``forward``)."""
        for prefix, suffix, entry, target in INHERITED_DISPATCH:
            if name == entry and any(b.startswith(prefix) and b.endswith(suffix) for b in self.external_bases(cls)):
                return self.method(cls, target)
        return None

    def return_classes(self, fn: Symbol, depth: int = 0) -> set[Symbol]:
        """Classes a library function returns instances of (annotation or ``return C(...)``)."""
        info = self.function_info(fn)
        if info is None or depth > 3:
            return set()
        found: set[Symbol] = set()
        for name in ([info.returns] if info.returns else []) + list(info.return_calls):
            target = self.resolve(fn.path, name)
            if name == "cls" and info.class_name:  # ``return cls(...)`` in a classmethod
                target = Symbol("class", fn.path, info.class_name)
            if target is not None and target.kind == "class":
                found.add(target)
            elif target is not None and target.kind == "function" and name not in (info.returns,):
                found |= self.return_classes(target, depth + 1)
        return found


def _c3_merge(lines: list[list[Symbol]]) -> list[Symbol] | None:
    """C3 merge: repeatedly take the first head that is in no other line's tail; None
    when no head qualifies (an inconsistent hierarchy)."""
    lines = [list(line) for line in lines if line]
    merged: list[Symbol] = []
    while lines:
        head = next((line[0] for line in lines if not any(line[0] in other[1:] for other in lines)), None)
        if head is None:
            return None
        merged.append(head)
        lines = [rest for line in lines if (rest := [item for item in line if item != head])]
    return merged
