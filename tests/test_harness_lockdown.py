"""The read-back of a sandbox container's lock-down (``sandbox.lockdown_gaps``), on the
HostConfig an engine reports: Docker's, and rootless Podman's on cgroups v1 as measured
(docs/CLUSTER.md). No engine needed; tests/test_harness_podman.py runs it for real."""

from __future__ import annotations

import logging

import pytest

import docker
from dlbench.config import EvaluateConfig
from dlbench.harness import sandbox

CFG = EvaluateConfig(memory_mb=256, pids=64)
DOCKER = {  # what Docker 20.10 reports for container_options(CFG)
    "Memory": 671088640,
    "MemorySwap": 671088640,
    "NanoCpus": 1000000000,
    "PidsLimit": 64,
    "ReadonlyRootfs": True,
    "NetworkMode": "none",
    "Privileged": False,
    "CapAdd": None,
    "CapDrop": ["ALL"],
    "SecurityOpt": ["no-new-privileges"],
    "Tmpfs": {"/tmp": "rw,exec,nosuid,nodev,size=512m,mode=1777"},
}
PODMAN_V1 = {  # rootless Podman 4.3.1 on cgroups v1, for container_options(CFG) (measured 2026-11-26)
    **DOCKER,
    "Memory": 0,
    "MemorySwap": 0,
    "NanoCpus": 0,
    "PidsLimit": 0,
    "Tmpfs": {
        "/run": "rw,rprivate,nosuid,nodev,tmpcopyup",
        "/tmp": "rw,exec,nosuid,nodev,size=512m,mode=1777,rprivate,tmpcopyup",
        "/var/tmp": "rw,rprivate,nosuid,nodev,tmpcopyup",
    },
}


class Reported:
    """A container as the docker SDK gives it: ``reload()`` then ``attrs``."""

    def __init__(self, host_config: dict):
        self.attrs = {"HostConfig": host_config}
        self.reloads = 0

    def reload(self) -> None:
        self.reloads += 1


def test_docker_applies_the_whole_lock_down() -> None:
    container = Reported(DOCKER)
    assert sandbox.lockdown_gaps(container, sandbox.container_options(CFG)) == []
    assert container.reloads == 1  # read back from the engine, not from what was asked


def test_rootless_podman_on_cgroups_v1_drops_the_limits_and_adds_writable_tmpfs() -> None:
    gaps = sandbox.lockdown_gaps(Reported(PODMAN_V1), sandbox.container_options(CFG))
    assert gaps == [
        "memory limit (Memory 0)",
        "swap limit (MemorySwap 0)",
        "CPU limit (NanoCpus 0)",
        "pids limit (PidsLimit 0)",
        "no writable mount but /tmp (writable tmpfs at /run, /var/tmp)",
    ]


def test_podman_options_mount_read_only_tmpfs_over_run_and_var_tmp() -> None:
    options = sandbox.container_options(CFG, engine="podman")
    assert set(options["tmpfs"]) == {"/tmp", "/run", "/var/tmp"}
    assert all("ro" in options["tmpfs"][m].split(",") for m in ("/run", "/var/tmp"))
    assert sandbox.container_options(CFG)["tmpfs"].keys() == {"/tmp"}  # Docker's unchanged
    reported = {**PODMAN_V1["Tmpfs"], **{m: o + ",rprivate" for m, o in sandbox.PODMAN_TMPFS.items()}}
    gaps = sandbox.lockdown_gaps(Reported({**PODMAN_V1, "Tmpfs": reported}), options)
    assert [g.split(" (")[0] for g in gaps] == ["memory limit", "swap limit", "CPU limit", "pids limit"]


@pytest.mark.parametrize(
    "change, gap",
    [
        ({"ReadonlyRootfs": False}, "read-only root"),
        ({"NetworkMode": "bridge"}, "network none (NetworkMode bridge)"),
        ({"Privileged": True}, "no privileges (Privileged or CapAdd set)"),
        ({"CapAdd": ["SYS_ADMIN"]}, "no privileges (Privileged or CapAdd set)"),
        ({"SecurityOpt": []}, "no-new-privileges"),
        ({"PidsLimit": -1}, "pids limit (PidsLimit -1)"),
    ],
)
def test_each_part_of_the_lock_down_is_checked(change: dict, gap: str) -> None:
    assert sandbox.lockdown_gaps(Reported({**DOCKER, **change}), sandbox.container_options(CFG)) == [gap]


def test_a_gap_is_refused_unless_the_check_is_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    options = sandbox.container_options(CFG)
    sandbox.check_lockdown(Reported(DOCKER), options)
    with pytest.raises(sandbox.LockdownMissing, match=r"memory limit \(Memory 0\).*not a sandbox"):
        sandbox.check_lockdown(Reported(PODMAN_V1), options)
    monkeypatch.setattr(sandbox, "REQUIRE_LOCKDOWN", False)
    with caplog.at_level(logging.WARNING, logger="dlbench.harness.sandbox"):
        sandbox.check_lockdown(Reported(PODMAN_V1), options)
    assert "did not apply the sandbox's memory limit" in caplog.text


def test_engines_on_different_unix_sockets_are_told_apart() -> None:
    """Every unix socket's base_url reads ``http+docker://localhost``: the engine answer is
    cached per socket, so a Podman service beside Docker is not taken for Docker."""
    ours = docker.DockerClient(base_url="unix:///var/run/docker.sock", version="1.41")
    theirs = docker.DockerClient(base_url="unix:///run/user/1000/podman/podman.sock", version="1.41")
    remote = docker.DockerClient(base_url="tcp://127.0.0.1:2375", version="1.41")
    assert sandbox.endpoint(ours) == "unix:///var/run/docker.sock"
    assert sandbox.endpoint(theirs) == "unix:///run/user/1000/podman/podman.sock"
    assert sandbox.endpoint(remote) == "http://127.0.0.1:2375"
