"""Suite-wide hooks: record which Docker tests passed so CI can prove the engine was used."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def docker_answers() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def require_docker() -> None:
    """Docker tests fail (not skip) where no engine answers, unless DLBENCH_NO_DOCKER=1."""
    if os.environ.get("DLBENCH_NO_DOCKER") == "1":
        pytest.skip("DLBENCH_NO_DOCKER=1: this machine has no container engine")
    if not docker_answers():
        pytest.fail("the Docker engine does not answer (set DLBENCH_NO_DOCKER=1 on a machine without one)")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Under xdist the controller sees every worker's reports again: record them there only.
    marker = os.environ.get("DLBENCH_DOCKER_MARKER")
    if os.environ.get("PYTEST_XDIST_WORKER") or not marker:
        return
    if report.when == "call" and report.passed and ("docker" in report.keywords or "podman" in report.keywords):
        with open(marker, "a", encoding="utf-8") as fh:
            fh.write(report.nodeid + "\n")


def docker_volumes(dangling: bool = False) -> set[str]:
    """Names of the engine's volumes; ``dangling``: only those no container uses (what a
    container removed without its volumes leaves behind)."""
    import docker

    volumes = docker.from_env().volumes.list(filters={"dangling": True} if dangling else None)
    return {volume.name for volume in volumes}


def volumes_left_since(before: set[str]) -> set[str]:
    """Volumes no container uses that were not there before (another test's running
    containers hold theirs, so they do not count)."""
    return docker_volumes(dangling=True) - before
