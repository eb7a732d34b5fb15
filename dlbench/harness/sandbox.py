"""The ``docker`` backend: candidates run in locked-down containers of the project image.

Every container: no network, memory (no swap) / CPU / pids limits, read-only root with a
small ``/tmp`` tmpfs, uid 10001, all capabilities dropped, ``no-new-privileges``, no
Docker socket and no host path mounted; removed with its anonymous volumes (``v=True``:
images built before layers-5 declare two). Two modes:

``warm``   (``DockerSession``) one container per worker, a supervisor started once by an
           exec whose stdin/stdout is our channel; every candidate is a fork of it, in a
           fresh copy of ``/work/repo`` on the tmpfs, and everything it started is killed
           before the next one.
``naive``  (``run_naive``) one ``docker run`` per candidate (the baseline of the benchmark).

The engine is whatever ``DOCKER_HOST`` names: Docker, or Podman's Docker-compatible service
(rootless on a cluster: docs/CLUSTER.md). Every container's lock-down is read back from the
engine before a candidate runs in it (``lockdown_gaps``): an engine that accepted a limit and
dropped it (rootless Podman on cgroups v1 drops memory, CPU and pids limits with a warning in
its own log only) is an infrastructure fault, never a run without the limit.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from docker.errors import DockerException, NotFound
from docker.models.containers import Container

import docker
from dlbench.config import EvaluateConfig, ImagesConfig
from dlbench.harness.code import support_files
from dlbench.harness.run import (
    PRELOAD,
    REPLY_GRACE_S,
    Candidate,
    Session,
    SessionLost,
    preload_args,
    request,
    run_sessions,
    wait_readable,
)
from dlbench.harness.verdict import RunResult
from dlbench.images.build import REPO_DIR, RUNNER_UID, SUPPORT_DIR, build_project_image, docker_client
from dlbench.records import CloneRecord, CloneStatus, ImageRecord, ImageStatus
from dlbench.store import read_json, write_json

log = logging.getLogger(__name__)

WORK_DIR = "/tmp/dlbench"
TMPFS_MB = 512
SUPERVISOR_MB = 384  # the warm supervisor and the tmpfs copies, on top of the candidate's memory
# Podman mounts writable, unbounded tmpfs at /run and /var/tmp on a read-only root (its
# read_only_tmpfs default, which Podman 4.3's containers.conf cannot turn off): in a warm
# container they would outlive a candidate. Read-only tmpfs take their place.
PODMAN_TMPFS = {"/run": "ro,nosuid,nodev,noexec,size=64k", "/var/tmp": "ro,nosuid,nodev,noexec,size=64k"}
# the check of every container's lock-down; tests turn it off to see what else an engine
# without limits (rootless Podman on cgroups v1) still enforces
REQUIRE_LOCKDOWN = True
LABEL = "dlbench.sandbox"
OWNER_LABEL = "dlbench.owner"  # host:pid:start time of the evaluator that started the container
_orphans_checked = threading.Event()
_engines: dict[str, str] = {}  # engine_name's answer per endpoint
STDERR_KEEP = 64 * 1024
STOP_SETTLE_S = 3.0


def supervisor_command(
    mode: str,
    preload: tuple[str, ...] = (),
    discover: bool = False,
    skip: tuple[str, ...] = (),
    private: tuple[str, ...] | None = None,
) -> list[str]:
    return [
        "python", f"{SUPPORT_DIR}/supervisor.py", mode, "--repo", REPO_DIR, "--work", WORK_DIR,
        "--plugin", f"{SUPPORT_DIR}/plugin.py", *preload_args(preload, discover, skip, private), "--sandboxed",
    ]  # fmt: skip


def container_options(cfg: EvaluateConfig, test_env: Mapping[str, str] | None = None, engine: str = "docker") -> dict:
    """The lock-down of every sandbox container (docker SDK ``containers.run`` keywords);
    ``test_env``: the variables the project's own test runs set (``deps.testenv``);
    ``engine``: ``docker`` or ``podman`` (``engine_name``)."""
    memory = f"{cfg.memory_mb + SUPERVISOR_MB}m"
    tmpfs = {"/tmp": f"rw,exec,nosuid,nodev,size={TMPFS_MB}m,mode=1777"}
    return {
        "user": f"{RUNNER_UID}:{RUNNER_UID}",
        "network_mode": "none",
        "mem_limit": memory,
        "memswap_limit": memory,
        "nano_cpus": int(cfg.cpus * 1e9),
        "pids_limit": cfg.pids,
        "read_only": True,
        # exec: tests load native code they compile at run time (torch.compile's kernels). noexec
        # stops no candidate: ctypes runs anonymous executable memory (the audit hook reports
        # ctypes, a loaded library among it), a subprocess runs another interpreter
        "tmpfs": {**tmpfs, **PODMAN_TMPFS} if engine == "podman" else tmpfs,
        # /dev/shm: a torch DataLoader's workers hand batches over in it. Its pages count against
        # the memory limit (more than the limit is killed), so it is as large as the limit.
        "shm_size": f"{cfg.memory_mb}m",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "environment": {
            **(test_env or {}),
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        },
        "labels": {LABEL: "1", OWNER_LABEL: owner_id(os.getpid())},
        "detach": True,
    }


def engine_name(client: docker.DockerClient) -> str:
    """``podman`` when the engine behind ``client`` is Podman's Docker-compatible service, else
    ``docker``; asked once per endpoint (the naive mode starts a container per candidate)."""
    url = endpoint(client)
    if url not in _engines:
        components = client.version().get("Components") or []
        _engines[url] = "podman" if any(str(c.get("Name", "")).startswith("Podman") for c in components) else "docker"
    return _engines[url]


def endpoint(client: docker.DockerClient) -> str:
    """The address ``client`` talks to: every unix socket's ``base_url`` is the same
    ``http+docker://localhost``, the socket path is on the session's mounted adapter."""
    adapter = client.api.adapters.get("http+docker://")
    return f"unix://{adapter.socket_path}" if hasattr(adapter, "socket_path") else client.api.base_url


def lockdown_gaps(container: Container, options: Mapping) -> list[str]:
    """What of ``options``'s lock-down the engine reports it did not apply to ``container``
    (empty: all of it). Read back from the engine, which may accept a setting and drop it."""
    container.reload()
    host = container.attrs.get("HostConfig") or {}
    gaps = []
    for key, name in (("Memory", "memory limit"), ("MemorySwap", "swap limit"), ("NanoCpus", "CPU limit"), ("PidsLimit", "pids limit")):  # fmt: skip
        if not host.get(key) or host[key] < 0:
            gaps.append(f"{name} ({key} {host.get(key)})")
    if not host.get("ReadonlyRootfs"):
        gaps.append("read-only root")
    if host.get("NetworkMode") != options["network_mode"]:
        gaps.append(f"network {options['network_mode']} (NetworkMode {host.get('NetworkMode')})")
    if host.get("Privileged") or host.get("CapAdd"):
        gaps.append("no privileges (Privileged or CapAdd set)")
    if "no-new-privileges" not in " ".join(host.get("SecurityOpt") or []):
        gaps.append("no-new-privileges")
    writable = sorted(m for m, o in (host.get("Tmpfs") or {}).items() if m != "/tmp" and "ro" not in str(o).split(","))
    if writable:
        gaps.append(f"no writable mount but /tmp (writable tmpfs at {', '.join(writable)})")
    return gaps


def check_lockdown(container: Container, options: Mapping) -> None:
    """Raise ``LockdownMissing`` when the engine did not apply the whole lock-down (``REQUIRE_LOCKDOWN``)."""
    gaps = lockdown_gaps(container, options)
    if gaps and REQUIRE_LOCKDOWN:
        raise LockdownMissing(
            f"the container engine did not apply the sandbox's {'; '.join(gaps)}: not a sandbox "
            "(rootless Podman needs cgroups v2 with the memory, cpu and pids controllers delegated: docs/CLUSTER.md)"
        )
    if gaps:
        log.warning("the container engine did not apply the sandbox's %s", "; ".join(gaps))


class LockdownMissing(RuntimeError):
    """The engine accepted a container without the lock-down it was asked for."""


def owner_id(pid: int) -> str | None:
    """``host:pid:start time`` of a live process (the start time tells a reused pid apart), else None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            start = fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None
    return f"{socket.gethostname()}:{pid}:{start}"


def is_orphan(owner: str | None) -> bool:
    """A container of an evaluator on this host that is gone (killed with -9, crashed)."""
    host, _, rest = (owner or "").partition(":")
    pid = rest.split(":", 1)[0]
    return host == socket.gethostname() and pid.isdigit() and owner_id(int(pid)) != owner


def remove_orphans(client: docker.DockerClient) -> list[str]:
    """Remove sandbox containers whose evaluator is gone; the ids removed."""
    removed = []
    # another evaluator may remove its containers between the listing and their inspection
    for container in client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True):
        if is_orphan(container.labels.get(OWNER_LABEL)):
            try:
                container.remove(force=True, v=True)
                removed.append(container.short_id)
            except DockerException as exc:  # removed meanwhile by another run
                log.info("could not remove orphan container %s: %s", container.short_id, exc)
    if removed:
        log.warning("removed %d sandbox container(s) left by an interrupted run: %s", len(removed), ", ".join(removed))
    return removed


def remove_orphans_once(client: docker.DockerClient) -> None:
    if not _orphans_checked.is_set():
        _orphans_checked.set()
        remove_orphans(client)


class DockerSession(Session):
    """A warm container with a forking supervisor; our channel is the exec's stdin/stdout."""

    backend = "docker"

    def __init__(
        self,
        image: str,
        cfg: EvaluateConfig,
        client: docker.DockerClient | None = None,
        preload: tuple[str, ...] = PRELOAD,
        test_env: Mapping[str, str] | None = None,
        private: tuple[str, ...] | None = None,
    ):
        super().__init__(cfg, key=image)
        self.image, self.preload, self.test_env = image, preload, dict(test_env or {})
        self.private = private  # the modules requests may rewrite (preload_args)
        self.client = client or docker_client()
        self.container: Container | None = None
        self.sock = None
        self.raw = b""
        self.stdout = b""
        self.stderr = b""

    def _start(self) -> None:
        remove_orphans_once(self.client)
        options = container_options(self.cfg, self.test_env, engine_name(self.client))
        self.container = self.client.containers.run(self.image, ["sleep", "infinity"], **options)
        check_lockdown(self.container, options)  # raised: close() removes the container
        api = self.client.api
        exec_id = api.exec_create(
            self.container.id, supervisor_command("serve", self.preload, self.cfg.preload, self.learned_skip(), self.private), stdin=True, stdout=True, stderr=True, tty=False,
            user=f"{RUNNER_UID}:{RUNNER_UID}",
        )["Id"]  # fmt: skip
        self.sock = api.exec_start(exec_id, socket=True)
        self.raw = self.stdout = self.stderr = b""

    def outside_fault(self) -> str | None:
        """The container stopped or vanished. A candidate cannot do that: it runs as the runner
        inside, and the container's init (``sleep``) ignores signals sent from within."""
        deadline = time.monotonic() + STOP_SETTLE_S  # the stream can end before the engine shows the stop
        while self.container is not None:
            try:
                self.container.reload()
            except NotFound:
                return "the sandbox container was removed"
            except DockerException as exc:
                return f"the Docker engine failed ({exc})"
            state = self.container.attrs.get("State") or {}
            if not state.get("Running"):
                return f"the sandbox container was stopped from outside (status {state.get('Status')}, exit code {state.get('ExitCode')})"
            if time.monotonic() > deadline:
                return None
            time.sleep(0.1)
        return None

    def _socket(self):
        if self.sock is None:
            raise SessionLost("no supervisor")
        return getattr(self.sock, "_sock", self.sock)

    def _send(self, data: bytes) -> None:
        self._socket().sendall(data)

    def _recv_line(self, deadline: float) -> bytes:
        sock = self._socket()
        while b"\n" not in self.stdout:
            if not wait_readable(sock, deadline, lambda: self.sock is None):
                raise SessionLost("no answer before the deadline")
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise SessionLost(
                    f"supervisor stream ended; its stderr: {self.stderr[-2000:].decode(errors='replace')}"
                )
            self.raw += chunk
            self._demux()
        line, self.stdout = self.stdout.split(b"\n", 1)
        return line

    def _demux(self) -> None:
        """Split the engine's multiplexed stream: 8-byte header (stream, size) + payload."""
        while len(self.raw) >= 8:
            stream, size = struct.unpack(">BxxxL", self.raw[:8])
            if len(self.raw) < 8 + size:
                return
            payload, self.raw = self.raw[8 : 8 + size], self.raw[8 + size :]
            if stream == 2:
                self.stderr = (self.stderr + payload)[-STDERR_KEEP:]
            else:
                self.stdout += payload

    def _stop(self) -> None:
        if self.sock is not None:
            sock, self.sock = self._socket(), None
            for end in (lambda: sock.shutdown(socket.SHUT_RDWR), sock.close):  # shutdown wakes a thread reading it
                try:
                    end()
                except OSError:
                    pass
        if self.container is not None:
            remove_container(self.container)
            self.container = None


def remove_container(container) -> None:
    """Remove a sandbox container and its anonymous volumes; a failure is logged, not raised."""
    try:
        container.remove(force=True, v=True)
    except DockerException as exc:
        log.warning("could not remove container %s: %s", container.short_id, exc)


class NaiveDocker:
    """The naive mode behind the session interface: a new container per candidate."""

    backend = "docker"

    def __init__(
        self,
        image: str,
        cfg: EvaluateConfig,
        client: docker.DockerClient | None = None,
        test_env: Mapping[str, str] | None = None,
    ):
        self.image, self.cfg, self.test_env = image, cfg, dict(test_env or {})
        self.client = client or docker_client()

    def run(self, candidate: Candidate) -> RunResult:
        return run_sessions(candidate, lambda part: run_naive(self.image, part, self.cfg, self.client, self.test_env))

    def close(self) -> None:
        """Nothing stays up between candidates."""


def run_naive(
    image: str,
    candidate: Candidate,
    cfg: EvaluateConfig,
    client: docker.DockerClient | None = None,
    test_env: Mapping[str, str] | None = None,
) -> RunResult:
    """One fresh container for one candidate (no warm interpreter): the baseline mode."""
    client = client or docker_client()
    payload = base64.b64encode(json.dumps(request(candidate, cfg)).encode()).decode()
    limit = str(int(candidate.limit(cfg) + REPLY_GRACE_S))
    command = ["timeout", "-s", "KILL", limit, *supervisor_command("once"), "--request", payload]
    remove_orphans_once(client)
    try:
        options = container_options(cfg, test_env, engine_name(client))
        # created, checked, then started: the candidate never runs without its lock-down
        container = client.containers.create(image, command, **{k: v for k, v in options.items() if k != "detach"})
    except DockerException as exc:  # the engine, not the candidate
        return _not_started(exc)
    try:
        try:
            check_lockdown(container, options)
            container.start()
        except (DockerException, LockdownMissing) as exc:
            return _not_started(exc)
        try:
            container.wait(timeout=candidate.limit(cfg) + 2 * REPLY_GRACE_S)
        except Exception as exc:  # noqa: BLE001 - requests' read timeout: the container is stuck
            container.kill()
            return RunResult(violations=[f"the container stopped answering ({exc})"])
        lines = container.logs(stdout=True, stderr=False).decode(errors="replace").strip().splitlines()
    finally:
        container.remove(force=True, v=True)
    try:
        return RunResult.from_response(json.loads(lines[-1]))
    except (IndexError, ValueError):
        return RunResult(violations=["the supervisor was killed before it answered"])


def _not_started(exc: Exception) -> RunResult:
    return RunResult(infra=f"docker could not start the container: {exc}"[:2000])


def build_image_file(
    clone: Path, out: Path, build_log: Path, cfg: EvaluateConfig, images: ImagesConfig, downloads: Path
) -> ImageRecord:
    """The ``build_image`` rule: the project image of one clone, as ``results/images/{repo}.json``,
    built with the machine's download cache ``downloads``.

    A failed clone or build is recorded (status ``image_error``); an engine that does not
    answer raises, so the job fails and a rerun retries instead of keeping an error.
    """
    record = read_json(clone, CloneRecord)
    if record.status != CloneStatus.OK:
        Path(build_log).parent.mkdir(parents=True, exist_ok=True)
        Path(build_log).write_text(f"# no image: the clone failed: {record.error}\n")
        image = ImageRecord(repo=record.slug, sha=record.sha or "", base_image=cfg.base_image, tag=None,
                            status=ImageStatus.IMAGE_ERROR, error=f"clone failed: {record.error}", build_log=str(build_log))  # fmt: skip
    else:
        image = build_project_image(
            Path(record.path),
            record.slug,
            record.sha or "",
            cfg.base_image,
            Path(build_log),
            support_files(),
            images=images,
            downloads=downloads,
        )
    write_json(out, image)
    return image
