"""A project's files as dependency discovery sees them: a list of paths and a reader.

Selection reads a repository through the GitHub API and the image builder reads a
checkout on disk; both hand discovery a ``SourceTree`` so the two read dependencies
through the same code.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

# Folders no test run reads dependencies or tests from.
SKIP_DIRS = frozenset(
    {".git", ".hg", ".tox", ".nox", ".venv", "venv", "node_modules", "site-packages", "__pycache__", "build", "dist"}
)
MAX_FILE_BYTES = 2_000_000


@dataclass
class SourceTree:
    """``paths``: every file as a POSIX path relative to the root; ``read`` returns a file's
    text, or None when it cannot be read (recorded in ``unreadable``)."""

    paths: list[str]
    reader: Callable[[str], str | None]
    unreadable: list[str] = field(default_factory=list)

    def read(self, path: str) -> str | None:
        text = self.reader(path)
        if text is None and path not in self.unreadable:
            self.unreadable.append(path)
        return text

    def exists(self, path: str) -> bool:
        return path in self._path_set

    @cached_property
    def _path_set(self) -> frozenset[str]:
        return frozenset(self.paths)


def disk_tree(root: Path) -> SourceTree:
    """The files of a checkout (no symlinked folders followed, VCS and build folders skipped)."""
    root = Path(root)
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not Path(dirpath, d).is_symlink())
        rel = Path(dirpath).relative_to(root)
        paths += [PurePosixPath(rel, name).as_posix() for name in sorted(filenames)]
    return SourceTree(paths=paths, reader=lambda path: _read_text(root / path))


def _read_text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None  # a dangling symlink, a loop, a permission problem: skipped and recorded
