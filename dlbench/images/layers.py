"""Image layers built by running a step in a container and committing it.

The classic builder cannot mount a cache into a build step; a container can. Each layer
is made by ``docker run`` of an install script on the host network, with the machine's
download cache (``storage.downloads``), the host's uv and CA bundle bind-mounted read-only
for that step only, then ``docker commit``. Nothing mounted ends up in the image, and a
second build downloads nothing the cache already holds.
"""

from __future__ import annotations

import fcntl
import io
import logging
import re
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from docker.errors import DockerException, ImageNotFound
from docker.models.containers import Container
from docker.types import Mount
from requests.exceptions import RequestException

import docker
from dlbench.logs import Progress

log = logging.getLogger(__name__)

RUNNER_UID = 10001
REPO_DIR = "/work/repo"
SUPPORT_DIR = "/opt/dlbench"
VENV_PYTHON = "/opt/venv/bin/python"
BUILD_DIR = "/opt/dlbench-build"  # mounted during a build step only
STEP_INPUTS = f"{BUILD_DIR}/in"  # where a build step finds its input files (run_step's ``inputs``)
CACHE_DIR = "/opt/dlbench-cache"
BUILD_TIMEOUT_S = 3600
NETWORK_FAILURE = re.compile(
    r"error sending request|dns error|[Cc]onnection (refused|reset)|timed out|[Nn]etwork is unreachable"
)
STALE_STEP_S = 2 * BUILD_TIMEOUT_S  # a step container exited this long ago is nobody's
LABEL = "dlbench.layer"  # framework | project
STEP_LABEL = "dlbench.build"  # on build and check containers only
FRAMEWORKS_LABEL = "dlbench.frameworks"
BASE_LABEL = "dlbench.base"
RUNTIME_ENV = {
    "PATH": "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "PYTHONPATH": f"{REPO_DIR}:{REPO_DIR}/src",
    "PYTHONDONTWRITEBYTECODE": "1",
    "LANG": "C.UTF-8",
}
# Works on the registry-free base and on python:3.11-slim (no venv, no runner user there).
PREPARE = (
    f"(getent group {RUNNER_UID} >/dev/null || groupadd --gid {RUNNER_UID} runner)"
    f" && (getent passwd {RUNNER_UID} >/dev/null || useradd --uid {RUNNER_UID} --gid {RUNNER_UID} --create-home --shell /bin/sh runner)"  # noqa: E501
    f" && ([ -x {VENV_PYTHON} ] || python3 -m venv /opt/venv) && mkdir -p {REPO_DIR} {SUPPORT_DIR}"
)


class StepFailed(RuntimeError):
    """An install step exited non-zero; ``output`` holds what it printed."""

    def __init__(self, message: str, output: str):
        super().__init__(message)
        self.output = output


class DownloadFailed(RuntimeError):
    """An install step could not reach the index: the network's fault, not the recipe's."""


@contextmanager
def machine_lock(cache_dir: Path, name: str) -> Iterator[None]:
    """An exclusive lock for every process on this machine that uses ``cache_dir``."""
    path = cache_dir / "locks" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


APT_GET = "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends"


def apt_script(required: Sequence[str] = (), optional: Sequence[str] = ()) -> str:
    """Shell that installs Debian packages: ``required`` ones or the step fails; each of the
    ``optional`` ones (what a project's CI installs, a repair's shared library) where Debian
    has it, the rest left out with a line saying so. Empty when there is nothing to install;
    the lists are removed after (they are no test's business)."""
    if not required and not optional:
        return ""
    strict = f"; {APT_GET} {' '.join(sorted(required))} >/dev/null" if required else ""
    tried = (
        f"; for p in {' '.join(sorted(optional))}; do"
        f' if apt-cache show --no-all-versions "$p" >/dev/null 2>&1 && {APT_GET} "$p" >/dev/null 2>&1;'
        ' then echo "# Debian package $p: installed (its tests need it)";'
        ' else echo "# Debian package $p: left out (Debian has none of that name, or it did not install)"; fi; done'
        if optional
        else ""
    )
    return f"apt-get update -qq{strict}{tried}; rm -rf /var/lib/apt/lists/*"


def uv_install_script(args: str, system_packages: Sequence[str] = (), optional_packages: Sequence[str] = ()) -> str:
    """The shell step that installs into the image's venv with the mounted uv, after the
    Debian packages asked for (``apt_script``)."""
    apt = apt_script(system_packages, optional_packages)
    return f"set -e; {PREPARE}; {apt + '; ' if apt else ''}{BUILD_DIR}/uv pip install --python {VENV_PYTHON} {args}"


def run_step(
    client: docker.DockerClient,
    image: str,
    script: str,
    inputs: Mapping[str, str | bytes],
    cache_dir: Path,
    uv: Path,
    ca_bundle: Path | None,
    out: IO[str],
    environment: Mapping[str, str] | None = None,
    before_start: Callable[[Container], None] | None = None,
) -> Container:
    """Run ``script`` as root in a new container of ``image`` (host network, cache and
    build files mounted); return the stopped container for ``commit_layer``. Raises
    ``StepFailed`` (the container removed) when the script fails. ``before_start`` puts
    files in the container: afterwards the engine cannot open its file system, since the
    step's build files, a bind mount's source, are gone."""
    with tempfile.TemporaryDirectory(prefix="dlbench-step-") as tmp:
        mounts = _step_mounts(Path(tmp), inputs, cache_dir, uv, ca_bundle)
        env = {"UV_CACHE_DIR": CACHE_DIR, "UV_LINK_MODE": "copy", "UV_NO_PROGRESS": "1", "UV_PYTHON_DOWNLOADS": "never"}
        if ca_bundle:
            env["SSL_CERT_FILE"] = f"{BUILD_DIR}/ca.crt"
        # The step's settings go in its command, not the container's environment: a commit
        # keeps that environment, and a test run would find SSL_CERT_FILE naming a file
        # that is gone (every HTTPS client then fails before it reaches for the network).
        step_env = [f"{key}={value}" for key, value in {**env, **(environment or {})}.items()]
        container = client.containers.create(
            image, ["env", *step_env, "sh", "-c", script], user="root", network_mode="host", mounts=mounts,
            labels={STEP_LABEL: "1"},
        )  # fmt: skip
        try:
            if before_start:
                before_start(container)
            container.start()
            output = _follow(container, out)
            code = container.wait(timeout=BUILD_TIMEOUT_S)["StatusCode"]
        except BaseException:  # the engine failed, or an interrupt (Ctrl-C): leave no step behind
            container.remove(force=True, v=True)
            raise
        if code != 0:
            container.remove(force=True, v=True)
            if NETWORK_FAILURE.search(output):
                raise DownloadFailed(f"build step could not download (exit {code}): {output.strip()[-500:]}")
            raise StepFailed(f"build step exited with {code}", output)
        return container


def remove_finished_steps(client: docker.DockerClient, older_than_s: float = STALE_STEP_S, label: str = "1") -> int:
    """Remove build and check containers an interrupted build left: exited long enough ago
    that no build running in parallel is still committing them (``label``: the step label's
    value, so a test removes only its own)."""
    exited = client.containers.list(
        all=True, filters={"label": f"{STEP_LABEL}={label}", "status": "exited"}, ignore_removed=True
    )
    now = datetime.now(UTC)
    stale = [c for c in exited if (now - _finished_at(c)).total_seconds() > older_than_s]
    for container in stale:
        container.remove(force=True, v=True)
    return len(stale)


def _finished_at(container) -> datetime:
    stamp = container.attrs["State"]["FinishedAt"]  # RFC 3339 with nanoseconds
    return datetime.fromisoformat(re.sub(r"(\.\d{6})\d*", r"\1", stamp).replace("Z", "+00:00"))


def _step_mounts(tmp: Path, inputs: Mapping[str, str | bytes], cache_dir: Path, uv: Path, ca: Path | None) -> list[Mount]:  # fmt: skip
    """Two folder mounts (files mounted one by one would leave mount points that break the
    next step on a committed layer): the download cache, and the step's own files. Bind
    mounts, not ``volumes=``: docker-py would also declare those paths as the container's
    volumes, a commit would keep them, and every container of the image would leave two
    anonymous volumes behind."""
    for name, data in inputs.items():
        (tmp / "in").mkdir(exist_ok=True)
        (tmp / "in" / name).write_bytes(data.encode() if isinstance(data, str) else data)
    shutil.copy2(uv, tmp / "uv")
    if ca:
        shutil.copyfile(ca, tmp / "ca.crt")
    cache_dir.mkdir(parents=True, exist_ok=True)
    return [
        Mount(CACHE_DIR, str(cache_dir.resolve()), type="bind"),
        Mount(BUILD_DIR, str(tmp), type="bind", read_only=True),
    ]


def _follow(container, out: IO[str]) -> str:
    """Copy the step's output to the build log as it comes, with the downloads' progress
    logged (``DownloadMeter``); return it."""
    chunks, meter = [], DownloadMeter()
    for chunk in container.logs(stream=True, follow=True):
        text = chunk.decode(errors="replace")
        chunks.append(text)
        out.write(text)
        out.flush()
        meter.feed(text)
    return "".join(chunks)


# uv's own words, progress bars off or not: ``Downloading torch (846.8MiB)``, `` Downloaded torch``.
DOWNLOADING = re.compile(r"^Downloading (?P<name>\S+) \((?P<size>[\d.]+)(?P<unit>[KMG])iB\)$")
DOWNLOADED = re.compile(r"^ Downloaded (?P<name>\S+)$")
BYTES = {"K": 1024, "M": 1024**2, "G": 1024**3}


class DownloadMeter:
    """An install step's downloads as a ``Progress`` in MiB (rate, time left): uv announces each
    large download as it starts, so the total grows as it goes; torch's wheels are gigabytes,
    and a step that downloads them shows its pace instead of minutes of silence."""

    EVERY_S = 10.0  # between two log lines off a terminal

    def __init__(self) -> None:
        self.progress: Progress | None = None  # made at the first download: most steps have none
        self.sizes: dict[str, int] = {}  # whole bytes: float sums in another order would miss the total
        self._partial = ""

    def feed(self, text: str) -> None:
        *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            if started := DOWNLOADING.match(line.rstrip("\r")):
                self.sizes[started["name"]] = size = round(float(started["size"]) * BYTES[started["unit"]])
                self.progress = self.progress or Progress(
                    0, "image build: downloads", every_s=self.EVERY_S, unit="MiB", scale=1 / BYTES["M"]
                )
                self.progress.expect(size)
            elif (finished := DOWNLOADED.match(line.rstrip("\r"))) and finished["name"] in self.sizes:
                self.progress.advance(self.sizes.pop(finished["name"]))


def commit_layer(container, tag: str, labels: Mapping[str, str], runtime: bool) -> str:
    """Commit the stopped step container as ``tag`` and remove it; ``runtime``: set the
    runner user, work dir and environment the sandbox expects."""
    # The step's own label would otherwise pass to the image and to every container made from it.
    changes = [f"LABEL {key}={_quote(value)}" for key, value in {**labels, STEP_LABEL: ""}.items()]
    changes.append('CMD ["python"]')  # not the step's install command
    if runtime:
        changes += [f"ENV {key}={value}" for key, value in RUNTIME_ENV.items()]
        changes += [f"WORKDIR {REPO_DIR}", f"USER {RUNNER_UID}:{RUNNER_UID}"]
    repository, _, version = tag.rpartition(":")
    try:
        image = container.commit(repository=repository, tag=version, changes=changes)
    finally:
        container.remove(force=True, v=True)
    return image.id


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def copy_tree_into(
    container, checkout: Path, support_files: Mapping[str, bytes], files: Mapping[str, bytes] | None = None
) -> None:
    """The checkout (without ``.git``) at REPO_DIR, the support files at SUPPORT_DIR and
    ``files`` at their absolute paths (the project's own metadata: ``deps.own``), owned by root
    and read-only for everyone else: the runner cannot change them."""
    with tempfile.TemporaryFile() as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:
            tar.add(checkout, arcname=REPO_DIR.lstrip("/"), filter=_owned_by_root)
            for name, data in sorted(support_files.items()):
                _add_bytes(tar, f"{SUPPORT_DIR.lstrip('/')}/{name}", data)
            for path, data in sorted((files or {}).items()):
                _add_bytes(tar, path.lstrip("/"), data)
        archive.seek(0)
        container.put_archive("/", archive)


def site_packages(python_version: str) -> str:
    """The image's site-packages for its Python (``3.11``)."""
    return f"/opt/venv/lib/python{python_version}/site-packages"


def copy_support_into(container, support_files: Mapping[str, bytes]) -> None:
    """The support files alone at SUPPORT_DIR, owned by root (an image without a checkout)."""
    with tempfile.TemporaryFile() as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:
            for name, data in sorted(support_files.items()):
                _add_bytes(tar, f"{SUPPORT_DIR.lstrip('/')}/{name}", data)
        archive.seek(0)
        container.put_archive("/", archive)


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    if ".git" in Path(info.name).parts:
        return None  # history is not the project's code (and may be large)
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if info.isdir():
        info.mode = 0o755
    elif info.isfile():
        info.mode = 0o755 if info.mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) else 0o644
    return info


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    if ".." in Path(name).parts or Path(name).is_absolute():
        raise ValueError(f"support file name escapes {SUPPORT_DIR}: {name!r}")
    info = tarfile.TarInfo(name)
    info.size, info.uid, info.gid = len(data), 0, 0
    info.mode = 0o755 if data.startswith(b"#!") else 0o644  # a script: the supervisor execs it
    tar.addfile(info, io.BytesIO(data))


def framework_layers(client: docker.DockerClient, base_id: str) -> list[list[str]]:
    """The framework pin sets of the layers already built on ``base_id``, newest first."""
    images = client.images.list(filters={"label": [f"{LABEL}=framework", f"{BASE_LABEL}={base_id}"]})
    images.sort(key=lambda image: image.attrs.get("Created", ""), reverse=True)
    return [image.labels[FRAMEWORKS_LABEL].split() for image in images if image.labels.get(FRAMEWORKS_LABEL)]


def image_exists(client: docker.DockerClient, tag: str) -> str | None:
    try:
        return client.images.get(tag).id
    except ImageNotFound:
        return None


def run_check(client: docker.DockerClient, image: str, script: str, timeout_s: float) -> tuple[int | None, str]:
    """Run a check as the runner with no network; (exit code or None on timeout, output)."""
    container = client.containers.run(
        image, ["sh", "-c", script], user=f"{RUNNER_UID}:{RUNNER_UID}", network_mode="none", detach=True,
        environment={"HOME": "/tmp", "MPLCONFIGDIR": "/tmp/mpl"}, labels={STEP_LABEL: "1"},
    )  # fmt: skip
    try:
        try:
            code = container.wait(timeout=timeout_s)["StatusCode"]
        except (RequestException, DockerException):
            code = None
        return code, container.logs().decode(errors="replace")
    finally:
        container.remove(force=True, v=True)


def prune_images(client: docker.DockerClient, keep: set[str], prefix: str = "dlbench/") -> list[str]:
    """Untag every dlbench project and framework image (named ``prefix…``) except ``keep``
    (a torch layer is 5-8 GB: old ones fill a disk fast). One a container uses stays."""
    removed = []
    for image in client.images.list(filters={"label": LABEL}):
        for tag in (t for t in image.tags if t.startswith(prefix) and t not in keep):
            try:
                client.images.remove(tag)
                removed.append(tag)
            except DockerException as exc:  # in use by a container: kept, said why
                log.info("kept %s: %s", tag, exc)
    return removed
