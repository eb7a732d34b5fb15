"""Mining skips what it cannot read: a symlink loop, a dangling ``.py`` symlink and a legal
latin-1 source file never stop a repository (issue 15, item 4)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dlbench.config import MineConfig
from dlbench.mine.api import mine_checkout
from dlbench.parsing import Unparsable, read_source
from dlbench.records import FunctionRecord, TestCase
from dlbench.store import read_jsonl

LATIN1_MODULE = '# -*- coding: latin-1 -*-\n"""Caf\xe9 helpers."""\n\n\ndef scale(x, factor=2):\n    """Scale x (d\xe9j\xe0 vu)."""\n    return x * factor\n'
TESTS = "from pkg.core import scale\n\n" + "".join(
    f"def test_scale_{i}():\n    assert scale({i}) == {2 * i}\n\n\n" for i in range(3)
)


def odd_repository(root: Path) -> Path:
    """A git checkout whose only library module is latin-1, beside looping and dangling symlinks."""
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/core.py").write_bytes(LATIN1_MODULE.encode("latin-1"))
    (root / "tests/test_core.py").write_text(TESTS)
    os.symlink("loop_b.py", root / "pkg/loop_a.py")
    os.symlink("loop_a.py", root / "pkg/loop_b.py")
    os.symlink("missing.py", root / "tests/test_ghost.py")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run(
        [*git, "commit", "-qm", "odd files"],
        check=True,
        env={**os.environ, "GIT_COMMITTER_DATE": "2024-03-01T12:00:00Z"},
    )
    return root


def test_symlink_loops_dangling_links_and_latin1_do_not_stop_mining(tmp_path, caplog):
    root = odd_repository(tmp_path / "repo")
    with caplog.at_level("WARNING"):
        out = mine_checkout(root, tmp_path / "out", tmp_path / "c", sha="HEAD", min_tests=3, cfg=MineConfig())
    tests = read_jsonl(tmp_path / "out/tests.jsonl", TestCase)
    assert sorted(t.node_id for t in tests) == [f"tests/test_core.py::test_scale_{i}" for i in range(3)]
    [function] = read_jsonl(out, FunctionRecord)
    assert function.qualname == "scale" and "déjà vu" in function.source  # decoded as its cookie says
    assert function.first_added is not None and function.first_added.isoformat() == "2024-03-01"  # blame dates kept
    for skipped, problem in [("pkg/loop_a.py", "Too many levels"), ("tests/test_ghost.py", "No such file")]:
        assert any(skipped in r.getMessage() and problem in r.getMessage() for r in caplog.records), skipped


def test_source_neither_utf8_nor_declared_is_refused_as_python_refuses_it(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"x = '\xff'\n")  # not UTF-8 and no cookie: no import of it would work
    with pytest.raises(Unparsable, match="cannot decode"):
        read_source(path)
