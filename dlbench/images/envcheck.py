"""Does a built image hold what the project's tests import? (the repair loop's evidence)

The check runs in the image with no network, as the runner: it imports every third-party
module the tests import at module level, then lets pytest collect the whole suite, and
reports every ``No module named 'x'`` either printed. Parsing is a pure function.

A library can also lack a name because an optional dependency is missing: Transformers
defines ``PILImageResampling`` only ``if is_vision_available(): import PIL.Image …``, so
without Pillow a test fails with ``cannot import name 'PILImageResampling' from
'transformers.image_utils'`` and no module named. ``guard_script`` finds, in the image, the
imports guarding the name's definition (the ``if`` or ``try`` around it) and reports those
that do not import as ``No module named 'x'``, the same evidence as the check's.

Or a library has lost a name old code uses: ``module 'numpy' has no attribute 'in1d'``
(removed in numpy 2.4) is a ``RemovedName``, repaired by pinning the library below the
release that removed it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# ``module 'numpy' has no attribute 'in1d'``; NumPy names the release for some removals.
REMOVED_NAME = re.compile(
    r"module '(?P<module>[\w.]+)' has no attribute '\w+'|`np\.\w+` was removed in the NumPy (?P<release>\d+\.\d+) release"
    # an extension compiled against NumPy 1.x meeting NumPy 2 (its C API moved): NumPy's advice is numpy<2
    r"|(?P<abi>numpy\.core\.multiarray failed to import|_ARRAY_API not found)"
)


@dataclass(frozen=True, slots=True)
class RemovedName:
    """A name gold's tests use that an installed module no longer has (a release removed it)."""

    reason: str  # the gold failure that shows it
    release: str | None = None  # the release that removed it, when the library's message says


MISSING = re.compile(r"No module named '(?P<module>[\w.]+)'")
# A name an installed library did not define (its path: a project's own module is not the image's fault).
CANNOT_IMPORT = re.compile(r"cannot import name '(?P<name>\w+)' from '[\w.]+' \((?P<path>/\S+/site-packages/\S+\.py)\)")
COLLECT_TAIL_LINES = 2000


def check_script(modules: Iterable[str]) -> str:
    """Shell for the check: import each module, then collect the tests (the project's own
    addopts cleared: they may name plugins whose absence the import check reports)."""
    names = sorted(set(modules))
    probe = (
        "import importlib\n"
        f"for name in {names!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        print(f'import {name}: {type(exc).__name__}: {exc}')\n"
    )
    collect = f"python -m pytest --collect-only -q -p no:cacheprovider -o addopts= 2>&1 | tail -n {COLLECT_TAIL_LINES}"
    return f"cd /work/repo && python -c {_shell_quote(probe)}; {collect}; true"


GUARD_PROBE = """\
import ast, importlib.util, sys

path, name = sys.argv[1], sys.argv[2]
tree = ast.parse(open(path, encoding="utf-8").read())


def defines(node):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in node.names)
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)


def imported(stmts):  # the block's own imports: a nested guard is a block of its own
    for node in stmts:
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


for block in ast.walk(tree):
    if isinstance(block, (ast.If, ast.Try)) and any(defines(n) for s in block.body for n in ast.walk(s)):
        for top in sorted(set(imported(block.body))):
            if importlib.util.find_spec(top) is None:
                print(f"{name} in {path} is guarded by: No module named '{top}'")
"""


def guard_script(path: str, name: str) -> str:
    """Shell for the guard probe of ``name`` in the library file ``path`` (see the module doc)."""
    return f"python -c {_shell_quote(GUARD_PROBE)} {_shell_quote(path)} {_shell_quote(name)}; true"


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def missing_modules(output: str, own: Iterable[str] = ()) -> dict[str, str]:
    """Top-level module → the first line that reports it missing (the project's own
    modules excluded: a missing one of those is the project's problem, not the image's)."""
    ours = set(own)
    found: dict[str, str] = {}
    for line in output.splitlines():
        for match in MISSING.finditer(line):
            top = match["module"].split(".")[0]
            if top not in ours and top not in found:
                found[top] = line.strip()[:300]
    return found
