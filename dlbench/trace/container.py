"""Run a repository's tests once with the tracer in a container of its project image.

The image is the one evaluation uses (``images.build``); the plugin and the list of
test-code files are copied into the container before it starts (``put_archive``), so the
image's content hash, and with it the sharing with evaluation, does not change. The run
has no network, runs as the image's runner user in a copy of the checkout on its
writable ``/tmp`` (tests and their plugins write next to themselves, as in evaluation),
with a memory limit, and is killed after the session budget and a grace period; what the plugin wrote
by then (a line per finished test) is read back from the stopped container.
"""

from __future__ import annotations

import io
import json
import logging
import shlex
import tarfile
import time
from pathlib import Path

from docker.errors import DockerException
from requests.exceptions import RequestException

from dlbench.config import TraceConfig
from dlbench.images.build import REPO_DIR, RUNNER_UID, docker_client
from dlbench.images.layers import VENV_PYTHON
from dlbench.trace.plan import PLUGIN_MODULE, TracePlan, tracer_argv

log = logging.getLogger(__name__)

PLUGIN_SOURCE = Path(__file__).resolve().parent / "plugin.py"
REPO_COPY = "/tmp/repo"  # the tests run here: /work/repo is read-only
TRACE_DIR = "/opt/dlbench-trace"  # plugin, support list and output; owned by the runner
OUT_FILE = f"{TRACE_DIR}/trace.jsonl"
SUPPORT_FILE = f"{TRACE_DIR}/support.json"
GRACE_S = 120  # past the budget: the test running then, teardown and interpreter exit
TMPFS = "rw,nosuid,nodev,size=4g,mode=1777"
ENVIRONMENT = {
    "PYTHONPATH": f"{TRACE_DIR}:{REPO_COPY}:{REPO_COPY}/src",
    "HOME": "/tmp/home",
    "MPLCONFIGDIR": "/tmp/home/.config/matplotlib",
    "MPLBACKEND": "Agg",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}


def trace_in_image(tag: str, plan: TracePlan, cfg: TraceConfig, log_path: Path) -> list[str]:
    """The plugin's raw lines from one traced run of the plan in image ``tag``; the
    container's output goes to ``log_path``."""
    client = docker_client()
    argv = tracer_argv(VENV_PYTHON, plan, REPO_COPY, OUT_FILE, SUPPORT_FILE, cfg)
    command = ["sh", "-c", f"cp -r {REPO_DIR} {REPO_COPY} && cd {REPO_COPY} && exec {shlex.join(argv)}"]
    container = client.containers.create(
        tag, command, user=f"{RUNNER_UID}:{RUNNER_UID}", network_mode="none",
        environment=ENVIRONMENT, tmpfs={"/tmp": TMPFS}, mem_limit=f"{cfg.memory_mb}m",
        memswap_limit=f"{cfg.memory_mb}m", cap_drop=["ALL"], security_opt=["no-new-privileges"],
        pids_limit=1024, labels={"dlbench.trace": "1"},
    )  # fmt: skip
    try:
        container.put_archive("/", trace_archive(plan))
        start = time.monotonic()
        container.start()
        _wait(container, cfg.budget_s + GRACE_S)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_bytes(container.logs())
        lines = read_output(container)
        log.info("traced %d test runs in %.0fs", len(lines), time.monotonic() - start)
        return lines
    finally:
        container.remove(force=True, v=True)


def _wait(container, timeout_s: float) -> None:
    try:
        code = container.wait(timeout=timeout_s)["StatusCode"]
        log.info("traced run exited with %s", code)
    except (RequestException, DockerException):
        log.warning(
            "traced run still going after %.0fs: killed (the tests it finished are kept)",
            timeout_s,
        )
        container.kill()


def trace_archive(plan: TracePlan) -> io.BytesIO:
    """``TRACE_DIR`` with the plugin and the support list, writable by the runner only."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        folder = tarfile.TarInfo(TRACE_DIR.lstrip("/"))
        folder.type, folder.mode, folder.uid, folder.gid = (
            tarfile.DIRTYPE,
            0o755,
            RUNNER_UID,
            RUNNER_UID,
        )
        tar.addfile(folder)
        _add(tar, f"{PLUGIN_MODULE}.py", PLUGIN_SOURCE.read_bytes())
        _add(tar, Path(SUPPORT_FILE).name, json.dumps(plan.support).encode())
    archive.seek(0)
    return archive


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(f"{TRACE_DIR.lstrip('/')}/{name}")
    info.size, info.mode = (
        len(data),
        0o644,
    )  # root-owned: the tests cannot change the tracer
    tar.addfile(info, io.BytesIO(data))


def read_output(container) -> list[str]:
    """The plugin's lines (none when it never started: collection failed)."""
    try:
        stream, _ = container.get_archive(OUT_FILE)
    except DockerException as exc:
        log.warning("no trace output: %s", exc)
        return []
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        member = tar.extractfile(tar.getmembers()[0])
        return member.read().decode().splitlines() if member else []
