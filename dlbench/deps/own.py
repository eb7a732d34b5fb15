"""The project's own distribution as an installer records it, without its code.

A checkout runs from its folder and is never installed: a copy of its code in site-packages
would hold the reference, readable by every candidate (``Target.omit``). But what an install
registers beside the code is part of how a project runs: its entry points (PennyLane finds its
own devices through ``pennylane.plugins``: without them every test that builds a device failed
with "Device default.qubit does not exist"; a project's pytest plugin is a ``pytest11`` entry
point) and its version (``importlib.metadata.version(name)`` at import). The image gets that
metadata alone, a ``.dist-info`` folder with no file of its code, read from the project's declarations
(``pyproject.toml``, ``setup.cfg``, ``setup.py`` literals) without running its build.
"""

from __future__ import annotations

import configparser
import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from packaging.version import InvalidVersion, Version

from dlbench.deps.declared import canonical_name, setup_py_arguments
from dlbench.deps.tree import SourceTree

UNKNOWN_VERSION = "0+unknown"  # a version only the build computes (setuptools-scm, a dynamic attr we cannot read)
PYPROJECT_GROUPS = {"scripts": "console_scripts", "gui-scripts": "gui_scripts"}
VERSION_LITERAL = re.compile(r"""^__version__\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""", re.MULTILINE)


@dataclass(frozen=True)
class OwnDistribution:
    name: str
    version: str
    entry_points: dict[str, dict[str, str]] = field(default_factory=dict)

    def dist_info(self) -> dict[str, bytes]:
        """The ``.dist-info`` folder's files (relative paths), as an installer writes them."""
        folder = f"{re.sub(r'[-_.]+', '_', self.name)}-{self.version}.dist-info"
        files = {
            f"{folder}/METADATA": f"Metadata-Version: 2.1\nName: {self.name}\nVersion: {self.version}\n".encode(),
            f"{folder}/INSTALLER": b"dlbench\n",
        }
        if self.entry_points:
            files[f"{folder}/entry_points.txt"] = "\n".join(
                f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in sorted(points.items()))
                for group, points in sorted(self.entry_points.items())
            ).encode()
        files[f"{folder}/RECORD"] = "".join(f"{path},,\n" for path in [*files, f"{folder}/RECORD"]).encode()
        return files

    def hash_parts(self) -> list[str]:
        """What the image's tag hashes of it."""
        return [f"own {name} {hashlib.sha256(data).hexdigest()}" for name, data in sorted(self.dist_info().items())]


def own_distribution(tree: SourceTree) -> OwnDistribution | None:
    """The project's distribution from its declarations (pyproject's ``[project]`` first, then
    setup.cfg's ``[metadata]`` and ``[options.entry_points]``, then ``setup(...)``'s literal
    arguments); None when none names it."""
    found = [_from_pyproject(tree), _from_setup_cfg(tree), _from_setup_py(tree)]
    name = next((f["name"] for f in found if isinstance(f.get("name"), str) and f["name"]), None)
    if name is None:
        return None
    version = next((f["version"] for f in found if isinstance(f.get("version"), str) and f["version"]), None)
    entry_points: dict[str, dict[str, str]] = {}
    for declared in reversed(found):  # pyproject's win
        for group, points in declared.get("entry_points", {}).items():
            entry_points.setdefault(group, {}).update(points)
    return OwnDistribution(canonical_name(name), _normalized(version), {g: p for g, p in entry_points.items() if p})


def _normalized(version: str | None) -> str:
    """PEP 440's form (``0.42.0-dev45`` is ``0.42.0.dev45``: a dash would end the name in the
    folder's), or ``UNKNOWN_VERSION``."""
    try:
        return str(Version(version)) if version else UNKNOWN_VERSION
    except InvalidVersion:
        return UNKNOWN_VERSION


def _from_pyproject(tree: SourceTree) -> dict:
    try:
        data = tomllib.loads(tree.read("pyproject.toml") or "") if tree.exists("pyproject.toml") else {}
    except tomllib.TOMLDecodeError:
        return {}
    project = data.get("project", {})
    if not isinstance(project, dict):
        return {}
    points = {PYPROJECT_GROUPS[key]: project[key] for key in PYPROJECT_GROUPS if isinstance(project.get(key), dict)}
    points |= {g: p for g, p in (project.get("entry-points") or {}).items() if isinstance(p, dict)}
    version = project.get("version")
    if version is None:  # setuptools' dynamic version = {attr = "pkg.__version__"}
        dynamic = data.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("version", {})
        version = _attr_version(tree, dynamic.get("attr")) if isinstance(dynamic, dict) else None
    return {"name": project.get("name"), "version": version, "entry_points": _strings(points)}


def _from_setup_cfg(tree: SourceTree) -> dict:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string((tree.read("setup.cfg") or "") if tree.exists("setup.cfg") else "")
    except configparser.Error:
        return {}
    version = parser.get("metadata", "version", fallback=None)
    if version and version.startswith("attr:"):
        version = _attr_version(tree, version.removeprefix("attr:").strip())
    points = {}
    if parser.has_section("options.entry_points"):
        for group, text in parser.items("options.entry_points"):
            points[group] = dict(_entry_point_line(line) for line in text.splitlines() if "=" in line)
    return {"name": parser.get("metadata", "name", fallback=None), "version": version, "entry_points": points}


def _from_setup_py(tree: SourceTree) -> dict:
    arguments = setup_py_arguments(tree.read("setup.py") or "") if tree.exists("setup.py") else {}
    points = arguments.get("entry_points")
    groups = {}
    if isinstance(points, dict):
        for group, lines in points.items():
            lines = [lines] if isinstance(lines, str) else lines
            if isinstance(lines, list):
                groups[group] = dict(_entry_point_line(line) for line in lines if isinstance(line, str) and "=" in line)
    return {"name": arguments.get("name"), "version": arguments.get("version"), "entry_points": groups}


def _entry_point_line(line: str) -> tuple[str, str]:
    key, _, value = line.partition("=")
    return key.strip(), value.strip()


def _strings(points: dict) -> dict[str, dict[str, str]]:
    return {g: {str(k): str(v) for k, v in p.items() if isinstance(v, str)} for g, p in points.items()}


def _attr_version(tree: SourceTree, attr: object) -> str | None:
    """``pkg.__version__``'s literal in ``pkg/__init__.py`` or ``pkg.py`` (or under ``src/``)."""
    if not isinstance(attr, str) or not attr.endswith(".__version__"):
        return None
    module = PurePosixPath(*attr.removesuffix(".__version__").split("."))
    for path in (f"{module}/__init__.py", f"{module}.py", f"src/{module}/__init__.py", f"src/{module}.py"):
        match = VERSION_LITERAL.search(tree.read(path) or "") if tree.exists(path) else None
        if match:
            return match[1]
    return None
