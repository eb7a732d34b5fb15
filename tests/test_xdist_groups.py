"""The suite's `xdist_group` marks must hold: SLURM tests share one machine-wide cluster
config (/etc/slurm/slurm.conf) and image tests one built image. pytest-xdist groups through
a nodeid suffix that pytest 9.2 silently drops (pytest-xdist#1386), so this runs xdist on
two grouped tests with the installed versions and checks they share a worker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

GROUPED = """
import os, time, pytest
pytestmark = pytest.mark.xdist_group("shared")

@pytest.mark.parametrize("i", range(2))
def test_grouped(i):
    time.sleep(0.5)  # long enough for the idle worker to take the other test if it may
    with open(os.environ["WORKERS_FILE"], "a") as fh:
        fh.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""


def test_loadgroup_keeps_a_group_on_one_worker(tmp_path: Path):
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    workers = tmp_path / "workers.txt"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-q",
            "-p",
            "no:cacheprovider",
            "test_grouped.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "WORKERS_FILE": str(workers)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    seen = workers.read_text().split()
    assert len(seen) == 2 and len(set(seen)) == 1, f"one group ran on workers {seen}: pin pytest as pyproject.toml does"
