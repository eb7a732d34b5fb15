"""Per-project evaluation images: base → shared framework layer → project layer.

A project's test environment is planned from everything it declares and its tests import
(``dlbench.deps``), resolved with uv as of the pinned commit's date into a lock, and built
in two layers: the framework (torch, tensorflow, jax … at the locked versions), shared by
every project that resolves to the same ones, and the project (the rest of the lock, the
checkout, the trusted runner files). Layers are made by running an install step with the
machine's download cache mounted and committing it (``images/layers.py``), so a second
torch project downloads nothing it already has. A built image is checked: every module the
tests import must import and pytest must collect without a missing module; a missing one
is added (its distribution), re-resolved and rebuilt, ``images.repair_rounds`` times.

The project image is named by a content hash of (base image id, lock, repository SHA,
runner files): a change in any of them builds a new image and an unchanged one is reused.
The network is used only while installing (host network, the host's CA bundle mounted for
that step only); the sandbox runs the image with ``--network none``.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import IO, TypeVar

from docker.errors import DockerException, ImageNotFound
from packaging.version import Version
from requests.exceptions import RequestException

import docker
from dlbench.config import ImagesConfig, PythonBase, StorageConfig
from dlbench.deps.declared import canonical_name, exact_pin
from dlbench.deps.imports import any_imports, distribution_for, third_party_imports
from dlbench.deps.own import own_distribution
from dlbench.deps.plan import PRIORITY, EnvironmentPlan, drop_priority, plan_environment
from dlbench.deps.resolve import (
    IndexUnavailable,
    Lock,
    ResolutionError,
    Target,
    host_ca_bundle,
    resolve,
    unavailable,
    uv_binary,
)
from dlbench.deps.sdists import housed_for
from dlbench.deps.system import declared_system_packages
from dlbench.deps.tree import disk_tree
from dlbench.images import layers, pythons
from dlbench.images.envcheck import TooNew, check_script, missing_libraries, missing_modules, too_new_libraries
from dlbench.images.extensions import SYSTEM_PACKAGES as EXTENSION_PACKAGES
from dlbench.images.extensions import ExtensionBuild, build_outcome, build_script, extension_build
from dlbench.images.layers import REPO_DIR, RUNNER_UID, STEP_INPUTS, SUPPORT_DIR, DownloadFailed, StepFailed
from dlbench.images.libraries import debian_packages
from dlbench.images.pythons import PythonChoice
from dlbench.records import DeclaredRequirement, DroppedRequirement, Environment, ImageRecord, ImageStatus, RepairStep
from dlbench.store import files_digest

__all__ = [
    "REPO_DIR",
    "RUNNER_UID",
    "SUPPORT_DIR",
    "build_project_image",
    "docker_client",
    "ensure_base_image",
    "repair_project_image",
]

log = logging.getLogger(__name__)

IMAGE_PREFIX = "dlbench/project-"
FRAMEWORK_PREFIX = "dlbench/framework"
# bump when the way layers are made changes (layers-5: steps bind-mount, so images declare no volumes)
LAYOUT_VERSION = "layers-5"
MISSING_BASE_HINT = (
    "run `make base-image` (builds dlbench/base:bookworm with no registry) or "
    "`docker pull python:3.11-slim` and set evaluate.base_image to it"
)
LOG_TAIL_LINES = 25
EXTENSIONS_LABEL = "dlbench.extensions"  # how the checkout's own extension modules were built, or why not
RUNNER_LABEL = "dlbench.runner"  # the digest of the supervisor and plugin the image ships (support files)
DISK_FULL = re.compile(r"No space left on device|os error 28")  # a step stopped by the host's disk
# ``version `GLIBCXX_3.4.32' not found (required by .../recom_bpr.cpython-311-x86_64-linux-gnu.so)``
RUNTIME_SYMBOL = re.compile(r"version [`'](?P<symbol>(?:GLIBCXX|GLIBC|CXXABI)_[\d.]+)' not found")
FAILED_BUILD = re.compile(r"Failed to (?:build|download|prepare|fetch)[^`]*`(?P<name>[A-Za-z0-9._-]+)")


class PythonTooNew(RuntimeError):
    """The built image's check shows its Python too new for the project (``python_too_new``)."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


class SystemTooOld(RuntimeError):
    """The built image's check shows a library built for a newer C or C++ runtime than its
    base system has (``system_too_old``): ``built`` is the image, kept when no newer Python
    keeps every requirement."""

    def __init__(self, failing: Mapping[str, str], built: ImageRecord):
        super().__init__("; ".join(failing.values()))
        self.failing, self.built = dict(failing), built  # module → why


class MoveLoses(RuntimeError):
    """The newer Python's lock loses imports of more test files than the old system's image
    (``weigh_move``): that image is kept, and the newer one is not built."""


class EngineUnavailable(RuntimeError):
    """The Docker engine does not answer (not a build failure: nothing is recorded)."""


class BuildInfrastructureError(RuntimeError):
    """The engine, the disk or the network failed during a build: nothing is recorded, so
    the job fails and a rerun builds again (a recorded error would be kept for good)."""


class ImageBuildError(Exception):
    """A recipe or build problem: recorded as ``image_error`` by ``build_project_image``."""


def docker_client(base_url: str | None = None, timeout: float = layers.BUILD_TIMEOUT_S) -> docker.DockerClient:
    """The one way to reach the engine: ``base_url`` (config) or ``DOCKER_HOST``/the default socket."""
    try:
        if base_url:
            return docker.DockerClient(base_url=base_url, timeout=int(timeout))
        return docker.from_env(timeout=int(timeout))
    except DockerException as exc:
        where = base_url or os.environ.get("DOCKER_HOST") or "the default socket"
        raise EngineUnavailable(f"Docker engine does not answer at {where}: {exc}") from exc


def ensure_base_image(name: str, client: docker.DockerClient | None = None, pull: bool = True) -> bool:
    """True if ``name`` is present locally, or (``pull``) could be pulled now."""
    client = client or docker_client()
    try:
        client.images.get(name)
        return True
    except ImageNotFound:
        pass
    if not pull:
        return False
    try:
        client.images.pull(name)
        return True
    except DockerException as exc:
        log.info("cannot pull %s: %s", name, exc)
        return False


def content_hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _docker_name(slug: str) -> str:
    """A slug as a Docker repository path component (lowercase; `_`, `__`, `.`, `-` separators)."""
    name = re.sub(r"[^a-z0-9]+", lambda m: m.group() if m.group() in ("_", "__", ".") else "-", slug.lower())
    return name.strip("-_.") or "repo"


def project_repository(slug: str) -> str:
    """The Docker repository every image of the project is a tag of (its repair rounds' too)."""
    return f"{IMAGE_PREFIX}{_docker_name(slug)}"


def project_tag(slug: str, base_id: str, lock: list[str], sha: str, support: Mapping[str, bytes], system_packages: Sequence[str] = ()) -> tuple[str, str]:  # fmt: skip
    """(``dlbench/project-<slug>:<hash12>``, the full hash) over everything in the image."""
    digests = sorted(f"{name} {hashlib.sha256(data).hexdigest()}" for name, data in support.items())
    digest = content_hash(LAYOUT_VERSION, base_id, lock, sha, digests, *_listed(system_packages))
    return f"{project_repository(slug)}:{digest[:12]}", digest


def framework_tag(base_id: str, pins: list[str], system_packages: Sequence[str] = ()) -> str:
    return f"{FRAMEWORK_PREFIX}:{content_hash(LAYOUT_VERSION, base_id, pins, *_listed(system_packages))[:12]}"


def _listed(packages: Sequence[str]) -> list[list[str]]:
    """System packages as a hash part: none leaves the hash of layers built before they existed."""
    return [sorted(packages)] if packages else []


def project_system_packages(checkout: Path, cfg: ImagesConfig, installed: Collection[str] = ()) -> list[str]:
    """Debian packages the project's own test runs have (``deps.system``) that the image does
    not get otherwise, when ``images.ci_system_packages`` allows."""
    return [p for p in declared_system_packages(checkout) if p not in installed] if cfg.ci_system_packages else []


def system_packages_for(pins: Sequence[str], cfg: ImagesConfig) -> list[str]:
    """Debian packages that ``pins``' distributions need at run time (``images.system_packages``)."""
    names = {canonical_name(pin.partition("==")[0]) for pin in pins}
    return sorted(
        {
            p
            for framework, packages in cfg.system_packages.items()
            if canonical_name(framework) in names
            for p in packages
        }
    )


def project_requirements(checkout: Path) -> list[str]:
    """The requirement specs of a checkout's planned test environment (no resolution)."""
    return [r.spec for r in plan_environment(disk_tree(checkout)).requirements]


# ---------------------------------------------------------------- planning


def commit_date(checkout: Path) -> datetime | None:
    """The pinned commit's committer date (None for an exported tree without history)."""
    git = ["git", "-c", "safe.directory=*", "-C", str(checkout), "log", "-1", "--format=%cI"]
    done = subprocess.run(git, capture_output=True, text=True)
    return datetime.fromisoformat(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def resolution_target(cfg: ImagesConfig, checkout: Path, downloads: Path, python: PythonBase | None = None) -> Target:
    """What to resolve for: ``python``'s version and platform (default: the configured default's)."""
    return Target(
        python_version=python.python if python else cfg.python_version,
        platform=python.platform if python else cfg.platform,
        exclude_newer=commit_date(checkout) if cfg.resolve_as_of_commit else None,
        index_url=cfg.index_url or os.environ.get("PIP_INDEX_URL") or None,
        extra_index_url=cfg.framework_index_url,
        cache_dir=downloads,
        stand_in_days=cfg.stand_in_days,
        native_sdists=cfg.native_sdists,
    )


def framework_pins(lock: Lock, cfg: ImagesConfig) -> list[str]:
    wanted = {canonical_name(name) for name in cfg.frameworks}
    return [pin for pin in lock.pins if canonical_name(pin.split("==")[0]) in wanted]


def preferred_frameworks(client: docker.DockerClient, base_id: str, plan: EnvironmentPlan, cfg: ImagesConfig) -> list[tuple[str, ...]]:  # fmt: skip
    """Pins of existing framework layers worth trying for this project (``reuse_frameworks``),
    restricted to the frameworks it asks for, so nothing extra is forced on it."""
    if not cfg.reuse_frameworks:
        return []
    asked = {r.name for r in plan.requirements}
    subsets = (
        [p for p in pins if canonical_name(p.split("==")[0]) in asked]
        for pins in layers.framework_layers(client, base_id)
    )
    return list(dict.fromkeys(tuple(s) for s in subsets if s))


def lock_environment(plan: EnvironmentPlan, target: Target, preferred: list[tuple[str, ...]]) -> tuple[Lock, bool]:
    """(lock, whether it uses an existing framework layer's pins)."""
    for pins in preferred:
        try:
            return resolve(plan.requirements, plan.constraints, target, prefer=pins), True
        except ResolutionError:
            continue
    return resolve(plan.requirements, plan.constraints, target), False


def environment_record(
    plan: EnvironmentPlan, lock: Lock, target: Target, cfg: ImagesConfig, reused: bool, choice: PythonChoice
) -> Environment:
    return Environment(
        exclude_newer=target.exclude_newer, exclude_newer_package=lock.exclude_newer_package,
        python_version=target.python_version, platform=target.platform, python_tried=choice.tried, python_lost=choice.lost,
        requirements=lock.requirements, constraints=plan.constraints, dropped=[*plan.skipped, *lock.dropped],
        lock=lock.pins, frameworks=framework_pins(lock, cfg), framework_preferred=reused,
    )  # fmt: skip


# ---------------------------------------------------------------- build


def build_project_image(
    checkout: Path,
    slug: str,
    sha: str,
    base_image: str,
    log_path: Path,
    support_files: Mapping[str, bytes] | None = None,
    client: docker.DockerClient | None = None,
    images: ImagesConfig | None = None,
    downloads: Path | None = None,
    repairs: Sequence[RepairStep] = (),
    python: PythonBase | None = None,
) -> ImageRecord:
    """Build (or reuse) the image of one repository; a failed build is recorded, not raised.

    ``base_image`` is the default Python's base; the project may need an older Python's
    (``images/pythons.py``), unless ``python`` fixes the one to build on (a repair).
    ``downloads`` is the machine's download cache (default: ``storage.downloads``'s).
    ``repairs`` are distributions added before the build (``repair_project_image``: a gold
    run showed them missing); the image record lists them with the build's own repairs.
    ``support_files`` (relative path → bytes) land in ``/opt/dlbench`` (trusted runner code:
    pytest plugin, supervisor) and are part of the content hash. Raises ``EngineUnavailable``
    only when the engine does not answer, so a rerun retries instead of keeping an error.
    """
    checkout, log_path, cfg = Path(checkout), Path(log_path), images or ImagesConfig()
    downloads = downloads or StorageConfig().downloads_dir()
    support_files = dict(support_files or {})
    record = ImageRecord(repo=slug, sha=sha, base_image=base_image, tag=None, status=ImageStatus.IMAGE_ERROR, build_log=str(log_path))  # fmt: skip

    def build(client, record: ImageRecord, out: IO[str]) -> ImageRecord:
        _check_checkout(checkout, sha)
        return _build_with_repairs(client, record, checkout, support_files, cfg, downloads, out, list(repairs), python)

    return _recorded_build(client or docker_client(), record, log_path, build)


def build_recorded_image(
    recorded: ImageRecord,
    checkout: Path,
    log_path: Path,
    support_files: Mapping[str, bytes] | None = None,
    client: docker.DockerClient | None = None,
    images: ImagesConfig | None = None,
    downloads: Path | None = None,
) -> ImageRecord:
    """Build (or reuse) the image a record describes, from its lock: the same Python, base and
    pins, nothing resolved again (an exported benchmark's ``environments/{repo}/image.json``
    rebuilt on another machine). The record needs a lock; a failed build is recorded."""
    env = recorded.environment
    if recorded.status != ImageStatus.OK or env is None or not env.lock:
        raise ValueError(f"{recorded.repo}: the image record has no lock to build from")
    checkout, log_path, cfg = Path(checkout), Path(log_path), images or ImagesConfig()
    downloads = downloads or StorageConfig().downloads_dir()
    python = PythonBase(python=env.python_version, image=recorded.base_image, platform=env.platform)
    record = ImageRecord(repo=recorded.repo, sha=recorded.sha, base_image=recorded.base_image, tag=None, status=ImageStatus.IMAGE_ERROR, build_log=str(log_path))  # fmt: skip

    def build(client, record: ImageRecord, out: IO[str]) -> ImageRecord:
        _check_checkout(checkout, recorded.sha)
        out.write(f"# from the recorded lock: Python {env.python_version}, {len(env.lock)} pins, nothing resolved\n")
        lock = Lock(pins=list(env.lock), requirements=[], exclude_newer_package=dict(env.exclude_newer_package))
        target = resolution_target(cfg, checkout, downloads, python)
        built = _build_locked(client, record, checkout, dict(support_files or {}), cfg, downloads, lock, target, out)
        return built.model_copy(update={"environment": env, "status": ImageStatus.OK})

    return _recorded_build(client or docker_client(), record, log_path, build)


def _recorded_build(client, record: ImageRecord, log_path: Path, build) -> ImageRecord:
    """Run ``build`` with the build log open: the project's recipe failing is recorded in the
    record; the engine, disk or network failing raises, so a rerun retries."""
    _ping(client)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if not ensure_base_image(record.base_image, client):
        return _failed(record, log_path, f"base image {record.base_image!r} is not available: {MISSING_BASE_HINT}")
    record.base_image_id = client.images.get(record.base_image).id
    layers.remove_finished_steps(client)
    start = time.monotonic()
    with open(log_path, "w") as out:
        out.write(f"# project {record.repo} at {record.sha}\n# base {record.base_image} ({record.base_image_id})\n")
        try:
            record = build(client, record, out)
        except (ImageBuildError, ResolutionError, StepFailed) as exc:  # the project's recipe: recorded
            if isinstance(exc, StepFailed) and DISK_FULL.search(exc.output or ""):  # the machine's disk, not the recipe
                raise _infrastructure(record, log_path, out, exc) from exc
            out.write(f"\n# FAILED: {exc}\n")
            record.error = f"{exc}\n{_step_output_tail(exc)}".strip()
        except (DockerException, RequestException, OSError, DownloadFailed, IndexUnavailable) as exc:
            raise _infrastructure(record, log_path, out, exc) from exc
    record.build_seconds = round(time.monotonic() - start, 3)
    return record


def _infrastructure(record: ImageRecord, log_path: Path, out: IO[str], exc: Exception) -> BuildInfrastructureError:
    """The engine, disk or network failed: logged, and raised so that a rerun retries."""
    out.write(f"\n# INFRASTRUCTURE: {exc}\n")
    return BuildInfrastructureError(f"{record.repo}: {exc} (see {log_path})")


def repair_project_image(
    record: ImageRecord,
    checkout: Path,
    missing: Mapping[str, str],
    log_path: Path,
    support_files: Mapping[str, bytes] | None = None,
    images: ImagesConfig | None = None,
    downloads: Path | None = None,
    removed: Mapping[str, TooNew] | None = None,
    unfound: set[str] | None = None,
    libraries: Mapping[str, str] | None = None,
) -> ImageRecord | None:
    """``record``'s image rebuilt with the distribution of each module in ``missing`` (module →
    the failure that shows it, e.g. a gold run) added, and each installed distribution whose
    module lacks a name in ``removed`` pinned below the release that dropped it, on the next
    older Python when ``removed`` shows the image's too new (``python_too_new``); None when
    nothing is new: the project's own module, a distribution the lock already holds, a
    framework (pinning it means another framework layer), a bound already tried. ``unfound``:
    modules of ``missing`` that no finder had while the project's code asked for them;
    ``libraries``: shared libraries the system lacks (file name → the failure), each given the
    Debian package that has it (``library_steps``) unless one was looked up before."""
    images = images or ImagesConfig()
    env = record.environment
    locked = Lock(pins=env.lock if env else [], requirements=[]).versions()
    # A module no finder had is not the project's, even where a file of its is named so
    # (small-text's own classifiers/setfit.py beside the setfit it imports).
    plan = plan_environment(disk_tree(checkout))
    own = plan.own_modules() - (unfound or set())
    previous = env.repairs if env else []
    round_ = max((r.round for r in previous), default=0) + 1
    new = addition_steps(missing, locked, own, previous, round_)
    exact = exactly_pinned(plan)
    new += pin_steps(removed or {}, locked, own, previous, images, round_, exact)
    new += _gold_library_steps(record, libraries or {}, previous, round_, downloads)
    too_new = python_too_new(removed or {}, exact) if env else []
    older = older_python(images, record.base_image, plan, env.python_version) if too_new else None
    if not new and not older:
        for line in installed_already(missing, locked, own):
            log.info("%s: nothing to repair: %s", record.repo, line)
        return None
    python = PythonBase(python=env.python_version, image=record.base_image, platform=env.platform) if env else None
    if older:
        log.info("%s: Python %s too new (%s): rebuilding on %s", record.repo, env.python_version, "; ".join(too_new), older.python)  # fmt: skip
    rebuilt = build_project_image(checkout, record.repo, record.sha, record.base_image, log_path, support_files,
                                  images=images, downloads=downloads, repairs=[*previous, *new], python=older or python)  # fmt: skip
    if older and rebuilt.environment:
        rebuilt.environment.python_tried[:0] = [f"Python {env.python_version} (gold's runs): {'; '.join(too_new)}"]
    return rebuilt


def _gold_library_steps(record: ImageRecord, libraries: Mapping[str, str], previous: Sequence[RepairStep], round_: int, downloads: Path | None) -> list[RepairStep]:  # fmt: skip
    """``library_steps`` for the shared libraries gold's runs lacked that no lookup saw before."""
    seen = _looked_up(previous) | set(record.environment.unresolved_libraries if record.environment else [])
    if not set(libraries) - seen:
        return []
    out = io.StringIO()
    downloads = downloads or StorageConfig().downloads_dir()
    steps = library_steps(libraries, seen, round_, partial(_throwaway_step, docker_client(), record.tag, downloads=downloads, out=out), out)  # fmt: skip
    log.info("%s: shared libraries gold's runs lacked: %s", record.repo, "; ".join(f"{s.module} in {s.distribution}" for s in steps) or "no Debian package has them")  # fmt: skip
    return steps


def older_python(images: ImagesConfig, base_image: str, plan: EnvironmentPlan, version: str) -> PythonBase | None:
    """The first Python older than ``version`` in the order builds choose from
    (``pythons.candidates``: the newest older one the project admits, else the newest older one)."""
    return next((p for p in pythons.candidates(images, base_image, plan) if Version(p.python) < Version(version)), None)


def addition_steps(missing: Mapping[str, str], locked: Mapping[str, str], own: set[str], previous: Sequence[RepairStep], round_: int) -> list[RepairStep]:  # fmt: skip
    """A step adding the distribution of each module in ``missing``; none for the project's own
    module, a distribution the lock holds, or one an earlier round added that the resolver
    could not keep (deepchem's dqc has no wheel for the image's Python: asking again only
    costs a rebuild)."""
    added = {r.distribution for r in previous if r.spec is None and not r.debian}
    return [
        RepairStep(round=round_, module=module, distribution=distribution, reason=reason)
        for module, reason in missing.items()
        if module not in own and (distribution := distribution_for(module)) not in locked and distribution not in added
    ]


def installed_already(missing: Mapping[str, str], locked: Mapping[str, str], own: set[str]) -> list[str]:
    """Why a missing module gets no step when the lock already holds its distribution: the
    installed release lacks the module (botorch's tests import a gpytorch module released two
    days after botorch's commit; its CI installs gpytorch's main branch from git)."""
    return [
        f"{module} ({reason[:160]}): {distribution}=={locked[distribution]} is installed and lacks it (a later "
        "release, or the main branch a CI installs from git, may have it)"
        for module, reason in missing.items()
        if module not in own and (distribution := distribution_for(module)) in locked
    ]


def pin_steps(too_new: Mapping[str, TooNew], locked: Mapping[str, str], own: set[str], previous: Sequence[RepairStep], cfg: ImagesConfig, round_: int, exact: Mapping[str, str] | None = None) -> list[RepairStep]:  # fmt: skip
    """A step pinning each library in ``too_new`` (or its fallback) below the release that
    removed a name, else below its locked minor release; never the project's own module (unless
    an installed file of the library raised), a distribution the lock does not hold, a
    framework (pinning it means another framework layer), one the project pins ``exact``ly (a
    lower release would override the project's own pin: MONAI's ``pytorch-ignite==0.4.11``
    became 0.3.0, which MONAI refuses) or a bound already tried."""
    tried = {r.spec for r in previous}
    frameworks = {canonical_name(f) for f in cfg.frameworks}
    kept = set(exact or ())
    steps = []
    for module, why in too_new.items():
        for candidate, release in ((module, why.release), (why.fallback, None)):
            distribution = distribution_for(candidate) if candidate else None
            ours = candidate in own and not why.installed
            if not distribution or ours or distribution in frameworks or distribution in kept or distribution not in locked:  # fmt: skip
                continue
            spec = f"{distribution}<{release or _minor_release(locked[distribution])}"
            if spec not in tried:
                steps.append(RepairStep(round=round_, module=candidate, distribution=distribution, reason=why.reason, spec=spec))  # fmt: skip
            break
    return steps


def exactly_pinned(plan: EnvironmentPlan) -> dict[str, str]:
    """Distribution → the project's own requirement pinning one release of it (``==``, no
    wildcard): no other release may stand in for it."""
    pinned = {}
    for r in plan.requirements:
        if r.group != "repair" and exact_pin(r):
            pinned.setdefault(r.name, r.spec)
    return pinned


def python_too_new(too_new: Mapping[str, TooNew], exact: Mapping[str, str]) -> list[str]:
    """What in the check says the image's Python itself is too new for the project: a library
    uses a name the standard library no longer has (asynctest's ``asyncio.coroutine``, gone in
    3.11), or a library the project pins exactly fails at its own import (``pytorch-ignite==0.4.11``
    on 3.11: ``'CallableEventWithFilter' object has no attribute '_name_'``, an enum change)."""
    found = []
    for module, why in too_new.items():
        shown = why.reason.removeprefix("E ").strip()[:160]  # the check prints pytest's ``E   `` line
        if module in sys.stdlib_module_names:
            found.append(f"the standard library's {module} lacks a name a library uses ({shown})")
        elif (distribution := distribution_for(module)) in exact:
            found.append(f"{exact[distribution]}, pinned by the project, fails at import ({shown})")
    return found


def system_too_old(too_new: Mapping[str, TooNew]) -> dict[str, str]:
    """What in the check says the base image's system is too old for an installed library: a
    compiled module of it needs a C or C++ runtime symbol the system lacks (cornac 2.3's
    wheels, tagged manylinux1, need ``GLIBCXX_3.4.32``, GCC 13's libstdc++; Debian bookworm
    has GCC 12's). No pin of it helps when the project requires those releases
    (recommenders: ``cornac>=2.3.0,<3``); a newer Python's base, a newer system, does."""
    return {
        module: f"{module} needs {found['symbol']}, newer than the base system's C/C++ runtime"
        for module, why in too_new.items()
        if (found := RUNTIME_SYMBOL.search(why.reason))
    }


def files_lost_either_way(imports: Mapping[str, list[str]], kept_lock: Sequence[str], moved_lock: Sequence[str], failing: Collection[str]) -> tuple[int, int]:  # fmt: skip
    """Of ``imports`` (module → test files importing it anywhere): (the test files importing a
    module of ``failing``, which the image on the old system cannot load; those importing a
    distribution ``kept_lock`` has and ``moved_lock``, the newer Python's, lacks).
    recommenders on 3.12 loads cornac (1 test file) and loses ``tensorflow<2.16``, which has
    no 3.12 wheel (7)."""
    kept = set(Lock(pins=list(kept_lock), requirements=[]).versions())
    moved = set(Lock(pins=list(moved_lock), requirements=[]).versions())
    staying = {f for m in failing for f in imports.get(m, [])}
    moving = {f for m, files in imports.items() if distribution_for(m) in kept - moved for f in files}
    return len(staying), len(moving)


def weigh_move(kept: ImageRecord, checkout: Path, failing: Collection[str], python: str) -> Callable[[Lock], None]:
    """A check of a lock of the newer ``python`` against ``kept``, the image on the old system
    that cannot load ``failing``: raises ``MoveLoses`` when more test files lose an import with
    the lock than on the old system (``files_lost_either_way``; imports inside a ``try`` count:
    recommenders guards its tensorflow imports). Run on each repair round's lock before its
    image is built (recommenders' second image took 7 minutes to lose the same way)."""
    # a failing module is an installed library, even where the project has a folder of its
    # name (recommenders' own models/cornac/ beside the cornac it imports)
    imports = third_party_imports(disk_tree(checkout), reader=any_imports, installed=failing)

    def weigh(lock: Lock) -> None:
        staying, moving = files_lost_either_way(imports, kept.environment.lock, lock.pins, failing)
        if moving > staying:
            raise MoveLoses(f"Python {python} loses imports of {moving} test files, the old system {staying}")

    return weigh


def _kept_over_move(kept: ImageRecord, exc: MoveLoses, out: IO[str]) -> ImageRecord:
    out.write(f"\n# {exc}: keeping the image built before\n")
    kept.environment.python_tried.append(str(exc))
    return kept


def _minor_release(version: str) -> str:
    """``2.4.6`` → ``2.4``: below it is the previous minor release, the one a removal skipped."""
    return ".".join(version.split(".")[:2])


def _build_with_repairs(client, record: ImageRecord, checkout: Path, support: Mapping[str, bytes], cfg: ImagesConfig, downloads: Path, out: IO[str], repairs: list[RepairStep], python: PythonBase | None) -> ImageRecord:  # fmt: skip
    """Build on the chosen Python; when a required package fails to build from source there
    (old numpy on a newer Python), choose again among the other Pythons; when the image's
    Python is too new for the project, among the older ones; when its system is too old for
    a library, among the newer ones (``system_too_old``)."""
    plan = plan_environment(disk_tree(checkout))
    _add_repairs(plan, repairs, out)
    options = [python] if python else pythons.candidates(cfg, record.base_image, plan)
    failed: list[str] = []
    moved_older = False  # once: a second older Python seldom fixes what the first did not
    kept: ImageRecord | None = None  # built on a system too old for a library: kept unless a newer Python does better
    failing: list[str] = []  # the modules it cannot load
    while True:
        choice = _choose_python(client, plan, cfg, checkout, downloads, options, record.base_image, out)
        choice.tried[:0] = failed
        if kept and choice.lost:
            out.write(
                f"\n# Python {choice.base.python} loses {', '.join(choice.lost)}: keeping the image built before\n"
            )
            return kept
        older = [o for o in options if Version(o.python) < Version(choice.base.python)]
        newer = [o for o in options if Version(o.python) > Version(choice.base.python)]
        weigh = weigh_move(kept, checkout, failing, choice.base.python) if kept else None
        try:
            return _build_on(client, record, checkout, support, cfg, downloads, out, repairs, plan, choice,
                             bool(older) and not moved_older, bool(newer) and not kept, weigh)  # fmt: skip
        except MoveLoses as exc:
            return _kept_over_move(kept, exc, out)
        except PythonTooNew as exc:
            options, moved_older = older, True
            failed.append(f"Python {choice.base.python}: {'; '.join(exc.reasons)}")
            out.write(f"\n# {failed[-1]}: choosing among the older Pythons\n")
        except SystemTooOld as exc:
            options, kept, failing = newer, exc.built, list(exc.failing)
            failed.append(f"Python {choice.base.python}: {exc}")
            out.write(f"\n# {failed[-1]}: choosing among the newer Pythons\n")
        except ImageBuildError as exc:
            if kept is None:
                raise
            out.write(f"\n# Python {choice.base.python}: {exc}: keeping the image built before\n")
            return kept
        except StepFailed as exc:
            names = sorted({canonical_name(m["name"]) for m in FAILED_BUILD.finditer(exc.output or "")})
            if not names:
                raise
            others = [o for o in options if o is not choice.base]
            hopeless = _without_wheels(plan, names, others, partial(resolution_target, cfg, checkout, downloads))
            if not (others or hopeless):
                raise
            failed.append(f"Python {choice.base.python}: {', '.join(names)} did not build")
            if hopeless:  # built from source on every Python: moving on would only fail again
                _drop_unbuildable(plan, hopeless, failed[-1], out)
                options = [choice.base]
            else:
                options = others
                out.write(f"\n# {failed[-1]}: choosing among the other Pythons\n")


def _without_wheels(plan: EnvironmentPlan, names: Sequence[str], options: Sequence[PythonBase], target_for) -> list[str]:  # fmt: skip
    """Of ``names`` (required packages whose source failed to build), those no other Python
    of ``options`` has a wheel of as of the date: each would be built from source there too.
    nlp-architect's ``dynet==2.1`` and neupy's CI pin ``matplotlib==1.5.1`` failed on each of
    six Pythons in turn (20 minutes each project) before the image was lost."""
    required = [r for r in plan.requirements if r.name in names]
    left = {r.name for r in required}  # a dependency of another requirement cannot be dropped by name
    for base in options:
        gone = unavailable(required, plan.constraints, target_for(base), wheels=True).gone
        left &= {r.name for r, _ in gone}
        if not left:
            break
    return sorted(left)


def _drop_unbuildable(plan: EnvironmentPlan, names: Sequence[str], why: str, out: IO[str]) -> None:
    """Every declaration of ``names`` leaves the plan, recorded: the image is built without
    them on the same Python, and only the tests that need them lose them."""
    for r in [r for r in plan.requirements if r.name in names]:
        plan.requirements.remove(r)
        plan.skipped.append(DroppedRequirement(spec=r.spec, source=r.source, reason=f"{why} from source, and no configured Python has a wheel of it"))  # fmt: skip
    out.write(f"\n# {why}, and no other Python has a wheel of it: dropped ({', '.join(names)}), building again\n")


def _build_on(client, record: ImageRecord, checkout: Path, support: Mapping[str, bytes], cfg: ImagesConfig, downloads: Path, out: IO[str], repairs: list[RepairStep], plan: EnvironmentPlan, choice: PythonChoice, may_go_older: bool = False, may_go_newer: bool = False, weigh: Callable[[Lock], None] | None = None) -> ImageRecord:  # fmt: skip
    """Build on ``choice``, repairing what the image check finds; raise ``PythonTooNew`` when
    the check shows the Python is too new for the project and ``may_go_older``, and
    ``SystemTooOld`` when, after the repairs, its system is too old for a library and
    ``may_go_newer``; ``weigh`` (``weigh_move``) checks each lock before its image is built."""
    exact = exactly_pinned(plan)
    target = replace(resolution_target(cfg, checkout, downloads, choice.base), omit=tuple(sorted(plan.own_names)))
    base_id = client.images.get(choice.base.image).id
    record = record.model_copy(update={"base_image": choice.base.image, "base_image_id": base_id})
    repairs = list(repairs)
    first = max((r.round for r in repairs), default=0) + 1
    own = plan.own_modules()
    looked_up = _looked_up(repairs)  # shared libraries: one lookup each
    lookup = partial(_throwaway_step, client, downloads=downloads, out=out)
    for round_ in range(first, first + cfg.repair_rounds + 1):
        lock, reused, record = _lock_and_build(client, record, checkout, support, cfg, downloads, plan, target, out, weigh)  # fmt: skip
        missing, too_new, libraries = _check_after_build(client, record.tag, own, plan, cfg, out)
        if may_go_older and (reasons := python_too_new(too_new, exact)):
            raise PythonTooNew(reasons)
        locked = lock.versions()
        new = addition_steps(missing, locked, own, repairs, round_)
        new += pin_steps(too_new, locked, own, repairs, cfg, round_, exact)
        new += library_steps(libraries, looked_up, round_, partial(lookup, record.tag), out)
        looked_up |= set(libraries)
        if not new or round_ == first + cfg.repair_rounds:
            break
        repairs += new
        _add_repairs(plan, new, out)
    env = environment_record(plan, lock, target, cfg, reused, choice)
    env.repairs, env.unresolved, env.unresolved_libraries = repairs, sorted(missing), sorted(libraries)
    built = record.model_copy(update={"environment": env, "status": ImageStatus.OK})
    if may_go_newer and (failing := system_too_old(too_new)):
        raise SystemTooOld(failing, built)
    return built


def _choose_python(client, plan: EnvironmentPlan, cfg: ImagesConfig, checkout: Path, downloads: Path, options: list[PythonBase], default_image: str, out: IO[str]) -> PythonChoice:  # fmt: skip
    """The Python to build on (``images/pythons.py``) among ``options`` whose base image is
    here, can be pulled or can be bootstrapped (the default's is known to be here)."""
    options = list(options)
    while True:
        if not options:
            raise ImageBuildError("no Python left to build on: every other one's base image is unavailable")
        choice = pythons.choose_python(plan, options, partial(resolution_target, cfg, checkout, downloads))
        out.write("".join(f"# {line}\n" for line in choice.tried))
        if choice.base.image == default_image or pythons.available(choice.base, client, ensure_base_image):
            out.write(f"# building on Python {choice.base.python} ({choice.base.image})\n")
            return choice
        out.write(f"# Python {choice.base.python}: base image {choice.base.image} is not available\n")
        options.remove(choice.base)


def _add_repairs(plan: EnvironmentPlan, steps: list[RepairStep], out: IO[str]) -> None:
    """Python repairs join the plan's requirements; Debian ones its system packages."""
    if not steps:
        return
    plan.requirements += [DeclaredRequirement(spec=r.spec or r.distribution, name=r.distribution, source=f"repair: {r.reason}", group="repair") for r in steps if not r.debian]  # fmt: skip
    plan.system_packages += [r.distribution for r in steps if r.debian]
    out.write("\n# repairs: adding " + ", ".join(f"{r.spec or r.distribution} (round {r.round})" for r in steps) + "\n")


def _lock_and_build(client, record: ImageRecord, checkout: Path, support: Mapping[str, bytes], cfg: ImagesConfig, downloads: Path, plan: EnvironmentPlan, target: Target, out: IO[str], weigh: Callable[[Lock], None] | None = None) -> tuple[Lock, bool, ImageRecord]:  # fmt: skip
    """Resolve and build, dropping what fails to install (``dropping_failed_installs``);
    ``weigh`` may refuse the lock before anything is built (``MoveLoses``)."""

    def lock_and_build() -> tuple[Lock, bool, ImageRecord]:
        lock, reused = lock_environment(plan, target, preferred_frameworks(client, record.base_image_id, plan, cfg))
        _log_plan(out, lock, target)
        if weigh:
            weigh(lock)
        return lock, reused, _build_locked(client, record, checkout, support, cfg, downloads, lock, target, out, plan.system_packages)  # fmt: skip

    return dropping_failed_installs(lock_and_build, plan, out)


T = TypeVar("T")


def dropping_failed_installs(attempt: Callable[[], T], plan: EnvironmentPlan, out: IO[str]) -> T:
    """``attempt()`` again after each package that fails to install (an sdist needing a
    compiler or headers the image lacks) is dropped, when the project does not need it at run
    time, and recorded; as often as there are such packages: each attempt drops one, so it
    ends. A fixed number of attempts lost neupy's image to its fourth (its CI file pins
    ``matplotlib==1.5.1``, ``pillow==3.0.0``, ``h5py==2.8.0``, ..., sdists only on 3.11)."""
    while True:
        try:
            return attempt()
        except StepFailed as exc:
            culprits = _droppable(plan, exc.output)
            if not culprits:
                raise
            for culprit in culprits:
                plan.requirements.remove(culprit)
                plan.skipped.append(
                    DroppedRequirement(spec=culprit.spec, source=culprit.source, reason=f"install failed: {exc}")
                )
            out.write(f"\n# {culprits[0].name} did not install: dropped, rebuilding\n")


def _droppable(plan: EnvironmentPlan, output: str) -> list[DeclaredRequirement]:
    """Every declaration below runtime of the least needed name that failed to install: one
    left behind (a test import beside a CI file's line) would put it back in the next lock."""
    failed = {canonical_name(m["name"].split("==")[0]) for m in FAILED_BUILD.finditer(output)}
    named = [r for r in plan.requirements if r.name in failed and drop_priority(r) < PRIORITY["runtime"]]
    first = min(named, key=drop_priority, default=None)
    return [r for r in named if first is not None and r.name == first.name]


def _log_plan(out: IO[str], lock: Lock, target: Target) -> None:
    out.write(f"# resolved as of {target.exclude_newer} for Python {target.python_version} ({target.platform})\n")
    out.write("".join(f"#   {name} as of {when}\n" for name, when in sorted(lock.exclude_newer_package.items())))
    out.write("# lock\n" + "".join(f"#   {pin}\n" for pin in lock.pins))
    for dropped in lock.dropped:
        out.write(f"# dropped {dropped.spec} ({dropped.source}): {dropped.reason}\n")
    for name in lock.native:
        out.write(f"# {name}: no wheel, an sdist that compiles: built in the image with a compiler\n")
    for name in lock.wheels_preferred:
        out.write(f"# {name}: a version with a wheel, where the first resolution would build it from source\n")
    for wheel in housed_for(lock.pins, target.cache_dir) if target.cache_dir else ():
        out.write(f"# {wheel.name}: built here from its sdist (the wheelhouse)\n")
    out.flush()


def _build_locked(client, record: ImageRecord, checkout: Path, support: Mapping[str, bytes], cfg: ImagesConfig, downloads: Path, lock: Lock, target: Target, out: IO[str], repaired: Sequence[str] = ()) -> ImageRecord:  # fmt: skip
    """The framework layer (shared) and the project layer for one lock, reused when built;
    ``repaired``: Debian packages the repairs added."""
    target = target.with_package_dates(lock.exclude_newer_package)
    pins = framework_pins(lock, cfg)
    packages = system_packages_for(pins, cfg)
    own_packages = sorted(set(system_packages_for(lock.pins, cfg)) - set(packages))  # a wheel's libraries (cv2: libGL)
    if lock.native:  # sdists that compile (deps/sdists.py), built by the lock's install
        own_packages = sorted({*own_packages, *EXTENSION_PACKAGES} - set(packages))
    # the CI's, and those the repairs found: each installed where it can be, the rest said
    ci_packages = sorted({*project_system_packages(checkout, cfg, {*packages, *own_packages}), *repaired} - {*packages, *own_packages})  # fmt: skip
    extensions = extension_build(checkout, set(lock.versions()))
    own = own_distribution(disk_tree(checkout))
    recipe = [*packages, *own_packages, *ci_packages, *(extensions.hash_parts() if extensions else ()), *(own.hash_parts() if own else ())]  # fmt: skip
    tag, digest = project_tag(record.repo, record.base_image_id, lock.pins, record.sha, support, recipe)
    record = record.model_copy(update={"tag": tag, "recipe_hash": digest})
    framework = (
        _framework_layer(client, record.base_image_id, pins, packages, lock, downloads, target, out) if pins else None
    )
    existing = layers.image_exists(client, tag)
    if existing:
        out.write(f"# reused {tag} ({existing})\n")
        return _with_image(client, record, existing, framework, reused=True)
    if own is not None:
        out.write(f"# the project's own distribution: {own.name} {own.version}, metadata only ({', '.join(own.entry_points) or 'no entry points'})\n")  # fmt: skip
    metadata = {f"{layers.site_packages(target.python_version)}/{rel}": data for rel, data in (own.dist_info() if own else {}).items()}  # fmt: skip
    image_id = _project_layer(client, framework or record.base_image_id, tag, checkout, support, lock, downloads, target, out, record, extensions, own_packages, ci_packages, metadata)  # fmt: skip
    out.write(f"# built {tag} ({image_id})\n")
    return _with_image(client, record, image_id, framework, reused=False)


def _with_image(client, record: ImageRecord, image_id: str, framework: str | None, reused: bool) -> ImageRecord:
    attrs = client.images.get(image_id).attrs
    extensions = ((attrs.get("Config") or {}).get("Labels") or {}).get(EXTENSIONS_LABEL)
    update = {"image_id": image_id, "framework_image": framework, "reused": reused, "size_bytes": attrs.get("Size")}
    return record.model_copy(update=update | {"extensions": extensions})


def _framework_layer(client, base_id: str, pins: list[str], packages: list[str], lock: Lock, downloads: Path, target: Target, out: IO[str]) -> str:  # fmt: skip
    """``dlbench/framework:<hash>`` of (base, framework pins, their system packages), built once per machine."""
    tag = framework_tag(base_id, pins, packages)
    with layers.machine_lock(downloads, "framework"):  # one at a time: each needs ~2x its 5-8 GB while committed
        if layers.image_exists(client, tag):  # perhaps built by a parallel job while this one waited
            out.write(f"# framework layer {tag} ({' '.join(pins)}) reused\n")
            return tag
        return _build_framework_layer(client, base_id, tag, pins, packages, lock, downloads, target, out)


def _build_framework_layer(client, base_id: str, tag: str, pins: list[str], packages: list[str], lock: Lock, downloads: Path, target: Target, out: IO[str]) -> str:  # fmt: skip
    out.write(f"# framework layer {tag}: installing {' '.join(pins + packages)}\n")
    inputs = {"frameworks.txt": "\n".join(pins) + "\n", **lock_input(lock)}
    container = _install_step(client, base_id, f"-r {STEP_INPUTS}/frameworks.txt -c {STEP_INPUTS}/lock.txt", inputs, downloads, target, out, system_packages=packages)  # fmt: skip
    labels = {layers.LABEL: "framework", layers.FRAMEWORKS_LABEL: " ".join(pins), layers.BASE_LABEL: base_id}
    layers.commit_layer(container, tag, labels, runtime=False)
    return tag


def _project_layer(client, parent: str, tag: str, checkout: Path, support: Mapping[str, bytes], lock: Lock, downloads: Path, target: Target, out: IO[str], record: ImageRecord, extensions: ExtensionBuild | None, system_packages: Sequence[str] = (), ci_packages: Sequence[str] = (), metadata: Mapping[str, bytes] | None = None) -> str:  # fmt: skip
    tree = partial(layers.copy_tree_into, checkout=checkout, support_files=support, files=metadata or {})
    packages = sorted({*system_packages, *(EXTENSION_PACKAGES if extensions else ())})
    # the lock is every package (the project's own left out): nothing beyond it is installed
    # wheels built here from sdists (deps/sdists.py) install as they are: nothing is built again
    housed = {wheel.name: wheel.read_bytes() for wheel in housed_for(lock.pins, downloads)}
    args = f"--no-deps -r {STEP_INPUTS}/lock.txt" + (f" --find-links {STEP_INPUTS}" if housed else "")
    container = _install_step(client, parent, args, {**lock_input(lock), **housed}, downloads, target, out, tree, packages, ci_packages)  # fmt: skip
    labels = {layers.LABEL: "project", "dlbench.repo": record.repo, "dlbench.sha": record.sha}
    labels[RUNNER_LABEL] = files_digest(support)
    if extensions is None:
        return layers.commit_layer(container, tag, labels, runtime=True)
    # The image's tag goes on the extensions layer only: a build stopped while compiling
    # (pytorch3d's takes half an hour) must not leave the tag on a layer without them, which
    # the next build would reuse as finished.
    unfinished = f"{tag}-without-extensions"
    layers.commit_layer(container, unfinished, labels, runtime=True)
    objects = f"{layers.CACHE_DIR}/extensions/{content_hash(record.repo, record.sha, parent)[:16]}"
    image_id = _extensions_layer(client, unfinished, tag, extensions, lock, downloads, target, out, labels, objects)
    client.images.remove(unfinished, noprune=True)
    return image_id


def _extensions_layer(client, parent: str, tag: str, extensions: ExtensionBuild, lock: Lock, downloads: Path, target: Target, out: IO[str], labels: Mapping[str, str], objects: str) -> str:  # fmt: skip
    """The checkout's declared extension modules built in place on top of the project layer
    (``parent``, its unfinished tag) and committed as ``tag`` (``images/extensions.py``); a
    failed build leaves them out, its cause in the image's label.
    ``objects``: the build's temporary folder, in the machine's cache, one per checkout and
    parent layer: a rebuild after a repair (which changes the lock, so the project layer) finds
    the objects compiled before, and a ninja build (torch's) compiles only what changed (its
    depfiles name every header, so a header reinstalled since is newer and recompiles)."""
    out.write(f"\n# building the checkout's extension modules in place ({' '.join(extensions.requirements) or 'no build requirements outside the lock'}); objects kept in the cache ({objects.removeprefix(layers.CACHE_DIR + '/')})\n")  # fmt: skip
    start = time.monotonic()
    container = layers.run_step(client, parent, build_script(extensions, objects), lock_input(lock), downloads, Path(uv_binary()), host_ca_bundle(), out, target.index_environment())  # fmt: skip
    note = build_outcome(container.logs().decode(errors="replace"), time.monotonic() - start)
    out.write(f"# extensions: {note}\n")
    return layers.commit_layer(container, tag, {**labels, EXTENSIONS_LABEL: note}, runtime=True)


def lock_input(lock: Lock) -> dict[str, str]:
    """The lock as a step's input file ``STEP_INPUTS/lock.txt``."""
    return {"lock.txt": "\n".join(lock.pins) + "\n"}


def _install_step(client, parent: str, args: str, inputs: Mapping[str, str], downloads: Path, target: Target, out: IO[str], before_start: Callable | None = None, system_packages: Sequence[str] = (), optional_packages: Sequence[str] = ()):  # fmt: skip
    """Run ``uv pip install <args>`` on ``parent`` (after the Debian ``system_packages``) with the
    machine's download cache and the resolution's index settings; ``inputs`` are files under STEP_INPUTS."""
    options = "".join(f" {shlex.quote(option)}" for option in target.package_options())  # the stand-ins' dates
    script = layers.uv_install_script(args + options, system_packages, optional_packages)
    return layers.run_step(client, parent, script, inputs, downloads, Path(uv_binary()), host_ca_bundle(), out, target.index_environment(), before_start)  # fmt: skip


def _check_after_build(client, tag: str, own: set[str], plan: EnvironmentPlan, cfg: ImagesConfig, out: IO[str]) -> tuple[dict[str, str], dict[str, TooNew], dict[str, str]]:  # fmt: skip
    """Modules the tests need that the image cannot import (module → the line saying so), the
    libraries whose release fails at its own import (``envcheck.too_new_libraries``), and the
    shared libraries the system lacks (file name → the line); ``own``: the project's modules."""
    code, output = layers.run_check(client, tag, check_script(plan.imports), cfg.check_timeout_s)
    missing, too_new = missing_modules(output, own), too_new_libraries(output, own)
    libraries = missing_libraries(output)
    status = "timed out" if code is None else f"{len(missing)} missing module(s), {len(too_new)} failing at import, {len(libraries)} shared librar{'y' if len(libraries) == 1 else 'ies'} missing"  # fmt: skip
    found = [*missing.items(), *((m, why.reason) for m, why in too_new.items()), *libraries.items()]
    out.write(f"# check: {status}" + "".join(f"\n#   {m}: {line}" for m, line in found) + "\n")
    return missing, too_new, libraries


def library_steps(libraries: Mapping[str, str], seen: Collection[str], round_: int, run_step: Callable[[str], str], out: IO[str]) -> list[RepairStep]:  # fmt: skip
    """A step adding the Debian package of each shared library in ``libraries`` (file name →
    the failure) that the image's sources have (``images/libraries.py``); those ``seen``
    were looked up before."""
    wanted = {name: why for name, why in libraries.items() if name not in seen}
    found = debian_packages(run_step, wanted, out)
    return [RepairStep(round=round_, module=name, distribution=package, reason=wanted[name], debian=True) for name, package in found.items()]  # fmt: skip


def _looked_up(repairs: Sequence[RepairStep]) -> set[str]:
    """The shared libraries an earlier repair gave a Debian package."""
    return {r.module for r in repairs if r.debian}


def _throwaway_step(client, image: str, script: str, downloads: Path, out: IO[str]) -> str:
    """The output of ``script`` run as a build step on ``image`` (network on), nothing committed."""
    container = layers.run_step(client, image, script, {}, downloads, Path(uv_binary()), host_ca_bundle(), out)
    try:
        return container.logs().decode(errors="replace")
    finally:
        container.remove(force=True, v=True)


def ships_runner(client: docker.DockerClient, tag: str, support: Mapping[str, bytes]) -> bool:
    """The image exists and ships these support files (the supervisor and plugin that run and
    report every candidate): an image built before the harness changed runs the old ones."""
    try:
        labels = client.images.get(tag).labels or {}
    except ImageNotFound:
        return False
    return labels.get(RUNNER_LABEL) == files_digest(support)


def _ping(client: docker.DockerClient) -> None:
    try:
        client.ping()
    except DockerException as exc:
        raise EngineUnavailable(f"Docker engine does not answer: {exc}") from exc


def _check_checkout(checkout: Path, sha: str) -> None:
    """The tag promises the pinned SHA: refuse a checkout that is somewhere else."""
    if not checkout.is_dir():
        raise ImageBuildError(f"checkout not found: {checkout}")
    if not (checkout / ".git").exists():
        return  # an exported tree: the caller vouches for its SHA
    git = ["git", "-c", "safe.directory=*", "-C", str(checkout), "rev-parse", "HEAD"]
    head = subprocess.run(git, capture_output=True, text=True)
    if head.returncode != 0 or not head.stdout.strip().startswith(sha):
        found = head.stdout.strip() or head.stderr.strip()
        raise ImageBuildError(f"checkout {checkout} is not at {sha} (HEAD: {found})")


def _failed(record: ImageRecord, log_path: Path, error: str) -> ImageRecord:
    log_path.write_text(f"# FAILED: {error}\n")
    return record.model_copy(update={"error": error})


def _step_output_tail(exc: Exception, lines: int = LOG_TAIL_LINES) -> str:
    output = getattr(exc, "output", "") or ""
    return "\n".join(output.splitlines()[-lines:])


def prune_unrecorded(records_dir: Path, client: docker.DockerClient | None = None) -> list[str]:
    """``dlbench images prune``: keep the project and framework images that the image
    records in ``records_dir`` (``results/images``) name, remove the rest."""
    keep = set()
    for path in Path(records_dir).glob("*.json"):
        record = ImageRecord.model_validate_json(path.read_text())
        keep |= {t for t in (record.tag, record.framework_image) if t}
    return layers.prune_images(client or docker_client(), keep)
