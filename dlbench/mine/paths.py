"""Which files are test code, as the project's pytest configuration collects them.

pytest reads its options from the first of ``pytest.ini``, ``.pytest.ini``,
``pyproject.toml`` (``[tool.pytest.ini_options]``), ``tox.ini`` (``[pytest]``) and
``setup.cfg`` (``[tool:pytest]``) at the repository root that holds a pytest section; we
honour the options that decide collection (``testpaths``, ``python_files``,
``python_classes``, ``python_functions``, ``norecursedirs``) and keep pytest's defaults
for the rest; the project's own test commands (``runs``) tell which marks it deselects.
Test modules and ``conftest.py`` files get the libcst body summary (their
helpers, fixtures and test bodies are followed); everything under a test folder, named
like a test, or importing pytest, is test *support* and never yields a function under test.
"""

from __future__ import annotations

import configparser
import fnmatch
import logging
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

from dlbench.mine.runs import PytestCommand, read_commands
from dlbench.testfiles import PYTEST_FILES, UNITTEST_FILES

log = logging.getLogger(__name__)

# pytest's default ``norecursedirs``.
_DEFAULT_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
# (file, section) in pytest's order of precedence; the first file holding its section wins.
_CONFIG_SECTIONS = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("pyproject.toml", "tool.pytest.ini_options"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class PytestLayout:
    """The collection options of one project (pytest's defaults when it sets none)."""

    testpaths: tuple[str, ...] = ()
    python_files: tuple[str, ...] = PYTEST_FILES
    python_classes: tuple[str, ...] = ("Test",)
    python_functions: tuple[str, ...] = ("test",)
    norecursedirs: tuple[str, ...] = _DEFAULT_NORECURSE
    commands: tuple[PytestCommand, ...] = ()  # how the project runs its tests (``runs``)

    def is_test_module(self, path: str) -> bool:
        """A file pytest collects test cases from."""
        return self._collected_dir(path) and any(_matches_file(path, p) for p in self.python_files)

    def is_test_code(self, path: str) -> bool:
        """Files whose code runs as part of a test: test modules and conftest files."""
        return self.is_test_module(path) or path.rpartition("/")[2] == "conftest.py"

    def is_test_class(self, name: str) -> bool:
        return any(_prefix_or_glob(name, p) for p in self.python_classes)

    def is_test_function(self, name: str) -> bool:
        return any(_prefix_or_glob(name, p) for p in self.python_functions)

    def _collected_dir(self, path: str) -> bool:
        """Inside a ``testpaths`` entry (all of the repository without one), and no folder
        below that entry matched by ``norecursedirs``."""
        if path in self.testpaths:  # a file a project's command names
            return True
        parts = path.split("/")
        starts = [cut for cut in range(len(parts)) if self._is_testpath("/".join(parts[:cut]))]
        if not starts:
            return False
        below = parts[starts[0] : -1]
        return not any(fnmatch.fnmatchcase(d, p) for d in below for p in self.norecursedirs)

    def _is_testpath(self, prefix: str) -> bool:
        if not self.testpaths:
            return prefix == ""
        return any(prefix == t or (_is_glob(t) and fnmatch.fnmatchcase(prefix, t)) for t in self.testpaths)


DEFAULT_LAYOUT = PytestLayout()


def _matches_file(path: str, pattern: str) -> bool:
    """pytest's ``fnmatch_ex``: a pattern without ``/`` matches the file name only."""
    name = path if "/" in pattern else path.rpartition("/")[2]
    return fnmatch.fnmatchcase(name, pattern) or ("/" in pattern and fnmatch.fnmatchcase(path, f"*/{pattern}"))


def _prefix_or_glob(name: str, option: str) -> bool:
    return name.startswith(option) or (_is_glob(option) and fnmatch.fnmatchcase(name, option))


def _is_glob(pattern: str) -> bool:
    return not _GLOB_CHARS.isdisjoint(pattern)


# ---------------------------------------------------------------- reading the configuration


def read_layout(root: Path, files: list[str]) -> PytestLayout:
    """The collection options of the checkout at ``root`` (``files``: its Python files,
    for dropping ``testpaths`` that match nothing, as pytest then collects from the root)."""
    options = _pytest_options(root) or {}
    commands = read_commands(root, files, options.get("addopts", []))
    testpaths = tuple(_relative(t) for t in options.get("testpaths", ()))
    if testpaths:  # pytest reads testpaths only when given no path: the project's commands give theirs
        testpaths += tuple(p for p in _named_by(commands, files) if p not in testpaths)
    if testpaths and not any(PytestLayout(testpaths=testpaths)._collected_dir(f) for f in files):
        log.warning("testpaths %s match no Python file: collecting from the repository root", list(testpaths))
        testpaths = ()
    defaults = DEFAULT_LAYOUT
    python_files = tuple(options.get("python_files", ())) or _default_files(files, testpaths)
    return PytestLayout(
        testpaths=testpaths,
        python_files=python_files,
        python_classes=tuple(options.get("python_classes", defaults.python_classes)),
        python_functions=tuple(options.get("python_functions", defaults.python_functions)),
        norecursedirs=tuple(options.get("norecursedirs", defaults.norecursedirs)),
        commands=commands,
    )


def _default_files(files: list[str], testpaths: tuple[str, ...]) -> tuple[str, ...]:
    """pytest's default test module names, or, where no module has one, also the names of
    unittest suites run by a script of their own (torchdiffeq: ``tests/odeint_tests.py``,
    which ``tests/run_all.py`` star-imports for ``unittest.main()``): the harness runs tests by
    node id, and pytest collects a module named on its command line whatever its name."""
    if any(PytestLayout(testpaths=testpaths).is_test_module(f) for f in files):
        return DEFAULT_LAYOUT.python_files
    return (*DEFAULT_LAYOUT.python_files, *UNITTEST_FILES)


def _relative(path: str) -> str:
    return path.strip("/").removeprefix("./").rstrip("/")


def _named_by(commands: tuple[PytestCommand, ...], files: list[str]) -> list[str]:
    """Files and folders of the checkout that the project's own pytest commands name (DeepReg's
    ``testpaths = deepreg`` holds no test; its CI runs ``pytest ./test/unit/``)."""
    named = dict.fromkeys(_relative(p) for c in commands if not c.opaque for p in c.paths)
    return [p for p in named if p and any(f == p or f.startswith(f"{p}/") for f in files)]


def _pytest_options(root: Path) -> dict[str, list[str]] | None:
    """Options of the first configuration file holding a pytest section, values split."""
    for name, section in _CONFIG_SECTIONS:
        path = root / name
        if not path.is_file():
            continue
        try:
            raw = _toml_section(path, section) if name.endswith(".toml") else _ini_section(path, section)
        except (OSError, ValueError, configparser.Error) as exc:  # tomllib's error is a ValueError
            log.warning("%s: unreadable, ignored (%s)", name, exc)
            continue
        if raw is not None or name.endswith("pytest.ini"):  # pytest.ini wins even without a section
            return {key: _split(value) for key, value in (raw or {}).items()}
    return None


def _toml_section(path: Path, section: str) -> dict[str, object] | None:
    table: object = tomllib.loads(path.read_text(encoding="utf-8"))
    for key in section.split("."):
        table = table.get(key) if isinstance(table, dict) else None
    return table if isinstance(table, dict) else None


def _ini_section(path: Path, section: str) -> dict[str, object] | None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    return dict(parser[section]) if parser.has_section(section) else None


def _split(value: object) -> list[str]:
    """ini values are whitespace-separated (shell quoting allowed); TOML gives lists."""
    if isinstance(value, list):
        return [str(v) for v in value]
    try:
        return shlex.split(str(value))
    except ValueError:
        return str(value).split()
