"""An image of a requirement list: one environment shared by every problem of a benchmark
whose problems are snippets rather than repositories (the DS-1000 track).

Made from the project images' parts: the requirements resolved with uv into a lock
(``deps/resolve.py``, as of a day when one is given), installed into the base image's venv in
one step with the machine's download cache mounted (``images/layers.py``), the trusted runner
files copied to ``/opt/dlbench``, committed with the sandbox's runtime settings (runner user,
no ``.pyc`` written at run time). The libraries are compiled to bytecode as they are installed:
nothing in this image is a reference to hide, and each test program is a fresh interpreter that
would otherwise compile pandas or scikit-learn again on every import. The image is named by a content hash of (layout, base image id, lock, runner
files): an unchanged recipe reuses it, a changed one builds a new one, and the lock is kept in
its record, so the versions a score was measured with are known.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from datetime import time as clock
from functools import partial
from pathlib import Path

from docker.errors import DockerException
from requests.exceptions import RequestException

import docker
from dlbench.config import ImagesConfig, StorageConfig
from dlbench.deps.declared import requirement_record
from dlbench.deps.resolve import IndexUnavailable, ResolutionError, Target, host_ca_bundle, resolve, uv_binary
from dlbench.images import layers
from dlbench.images.build import (
    LAYOUT_VERSION,
    MISSING_BASE_HINT,
    BuildInfrastructureError,
    EngineUnavailable,
    content_hash,
    docker_client,
    ensure_base_image,
    lock_input,
)
from dlbench.images.layers import STEP_INPUTS, DownloadFailed, StepFailed
from dlbench.records import DeclaredRequirement, Environment, ImageRecord, ImageStatus

log = logging.getLogger(__name__)

ENVIRONMENT_PREFIX = "dlbench/env-"
ENVIRONMENT_LAYER = "environment"  # the value of layers.LABEL on these images
NAME_LABEL = "dlbench.environment"
INSTALL_ARGS = f"--compile-bytecode -r {STEP_INPUTS}/lock.txt"


class RequirementError(ValueError):
    """A requirement that is not PEP 508, or one the resolver dropped: the environment would lack it."""


def declared(specs: Sequence[str], source: str) -> list[DeclaredRequirement]:
    """The requirement list as the resolver's records (every one required)."""
    out = []
    for spec in specs:
        record = requirement_record(spec, source, "runtime")
        if isinstance(record, str):
            raise RequirementError(f"{source}: {spec!r} is not a requirement ({record})")
        out.append(record)
    return out


def environment_tag(name: str, base_id: str, pins: Sequence[str], support: Mapping[str, bytes]) -> tuple[str, str]:
    """(``dlbench/env-<name>:<hash12>``, the full hash) over everything in the image."""
    digests = sorted(f"{file} {hashlib.sha256(data).hexdigest()}" for file, data in support.items())
    digest = content_hash(LAYOUT_VERSION, ENVIRONMENT_LAYER, INSTALL_ARGS, base_id, list(pins), digests)
    return f"{ENVIRONMENT_PREFIX}{name}:{digest[:12]}", digest


def build_environment_image(
    name: str,
    requirements: Sequence[str],
    base_image: str,
    log_path: str | Path,
    support_files: Mapping[str, bytes],
    images: ImagesConfig | None = None,
    downloads: Path | None = None,
    exclude_newer: date | None = None,
    source: str = "requirements",
    client: docker.DockerClient | None = None,
) -> ImageRecord:
    """Build (or reuse) the image named ``name`` holding ``requirements`` on ``base_image``.

    A requirement that cannot be had, or a failed install, is recorded (status
    ``image_error``, the cause in ``error``); an engine, disk or network failure raises
    (``EngineUnavailable``, ``BuildInfrastructureError``), so a rerun tries again."""
    cfg, log_path = images or ImagesConfig(), Path(log_path)
    downloads = downloads or StorageConfig().downloads_dir()
    client = client or docker_client()
    try:
        client.ping()
    except DockerException as exc:
        raise EngineUnavailable(f"Docker engine does not answer: {exc}") from exc
    record = ImageRecord(repo=name, sha="", base_image=base_image, tag=None, status=ImageStatus.IMAGE_ERROR, build_log=str(log_path))  # fmt: skip
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if not ensure_base_image(base_image, client):
        error = f"base image {base_image!r} is not available: {MISSING_BASE_HINT}"
        log_path.write_text(f"# FAILED: {error}\n")
        return record.model_copy(update={"error": error})
    record.base_image_id = client.images.get(base_image).id
    target = Target(
        python_version=cfg.python_version,
        platform=cfg.platform,
        exclude_newer=datetime.combine(exclude_newer, clock(), tzinfo=UTC) if exclude_newer else None,
        index_url=cfg.index_url,
        extra_index_url=cfg.framework_index_url,
        cache_dir=downloads,
    )
    start = time.monotonic()
    with open(log_path, "w") as out:
        out.write(f"# environment {name}: {' '.join(requirements)}\n# base {base_image} ({record.base_image_id})\n")
        try:
            record = _build(client, record, declared(requirements, source), target, support_files, downloads, out)
        except (RequirementError, ResolutionError, StepFailed) as exc:  # the recipe's fault: recorded
            tail = "\n".join((getattr(exc, "output", "") or "").splitlines()[-25:])
            out.write(f"\n# FAILED: {exc}\n")
            record = record.model_copy(update={"error": f"{exc}\n{tail}".strip()})
        except (DockerException, RequestException, OSError, DownloadFailed, IndexUnavailable) as exc:
            out.write(f"\n# INFRASTRUCTURE: {exc}\n")
            raise BuildInfrastructureError(f"{name}: {exc} (see {log_path})") from exc
    return record.model_copy(update={"build_seconds": round(time.monotonic() - start, 3)})


def _build(client, record: ImageRecord, wanted: list[DeclaredRequirement], target: Target, support: Mapping[str, bytes], downloads: Path, out) -> ImageRecord:  # fmt: skip
    lock = resolve(wanted, [], target)
    if lock.dropped:
        raise RequirementError("cannot be had: " + "; ".join(f"{d.spec} ({d.reason})" for d in lock.dropped))
    out.write("# lock\n" + "".join(f"#   {pin}\n" for pin in lock.pins))
    tag, digest = environment_tag(record.repo, record.base_image_id or "", lock.pins, support)
    environment = Environment(
        exclude_newer=target.exclude_newer, python_version=target.python_version, platform=target.platform,
        requirements=lock.requirements, lock=lock.pins,
    )  # fmt: skip
    record = record.model_copy(update={"tag": tag, "recipe_hash": digest, "environment": environment})
    image_id = layers.image_exists(client, tag)
    reused = image_id is not None
    if reused:
        out.write(f"# reused {tag} ({image_id})\n")
    else:
        layers.remove_finished_steps(client)
        container = layers.run_step(
            client, record.base_image_id, layers.uv_install_script(INSTALL_ARGS), lock_input(lock),
            downloads, Path(uv_binary()), host_ca_bundle(), out,
            target.index_environment(), partial(layers.copy_support_into, support_files=support),
        )  # fmt: skip
        image_id = layers.commit_layer(
            container, tag, {layers.LABEL: ENVIRONMENT_LAYER, NAME_LABEL: record.repo}, runtime=True
        )
        out.write(f"# built {tag} ({image_id})\n")
    size = client.images.get(image_id).attrs.get("Size")
    return record.model_copy(
        update={"image_id": image_id, "status": ImageStatus.OK, "reused": reused, "size_bytes": size}
    )
