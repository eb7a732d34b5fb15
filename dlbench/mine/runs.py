"""How a project runs its own tests: the pytest commands of its ``noxfile.py``, ``tox.ini``,
CI workflows, ``Makefile`` and shell scripts, with the ``-m`` marker expression each passes.

A test the project never runs is *deselected by the project*: small-text's noxfile passes
``-m "not optional"`` in every session, so its ``@pytest.mark.optional`` tests (its conftest
skips them too unless ``--optional`` is given) make no task. Mining keeps such a case with
the reason in ``skipped``.

Conservative by construction, since a wrong deselection loses good tasks:

- the commands that count for a test file are those that collect it (they name it or a
  folder above it, or name no path, and do not ``--ignore`` it), or every command when
  none does;
- a command whose arguments are not literal (a shell variable, a nox argument held in a
  variable) or that passes no ``-m`` runs every test it covers;
- marks are three-valued: a mark the test does not carry statically is *unknown*, as helper
  decorators and conftest hooks add marks no static reading sees; only an expression false
  whatever those are (``not optional`` on an ``optional`` test) deselects;
- without any command found, the ini file's ``addopts`` ``-m`` alone decides.
"""

from __future__ import annotations

import ast
import fnmatch
import itertools
import logging
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dlbench.deps.declared import CI_FILES, SHELL_OPERATORS, logical_lines
from dlbench.parsing import Unparsable, parse_ast

log = logging.getLogger(__name__)

PYTEST = frozenset({"pytest", "py.test"})
ROOT_FILES = ("noxfile.py", "tox.ini", "Makefile")
# Words that may stand before ``pytest`` in a command line that runs it.
RUNNERS = frozenset({"uv", "poetry", "pdm", "hatch", "pipenv", "run", "exec", "xvfb-run", "-a", "time"})
# pytest options whose value is the next argument (a value never counts as a path).
VALUE_OPTIONS = frozenset({
    "-m", "-k", "-c", "-p", "-o", "-n", "-r", "-W", "--ignore", "--ignore-glob", "--deselect", "--rootdir",
    "--confcutdir", "--basetemp", "--maxfail", "--durations", "--junitxml", "--junit-xml", "--cov-config",
    "--cov-report", "--tb", "--log-level", "--timeout", "--dist", "--tx", "--numprocesses", "--import-mode",
    "--cov-fail-under", "--override-ini", "--maxprocesses", "--reruns",
})  # fmt: skip
ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=.*")  # ``VAR=value`` before a command
# ``- run: pytest``, ``script: pytest``, ``- pytest`` (CI files), ``commands = pytest`` (tox).
YAML_KEY = re.compile(r"^(?:-\s+)?(?:[\w-]+:\s+|commands\s*=\s*)?(?:\|\s*)?(?:-\s+)?")


@dataclass(frozen=True, slots=True)
class PytestCommand:
    """One pytest invocation of the project."""

    source: str  # the file it is written in
    marker: str | None = None  # its ``-m`` expression; None: every mark runs
    paths: tuple[str, ...] = ()  # the files and folders it names (none: pytest's testpaths)
    ignores: tuple[str, ...] = ()  # ``--ignore``/``--ignore-glob`` patterns
    opaque: bool = False  # an argument is not literal: it may run any test

    def covers(self, path: str) -> bool:
        """Whether the command collects ``path`` (named, or under a folder it names)."""
        ignored = any(_under(path, i) or fnmatch.fnmatchcase(path, i) for i in self.ignores)
        return not ignored and (not self.paths or any(_under(path, p) for p in self.paths))

    def deselects(self, marks: frozenset[str]) -> bool:
        """Whether ``-m`` leaves out a test carrying ``marks``, whatever marks it may also get."""
        return self.marker is not None and marker_value(self.marker, marks) is False


def deselection(commands: tuple[PytestCommand, ...], path: str, marks: frozenset[str]) -> str | None:
    """Why no command of the project runs a test of ``path`` carrying ``marks`` (None: some may)."""
    relevant = [c for c in commands if c.covers(path)] or list(commands)
    if not relevant or not all(c.deselects(marks) for c in relevant):
        return None
    shown = sorted({f'-m "{c.marker}" ({c.source})' for c in relevant})
    return "deselected by the project's test commands: " + ", ".join(shown)


def marker_value(expression: str, marks: frozenset[str]) -> bool | None:
    """Kleene value of a pytest ``-m`` expression: a mark in ``marks`` is true, any other is
    unknown (None); None as well for what this reading does not parse."""
    try:
        tree = ast.parse(expression, mode="eval").body
        return _value(tree, marks)
    except (SyntaxError, ValueError):
        return None


def _value(node: ast.AST, marks: frozenset[str]) -> bool | None:
    if isinstance(node, ast.Name):
        return True if node.id in marks else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _value(node.operand, marks)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        values = [_value(v, marks) for v in node.values]
        decisive = isinstance(node.op, ast.Or)  # ``or``: one true decides; ``and``: one false does
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    raise ValueError(f"not a marker expression: {ast.dump(node)}")


# ---------------------------------------------------------------- reading the commands


def read_commands(root: Path, files: list[str], addopts: list[str]) -> tuple[PytestCommand, ...]:
    """Every pytest command the project writes down; ``addopts``: the ini file's, whose ``-m``
    holds for a command that passes none."""
    default = _parse_arguments(addopts, "addopts").marker if addopts else None
    commands = [c for path in _command_files(root) for c in _file_commands(root, path)]
    if not commands and default is not None:
        commands = [PytestCommand("addopts")]
    existing = set(files)
    return tuple(_settle(c, default, existing, root) for c in commands)


def _command_files(root: Path) -> Iterator[str]:
    """Files that may run pytest: the root's nox, tox and make files, CI files, shell
    scripts at the root or one folder down."""
    patterns = (*ROOT_FILES, ".github/workflows/*", "*.yml", "*.yaml", ".*/*.yml", "*.sh", "*/*.sh")
    found = {p.relative_to(root).as_posix() for pattern in patterns for p in root.glob(pattern) if p.is_file()}
    for path in sorted(found):
        if path in ROOT_FILES or CI_FILES.fullmatch(path) or path.endswith(".sh"):
            yield path


def _file_commands(root: Path, path: str) -> list[PytestCommand]:
    try:
        text = (root / path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        log.warning("%s: unreadable, its test commands ignored (%s)", path, exc)
        return []
    if path == "noxfile.py":
        return _nox_commands(text, path)
    return [c for line in logical_lines(text) for c in _line_commands(line, path)]


def _settle(command: PytestCommand, default: str | None, existing: set[str], root: Path) -> PytestCommand:
    """The ini's ``-m`` where the command has none; paths that name nothing in the checkout
    dropped (an option's value taken for a path, a path relative to another folder)."""
    paths = tuple(p for p in command.paths if p in existing or (root / p).is_dir())
    marker = default if command.marker is None and not command.opaque else command.marker
    return PytestCommand(command.source, marker, paths, command.ignores, command.opaque)


def _line_commands(line: str, source: str) -> Iterator[PytestCommand]:
    """The pytest commands of one shell line (``a && pytest -m "not slow" tests``)."""
    try:
        tokens = shlex.split(YAML_KEY.sub("", line), comments=False)
    except ValueError:
        return
    segment: list[str] = []
    for token in [*tokens, ";"]:
        if token not in SHELL_OPERATORS:
            segment.append(token)
            continue
        if segment[:1] == ["eval"]:  # ``eval "pytest ${args}"``
            yield from _line_commands(" ".join(segment[1:]), source)
        elif (args := _pytest_arguments(segment)) is not None:
            yield _parse_arguments(args, source)
        segment = []


def _pytest_arguments(words: list[str]) -> list[str] | None:
    """pytest's arguments when ``words`` run pytest (``python -m pytest``, ``uv run pytest``,
    ``CUDA_VISIBLE_DEVICES="" pytest``), else None (``pip install pytest``)."""
    words = list(itertools.dropwhile(ASSIGNMENT.fullmatch, words))
    for i, word in enumerate(words):
        if word in PYTEST and (i == 0 or words[i - 1] == "-m" or all(w in RUNNERS for w in words[:i])):
            return words[i + 1 :]
        if word not in RUNNERS and word != "-m" and not word.startswith(("python", "coverage")):
            return None
    return None


def _nox_commands(text: str, source: str) -> list[PytestCommand]:
    """``session.run("pytest", ...)`` and ``session.run("python", "-m", "pytest", ...)``."""
    try:
        module = parse_ast(text)
    except Unparsable:
        return []
    commands = []
    for call in ast.walk(module):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "run"):
            continue
        words = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in call.args]
        args = _pytest_arguments([w for w in words if w is not None])
        if args is None:
            continue
        opaque = any(w is None and not _is_posargs(a) for w, a in zip(words, call.args, strict=True))
        commands.append(PytestCommand(source, opaque=True) if opaque else _parse_arguments(args, source))
    return commands


def _is_posargs(arg: ast.expr) -> bool:
    """``*session.posargs``: empty unless the user passes some."""
    return isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Attribute) and arg.value.attr == "posargs"


def _parse_arguments(args: list[str], source: str) -> PytestCommand:
    """``-m``, ``--ignore`` and the paths of pytest's arguments; an argument the shell fills
    in (``$OPTS``, tox's ``{posargs}`` excepted) makes the command opaque."""
    marker, paths, ignores = None, [], []
    i = 0
    while i < len(args):
        arg = args[i]
        if "$" in arg or ("{" in arg and arg != "{posargs}"):
            return PytestCommand(source, opaque=True)
        option, eq, value = arg.partition("=")
        if option in VALUE_OPTIONS and not eq:
            value, i = (args[i + 1] if i + 1 < len(args) else ""), i + 1
        if option == "-m":
            marker = value
        elif arg.startswith("-m") and not arg.startswith("--") and len(arg) > 2:
            marker = arg[2:]
        elif option in ("--ignore", "--ignore-glob"):
            ignores.append(_relative(value))
        elif not arg.startswith("-") and arg != "{posargs}":
            paths.append(_relative(arg.split("::")[0]))
        i += 1
    return PytestCommand(source, marker, tuple(paths), tuple(ignores))


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(f"{folder}/")


def _relative(path: str) -> str:
    return path.removeprefix("./").rstrip("/")
