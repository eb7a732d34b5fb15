"""Logging for rule scripts: everything to the rule's log file, progress as counts."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@contextmanager
def script_logging(log_path: str | Path) -> Iterator[logging.Logger]:
    """Send logging and stderr to ``log_path``; log any exception before re-raising it."""
    path = Path(log_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        handler = logging.StreamHandler(fh)
        handler.setFormatter(logging.Formatter(FORMAT))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        old_stderr, sys.stderr = sys.stderr, fh
        log = logging.getLogger("dlbench")
        try:
            yield log
        except BaseException:
            log.exception("job failed")
            raise
        finally:
            sys.stderr = old_stderr
            root.removeHandler(handler)


class Progress:
    """Logs ``label: done/total`` at most every ``every_s`` seconds and at the end."""

    def __init__(self, total: int, label: str, every_s: float = 5.0, logger: logging.Logger | None = None):
        self.total, self.label, self.every_s = total, label, every_s
        self.done = 0
        self.log = logger or logging.getLogger("dlbench.progress")
        self._last = time.monotonic()
        self._start = self._last

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.done >= self.total or now - self._last >= self.every_s:
            self._last = now
            rate = self.done / max(now - self._start, 1e-9)
            self.log.info("%s: %d/%d (%.1f/s)", self.label, self.done, self.total, rate)
