"""Run the real workflow in a throw-away copy of the project (shared by end-to-end tests)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IGNORE = shutil.ignore_patterns(
    ".venv",
    ".git",
    "results",
    "logs",
    "benchmarks",
    ".snakemake",
    ".cache",
    "__pycache__",
    "*.egg-info",
    ".pytest_cache",
)


def project_copy(dest: Path) -> Path:
    """A copy of the project tree without results, caches or the virtualenv."""
    shutil.copytree(ROOT, dest, ignore=IGNORE)
    return dest


def snakemake(workdir: Path, *args: str, timeout: float = 900, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run snakemake in ``workdir`` with this interpreter's environment."""
    full_env = {**os.environ, **(env or {})}
    full_env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{full_env.get('PATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )
