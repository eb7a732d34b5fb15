"""A checkout's own compiled extension modules (Cython, C, C++), built in place.

The project layer puts the checkout on the path instead of installing it, so the modules its
``setup.py`` compiles (``ext_modules``: ``cythonize``, setuptools' ``Extension``, torch's
``CppExtension``, pybind11's) would never exist, and every test that imports one fails. When
``setup.py`` declares extensions, the project layer gets a compiler and Python's headers and a
last step runs ``setup.py build_ext --inplace``, its build requirements (``[build-system]
requires`` and what ``setup.py`` imports, less what the lock already installs) in a throw-away
folder so the test environment stays the lock. A failed build is recorded, never fatal: only
the tests that import the extension fail, with that cause. The harness links the built files
into each candidate's copy (not copied per candidate) and never one that would shadow a
Python module of the same name, which is where a candidate's code goes.
"""

from __future__ import annotations

import re
import shlex
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from dlbench.deps.declared import canonical_name
from dlbench.deps.imports import any_imports, distribution_for
from dlbench.images.layers import BUILD_DIR, REPO_DIR, STEP_INPUTS, VENV_PYTHON
from dlbench.parsing import Unparsable, read_source

# An extension built (``cythonize(...)``, ``Extension(...)``), or ``ext_modules`` given anything
# but an empty list (pytorch3d: ``ext_modules=get_extensions()``; umap's ``"ext_modules": []`` builds none).
MARKERS = re.compile(
    r"\bcythonize\s*\(|\b(?:Cpp|CUDA|Pybind11)?Extension\s*\(|\bext_modules\b[\"']?\s*[:=](?!\s*\[\s*\])"
)
SYSTEM_PACKAGES = ("g++", "python3-dev")
# Tools a build system uses when it finds them, by what setup.py imports (torch's builds
# compile in parallel with ninja, one file at a time without it).
HELPERS = {"torch": ("ninja",)}
BUILD_DEPS = "/tmp/dlbench-build-deps"
START = "/tmp/dlbench-build-start"  # its time tells what the build wrote
LOCK = f"{STEP_INPUTS}/lock.txt"  # images.build.lock_input
BUILD_TIMEOUT_S = 2400  # within the step's own limit: a build that long is left out, not retried
# A module compiled from a Python source of the checkout (Cython compiles ``.py`` files too)
# would hand a candidate the reference compiled, importable under its own name: its file
# names the source it came from, and it is removed. (The generated C, which quotes the
# source line by line, is gone with everything else the build wrote.)
DROP_COMPILED_SOURCES = """
import pathlib, re, sys
start = pathlib.Path(sys.argv[1]).stat().st_mtime
sources = {str(p) for p in pathlib.Path(".").rglob("*.py")}
for so in pathlib.Path(".").rglob("*.so"):
    if so.stat().st_mtime >= start and {m.decode() for m in re.findall(rb"[\\w./-]+[.]py\\b", so.read_bytes())} & sources:
        so.unlink()
        print("removed, compiled from a Python source:", so)
"""
BUILD_TEMP = "/tmp/dlbench-build-temp"
LOG = "/tmp/dlbench-build-ext.log"
FAILED = "extension build failed"
BUILT = "extension modules built:"


@dataclass(frozen=True)
class ExtensionBuild:
    """How a checkout's extensions are built: its build requirements outside the lock."""

    requirements: tuple[str, ...]

    def hash_parts(self) -> list[str]:
        """What changes the project layer's content hash: a new way to build builds anew."""
        return [*SYSTEM_PACKAGES, build_script(self)]


def extension_build(checkout: Path, locked: set[str]) -> ExtensionBuild | None:
    """The build of ``checkout``'s declared extensions, or None when ``setup.py`` declares none.
    ``locked``: canonical names of the distributions the lock installs."""
    setup = checkout / "setup.py"
    if not setup.is_file():
        return None
    try:
        source = read_source(setup)
    except (OSError, Unparsable):
        return None
    if not MARKERS.search(source):
        return None
    wanted = [*_build_system_requires(checkout), *_setup_imports(source, checkout)]
    missing = {}
    for spec in wanted:
        name = canonical_name(re.split(r"[\s<>=!~;\[@]", spec, maxsplit=1)[0])
        if name and name not in locked:
            missing.setdefault(name, spec)
    return ExtensionBuild(tuple(sorted(missing.values())))


def _build_system_requires(checkout: Path) -> list[str]:
    try:
        data = tomllib.loads(read_source(checkout / "pyproject.toml"))
    except (OSError, Unparsable, tomllib.TOMLDecodeError):
        return []
    system = data.get("build-system")
    requires = system.get("requires") if isinstance(system, dict) else None
    return [r for r in requires if isinstance(r, str)] if isinstance(requires, list) else []


def _setup_imports(source: str, checkout: Path) -> list[str]:
    """Distributions setup.py imports (its own package and the standard library left out),
    with the helpers their builds use."""
    try:
        modules = any_imports(source)
    except Unparsable:
        return []
    own = {p.name for p in checkout.iterdir() if p.is_dir()} | {p.stem for p in checkout.glob("*.py")}
    third_party = sorted(m for m in modules if m not in sys.stdlib_module_names and m not in own)
    return [distribution_for(m) for m in third_party] + [h for m in third_party for h in HELPERS.get(m, ())]


def build_script(build: ExtensionBuild, objects: str | None = None) -> str:
    """The shell step: build requirements (held to the lock's versions) into a throw-away
    folder, the extensions in place within ``BUILD_TIMEOUT_S``, then everything the build
    wrote but the extension modules removed, and every module compiled from a Python source
    (``DROP_COMPILED_SOURCES``). It always succeeds (a failed build only leaves the
    extensions out): its last line says what happened (``build_outcome``). ``objects``: a
    folder for the compiled objects that outlives the step (the machine's cache), else a
    throw-away one."""
    temp = objects or BUILD_TEMP
    install = (
        f"{BUILD_DIR}/uv pip install --python {VENV_PYTHON} --target {BUILD_DEPS} -c {LOCK} "
        f"{' '.join(map(shlex.quote, build.requirements))} && "
        if build.requirements
        else ""
    )
    env = f"PYTHONPATH={BUILD_DEPS}:{REPO_DIR} PATH={BUILD_DEPS}/bin:$PATH MAX_JOBS=$(nproc)"
    built = f"find . -newer {START} -name '*.so' | wc -l"
    return (
        f"set -e; cd {REPO_DIR}; touch {START}; if ( {install}env {env} timeout {BUILD_TIMEOUT_S} {VENV_PYTHON} "
        f"setup.py build_ext --inplace --build-temp {temp} --build-lib {temp}/lib ) > {LOG} 2>&1; "
        f"then ok=1; else ok=0; fi; tail -n 40 {LOG}; rm -rf {BUILD_DEPS} {BUILD_TEMP} {LOG}{f' {temp}/lib' if objects else ''}; "
        f"find . -newer {START} -type f ! -name '*.so' -print -delete; "
        f"{VENV_PYTHON} -c {shlex.quote(DROP_COMPILED_SOURCES)} {START}; "
        f'if [ $ok = 1 ]; then echo "{BUILT} $({built})"; else echo {FAILED}; fi'
    )


def build_outcome(output: str, seconds: float) -> str:
    """What the build step's output says: the modules built, or the build's error line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if lines and lines[-1].startswith(BUILT):
        return f"built {lines[-1].removeprefix(BUILT).strip()} extension module(s) in place in {seconds:.0f} s"
    errors = [line for line in lines[:-1] if re.search(r"\berror\b", line, re.IGNORECASE)]
    cause = (errors or lines[-2:-1] or ["no output"])[0]
    return f"{FAILED}: {cause[:300]}"
