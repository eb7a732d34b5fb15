"""The Debian packages a project's own test runs have: part of its test environment.

Its CI installs some before running the tests (``apt-get install graphviz`` for pydot's
``dot``, ``ffmpeg`` for video tests, ``libhdf5-dev``), and the runner itself brings tools
every CI machine has that tests call as programs (``git init`` in a temporary folder).
Without them the tests fail with ``FileNotFoundError`` and the task is lost to the machine,
not to its code. Read statically: the ``apt``/``apt-get install`` lines of the steps of CI
jobs that run tests (not those on accelerators, nor jobs that only build documentation),
literal names only; and the runner tools the test files call. The image installs what
Debian has and leaves the rest out (``images.build``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from dlbench.deps.testenv import ci_documents, testing_jobs

APT_INSTALL = re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*install\b(?P<args>[^&;|\n]*)")
EXPANSION = re.compile(r"\$\{\{.*?\}\}|\$\{[^}]*\}|\$\(.*?\)|\$\w+")  # CI expressions, shell variables
PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]{1,62}")
# Debian's Python and its modules are not the image's (it has its own venv); the rest are
# package-manager plumbing.
NOT_FOR_TESTS = re.compile(r"python[0-9.]*(?:-.*)?|pip|sudo|apt-utils|software-properties-common|lsb-release|gnupg.*")
MAX_PACKAGES = 30
# Programs every CI runner has that a test may call: name → Debian package.
RUNNER_TOOLS = {"git": "git"}
TOOL_CALL = r"""["']{tool}["']\s*[,\]]|["']{tool}\s+[a-z][\w-]*"""  # ["git", "init"] or "git rev-parse HEAD"
TEST_FILE = re.compile(r"(?:test_[^/]*|[^/]*_test|conftest)\.py")
MAX_TEST_FILES = 5000


def declared_system_packages(root: Path) -> list[str]:
    """Debian packages the project's test runs install or call, sorted."""
    return sorted(set(ci_packages(root)) | set(runner_tools(root)))


def ci_packages(root: Path) -> list[str]:
    """What the project's CI installs with apt before it runs the tests (the first
    ``MAX_PACKAGES``, in the files' order)."""
    found: dict[str, None] = {}
    for doc in ci_documents(root):
        for job in testing_jobs(doc):
            for command in _run_commands(job):
                found.update(dict.fromkeys(apt_installs(command)))
    return list(found)[:MAX_PACKAGES]


def apt_installs(command: str) -> Iterator[str]:
    """The literal package names an ``apt``/``apt-get install`` in a shell ``command`` names
    (options, versions and shell expansions left out)."""
    for match in APT_INSTALL.finditer(command.replace("\\\n", " ")):
        for word in EXPANSION.sub(" ", match["args"]).split():
            name = word.strip("'\"").split("=", 1)[0]
            if word.startswith("-") or not PACKAGE.fullmatch(name) or NOT_FOR_TESTS.fullmatch(name):
                continue
            yield name


def runner_tools(root: Path) -> list[str]:
    """Packages of the runner's programs (``RUNNER_TOOLS``) that the project's test files call."""
    texts = [_read(p) for p in _test_files(root)]
    return [
        package
        for tool, package in RUNNER_TOOLS.items()
        if any(re.search(TOOL_CALL.format(tool=re.escape(tool)), text) for text in texts)
    ]


def _run_commands(job: dict) -> Iterator[str]:
    steps = job.get("steps") if isinstance(job.get("steps"), list) else []
    for step in steps:
        if isinstance(step, dict) and isinstance(step.get("run"), str):
            yield step["run"]


def _test_files(root: Path) -> list[Path]:
    files = (p for p in root.rglob("*.py") if TEST_FILE.fullmatch(p.name) and ".git" not in p.parts)
    return [p for _, p in zip(range(MAX_TEST_FILES), files, strict=False)]


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
