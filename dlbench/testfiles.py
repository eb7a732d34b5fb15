"""Which files of a repository are tests, by name and folder alone (no configuration read).

Selection counts a repository's test files with it, the environment builder reads the
imports of test support files, and mining treats such files as test support even where
the project's own pytest configuration (``mine/paths.py``) does not collect them.
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath

TEST_DIRS = frozenset({"tests", "test", "testing"})
PYTEST_FILES = ("test_*.py", "*_test.py")  # pytest's default ``python_files``
# unittest suites a script of the project runs: its single test module, or modules named so
UNITTEST_FILES = ("test.py", "tests.py", "*_tests.py")


def in_test_dir(path: str) -> bool:
    """Somewhere below a folder projects keep their tests in."""
    return not TEST_DIRS.isdisjoint(PurePosixPath(path).parts[:-1])


def named_like_test(path: str) -> bool:
    """Named like test code by pytest's defaults: a test module or a ``conftest.py``."""
    name = PurePosixPath(path).name
    return name == "conftest.py" or any(fnmatch.fnmatchcase(name, p) for p in PYTEST_FILES)


def is_test_file(path: str) -> bool:
    """A module of tests: pytest's default names, ``test.py``/``tests.py``/``*_tests.py``, or
    ``test*.py`` inside a tests folder (unittest's discovery)."""
    name = PurePosixPath(path).name
    if PurePosixPath(path).suffix != ".py" or name in ("__init__.py", "conftest.py"):
        return False
    unittest_named = any(fnmatch.fnmatchcase(name, p) for p in UNITTEST_FILES)
    return named_like_test(path) or unittest_named or (name.startswith("test") and in_test_dir(path))


def is_test_support_file(path: str) -> bool:
    """A file whose imports the tests need: a test file, a conftest, or a module in a tests folder."""
    p = PurePosixPath(path)
    return p.suffix == ".py" and (is_test_file(path) or p.name == "conftest.py" or in_test_dir(path))
