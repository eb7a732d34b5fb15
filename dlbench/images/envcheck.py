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
(removed in numpy 2.4) is a ``TooNew``, repaired by pinning the library below the
release that removed it. So is a library release that fails at its own import against the
others the lock chose (``too_new_libraries``): resolved as of deepchem's commit date,
transformers 4.52.2 raises ``NameError: name 'Replicate' is not defined`` in its own
``tensor_parallel.py`` under the torch 2.2.1 deepchem pins, and every test module fails to collect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# ``module 'numpy' has no attribute 'in1d'``; NumPy names the release for some removals.
REMOVED_NAME = re.compile(
    r"module '(?P<module>[\w.]+)' has no attribute '\w+'|`np\.\w+` was removed in the NumPy (?P<release>\d+\.\d+) release"
    # an extension compiled against NumPy 1.x meeting NumPy 2 (its C API moved): NumPy's advice is numpy<2
    r"|(?P<abi>numpy\.core\.multiarray failed to import|_ARRAY_API not found)"
)


@dataclass(frozen=True, slots=True)
class TooNew:
    """An installed library's release too new for the project or for the other locked
    libraries: a name the tests use that it no longer has, or it fails at its own import."""

    reason: str  # the failure that shows it
    release: str | None = None  # the release that removed the name, when the library's message says
    fallback: str | None = None  # the library to pin instead when this one cannot be (the importer of a name)
    # Its installed file raised: the module is the library, whatever the project names its own
    # (deepchem has a ``transformers.py`` of its own beside the transformers it imports).
    installed: bool = False


MISSING = re.compile(r"No module named '(?P<module>[\w.]+)'")
# A name an installed library did not define (its path: a project's own module is not the image's fault).
CANNOT_IMPORT = re.compile(r"cannot import name '(?P<name>\w+)' from '[\w.]+' \((?P<path>/\S+/site-packages/\S+\.py)\)")
COLLECT_TAIL_LINES = 2000
CHECK_COPY = "/tmp/dlbench-check"


def check_script(modules: Iterable[str], root: str = "/work/repo", copy: str = CHECK_COPY) -> str:
    """Shell for the check: import each module, then collect the tests (the project's own
    addopts cleared: they may name plugins whose absence the import check reports)."""
    names = sorted(set(modules))
    # A failure is printed as pytest prints one, its innermost frame then its ``E`` line, so
    # ``too_new_libraries`` reads the probe and the collection alike.
    probe = (
        "import importlib, traceback\n"
        f"for name in {names!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        where = traceback.extract_tb(exc.__traceback__)[-1]\n"
        "        message = ' '.join(str(exc).split())\n"
        "        print(f'import {name}:')\n"
        "        print(f'{where.filename}:{where.lineno}: in {where.name}')\n"
        "        print(f'E   {type(exc).__name__}: {message}')\n"
    )
    collect = f"python -m pytest --collect-only -q -p no:cacheprovider -o addopts= 2>&1 | tail -n {COLLECT_TAIL_LINES}"
    return f"{_in_copy(root, copy)} && python -c {_shell_quote(probe)}; {collect}; true"


def _in_copy(root: str, copy: str) -> str:
    """Shell to work in a writable copy of ``root``, as a candidate's run does: a plugin that
    writes into the folder it starts in (approvaltests' ``.approval_tests_temp``, at import)
    ends pytest before it collects anything in the image's read-only checkout."""
    return f"cp -R {root} {copy} 2>/dev/null; cd {copy} 2>/dev/null || cd {root}"


# The project's own code may import an optional module inside ``try`` and go on without it:
# small-text's ``integrations.transformers`` swallows setfit's absence, and a test then fails on
# ``NameError: name 'TransformerBasedEmbeddingMixin' is not defined`` with no module named. A
# finder placed last on ``sys.meta_path`` is asked only for a module no other finder has; those
# the project's own files (tests included) asked for are printed in the check's words.
SWALLOWED_PROBE = """\
import atexit, os, sys

_ROOT, _IMPORTLIB = os.getcwd() + os.sep, os.sep + "importlib" + os.sep


class _Unfound:
    asked = {}

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if "." not in name and name not in cls.asked and name not in sys.stdlib_module_names:
            frame = sys._getframe(1)
            while frame and (frame.f_code.co_filename.startswith("<") or _IMPORTLIB in frame.f_code.co_filename):
                frame = frame.f_back
            if frame and frame.f_code.co_filename.startswith(_ROOT):
                cls.asked[name] = frame.f_code.co_filename
        return None


sys.meta_path.append(_Unfound)
atexit.register(lambda: [print(f"imported by {f}: No module named {n!r}") for n, f in _Unfound.asked.items()])
import pytest

sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *sys.argv[1:]]))
"""


def swallowed_script(test_files: Iterable[str], root: str = "/work/repo", copy: str = CHECK_COPY) -> str:
    """Shell collecting ``test_files`` (in a copy, as ``check_script``) with ``SWALLOWED_PROBE``:
    the modules the project's own code asked for while they were imported and went on without."""
    files = " ".join(_shell_quote(f) for f in sorted(set(test_files)))
    return f"{_in_copy(root, copy)} && python -c {_shell_quote(SWALLOWED_PROBE)} {files} 2>&1 | tail -n {COLLECT_TAIL_LINES}; true"


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


# A compiled library's dependency the system lacks, in the dynamic loader's words (LightGBM's
# wheels link GCC's OpenMP runtime: ``libgomp.so.1: cannot open shared object file``): the
# image's Debian system is missing a package, which ``images/libraries.py`` finds by the file.
MISSING_LIBRARY = re.compile(r"(?P<soname>[\w.+-]+\.so(?:\.[\w]+)*): cannot open shared object file")


def missing_libraries(output: str) -> dict[str, str]:
    """Shared library file name → the first line of the check's output that reports it missing."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        for match in MISSING_LIBRARY.finditer(line):
            found.setdefault(match["soname"], line.strip()[:300])
    return found


# A frame as pytest's short traceback shows it, and the exception line after the frames.
FRAME = re.compile(r"^(?P<path>\S+\.py):\d+: in \S+")
RAISED = re.compile(r"^E\s+(?P<type>[\w.]+): (?P<message>.*)")
INSTALLED = re.compile(r"/(?:site|dist)-packages/(?P<top>\w+)")
IMPORTED_NAME = re.compile(r"cannot import name '\w+' from '(?P<module>[\w.]+)'(?: \((?P<path>[^)]+)\))?")
# What an incompatible release raises at import; others (OSError for a missing shared library,
# RuntimeError without a device) are the machine's, and an older release would not help.
INCOMPATIBLE = {"NameError", "AttributeError", "ImportError", "TypeError", "SyntaxError"}
# The test runner raises what a test module does wrong at collection (a fixture's or a mark's
# arguments): that is the project's, and the harness's plugin needs the runner it has.
RUNNER = {"_pytest", "pytest", "pluggy"}


def too_new_libraries(output: str, own: Iterable[str] = ()) -> dict[str, TooNew]:
    """Top-level module → why, for each installed library whose own code raised at import
    (the innermost frame of a failure in the check's output is in it, and what it raised is
    an incompatibility); an exception naming a removed name, or NumPy 2 refusing an
    extension, is charged to the library the message names (``REMOVED_NAME``)."""
    ours = set(own)
    found: dict[str, TooNew] = {}
    innermost: str | None = None
    for line in output.splitlines():
        if frame := FRAME.match(line):
            innermost = frame["path"]
        elif (raised := RAISED.match(line)) and innermost:
            culprit = _too_new(innermost, raised, line.strip()[:300])
            if culprit and (culprit[1].installed or culprit[0] not in ours):
                found.setdefault(*culprit)
            innermost = None
    return found


def removed_names(text: str) -> Iterator[tuple[str, str | None]]:
    """(top-level module, the release that removed the name if known) for each removed name
    ``text`` shows; an extension built for NumPy 1.x that NumPy 2 refuses (``numpy.core.multiarray
    failed to import``) is numpy's below 2.0, as NumPy's own message advises."""
    for match in REMOVED_NAME.finditer(text):
        yield (match["module"] or "numpy").split(".")[0], match["release"] or ("2.0" if match["abi"] else None)


def _too_new(path: str, raised: re.Match, reason: str) -> tuple[str, TooNew] | None:
    message = raised["message"]
    for module, release in removed_names(message):
        return module, TooNew(reason, release)
    installed, kind = INSTALLED.search(path), raised["type"].rsplit(".", 1)[-1]
    if not installed or installed["top"] in RUNNER or kind not in INCOMPATIBLE or MISSING.search(message):
        return None
    importer, why = installed["top"], f"{reason} (raised in {path})"[:400]
    imported = IMPORTED_NAME.search(message)
    if imported and imported["path"] and not INSTALLED.search(imported["path"]):
        # The project's own code no longer has the name (PennyLane's checkout dropped the
        # QubitDevice that pennylane-qiskit's release imports): the library is older than the
        # checkout, and no lower release brings the name back.
        return None
    if imported and (source := imported["module"].split(".")[0]) != importer:
        # The name's library dropped it (markupsafe 2.1 dropped the soft_unicode jinja2 2.11
        # imports), unless it cannot be pinned (torch pinned by the project lacks a name newer
        # transformers imports): then the importer is too new for it.
        return source, TooNew(why, fallback=importer, installed=True)
    return importer, TooNew(why, installed=True)
