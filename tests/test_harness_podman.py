"""The docker backend on rootless Podman's Docker-compatible service (docs/CLUSTER.md).

``make system-deps`` installs podman (CI runs them); they skip only where it is not installed
(``apt-get install podman uidmap slirp4netns fuse-overlayfs``, as root). Where it is, they
run for real: as root they create an unprivileged user (``dlbench-podman``, with its
/etc/subuid range) and start ``podman system service`` as that user for the module, or they
use the rootless service ``DLBENCH_PODMAN_HOST`` names. The project image is built by Docker
(``require_docker``) and loaded into Podman through its API, as a site converts images.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import docker
from dlbench.harness import sandbox
from dlbench.harness.evaluate import evaluate_repo
from dlbench.records import CloneRecord, EvalStatus, ImageRecord
from tests.test_harness_run import CFG, GOLD_RELU, HOSTILE, NULL_RELU, RELU, TASKS, by_status, clone, gen, image  # noqa: F401 - module fixtures: the tiny repository, its image

# the image is test_harness_run's: built by one worker (harness_docker)
pytestmark = [pytest.mark.podman, pytest.mark.xdist_group("harness_docker")]

USER = "dlbench-podman"
STORAGE = '[storage]\ndriver = "overlay"\n[storage.options.overlay]\nmount_program = "/usr/bin/fuse-overlayfs"\n'


def as_user(uid: int, *command: str) -> list[str]:
    home = pwd.getpwuid(uid).pw_dir
    return ["runuser", "-u", USER, "--", "env", f"XDG_RUNTIME_DIR=/run/user/{uid}", f"HOME={home}", *command]


@pytest.fixture(scope="module")
def podman_host() -> Iterator[str]:
    """``unix://`` address of a rootless Podman service."""
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (make system-deps, as root, installs it)")
    if os.environ.get("DLBENCH_PODMAN_HOST"):
        yield os.environ["DLBENCH_PODMAN_HOST"]
        return
    if os.getuid() != 0:
        pytest.fail("set DLBENCH_PODMAN_HOST to a rootless Podman service (only root can start one for the tests)")
    try:
        uid = pwd.getpwnam(USER).pw_uid
    except KeyError:  # Debian's useradd gives the new user a /etc/subuid and /etc/subgid range
        subprocess.run(["useradd", "--create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
        uid = pwd.getpwnam(USER).pw_uid
    home = Path(pwd.getpwuid(uid).pw_dir)
    runtime = Path(f"/run/user/{uid}")
    (runtime / "podman").mkdir(parents=True, exist_ok=True)
    conf = home / ".config/containers/storage.conf"
    if shutil.which("fuse-overlayfs") and not conf.exists():  # else Podman stores every layer whole (vfs)
        conf.parent.mkdir(parents=True, exist_ok=True)
        conf.write_text(STORAGE)
    subprocess.run(["chown", "-R", f"{USER}:{USER}", str(runtime), str(home)], check=True)
    socket = runtime / "podman/podman.sock"
    service = subprocess.Popen(
        as_user(uid, "podman", "system", "service", "--time=0", f"unix://{socket}"),
        cwd=home,
        start_new_session=True,  # runuser does not pass SIGTERM on: the group is ended at teardown
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not socket.exists():
            if service.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"podman system service did not start: {service.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
        yield f"unix://{socket}"
    finally:
        os.killpg(service.pid, signal.SIGTERM)
        service.wait(timeout=30)
        # Podman 4.3 leaves a conmon per exec session (the supervisors) after their container is
        # removed, and its pause process: this user runs nothing else
        left = subprocess.run(["ps", "-u", USER, "-o", "pid="], capture_output=True, text=True).stdout.split()
        for pid in map(int, left):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


@pytest.fixture(scope="module")
def podman(podman_host: str, image: ImageRecord) -> Iterator[docker.DockerClient]:
    """A client of the Podman service holding the project image (``docker save``, then loaded)."""
    client = docker.DockerClient(base_url=podman_host, timeout=300)
    assert sandbox.engine_name(client) == "podman"
    client.images.load(b"".join(docker.from_env(timeout=300).images.get(image.tag).save(named=image.tag)))
    saved = os.environ.get("DOCKER_HOST")
    os.environ["DOCKER_HOST"] = podman_host  # the harness's docker_client() follows DOCKER_HOST
    try:
        yield client
    finally:
        if saved is None:
            os.environ.pop("DOCKER_HOST", None)
        else:
            os.environ["DOCKER_HOST"] = saved
        client.close()


def gaps(client: docker.DockerClient, tag: str) -> list[str]:
    """What of the lock-down this engine drops (rootless Podman on cgroups v1: the limits)."""
    options = sandbox.container_options(CFG, engine="podman")
    container = client.containers.create(tag, ["true"], **{k: v for k, v in options.items() if k != "detach"})
    try:
        return sandbox.lockdown_gaps(container, options)
    finally:
        container.remove(force=True, v=True)


def test_podman_without_the_limits_is_refused_not_run(
    podman: docker.DockerClient, image: ImageRecord, clone: CloneRecord, tmp_path: Path
) -> None:
    """Every candidate is an infrastructure fault where the engine drops a limit; where it
    keeps them all (cgroups v2, controllers delegated), gold passes and null fails."""
    missing = gaps(podman, image.tag)
    gens = [gen(RELU, GOLD_RELU), gen(RELU, NULL_RELU)]
    warm = evaluate_repo(clone, TASKS, gens, image, "docker", CFG, jobs=1, evidence_root=tmp_path / "warm")
    naive = evaluate_repo(clone, TASKS, gens, image, "docker", CFG, jobs=1, evidence_root=tmp_path / "naive", mode="naive")  # fmt: skip
    if not missing:
        assert by_status(warm) == by_status(naive) == ["pass", "fail"]
        return
    for result in warm + naive:
        assert result.status == EvalStatus.INFRA_ERROR and "not a sandbox" in result.detail, result.detail
        assert all(gap.split(" (")[0] in result.detail for gap in missing)


ISOLATION = {  # what must still hold without the limits: no memory hog or fork bomb, which would reach the host
    "network access": {"fail"},
    "write outside its copy": {"pass"},  # a right answer; its /tmp file is gone for the next candidate
    "read what an earlier candidate left in /tmp": {"fail"},
    "edit the tests": {"sandbox_violation"},
    "kill its parent": {"sandbox_violation"},
    "infinite loop": {"timeout"},
}


def test_podman_isolates_candidates_even_without_limits(
    podman: docker.DockerClient,
    image: ImageRecord,
    clone: CloneRecord,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the lock-down check off: gold passes, null fails, and hostile candidates that need
    the network, another candidate's files or the tests get nothing, each followed by gold."""
    monkeypatch.setattr(sandbox, "REQUIRE_LOCKDOWN", False)
    gens = [gen(RELU, GOLD_RELU, model="gold"), gen(RELU, NULL_RELU, model="null")]
    for i, name in enumerate(ISOLATION, start=1):
        gens += [gen(RELU, HOSTILE[name], sample=i), gen(RELU, GOLD_RELU, model="gold", sample=i)]
    results = evaluate_repo(clone, TASKS, gens, image, "docker", CFG, jobs=1, evidence_root=tmp_path)
    assert by_status(results[:2]) == ["pass", "fail"], [r.detail for r in results[:2]]
    for i, (name, expected) in enumerate(ISOLATION.items(), start=1):
        bad, gold_after = results[2 * i], results[2 * i + 1]
        assert bad.status.value in expected, (name, bad.status, bad.detail)
        assert gold_after.status == EvalStatus.PASS, (name, gold_after.status, gold_after.detail)
    assert "Network is unreachable" in results[2].detail


def test_podman_tmpfs_leaves_only_tmp_writable(podman: docker.DockerClient, image: ImageRecord) -> None:
    """Podman's own writable /run and /var/tmp on a read-only root are replaced by read-only ones."""
    options = sandbox.container_options(CFG, engine="podman")
    script = "for d in /tmp /var/tmp /run /work/repo /etc; do touch $d/x 2>/dev/null && echo $d; done"
    container = podman.containers.run(image.tag, ["sh", "-c", script], **options)
    try:
        container.wait(timeout=60)
        assert container.logs().decode().split() == ["/tmp"]
    finally:
        container.remove(force=True, v=True)
