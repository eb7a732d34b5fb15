"""Which files are test code: pytest's default file patterns plus ``conftest.py``.

Only these files get the libcst body summary (their helpers, fixtures and test bodies
are followed); everything under a test folder, or importing pytest, is test *support*
and never yields a function under test.
"""

from __future__ import annotations

import re

_TEST_MODULE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
TEST_DIRS = frozenset({"tests", "test", "testing"})


def is_test_module(path: str) -> bool:
    """pytest collects test cases from ``test_*.py`` and ``*_test.py`` (its defaults)."""
    return bool(_TEST_MODULE.search(path))


def is_test_code(path: str) -> bool:
    """Files whose code runs as part of a test: test modules and conftest files."""
    return is_test_module(path) or path.rpartition("/")[2] == "conftest.py"


def in_test_dir(path: str) -> bool:
    return any(part in TEST_DIRS for part in path.split("/")[:-1])
