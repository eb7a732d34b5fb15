"""Dates from the history of a function's own lines: one ``git blame`` per file.

``git blame --porcelain -L a,b -L c,d <sha> -- path`` blames all ranges of one file in a
single process; each line's committer date is read from the porcelain headers (printed
once per commit). ``first_added`` is the oldest date among the function's lines and
``last_modified`` the newest (committer dates in the committer's time zone, as
``git log --format=%cs`` prints them).
"""

from __future__ import annotations

import logging
import subprocess
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

log = logging.getLogger(__name__)

LineRange = tuple[int, int]


def head_sha(root: Path) -> str | None:
    """The checkout's HEAD commit, or None when it is not a git work tree."""
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def blame_dates(root: Path, sha: str, path: str, ranges: list[LineRange]) -> dict[LineRange, tuple[date, date]]:
    """``(first_added, last_modified)`` per line range of ``path`` at commit ``sha``."""
    if not ranges:
        return {}
    args = ["git", "-C", str(root), "blame", "--porcelain"]
    for start, end in sorted(set(ranges)):
        args += ["-L", f"{start},{end}"]
    # blame echoes the file's lines: a latin-1 source must not fail the decoding of the dates
    proc = subprocess.run(
        [*args, sha, "--", path], capture_output=True, encoding="utf-8", errors="replace", check=False
    )
    if proc.returncode != 0:
        log.warning("git blame %s@%s failed: %s", path, sha[:12], proc.stderr.strip())
        return {}
    line_dates = parse_porcelain(proc.stdout)
    result = {}
    for start, end in ranges:
        dates = [line_dates[n] for n in range(start, end + 1) if n in line_dates]
        if dates:
            result[(start, end)] = (min(dates), max(dates))
    return result


def parse_porcelain(text: str) -> dict[int, date]:
    """Map final line numbers to committer dates from ``git blame --porcelain`` output."""
    commit_dates: dict[str, date] = {}
    info: dict[str, dict[str, str]] = {}
    line_commit: dict[int, str] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("\t"):
            continue
        head, _, rest = line.partition(" ")
        if len(head) == 40 and all(c in "0123456789abcdef" for c in head):
            current = head
            line_commit[int(rest.split()[1])] = current
            info.setdefault(current, {})
        elif current:
            info[current][head] = rest
    for sha, fields in info.items():
        if "committer-time" in fields:
            commit_dates[sha] = _local_date(int(fields["committer-time"]), fields.get("committer-tz", "+0000"))
    return {n: commit_dates[sha] for n, sha in line_commit.items() if sha in commit_dates}


def _local_date(epoch: int, tz: str) -> date:
    sign = -1 if tz.startswith("-") else 1
    offset = timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5])) * sign
    return datetime.fromtimestamp(epoch, timezone(offset)).date()
