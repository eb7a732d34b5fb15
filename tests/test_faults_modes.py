"""Artifacts honour the umask like a plain ``open()`` (every file under ``results/`` was
0600, whatever the umask, since atomic writes went through ``mkstemp``)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from dlbench.records import CloneRecord, CloneStatus
from dlbench.store import atomic_open, write_frame, write_json, write_jsonl, write_text

RECORD = CloneRecord(full_name="a/b", slug="a__b", clone_url="", path="p", sha=None, status=CloneStatus.OK)


@pytest.fixture
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def write_each_kind(folder: Path) -> list[Path]:
    """One artifact through every atomic writer of ``dlbench.store``."""
    paths = [folder / name for name in ("a.jsonl", "b.json", "c.md", "d.csv", "e.bin")]
    write_jsonl(paths[0], [RECORD])
    write_json(paths[1], RECORD)
    write_text(paths[2], "text\n")
    write_frame(paths[3], pd.DataFrame({"x": [1]}))
    with atomic_open(paths[4], "wb") as fh:
        fh.write(b"\0")
    return paths


@pytest.mark.parametrize(
    ("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)], indirect=["umask"], ids=["022", "027", "077"]
)
def test_artifacts_get_the_mode_a_plain_open_would(umask: int, mode: int, tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    assert stat.S_IMODE(plain.stat().st_mode) == mode  # what the umask gives an ordinary file
    for path in write_each_kind(tmp_path / "results"):
        assert stat.S_IMODE(path.stat().st_mode) == mode, path.name
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["a.jsonl", "b.json", "c.md", "d.csv", "e.bin"]
