"""Everything mining leaves out is recorded with its reason (``skipped.jsonl``) and counted
in the dataset card: unreadable, undecodable and unparsable files, test code libcst cannot
follow, and functions under test too deep for libcst (which the harness could not patch)."""

from __future__ import annotations

import os
from pathlib import Path

from dlbench.config import MineConfig
from dlbench.mine.api import mine_checkout
from dlbench.records import FunctionRecord, SkipKind, SkippedRecord
from dlbench.report.card import render_card
from dlbench.store import read_jsonl

CHAIN = " and ".join(["x"] * 3000)  # flat for ast, 3,000 levels for libcst
TESTS = "from pkg.core import f\nfrom pkg.deep import deep, shallow\n\n" + "".join(
    f"def test_{i}():\n    assert f({i}) and deep({i} + 1) and shallow({i})\n\n\n" for i in range(3)
)


def odd_repository(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    files = {
        "pkg/__init__.py": "",
        "pkg/core.py": "def f(x):\n    return x + 1\n",
        "pkg/deep.py": f"def deep(x):\n    return {CHAIN}\n\n\ndef shallow(x):\n    return x + 1\n",
        "pkg/broken.py": "def broken(:\n    pass\n",
        "tests/test_core.py": TESTS,
        "tests/test_long.py": f"def test_long():\n    x = 1\n    assert {CHAIN}\n",
    }
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    (root / "pkg/nul.py").write_bytes(b"def g():\n    return 1\x00\n")
    (root / "pkg/latin.py").write_bytes(b"x = '\xff'\n")  # neither UTF-8 nor declared
    os.symlink("missing.py", root / "pkg/ghost.py")
    return root


def test_every_skipped_file_and_dropped_function_is_recorded_and_counted(tmp_path):
    root = odd_repository(tmp_path / "repo")
    out = mine_checkout(root, tmp_path / "out", tmp_path / "cache", name="acme/lib", min_tests=3, cfg=MineConfig())
    assert [f.qualname for f in read_jsonl(out, FunctionRecord)] == ["f"]
    skipped = read_jsonl(tmp_path / "out/skipped.jsonl", SkippedRecord)
    found = {(s.path, s.kind, s.qualname): s.reason for s in skipped}
    assert set(found) == {
        ("pkg/broken.py", SkipKind.FILE, None),
        ("pkg/ghost.py", SkipKind.FILE, None),
        ("pkg/latin.py", SkipKind.FILE, None),
        ("pkg/nul.py", SkipKind.FILE, None),
        ("tests/test_long.py", SkipKind.TEST_CODE, None),
        ("pkg/deep.py", SkipKind.FUNCTION, "deep"),
        ("pkg/deep.py", SkipKind.FUNCTION, "shallow"),  # same module: the harness cannot patch it either
    }
    assert "SyntaxError" in found["pkg/broken.py", SkipKind.FILE, None]
    assert "No such file" in found["pkg/ghost.py", SkipKind.FILE, None]
    assert "cannot decode" in found["pkg/latin.py", SkipKind.FILE, None]
    assert "null bytes" in found["pkg/nul.py", SkipKind.FILE, None]
    assert "and/or chain of 3000 operands" in found["tests/test_long.py", SkipKind.TEST_CODE, None]
    assert "and/or chain of 3000 operands" in found["pkg/deep.py", SkipKind.FUNCTION, "deep"]
    assert all(s.repo == "acme/lib" for s in skipped)

    card = render_card([], [], [], [], [], 0.5, (), skipped)
    assert "In all: 4 file, 1 test_code, 2 function." in card
    assert "| acme/lib | 4 | 1 | 2 |" in card
    assert "Mining left nothing out." in render_card([], [], [], [], [], 0.5)
