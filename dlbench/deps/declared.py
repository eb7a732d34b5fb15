"""Every dependency a project declares, read statically from the files that declare them.

Sources: requirements files (``requirements*.txt``, ``requirements/*.txt``, with ``-r``/``-c``
includes), ``pyproject.toml`` (``[project]`` dependencies and optional groups, PEP 735
dependency groups, Poetry and PDM groups), ``setup.cfg`` and ``setup.py``
(``install_requires``, ``extras_require``, ``tests_require``, read with ``ast``, never run),
``tox.ini`` and ``noxfile.py``, conda ``environment*.yml`` pip sections, and the install lines
of CI workflow files that run tests. Each requirement keeps its source and a group
(``runtime``, ``test``, ``dev``, ``docs``, ``ci``, ``extra:<name>``, ``group:<name>``).
"""

from __future__ import annotations

import ast
import configparser
import itertools
import re
import shlex
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import parse_qs, urlparse

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from dlbench.deps.tree import SourceTree
from dlbench.parsing import Unparsable, parse_ast
from dlbench.records import DeclaredRequirement, DroppedRequirement

REQUIREMENTS_NAME = re.compile(r"(?:[\w.-]*[-_.])?requirements(?:[-_.][\w.-]*)?\.(?:txt|in)", re.IGNORECASE)
ENVIRONMENT_NAME = re.compile(r"(?:[\w-]*[-_.])?environment(?:[-_.][\w.-]*)?\.ya?ml", re.IGNORECASE)
CI_FILES = re.compile(r"(\.github/workflows/[^/]+|\.circleci/config|\.gitlab-ci|azure-pipelines)\.ya?ml")
INCLUDE_OPTION = re.compile(
    r"^(?:(?P<short>-[rc])\s*|(?P<long>--requirement|--constraint)(?:\s+|=))(?P<target>[^\s-]\S*)"
)
PIP_INSTALL = re.compile(r"\b(?:uv\s+)?pip3?\s+install\b(?P<args>.*)")
# What only CI knows: an expression (GitHub's ``${{ env.TORCH_VERSION }}``, a job's ``$VAR`` or
# ``${VAR}``, tox's ``{env:X}``), one token however many words it spans
CI_EXPRESSION = re.compile(r"\$\{\{.*?\}\}|\$\{?\w+\}?|\{[\w:.\[\]-]+\}")
# a requirement whose version is such an expression (``torch==${{ matrix.torch }}``): its name
VERSION_EXPRESSION = re.compile(
    r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[\w,\s-]+\])?)\s*(?:===|[=<>!~]=?)\s*[^\s,;]*\$[^\s,;]*"
)
NOT_LINUX = {"mac", "macos", "osx", "darwin", "win", "windows", "win32", "win64"}
# CI steps that build the test environment from conda environment files (``-f FILE``, or
# conda-merge's files merged into one), whose pip sections hold PyPI requirements
CONDA_ENVIRONMENT = re.compile(
    r"\b(?:conda-merge|(?:conda|mamba|micromamba)\s+env\s+(?:create|update)|micromamba\s+(?:create|install))\b(?P<args>.*)"
)
# pip options that take a value: the value is not a requirement.
OPTIONS_WITH_VALUE = {
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--target", "-t",
    "--prefix", "--root", "--python", "-p", "--upgrade-strategy", "--override", "--cache-dir", "--platform",
    "--python-version", "--only-binary", "--no-binary", "--extra", "--group", "--torch-backend", "--index-strategy",
    # pip's others (``pip install --progress-bar off``: captum's CI), then uv pip's
    "--progress-bar", "--src", "--implementation", "--abi", "--root-user-action", "--report", "--log", "--proxy",
    "--retries", "--timeout", "--exists-action", "--cert", "--client-cert", "--keyring-provider", "--use-feature",
    "--use-deprecated", "--global-option", "--config-settings", "-C", "--resume-retries", "--index", "--default-index",
    "--prerelease", "--resolution", "--exclude-newer", "--link-mode", "--config-file", "--reinstall-package",
    "--upgrade-package", "-P", "--refresh-package", "--no-build-isolation-package", "--python-platform", "--color",
    "--directory", "--project", "--config-setting", "--allow-insecure-host", "--fork-strategy",
}  # fmt: skip
VCS_SCHEME = re.compile(r"^(git|hg|svn|bzr)\+")
DIRECT_URL_SCHEME = re.compile(rf"{VCS_SCHEME.pattern}|^https?://")
DISTRIBUTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
OWN_EXTRAS = re.compile(r"""['"]?\.?/?\[(?P<extras>[\w,\s-]+)\]['"]?""")
SHELL_OPERATORS = {"&&", "||", ";", "|", ">", ">>", "2>&1", "&"}
METADATA_FILES = ("pyproject.toml", "setup.cfg", "setup.py")  # what the package itself declares, read first
FREEZE_MIN = 30  # exact pins in one file: a ``pip freeze`` of an environment, not what a package needs
FREEZE_SHARE = 0.9  # of its lines (a freeze edited by hand keeps a bound or two: CompressAI's Jinja2<3.1)
MAX_REQUIREMENTS_DEPTH = 3  # requirements files deeper than this are examples' or tools', not the tests'
# What a requirements file's path or an extra's name says it is for. A CI service's file
# (neupy's requirements/travis.txt pins matplotlib==1.5.1, an sdist on every Python we have)
# is the tests', and a website's (its site/requirements.txt: bs4==0.0.1) the docs': read as
# runtime, their pins could not be dropped when they failed to build, and neupy's build went
# through all six Pythons.
GROUP_WORDS = {
    "test": ("test", "tests", "testing", "pytest", "check", "ci", "travis", "appveyor", "circleci", "jenkins", "tox"),
    "dev": ("dev", "develop", "development", "all-dev"),
    "docs": ("doc", "docs", "documentation", "sphinx", "mkdocs", "notebook", "notebooks", "examples", "benchmark",
             "site", "website"),
}  # fmt: skip


def canonical_name(name: str) -> str:
    """A distribution name as PEP 503 normalises it (``Scikit_Learn`` → ``scikit-learn``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Declarations:
    """What a project declares: requirements, constraints, and what could not be used."""

    requirements: list[DeclaredRequirement] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    skipped: list[DroppedRequirement] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # the declaration files read
    own_extras: list[tuple[frozenset[str], str, str]] = field(default_factory=list)  # (extras, source, group)
    requires_python: list[str] = field(default_factory=list)  # the Pythons each declaration file admits
    # Requirements files setup.py reads into an argument → that argument's group (``_setup_files``).
    setup_files: dict[str, str] = field(default_factory=dict)

    def admits(self, python: str) -> bool:
        return admits_python(self.requires_python, python)

    def names(self, exclude_groups: Iterable[str] = ()) -> set[str]:
        excluded = set(exclude_groups)
        return {r.name for r in self.requirements if group_kind(r.group) not in excluded}

    def add(self, spec: str, source: str, group: str) -> None:
        spec = spec.strip()
        own = OWN_EXTRAS.fullmatch(spec)
        if own:  # ``pip install -e ".[all]"``: the project's own extras, expanded by the planner
            self.own_extras.append((frozenset(e.strip() for e in own["extras"].split(",")), source, group))
            return
        if not spec or _is_local(spec):
            return
        record = requirement_record(spec, source, group)
        if isinstance(record, str):
            self.skipped.append(DroppedRequirement(spec=spec, source=source, reason=record))
        else:
            self.requirements.append(record)


def group_kind(group: str) -> str:
    """``runtime``, ``test``, ``dev``, ``docs``, ``ci``, ``import``, ``repair`` or ``optional``
    (an extra or dependency group whose name says nothing)."""
    name = group.split(":", 1)[-1].lower()
    if ":" not in group:
        return group
    for kind, words in GROUP_WORDS.items():
        if any(word == part for part in re.split(r"[-_.\s]+", name) for word in words):
            return kind
    return "optional"


def requirement_record(spec: str, source: str, group: str) -> DeclaredRequirement | str:
    """The record of one requirement, or why it cannot be had from a package index. One
    given as a URL keeps its name (the index's releases of it stand in: ``deps.resolve``)
    and the URL."""
    requirement = _parse(spec)
    if isinstance(requirement, str):
        return requirement
    url, requirement.url = requirement.url, None
    guessed = url is not None and DIRECT_URL_SCHEME.match(spec) is not None and _name_in_url(url)[1]
    return DeclaredRequirement(spec=str(requirement), name=canonical_name(requirement.name), source=source, group=group, direct_url=url, name_from_url=guessed)  # fmt: skip


def _parse(spec: str) -> Requirement | str:
    """A requirement (its ``url`` set when given as one), or why it cannot be read."""
    try:
        requirement = Requirement(spec)
    except InvalidRequirement as exc:
        if DIRECT_URL_SCHEME.match(spec):
            return _named_url(spec) or "direct URL: no distribution name in it"
        return f"not a PEP 508 requirement: {exc}"
    if "+" in str(requirement.specifier):  # a local build such as torch==2.4.0+cpu: the index has the release
        requirement.specifier = SpecifierSet(",".join(re.sub(r"\+[\w.]+$", "", str(s)) for s in requirement.specifier))
    return requirement


def _named_url(spec: str) -> Requirement | None:
    """``name @ url`` for a bare URL whose name can be told (``_name_in_url``)."""
    url = spec.split()[0]
    name = _name_in_url(url)[0]
    return Requirement(f"{name} @ {url}") if name and DISTRIBUTION_NAME.fullmatch(name) else None


def _name_in_url(url: str) -> tuple[str | None, bool]:
    """(the distribution name a URL gives, whether it is only its repository's name): from its
    ``#egg=`` fragment or its wheel or sdist file (the distribution's own), else its repository
    (``git+https://github.com/o/name.git@ref``, ``https://github.com/o/name/archive/ref.zip``),
    which may be another project's name on the index."""
    vcs = VCS_SCHEME.match(url)
    parsed = urlparse(url[vcs.end() :] if vcs else url)
    egg = parse_qs(parsed.fragment).get("egg", [""])[0]
    parts = [p for p in parsed.path.split("/") if p]
    file = parts[-1] if parts else ""
    if egg:
        return egg, False
    if "archive" in parts[2:3]:  # GitHub's archive of a ref: /owner/name/archive/ref.zip
        return parts[1], True
    if file.endswith((".whl", ".tar.gz", ".zip")):
        return (found[0] if (found := distribution_file(file)) else None), False
    return (file.split("@")[0].removesuffix(".git"), True) if vcs else (None, False)  # a page's URL names nothing


def distribution_file(filename: str) -> tuple[str, Version] | None:
    """(canonical name, version) of a wheel's or an sdist's file name; None for anything else."""
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[:2]
        return parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def _is_local(spec: str) -> bool:
    """The project itself or a path (it runs from its checkout, never installed)."""
    return spec.startswith(("-e", "--editable", ".", "/", "file:", "${", "$")) or spec in {".", ".[dev]"}


# ---------------------------------------------------------------- which files


def is_dependency_file(path: str) -> bool:
    """Whether discovery reads ``path`` (selection uses this to spend few API requests)."""
    p = PurePosixPath(path)
    if len(p.parts) == 1 and p.name in ("pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "noxfile.py"):
        return True
    if REQUIREMENTS_NAME.fullmatch(p.name) or (p.parent.name == "requirements" and p.suffix in (".txt", ".in")):
        return len(p.parts) <= MAX_REQUIREMENTS_DEPTH
    if ENVIRONMENT_NAME.fullmatch(p.name):
        return len(p.parts) <= 2
    return bool(CI_FILES.fullmatch(path))


def _requirements_group(path: str) -> str:
    words = re.split(r"[-_./\s]+", path.lower())
    for kind in ("docs", "test", "dev"):
        if any(word in words for word in GROUP_WORDS[kind]):
            return kind
    return "runtime"


# ---------------------------------------------------------------- reading


def declared_requirements(tree: SourceTree) -> Declarations:
    """Everything ``tree`` declares, in a stable order (runtime files first)."""
    found = Declarations()
    seen: set[str] = set()
    for path in sorted((p for p in tree.paths if is_dependency_file(p)), key=_file_order):
        text = tree.read(path)
        if text is None:
            continue
        found.files.append(path)
        reader = _reader_for(path)
        reader(tree, path, text, found, seen)
    _set_aside_freezes(found)
    return found


def from_package_metadata(source: str) -> bool:
    """Whether a declaration's ``source`` is the package's own metadata (not a requirements,
    CI or environment file)."""
    return PurePosixPath(source.split(" ")[0]).name in METADATA_FILES


def _set_aside_freezes(found: Declarations) -> None:
    """A requirements file that is a whole environment frozen (``FREEZE_MIN`` or more exact
    pins, nearly every line) is set aside where the package metadata declares its runtime
    dependencies: its pins are someone's machine on the day, not what the package needs.
    CompressAI's requirements.txt of 2023 pins pytest 6.2.4, whose toml parser cannot read
    the project's pyproject.toml (every session ended before collecting), and torch 1.8.1
    against the metadata's ``torch>=1.13.1``."""
    if not any(r.group == "runtime" and from_package_metadata(r.source) for r in found.requirements):
        return
    for source, declared in itertools.groupby(sorted(found.requirements, key=lambda r: r.source), lambda r: r.source):
        lines = list(declared)
        exact = sum(map(exact_pin, lines))
        if from_package_metadata(source) or exact < FREEZE_MIN or exact < FREEZE_SHARE * len(lines):
            continue
        found.requirements = [r for r in found.requirements if r.source != source]
        reason = f"a frozen environment ({exact} of {len(lines)} requirements exact pins) beside the package's declared dependencies"
        found.skipped.append(DroppedRequirement(spec="", source=source, reason=reason))


def exact_pin(requirement: DeclaredRequirement) -> bool:
    """One release and only it: ``==`` without a wildcard. A spec that is no requirement pins
    nothing: the image build read every declaration through this, and allennlp's ``-jsonnet``
    (a test import's name, since named ``jsonnet``) stopped it."""
    parsed = _parse(requirement.spec)
    specifiers = list(parsed.specifier) if isinstance(parsed, Requirement) else []
    return len(specifiers) == 1 and specifiers[0].operator == "==" and "*" not in specifiers[0].version


def _file_order(path: str) -> tuple[int, str]:
    rank = METADATA_FILES.index(path) if path in METADATA_FILES else len(METADATA_FILES) + ("/" in path)
    return rank, path


def _reader_for(path: str):
    name = PurePosixPath(path).name
    if CI_FILES.fullmatch(path):
        return _read_ci_file
    return {
        "pyproject.toml": _read_pyproject,
        "setup.cfg": _read_setup_cfg,
        "setup.py": _read_setup_py,
        "tox.ini": _read_tox,
        "noxfile.py": _read_noxfile,
    }.get(name, _read_environment if ENVIRONMENT_NAME.fullmatch(name) else _read_requirements_file)


def _read_requirements_file(tree: SourceTree, path: str, text: str, found: Declarations, seen: set[str]) -> None:
    _requirements_lines(tree, path, text, found, seen, _file_group(path, found.setup_files))


def _file_group(path: str, setup_files: dict[str, str]) -> str:
    """A requirements file's group: its name's (docs, test, dev) first, else the group of the
    setup.py argument that reads it. Where ``install_requires`` reads files of a folder, the
    folder's others are alternatives or extras, never the runtime (roboflow inference's
    ``requirements/requirements.gpu.txt`` beside the ``.cpu.txt`` it reads); elsewhere a file
    stays what its name says (mmengine's extras read ``requirements.txt``, its
    ``install_requires`` a variable: nothing is read differently)."""
    named, group = _requirements_group(path), setup_files.get(path)
    if named != "runtime":
        return named
    if group in ("runtime", "test"):
        return group
    folder = PurePosixPath(path).parent
    if any(PurePosixPath(f).parent == folder for f, g in setup_files.items() if g == "runtime"):
        return group or f"extra:{_extra_name(path)}"
    return named


def _extra_name(path: str) -> str:
    """``requirements/requirements.pali.flash_attn.txt`` → ``pali.flash_attn``."""
    words = [w for w in PurePosixPath(path).stem.split(".") if w.lower() not in ("requirements", "requirement", "")]
    return ".".join(words) or PurePosixPath(path).stem


def _requirements_lines(
    tree: SourceTree, path: str, text: str, found: Declarations, seen: set[str], group: str
) -> None:
    """One requirements file, its ``-r`` includes inlined into the same group, once each."""
    if path in seen:
        return
    seen.add(path)
    for line in logical_lines(text):
        include = INCLUDE_OPTION.match(line)
        if include:
            _include(tree, PurePosixPath(path).parent, include["target"], _is_constraint(include), found, seen, group)  # fmt: skip
        elif not line.startswith("-"):
            found.add(line, path, group)


def _include(tree: SourceTree, base: PurePosixPath, target: str, constraint: bool, found: Declarations, seen: set[str], group: str) -> None:  # fmt: skip
    path = _join(base, target)
    if path is None or not _is_requirements_text(path):
        return  # outside the tree, or a pyproject/setup file read in its own right
    text = tree.read(path) if tree.exists(path) else None
    if text is None:
        return  # outside the tree or missing: nothing to read
    if constraint:  # a constraints file several requirements files name (nncf: each framework's) is read once
        lines = [line for line in logical_lines(text) if not line.startswith("-") and _index_constraint(line)]
        found.constraints += [line for line in lines if line not in found.constraints]
    else:
        _requirements_lines(tree, path, text, found, seen, group)


def _index_constraint(line: str) -> bool:
    """A constraint the resolver can apply: a requirement on the index's releases, not a URL."""
    parsed = _parse(line)
    return not isinstance(parsed, str) and not parsed.url


def _is_requirements_text(path: str) -> bool:
    return (
        PurePosixPath(path).suffix in (".txt", ".in")
        or REQUIREMENTS_NAME.fullmatch(PurePosixPath(path).name) is not None
    )


def _is_constraint(include: re.Match) -> bool:
    return (include["short"] or include["long"]) in ("-c", "--constraint")


def _join(base: PurePosixPath, target: str) -> str | None:
    parts: list[str] = []
    for part in (base / target).parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts) or None


def logical_lines(text: str) -> Iterator[str]:
    """Lines without comments, continuation backslashes joined."""
    pending = ""
    for raw in text.splitlines():
        line = re.split(r"(?:^|\s)#", raw, maxsplit=1)[0].rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        if line:
            yield line


def _read_pyproject(tree: SourceTree, path: str, text: str, found: Declarations, seen: set[str]) -> None:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found.skipped.append(DroppedRequirement(spec="", source=path, reason=f"not valid TOML: {exc}"))
        return
    project = doc.get("project", {})
    _add_python(found, project.get("requires-python"))
    _add_all(found, project.get("dependencies", []), f"{path} [project.dependencies]", "runtime")
    for name, specs in project.get("optional-dependencies", {}).items():
        _add_all(found, specs, f"{path} [project.optional-dependencies.{name}]", f"extra:{name}")
    groups = doc.get("dependency-groups", {})
    for name in groups:
        _add_all(found, _dependency_group(groups, name, set()), f"{path} [dependency-groups.{name}]", f"group:{name}")
    tool = doc.get("tool", {})
    _read_poetry(tool.get("poetry", {}), path, found)
    for name, specs in tool.get("pdm", {}).get("dev-dependencies", {}).items():
        _add_all(found, specs, f"{path} [tool.pdm.dev-dependencies.{name}]", f"group:{name}")


def _dependency_group(groups: dict, name: str, visiting: set[str]) -> list[str]:
    """PEP 735: a group's requirements with ``{include-group = ...}`` expanded (cycles cut)."""
    if name in visiting:
        return []
    visiting.add(name)
    specs: list[str] = []
    for entry in groups.get(name, []):
        if isinstance(entry, str):
            specs.append(entry)
        elif isinstance(entry, dict) and "include-group" in entry:
            specs += _dependency_group(groups, entry["include-group"], visiting)
    return specs


def _read_poetry(poetry: dict, path: str, found: Declarations) -> None:
    _add_all(found, _poetry_specs(poetry.get("dependencies", {})), f"{path} [tool.poetry.dependencies]", "runtime")
    _add_all(found, _poetry_specs(poetry.get("dev-dependencies", {})), f"{path} [tool.poetry.dev-dependencies]", "group:dev")  # fmt: skip
    for name, group in poetry.get("group", {}).items():
        specs = _poetry_specs(group.get("dependencies", {}) if isinstance(group, dict) else {})
        _add_all(found, specs, f"{path} [tool.poetry.group.{name}]", f"group:{name}")


def _poetry_specs(table: dict) -> list[str]:
    """Poetry's ``name = "^1.2"`` as PEP 508 (caret and tilde ranges as lower bounds)."""
    specs = []
    for name, value in table.items():
        if name.lower() == "python":
            continue
        version = value.get("version", "*") if isinstance(value, dict) else value
        if isinstance(value, dict) and ("git" in value or "path" in value or "url" in value):
            continue
        bound = re.sub(r"^[\^~]=?", ">=", str(version).strip()) if isinstance(version, str) else "*"
        specs.append(name if bound in ("*", "") else f"{name}{bound if bound[0] in '<>=!~' else '==' + bound}")
    return specs


def _add_all(found: Declarations, specs: Iterable, source: str, group: str) -> None:
    for spec in specs:
        if isinstance(spec, str):
            found.add(spec, source, group)


# The group of what setuptools' own arguments declare (setup.py and setup.cfg alike).
SETUP_GROUPS = {"install_requires": "runtime", "tests_require": "test"}


def _read_setup_cfg(tree: SourceTree, path: str, text: str, found: Declarations, seen: set[str]) -> None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        found.skipped.append(DroppedRequirement(spec="", source=path, reason=f"not a valid setup.cfg: {exc}"))
        return
    _add_python(found, parser.get("options", "python_requires", fallback=None))
    for key, group in SETUP_GROUPS.items():
        _add_all(found, _cfg_lines(parser.get("options", key, fallback="")), f"{path} [options] {key}", group)
    if parser.has_section("options.extras_require"):
        for name, value in parser.items("options.extras_require"):
            _add_all(found, _cfg_lines(value), f"{path} [options.extras_require] {name}", f"extra:{name}")


def admits_python(requires_python: Iterable[str], python: str) -> bool:
    """Whether every ``requires-python`` a project declares admits ``python`` (``3.8``); an
    unreadable one admits anything."""
    sets = (_python_specifiers(spec) for spec in requires_python)
    return all(s is None or s.contains(Version(python), prereleases=True) for s in sets)


def _python_specifiers(spec: str) -> SpecifierSet | None:
    """``spec`` as a specifier set; the ``>=3.6.*`` old setuptools accepted read as ``>=3.6``."""
    for text in (spec, re.sub(r"(>=|<=|>|<|~=)\s*([\d.]+?)\.\*", r"\1\2", spec)):
        try:
            return SpecifierSet(text)
        except InvalidSpecifier:
            continue
    return None


def _add_python(found: Declarations, spec: object) -> None:
    if isinstance(spec, str) and spec.strip():
        found.requires_python.append(spec.strip())


def _cfg_lines(value: str) -> list[str]:
    return [line.split(" #", 1)[0].strip() for line in value.splitlines() if not line.lstrip().startswith("#")]


def _read_setup_py(tree: SourceTree, path: str, text: str, found: Declarations, seen: set[str]) -> None:
    """``setup(...)`` keyword arguments evaluated from literals and module-level names only."""
    try:
        module = parse_ast(text)
    except Unparsable as exc:
        found.skipped.append(DroppedRequirement(spec="", source=path, reason=f"setup.py does not parse: {exc}"))
        return
    names = _module_literals(module)
    for call in (n for n in ast.walk(module) if isinstance(n, ast.Call) and _call_name(n) == "setup"):
        named = _setup_files(tree, path, call, module)
        found.setup_files.update(named)
        for file in (f for f in named if not is_dependency_file(f)):  # not read in its own right
            _requirements_lines(tree, file, tree.read(file) or "", found, seen, _file_group(file, found.setup_files))
        for arg, value in _setup_arguments(call, names):
            if arg == "python_requires":
                _add_python(found, value)
            elif arg in SETUP_GROUPS and isinstance(value, list):
                _add_all(found, value, f"{path} setup({arg}=...)", SETUP_GROUPS[arg])
            elif arg == "extras_require" and isinstance(value, dict):
                for name, specs in value.items():
                    if isinstance(specs, list):
                        _add_all(found, specs, f"{path} setup(extras_require[{name!r}])", f"extra:{name}")


def _setup_files(tree: SourceTree, path: str, call: ast.Call, module: ast.Module) -> dict[str, str]:
    """Requirements files of the tree that a ``setup(...)`` argument names → its group:
    ``install_requires=read_requirements(["requirements/_requirements.txt", ...])``, and a
    function without parameters that the argument calls (neupy's ``get_requirements()`` joins
    ``'requirements', 'main.txt'``); ``extras_require={"sam": read(...)}`` names ``extra:sam``."""
    functions = {f.name: f for f in module.body if isinstance(f, ast.FunctionDef) and _takes_nothing(f)}
    root = PurePosixPath(path).parent
    named: dict[str, str] = {}
    for keyword in call.keywords:
        arguments = [(SETUP_GROUPS.get(keyword.arg or ""), keyword.value)]
        if keyword.arg == "extras_require" and isinstance(keyword.value, ast.Dict):
            arguments = [(f"extra:{k.value}", v) for k, v in zip(keyword.value.keys, keyword.value.values)
                         if isinstance(k, ast.Constant) and isinstance(k.value, str)]  # fmt: skip
        for group, node in arguments:
            if group is None:
                continue
            for text in _path_texts(node, functions, set()):
                if (file := _join(root, text)) and tree.exists(file) and _is_requirements_text(file):
                    named.setdefault(file, group)
    return named


def _path_texts(node: ast.AST, functions: dict[str, ast.FunctionDef], entered: set[str]) -> Iterator[str]:
    """The strings an expression could open: its constants, each ``join(..., 'a', 'b')`` of
    constants as ``a/b``, and those of the body of each parameterless function it calls."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub.value
        elif isinstance(sub, ast.Call):
            parts = [a.value for a in sub.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if _call_name(sub) == "join" and len(parts) > 1:
                yield "/".join(parts)
            name = sub.func.id if isinstance(sub.func, ast.Name) else None
            if name in functions and name not in entered:
                entered.add(name)
                for statement in functions[name].body:
                    yield from _path_texts(statement, functions, entered)


def setup_py_arguments(text: str) -> dict[str, object]:
    """The first ``setup(...)`` call's keyword arguments that are literals (``{}`` when the
    file does not parse or calls no ``setup``)."""
    try:
        module = parse_ast(text)
    except Unparsable:
        return {}
    names = _module_literals(module)
    calls = (n for n in ast.walk(module) if isinstance(n, ast.Call) and _call_name(n) == "setup")
    call = next(calls, None)
    return dict(_setup_arguments(call, names)) if call is not None else {}


def _setup_arguments(call: ast.Call, names: dict[str, object]) -> list[tuple[str, object]]:
    """``setup(...)``'s keyword arguments as literals, those passed as ``**mapping`` included
    (``setup(**configuration)`` with a module-level dict: umap's, and many older projects')."""
    arguments: list[tuple[str, object]] = []
    for keyword in call.keywords:
        value = _literal(keyword.value, names)
        if keyword.arg is not None:
            arguments.append((keyword.arg, value))
        elif isinstance(value, dict):
            arguments.extend(value.items())
    return arguments


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


# A function's returned expression among the module's names, under a key no identifier can
# be: sparseml's ``setup(install_requires=_setup_install_requires(), ...)``, whose functions
# return ``_nm_deps + _deps`` and a dict of module-level lists.
RETURNS = "{}()"


def _takes_nothing(function: ast.FunctionDef) -> bool:
    arguments = function.args
    return not (arguments.args or arguments.posonlyargs or arguments.kwonlyargs or arguments.vararg or arguments.kwarg)


def _only_return(function: ast.FunctionDef) -> ast.expr | None:
    """The expression a function without parameters returns when returning it is all it does
    (a docstring aside); evaluated where it is called, against the module's names then."""
    if not _takes_nothing(function):
        return None
    body = function.body[1:] if ast.get_docstring(function) is not None else function.body
    return body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None


def _module_literals(module: ast.Module) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` and ``NAME[key] = <literal>`` bindings, in order, and
    each function that takes nothing and only returns an expression (``RETURNS``)."""
    names: dict[str, object] = {}
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and (returned := _only_return(node)) is not None:
            names[RETURNS.format(node.name)] = returned
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], _literal(node.value, names)
        if isinstance(target, ast.Name) and value is not None:
            names[target.id] = value
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            container, key = names.get(target.value.id), _literal(target.slice, names)
            if isinstance(container, dict) and isinstance(key, str) and value is not None:
                container[key] = value
    return names


def _literal(node: ast.AST, names: dict[str, object]) -> object:
    """A literal, a bound name, or ``a + b`` of them; None for anything computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_literal(e, names) for e in node.elts]
        return [x for item in items for x in (item if isinstance(item, list) else [item]) if isinstance(x, str)]
    if isinstance(node, ast.Dict):
        pairs = [(_literal(k, names), _literal(v, names)) for k, v in zip(node.keys, node.values) if k is not None]
        return {k: v for k, v in pairs if isinstance(k, str) and v is not None}
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        container, key = names.get(node.value.id), _literal(node.slice, names)
        return container.get(key) if isinstance(container, dict) and isinstance(key, str) else None
    if isinstance(node, ast.Call):
        return _literal_call(node, names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, names), _literal(node.right, names)
        return left + right if isinstance(left, list) and isinstance(right, list) else None
    return None


def _literal_call(call: ast.Call, names: dict[str, object]) -> object:
    """The idioms setup.py files build extras with: ``list(set(sum(EXTRAS.values(), [])))``,
    and a call of a module-level function that only returns an expression (``_only_return``)."""
    func, args = call.func, call.args
    if isinstance(func, ast.Attribute) and func.attr == "values" and not args:
        container = _literal(func.value, names)
        return list(container.values()) if isinstance(container, dict) else None
    name = func.id if isinstance(func, ast.Name) else None
    key = RETURNS.format(name)
    returned = names.get(key) if name and not args and not call.keywords else None
    if isinstance(returned, ast.expr):  # evaluated without itself: a function returning its own call ends
        return _literal(returned, {k: v for k, v in names.items() if k != key})
    first = _literal(args[0], names) if args else None
    if name in ("list", "set", "sorted", "tuple") and isinstance(first, list):
        return list(dict.fromkeys(first))
    if name == "sum" and isinstance(first, list) and all(isinstance(x, list) for x in first):
        return [item for group in first for item in group]
    return None


def _read_tox(tree: SourceTree, path: str, text: str, found: Declarations, seen: set[str]) -> None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        found.skipped.append(DroppedRequirement(spec="", source=path, reason=f"not a valid tox.ini: {exc}"))
        return
    for section in (s for s in parser.sections() if s == "testenv" or s.startswith("testenv:")):
        for line in _cfg_lines(parser.get(section, "deps", fallback="")):
            line = re.sub(r"^[\w,{}!-]+:\s+", "", line)  # tox factor conditions ("py38: numpy<2")
            _install_argument(tree, path, line, found, seen, "test", f"{path} [{section}] deps")


def _install_argument(tree: SourceTree, path: str, arg: str, found: Declarations, seen: set[str], group: str, source: str) -> None:  # fmt: skip
    include = INCLUDE_OPTION.match(arg)
    if include:
        _include(tree, PurePosixPath("."), include["target"], _is_constraint(include), found, seen, group)  # fmt: skip
    elif arg and not arg.startswith("-"):
        requirement = _without_expression(arg)
        if requirement is not None:
            found.add(requirement, source, group)


def _without_expression(arg: str) -> str | None:
    """``arg``, or where CI fills in its version (``torch==${{ matrix.torch }}``, ``torch==$TORCH``)
    the name alone, the version being the job's choice; None where an expression is more than
    the version (``${{ matrix.package }}``, ``.[{env:EXTRAS}]``): only CI knows what it installs."""
    if not CI_EXPRESSION.search(arg):
        return arg
    named = VERSION_EXPRESSION.fullmatch(CI_EXPRESSION.sub("$", arg))
    return named["name"] if named else None


def _read_noxfile(tree: SourceTree, path: str, text: str, found: Declarations, seen: set[str]) -> None:
    """String arguments of ``session.install(...)`` calls (``-r FILE`` pairs followed)."""
    try:
        module = parse_ast(text)
    except Unparsable:
        return
    for call in (n for n in ast.walk(module) if isinstance(n, ast.Call) and _call_name(n) == "install"):
        args = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        for arg in _pair_options(args):
            _install_argument(tree, path, arg, found, seen, "test", f"{path} session.install")


def _pair_options(args: list[str]) -> list[str]:
    """``["-r", "req.txt", "numpy"]`` → ``["-r req.txt", "numpy"]``; other options and their values dropped."""
    out, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg in ("-r", "--requirement", "-c", "--constraint") and i + 1 < len(args):
            out.append(f"{arg} {args[i + 1]}")
            i += 2
            continue
        if arg in OPTIONS_WITH_VALUE:
            i += 2
            continue
        if not arg.startswith("-") or INCLUDE_OPTION.match(arg):
            out.append(arg)
        i += 1
    return out


def _read_environment(tree: SourceTree, path: str, text: str, found: Declarations, seen: set[str]) -> None:
    try:
        env = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    deps = env.get("dependencies", []) if isinstance(env, dict) else []
    for entry in deps:
        if isinstance(entry, dict) and isinstance(entry.get("pip"), list):
            for arg in entry["pip"]:
                if isinstance(arg, str):
                    _install_argument(tree, path, arg, found, seen, _requirements_group(path), f"{path} pip")


def _read_ci_file(tree: SourceTree, path: str, text: str, found: Declarations, seen: set[str]) -> None:
    """``pip install`` lines of CI files that run the tests (release and docs jobs are not read),
    and the conda environment files their steps build the test environment from."""
    if not re.search(r"\bpytest\b|\bunittest\b|\bnox\b|\btox\b|make test", text):
        return
    for line in logical_lines(text):
        if match := CONDA_ENVIRONMENT.search(line):
            for name in _shell_arguments(match["args"]):
                env = _tree_file(tree, name) if _linux_environment_file(name) else None
                if env is not None and env not in seen:
                    seen.add(env)
                    _read_environment(tree, env, tree.read(env) or "", found, seen)
        if match := PIP_INSTALL.search(line):
            args = CI_EXPRESSION.sub(lambda m: re.sub(r"\s+", "", m[0]), match["args"])  # one argument each
            for arg in _pair_options(_shell_arguments(args)):
                _install_argument(tree, path, arg, found, seen, "ci", f"{path} pip install")


def _shell_arguments(text: str) -> list[str]:
    """A command's arguments up to the first shell operator, one glued to an argument included
    (``pip install --upgrade pip;``: the requirement is ``pip``)."""
    try:
        tokens = shlex.split(text)
    except ValueError:
        return []
    args = []
    for token in tokens:
        if token in SHELL_OPERATORS:
            break
        if token.endswith(";"):
            args.append(token[:-1])
            break
        args.append(token)
    return [a for a in args if a]


def _linux_environment_file(name: str) -> bool:
    """A YAML file not named for a macOS or Windows job (``env_mac_3_11.yml``,
    ``env_torch.win.cpu.yml``): the image is Linux, and their pins are theirs."""
    words = set(re.split(r"[-_./\s]+", name.lower()))
    return PurePosixPath(name).suffix in (".yml", ".yaml") and not words & NOT_LINUX


def _tree_file(tree: SourceTree, name: str) -> str | None:
    """The tree's one file a step names relative to the folder it runs in (deepchem's CI runs
    ``conda-merge env_common.yml torch/env_torch.cpu.yml`` in ``requirements/``)."""
    name = name.removeprefix("./")
    matches = [p for p in tree.paths if p == name or p.endswith("/" + name)]
    return matches[0] if len(matches) == 1 else None
