"""Extraction: exact source, signature, class skeleton, docstring and git-history dates."""

from __future__ import annotations

import os
import subprocess
import textwrap
from datetime import date
from pathlib import Path

from dlbench.config import MineConfig
from dlbench.mine.api import mine, mine_checkout
from dlbench.mine.history import blame_dates, parse_porcelain
from dlbench.records import FunctionRecord
from dlbench.store import read_jsonl
from tests.test_mine_callgraph import write_tree

LAYERS_V1 = '''\
"""Layers."""
import functools


class Dense:
    """A dense layer."""

    units: int = 4

    def __init__(self, units):
        """Make it."""
        self.units = units

    # A comment above the decorators is not part of the function.
    @functools.lru_cache(maxsize=None)
    def forward(self, x: float,
                scale: float = 1.0) -> float:
        """Apply the layer."""
        return x * self.units * scale

    def _private(self):
        return 0


def relu(x):
    return max(x, 0)
'''

LAYERS_V2 = LAYERS_V1.replace("    return max(x, 0)\n", "    y = max(x, 0)\n    return y\n")

TESTS = """\
from lib.layers import Dense, relu


def test_a():
    Dense(1).forward(2.0)
    relu(1)


def test_b():
    Dense(2).forward(1.0)
    relu(2)


def test_c():
    Dense(3).forward(0.5)
    relu(3)
"""


def git(root: Path, *args: str, when: str | None = None) -> str:
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@x"
    )
    if when:
        env |= {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    return subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True, text=True).stdout


def make_history(root: Path) -> str:
    write_tree(root, {"lib/__init__.py": "", "lib/layers.py": LAYERS_V1, "tests/test_layers.py": TESTS})
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one", when="2023-03-01T12:00:00+00:00")
    (root / "lib/layers.py").write_text(LAYERS_V2)
    git(root, "commit", "-qam", "two", when="2024-06-15T23:30:00-05:00")  # 2024-06-16 in UTC
    return git(root, "rev-parse", "HEAD").strip()


def test_extracted_records(tmp_path):
    root = tmp_path / "repo"
    sha = make_history(root)
    cfg = MineConfig(tested_by="called")  # constructor records too
    out = mine_checkout(root, tmp_path / "out", tmp_path / "c", name="acme/lib", cfg=cfg)
    records = {r.qualname: r for r in read_jsonl(out, FunctionRecord)}
    assert sorted(records) == ["Dense.__init__", "Dense.forward", "relu"]
    forward = records["Dense.forward"]
    assert forward.sha == sha and forward.task_id == "acme__lib:lib/layers.py:Dense.forward"
    assert forward.source == textwrap.dedent(
        '''\
        @functools.lru_cache(maxsize=None)
        def forward(self, x: float,
                    scale: float = 1.0) -> float:
            """Apply the layer."""
            return x * self.units * scale
        '''
    )
    lines = LAYERS_V2.splitlines()
    assert (forward.start_line, forward.end_line) == (15, 19)
    assert lines[forward.start_line - 1].strip() == forward.source.splitlines()[0]
    assert forward.signature == "def forward(self, x: float,\n            scale: float = 1.0) -> float:"
    assert forward.docstring == "Apply the layer."
    assert forward.decorators == ["functools.lru_cache(maxsize=None)"]
    assert forward.class_name == "Dense" and forward.function == "forward"
    assert forward.class_context == textwrap.dedent(
        '''\
        class Dense:
            """A dense layer."""

            units: int = 4

            def __init__(self, units):
                """Make it."""
                self.units = units

            # A comment above the decorators is not part of the function.
            @functools.lru_cache(maxsize=None)
            def forward(self, x: float,
                        scale: float = 1.0) -> float: ...

            def _private(self): ...
        '''
    )
    assert forward.tests == [
        "tests/test_layers.py::test_a",
        "tests/test_layers.py::test_b",
        "tests/test_layers.py::test_c",
    ]
    # Dates come from the function's own lines: forward never changed, relu did.
    assert (forward.first_added, forward.last_modified) == (date(2023, 3, 1), date(2023, 3, 1))
    # The skeleton of an __init__ task must not give its body away.
    init = records["Dense.__init__"]
    assert "self.units = units" not in init.class_context
    assert "    def __init__(self, units): ...\n" in init.class_context
    relu = records["relu"]
    assert relu.source == "def relu(x):\n    y = max(x, 0)\n    return y\n"
    assert (relu.first_added, relu.last_modified) == (date(2023, 3, 1), date(2024, 6, 15))
    assert relu.class_context is None and relu.signature == "def relu(x):"


def test_blame_batches_ranges_and_parses_porcelain(tmp_path):
    root = tmp_path / "repo"
    sha = make_history(root)
    dates = blame_dates(root, sha, "lib/layers.py", [(24, 26), (1, 2)])
    assert dates == {(24, 26): (date(2023, 3, 1), date(2024, 6, 15)), (1, 2): (date(2023, 3, 1), date(2023, 3, 1))}
    assert blame_dates(root, sha, "missing.py", [(1, 2)]) == {}
    porcelain = "a" * 40 + " 1 1 1\ncommitter-time 0\ncommitter-tz +0100\n\tx = 1\n" + "a" * 40 + " 2 5\n\ty = 2\n"
    assert parse_porcelain(porcelain) == {1: date(1970, 1, 1), 5: date(1970, 1, 1)}


def test_checkout_without_git_has_no_dates(tmp_path):
    root = write_tree(
        tmp_path / "plain", {"lib/__init__.py": "", "lib/layers.py": LAYERS_V1, "tests/test_layers.py": TESTS}
    )
    result = mine(root, "acme/lib", None, 3, MineConfig(tested_by="called"), tmp_path / "c")
    assert {f.qualname for f in result.functions} == {"Dense.__init__", "Dense.forward", "relu"}
    assert all(f.first_added is None and f.sha is None for f in result.functions)


def test_guarded_definitions_are_extracted(tmp_path):
    lib = "import sys\n\nif sys.version_info >= (3, 8):\n    def fast(x):\n        return x\nelse:\n    def fast(x):\n        return -x\n"
    tests = "from lib.guarded import fast\n\n" + "".join(f"def test_{i}():\n    fast({i})\n\n" for i in range(3))
    root = write_tree(tmp_path / "repo", {"lib/__init__.py": "", "lib/guarded.py": lib, "tests/test_g.py": tests})
    (record,) = mine(root, "acme/lib", None, 3, MineConfig(), tmp_path / "c").functions
    # The ast summary keeps the last definition of a name, as Python's namespace would.
    assert (record.source, record.start_line, record.end_line) == ("def fast(x):\n    return -x\n", 7, 8)


def test_a_property_task_is_its_getter_in_lines_and_source() -> None:
    """Getter and setter share a name: the task's text and its lines are the getter's, as
    the symbol table gives them (a setter's text at the getter's lines broke the patch)."""
    from dlbench.mine.extract import extract_definitions

    source = textwrap.dedent('''\
        class Dataset:
            @property
            def x(self):
                """The features."""
                return self._x

            @x.setter
            def x(self, x_new):
                self._x = x_new
        ''')
    [piece] = extract_definitions(source, [("Dataset.x", 1, source.count("\n"))]).found.values()
    assert piece.source.startswith("@property\ndef x(self):") and "x_new" not in piece.source
    assert piece.docstring == "The features."
