"""Progress of long steps: tqdm's meter (rate, time left) in logs, a live bar on a terminal."""

from __future__ import annotations

import fcntl
import logging
import os
import pty
import struct
import subprocess
import sys
import termios

from dlbench.logs import Progress


def test_off_a_terminal_progress_logs_rate_and_time_left(caplog, monkeypatch):
    monkeypatch.setattr(sys, "stderr", open(os.devnull, "w"))  # a rule's log file: not a TTY
    caplog.set_level(logging.INFO, logger="dlbench.progress")
    progress = Progress(4, "evaluate o__r", every_s=0.0, unit="candidate")
    assert progress.bar is None
    for _ in range(4):
        progress.advance()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4
    assert lines[1].startswith("evaluate o__r:  50%|") and "2/4 [" in lines[1] and "<" in lines[1]  # spent<left
    assert "candidate" in lines[1] and lines[-1].split("|")[0].endswith("100%")


def test_on_a_terminal_progress_draws_a_live_bar_and_logs_nothing():
    """A real pseudo-terminal as stderr: the bar is drawn there, no log line is written."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    script = (
        "import logging, sys\n"
        "logging.basicConfig(stream=sys.stdout, level=logging.INFO)\n"
        "from dlbench.logs import Progress\n"
        "p = Progress(3, 'mine o__r', every_s=0.0, unit='file')\n"
        "[p.advance() for _ in range(3)]\n"
        "print('bar' if p.bar is not None else 'no bar')\n"
    )
    run = subprocess.run([sys.executable, "-c", script], stderr=child, stdout=subprocess.PIPE, text=True, timeout=60)
    os.close(child)
    drawn = _read_all(main)
    assert run.returncode == 0 and run.stdout.strip() == "bar"  # stdout: no progress log lines
    assert "mine o__r: 100%" in drawn and "3/3" in drawn


def _read_all(fd: int) -> str:
    """Everything written to a pseudo-terminal whose other end is closed (EIO ends it)."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def test_an_image_builds_downloads_log_their_rate_and_time_left(caplog, monkeypatch):
    """uv's own lines, as a build step streams them (cut anywhere): each announced download
    grows the total, each finished one advances it, in MiB."""
    from dlbench.images.layers import DownloadMeter

    monkeypatch.setattr(sys, "stderr", open(os.devnull, "w"))
    caplog.set_level(logging.INFO, logger="dlbench.progress")
    meter = DownloadMeter()
    meter.feed("Resolved 30 packages in 2.1s\n")
    assert meter.progress is None  # a step that downloads nothing shows no meter
    monkeypatch.setattr(DownloadMeter, "EVERY_S", 0.0)
    text = (
        "Resolved 30 packages in 2.1s\nDownloading torch (846.8MiB)\nDownloading numpy (16.0MiB)\n"
        "Downloading tiny (512.0KiB)\n Downloaded tiny\n Downloaded numpy\n Downloaded torch\nInstalled 30 packages\n"
    )
    for start in range(0, len(text), 7):
        meter.feed(text[start : start + 7])
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3 and meter.progress.total == meter.progress.done == round((846.8 + 16.0 + 0.5) * 2**20)
    assert lines[0].startswith("image build: downloads:   0%|") and "MiB/s" in lines[0] and "<" in lines[0]
    assert lines[-1].split("|")[0].endswith("100%") and "863.3/863.3" in lines[-1]


def test_downloads_finished_in_another_order_end_at_exactly_their_total(caplog, monkeypatch):
    """Sizes summed in another order than announced: as floats 0.1 + 0.2 + 0.3 MiB is not
    0.3 + 0.2 + 0.1 MiB, and the meter ended past its total ("-00:00" left, tqdm's clamping
    warning) or short of it (no last line)."""
    from dlbench.images.layers import DownloadMeter

    monkeypatch.setattr(sys, "stderr", open(os.devnull, "w"))
    monkeypatch.setattr(DownloadMeter, "EVERY_S", 3600.0)
    caplog.set_level(logging.INFO, logger="dlbench.progress")
    meter = DownloadMeter()
    meter.feed("".join(f"Downloading p{i} (0.{i}MiB)\n" for i in (1, 2, 3)))
    meter.feed("".join(f" Downloaded p{i}\n" for i in (3, 2, 1)))
    assert meter.progress.done == meter.progress.total
    last = caplog.records[-1].getMessage()
    assert "100%" in last and "-00:00" not in last
