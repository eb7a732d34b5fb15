"""Logging for rule scripts: everything to the rule's log file, progress as counts."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tqdm import tqdm

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


# tqdm's own layout, with scaled counts to one decimal (it prints them whole otherwise)
SCALED = "{l_bar}{bar}| {n:.1f}/{total:.1f} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"


class Progress:
    """Counts work done of ``total``, with tqdm's meter: share, rate, time spent and left.

    On a terminal (stderr a TTY: ``dlbench evaluate`` run by hand) it is a live bar. Elsewhere
    (a rule's log file, CI, a cluster job) it logs one line at most every ``every_s`` seconds
    and at the end, e.g. ``evaluate o__r:  33%|###3      | 2/6 [01:10<02:20, 35.01s/candidate]``,
    so a slow step shows its pace and a hung one its silence.
    """

    def __init__(
        self,
        total: int,
        label: str,
        every_s: float = 5.0,
        logger: logging.Logger | None = None,
        unit: str = "it",
        scale: float = 1.0,
    ):
        """``scale``: units shown per count (counts in bytes shown in MiB: ``1 / 2**20``)."""
        self.total, self.label, self.every_s = total, label, every_s
        scaled = scale != 1  # tqdm reads a scale of 1 as "SI prefixes", False as none
        # the bar and the logged line alike: tqdm's layout, scaled counts to one decimal
        self.style = {"unit": unit, "unit_scale": scale if scaled else False, "ascii": True}
        self.style["bar_format"] = SCALED if scaled else None
        self.done = 0
        self.log = logger or logging.getLogger("dlbench.progress")
        self._last = time.monotonic()
        self._start = self._last
        self.bar = tqdm(total=total, desc=label, file=sys.stderr, **self.style) if _on_terminal() else None

    def expect(self, n: float) -> None:
        """More work than first known (an installer announces its downloads as it starts them)."""
        self.total += n
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.refresh()

    def advance(self, n: float = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
            if self.done >= self.total:
                self.bar.close()
            return
        now = time.monotonic()
        if self.done >= self.total or now - self._last >= self.every_s:
            self._last = now
            self.log.info("%s", self.meter(now - self._start))

    def meter(self, elapsed: float) -> str:
        return tqdm.format_meter(self.done, self.total, elapsed, prefix=self.label, **self.style)


def _on_terminal() -> bool:
    return sys.stderr.isatty()
