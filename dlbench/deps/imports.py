"""Third-party modules a project's tests import, and the distributions that provide them.

The unconditional module-level imports of test files and conftests count, and so do
``pytest.importorskip("name")`` calls. Standard-library modules and the project's own
modules (top-level names in its root, ``src/`` and the folders of its tests) are left out.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from pathlib import PurePosixPath

from dlbench.deps.declared import canonical_name
from dlbench.deps.tree import SourceTree
from dlbench.parsing import Unparsable, parse_ast
from dlbench.testfiles import is_test_support_file


@cache
def import_name_table() -> dict[str, str]:
    """Import name → distribution where the two differ (``dlbench/deps/data/import_names.tsv``)."""
    text = resources.files("dlbench.deps").joinpath("data/import_names.tsv").read_text()
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return {module: dist for module, dist in rows}


def distribution_for(module: str) -> str:
    """The distribution that provides top-level ``module``: by table, else by its own name,
    a private module's without its underscores (``_jsonnet`` is the jsonnet distribution's
    extension: as ``-jsonnet`` it was no distribution name at all, and allennlp's image
    build stopped parsing it)."""
    return canonical_name(import_name_table().get(module) or module.strip("_") or module)


def module_imports(source: str) -> set[str]:
    """Top-level names a test module cannot be collected without: its unconditional
    module-level imports, and ``pytest.importorskip("name")`` calls anywhere. Imports
    inside functions, ``if`` or ``try`` blocks are optional by the authors' design (their
    tests check for them and skip), so installing them would change which tests run.
    Unparsable where Python cannot parse ``source``."""
    tree = parse_ast(source)
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_importorskip(node):
            names.add(node.args[0].value.split(".")[0])
    return names


def any_imports(source: str) -> set[str]:
    """Top-level names ``source`` imports anywhere (in functions, ``if`` and ``try`` blocks
    too): what its tests use when the environment has it. Unparsable as ``module_imports``."""
    return {name.split(".")[0] for name in dotted_imports(source)} | module_imports(source)


def dotted_imports(source: str) -> set[str]:
    """Absolute module paths ``source`` imports anywhere (``a.b.c`` for ``from a.b.c import x``)."""
    names = set()
    for node in ast.walk(parse_ast(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def own_module_parts(tree: SourceTree) -> set[str]:
    """The components of the project's own modules its tests import anywhere, normalised
    (``small_text.integrations.transformers`` → small-text, integrations, transformers)."""
    own = local_modules(tree)
    parts: set[str] = set()
    for path in (p for p in tree.paths if is_test_support_file(p)):
        text = tree.read(path)
        try:
            dotted = dotted_imports(text) if text is not None else set()
        except Unparsable:
            continue
        parts |= {canonical_name(part) for name in dotted if name.split(".")[0] in own for part in name.split(".")}
    return parts


def _is_importorskip(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    first = call.args[0] if call.args else None
    return name == "importorskip" and isinstance(first, ast.Constant) and isinstance(first.value, str)


def local_modules(tree: SourceTree) -> set[str]:
    """Names the project itself can provide: every module and package in its tree (test
    folders, ``src/`` and plugin-added source paths put folders on ``sys.path``)."""
    names = set()
    for path in tree.paths:
        p = PurePosixPath(path)
        if p.suffix == ".py":
            names.add(p.stem)
            names |= {part for part in p.parts[:-1] if part.isidentifier()}
    return names


def third_party_imports(
    tree: SourceTree,
    files: Iterable[str] | None = None,
    reader: Callable[[str], set[str]] = module_imports,
    installed: Iterable[str] = (),
) -> dict[str, list[str]]:
    """Module → test files importing it (as ``reader`` reads a file: by default what collecting
    it needs), for modules neither standard nor the project's own; ``installed``: modules known
    to be installed libraries even where the project has a folder of that name."""
    files = sorted(files if files is not None else (p for p in tree.paths if is_test_support_file(p)))
    own = local_modules(tree) - set(installed)
    found: dict[str, list[str]] = {}
    for path in files:
        text = tree.read(path)
        try:
            modules = reader(text) if text is not None else set()
        except Unparsable:
            continue  # a file Python cannot parse imports nothing a test run can use
        for module in modules - own - set(sys.stdlib_module_names):
            if module.startswith("__"):  # the interpreter's own: __main__, __future__
                continue
            found.setdefault(module, []).append(path)
    return dict(sorted(found.items()))
