"""Static screen of candidate code before it runs (defence in depth against forged verdicts).

The candidate runs inside the pytest process that reports its verdict, so a candidate
written against our harness could, in principle, silence the reporting plugin and write a
complete fake event stream itself: nothing inside one process can prevent that. The
dynamic checks (canary tests, event sequencing, pytest-internals and file-integrity
checks) catch every generic attempt; this screen refuses, before anything runs, the
primitives such a targeted forgery needs: raw file-descriptor writes, process-level exits
and signals, frame and module introspection, the test framework and our own modules, and
dynamic code execution that would hide any of them. Task functions of deep-learning
libraries have no use for these, so a hit is recorded as ``sandbox_violation`` with the
offending use and line, and the evidence is kept like any other verdict.

Aliases are followed (``import os as o; o._exit``), and so are names the target module
already binds (a candidate may use its module's ``np`` without importing it). It also
refuses the ways to fake a test's comparison: a class whose ``__eq__``/``__ne__``/
``__bool__``/``__hash__`` returns a constant, a class that answers for numpy's or torch's
operations on its objects (``__array_ufunc__``, ``__torch_function__``), and assignments to
attributes of imported modules (``np.testing.assert_allclose = ...``). What the original
module itself imports or does is allowed (the gold candidate passes through this screen too).

It is a screen, not a proof: a file descriptor held in a variable (``open(fd, "w")``) or
a path built at run time is not recognised; the grader's cross-checks and the container
are the other layers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import lru_cache

from dlbench.harness.protocol import OPERATION_PROTOCOLS
from dlbench.parsing import PARSE_ERRORS, imported_modules, parse_ast

# Modules a task function has no business importing: they reach the test process itself,
# its descriptors, or code by name.
FORBIDDEN_MODULES = frozenset(
    {
        "ctypes", "gc", "_pytest", "pytest", "pluggy", "dlbench", "dlbench_plugin", "dlbench_protocol", "faulthandler", "signal",
        "resource", "posix", "importlib", "io", "_io", "builtins", "marshal", "pickle", "shelve", "subprocess",
        "socket", "inspect", "types", "code", "codeop", "runpy", "threading", "_thread", "multiprocessing", "pty",
        "fcntl", "mmap", "sysconfig", "site", "zipimport", "pkgutil", "linecache", "mock",
    }
)  # fmt: skip
# Submodules refused where their package is not: objects equal to anything (``mock.ANY``).
FORBIDDEN_SUBMODULES = frozenset({"unittest.mock"})
# ``module.attribute`` uses that write to or end the reporting channel or process.
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        ("os", "write"), ("os", "writev"), ("os", "pwrite"), ("os", "dup"), ("os", "dup2"), ("os", "fdopen"),
        ("os", "close"), ("os", "closerange"), ("os", "kill"), ("os", "killpg"), ("os", "_exit"), ("os", "abort"),
        ("os", "openpty"), ("os", "set_inheritable"), ("os", "open"), ("os", "fork"), ("os", "execv"),
        ("os", "execve"), ("os", "execvp"), ("os", "system"), ("os", "popen"), ("os", "spawnv"), ("os", "posix_spawn"),
        ("sys", "modules"), ("sys", "_getframe"), ("sys", "settrace"),
        ("sys", "setprofile"), ("sys", "exit"), ("sys", "meta_path"), ("sys", "path_hooks"), ("builtins", "open"),
        # the calling test's source line, where its expected value is written
        ("traceback", "extract_stack"), ("traceback", "walk_stack"), ("traceback", "format_stack"),
        ("traceback", "print_stack"), ("traceback", "StackSummary"), ("unittest", "mock"),
    }
)  # fmt: skip
FORBIDDEN_DOTTED = frozenset(f"{m}.{a}" for m, a in FORBIDDEN_ATTRIBUTES)  # as ``from os import write`` binds it
# Builtins that execute or look up code by name, hiding any of the above from this screen.
FORBIDDEN_NAMES = frozenset(
    {"eval", "exec", "compile", "__import__", "globals", "breakpoint", "__builtins__", "__loader__", "__spec__"}
)
# Attributes that climb from any object to frames, globals or every class (``().__class__.__base__.__subclasses__()``).
FORBIDDEN_DUNDERS = frozenset(
    {"__subclasses__", "__globals__", "__builtins__", "__code__", "__closure__", "__mro__", "__bases__", "__base__",
     "f_back", "f_globals", "f_locals", "f_builtins", "gi_frame", "cr_frame", "ag_frame", "tb_frame", "__loader__"}
)  # fmt: skip
FORBIDDEN_TEXT = ("/proc/", "/dev/fd", "_dlbench", "PYTEST_")
# ``getattr(os, name)`` and friends would reach a forbidden attribute by a computed name.
REFLECTION = frozenset({"getattr", "setattr", "delattr", "vars"})
GUARDED_MODULES = frozenset({"os", "sys", "builtins"})
# Dunders a test's ``==``/``assert`` consults: returning a constant makes any comparison succeed.
COMPARISON_DUNDERS = frozenset({"__eq__", "__ne__", "__bool__", "__hash__", "__len__", "__contains__"})
BINARY_COMPARISONS = frozenset({"__eq__", "__ne__"})
MAX_CODE_BYTES = 100_000


def screen(code: str, original: str = "") -> list[str]:
    """Forbidden uses in ``code`` as ``"what (line N)"``; empty when it may run.

    ``original`` is the target module's source: the modules it imports, the names it binds
    and the uses it already makes are allowed. Code that does not parse is left to the
    patcher, which reports the syntax error."""
    try:
        tree = parse_ast(code, MAX_CODE_BYTES)
    except PARSE_ERRORS:
        return []
    base_modules, base_aliases, allowed = _original_facts(original)
    aliases = base_aliases | _aliases(tree)
    found = [f"{what} (line {line})" for what, line in _findings(tree, aliases, base_modules) if what not in allowed]
    return sorted(set(found), key=found.index)


@lru_cache(maxsize=32)
def _original_facts(original: str) -> tuple[frozenset[str], dict[str, str], frozenset[str]]:
    """(modules it imports, names its imports bind, forbidden uses it makes itself): once per module text."""
    try:
        base = parse_ast(original, MAX_CODE_BYTES) if original else ast.Module(body=[], type_ignores=[])
    except PARSE_ERRORS:
        base = ast.Module(body=[], type_ignores=[])
    aliases = _aliases(base)
    return imported_modules(base), aliases, frozenset(what for what, _ in _findings(base, aliases, frozenset()))


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name → what it was imported as (``o`` → ``os``, ``w`` → ``os.write``, ``os`` → ``os`` for ``import os.path``)."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                found[a.asname or _root(a.name)] = a.name if a.asname else _root(a.name)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                found[a.asname or a.name] = f"{node.module}.{a.name}"
    return found


def _findings(tree: ast.Module, aliases: dict[str, str], exempt: frozenset[str]) -> Iterator[tuple[str, int]]:
    for node in ast.walk(tree):
        for what in _forbidden(node, aliases, exempt):
            yield what, getattr(node, "lineno", 0)


def _forbidden(node: ast.AST, aliases: dict[str, str], exempt: frozenset[str]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (f"import {a.name}" for a in node.names if _refused_module(a.name, exempt))
    elif isinstance(node, ast.ImportFrom):
        yield from _import_from(node, exempt)
    elif isinstance(node, ast.Attribute):
        yield from _attribute(node, aliases)
    elif isinstance(node, ast.Call):
        yield from _call(node, aliases)
    elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
        yield node.id
    elif isinstance(node, ast.Name) and aliases.get(node.id) in FORBIDDEN_DOTTED:
        yield aliases[node.id]
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield from (f"string {marker!r}" for marker in FORBIDDEN_TEXT if marker in node.value)
    elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        yield from _module_assignment(node, aliases)
    elif isinstance(node, ast.ClassDef):
        yield from _constant_comparisons(node)
        yield from _blind_comparisons(node)
        yield from _operations_taken_over(node)


def _import_from(node: ast.ImportFrom, exempt: frozenset[str]) -> Iterator[str]:
    if not node.module or node.level:
        return
    if _refused_module(node.module, exempt):
        yield f"from {node.module} import"
    elif any(_refused_module(f"{node.module}.{a.name}", exempt) for a in node.names):
        yield f"from {node.module} import {', '.join(a.name for a in node.names)}"
    elif node.module in GUARDED_MODULES:
        for a in node.names:
            if a.name == "*" or (node.module, a.name) in FORBIDDEN_ATTRIBUTES:
                yield f"{node.module}.{a.name}"


def _refused_module(name: str, exempt: frozenset[str]) -> bool:
    """Forbidden, unless the original module imports it (or a module it belongs to)."""
    refused = _root(name) in FORBIDDEN_MODULES or any(
        name == m or name.startswith(m + ".") for m in FORBIDDEN_SUBMODULES
    )
    if not refused:
        return False
    return not any(name == e or name.startswith(e + ".") for e in exempt)


def _attribute(node: ast.Attribute, aliases: dict[str, str]) -> Iterator[str]:
    if node.attr in FORBIDDEN_DUNDERS:
        yield f".{node.attr}"
    if node.attr == "__dict__" and _imported_root(node.value, aliases):
        yield f"the namespace of module {_dotted(node.value)}"
    module = _module_of(node.value, aliases)
    if module is not None and (module, node.attr) in FORBIDDEN_ATTRIBUTES:
        yield f"{module}.{node.attr}"


def _call(node: ast.Call, aliases: dict[str, str]) -> Iterator[str]:
    if any(k.arg == "closefd" for k in node.keywords):
        yield "closefd"
    name = node.func.id if isinstance(node.func, ast.Name) else None
    if name == "open" and node.args and _looks_like_fd(node.args[0]):
        yield "open(<file descriptor>)"
    if name in REFLECTION and node.args:
        module = _module_of(node.args[0], aliases)
        if module in GUARDED_MODULES:
            yield f"{name}({module}, ...)"
        elif name in {"setattr", "delattr", "vars"} and _imported_root(node.args[0], aliases):
            yield f"{name} on module {_dotted(node.args[0])}"
    if name == "type" and len(node.args) == 3 and _defines_comparison(node.args[2]):
        yield "type(...) builds a class with comparison methods"


def _looks_like_fd(arg: ast.expr) -> bool:
    """An int constant (or arithmetic of them), anything's ``.fileno()``, or an attribute named
    like a descriptor (``plugin._FD``: the report pipe's number is no longer fixed, a forger
    reads it where the plugin keeps it)."""
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, int)
    if isinstance(arg, (ast.BinOp, ast.UnaryOp)):
        return all(_looks_like_fd(a) for a in ast.iter_child_nodes(arg) if isinstance(a, ast.expr))
    return any(
        isinstance(n, ast.Attribute) and (n.attr == "fileno" or n.attr.lower().endswith("fd")) for n in ast.walk(arg)
    )


def _module_assignment(node: ast.AST, aliases: dict[str, str]) -> Iterator[str]:
    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
    for target in targets:
        for sub in ast.walk(target):
            if (
                isinstance(sub, ast.Attribute)
                and isinstance(sub.ctx, (ast.Store, ast.Del))
                and _imported_root(sub, aliases)
            ):
                yield f"assignment to module attribute {_dotted(sub)}"


def _constant_comparisons(node: ast.ClassDef) -> Iterator[str]:
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in COMPARISON_DUNDERS and _returns_constant(stmt):
            yield f"{node.name}.{stmt.name} returns a constant"
        elif (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Lambda)
            and isinstance(stmt.value.body, ast.Constant)
        ):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name) and t.id in COMPARISON_DUNDERS]
            yield from (f"{node.name}.{n} returns a constant" for n in names)


def _defines_comparison(namespace: ast.expr) -> bool:
    """A class namespace (dict literal or ``dict(...)``) with a key among ``COMPARISON_DUNDERS``."""
    if isinstance(namespace, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value in COMPARISON_DUNDERS for k in namespace.keys)
    if isinstance(namespace, ast.Call):
        return any(k.arg in COMPARISON_DUNDERS for k in namespace.keywords)
    return True  # a namespace built elsewhere: what it holds cannot be told here


def _operations_taken_over(node: ast.ClassDef) -> Iterator[str]:
    """A class answering for numpy's or torch's operations on its objects (``OPERATION_PROTOCOLS``)."""
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [stmt.name]
        else:
            names = [t.id for t in getattr(stmt, "targets", ()) if isinstance(t, ast.Name)]
        yield from (
            f"{node.name} takes over numpy's or torch's operations ({n})" for n in names if n in OPERATION_PROTOCOLS
        )


def _blind_comparisons(node: ast.ClassDef) -> Iterator[str]:
    """``__eq__``/``__ne__`` that never look at the other operand: equal (or not) to anything,
    whatever the expression (``return self is self``, ``return not False``)."""
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in BINARY_COMPARISONS and _ignores_other(stmt.args, stmt):
            yield f"{node.name}.{stmt.name} ignores the other operand"
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name) and t.id in BINARY_COMPARISONS]
            if names and _ignores_other(stmt.value.args, stmt.value.body):
                yield from (f"{node.name}.{n} ignores the other operand" for n in names)


def _ignores_other(args: ast.arguments, body: ast.AST) -> bool:
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    if len(params) < 2 or args.vararg or args.kwarg:
        return len(params) < 2 and not args.vararg
    other = params[1]
    return not any(isinstance(n, ast.Name) and n.id == other for n in ast.walk(body))


def _returns_constant(func: ast.FunctionDef) -> bool:
    """Every ``return`` of ``func`` itself (not of nested functions) returns a constant."""
    returns, stack = [], list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            returns.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return bool(returns) and all(isinstance(r.value, ast.Constant) for r in returns)


def _module_of(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """The module a bare name stands for (through its import alias), else None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id if node.id in GUARDED_MODULES else None)
    return None


def _imported_root(node: ast.expr, aliases: dict[str, str]) -> bool:
    """``node`` is ``name.a.b`` (or ``name``) where ``name`` was bound by an import."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id in aliases


def _dotted(node: ast.expr) -> str:
    try:
        return ast.unparse(node)[:80]
    except (ValueError, RecursionError):
        return "?"


def _root(module: str) -> str:
    return module.split(".", 1)[0]
