"""A project image as files a consumer of the benchmark rebuilds with plain Docker.

The workflow builds a project image by running install steps in containers and committing
them (``images/layers.py``: the machine's download cache mounted, the framework layer shared
between projects), which no Dockerfile can say. What ends up in the image is fixed by the
image record, though, so the same environment is written here per repository, beside the
benchmark (``results/benchmark/environments/{repo}/``):

- ``image.json``: the image record as the workflow wrote it (the one gold's runs settled on);
- ``lock.txt``: its lock, ``name==version`` of every package installed;
- ``Dockerfile`` (+ ``.dockerignore``): the same steps in order. A public ``python:X.Y-slim``
  base of the record's Python whose glibc is at least the one the lock was resolved for (a
  build argument: any base with that Python and ``python3 -m venv`` will do); the runner
  user, the venv and the folders (``layers.PREPARE``) and the Debian packages the
  frameworks and an extension build need; the lock installed with ``--no-deps``; the
  checkout at the pinned commit, taken from the build context (``repo/``) without ``.git``;
  the project's own distribution registered without its code (``own/``: ``deps.own``);
  the checkout's extension modules built in place by the workflow's own step script
  (``build-extensions.sh``: ``extensions.build_script``); and the runtime settings the
  sandbox sets (``layers.RUNTIME_ENV``, the work folder, the runner user, one thread per
  math library, the variables the project's own test runs set).

Not in it: dlbench's runner files (``/opt/dlbench``: the supervisor and pytest plugin that
grade candidates), which a consumer running pytest does not need, and the sandbox's run-time
lock-down (read-only root, limits), which are flags of ``docker run``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from dlbench.config import ImagesConfig
from dlbench.deps.own import OwnDistribution, own_distribution
from dlbench.deps.resolve import Lock
from dlbench.deps.sdists import housed_for
from dlbench.deps.testenv import runner_environment
from dlbench.deps.tree import disk_tree
from dlbench.images.build import project_system_packages, system_packages_for
from dlbench.images.extensions import SYSTEM_PACKAGES as EXTENSION_PACKAGES
from dlbench.images.extensions import ExtensionBuild, build_script, extension_build
from dlbench.images.layers import (
    BUILD_DIR,
    PREPARE,
    REPO_DIR,
    RUNNER_UID,
    RUNTIME_ENV,
    STEP_INPUTS,
    VENV_PYTHON,
    apt_script,
    site_packages,
)
from dlbench.records import BenchmarkTask, CloneRecord, ImageRecord
from dlbench.store import read_json, read_jsonl, write_json, write_text

log = logging.getLogger(__name__)

ENVIRONMENTS_DIR = "environments"  # beside the benchmark's files
IMAGE_FILE = "image.json"
LOCK_FILE = "lock.txt"
DOCKERFILE = "Dockerfile"
DOCKERIGNORE = ".dockerignore"
OWN_DIR = "own"  # the project's own .dist-info, for site-packages
WHEELS_DIR = "wheels"  # the lock's wheels the workflow built from sdists (deps/sdists.py)
EXTENSIONS_SCRIPT = "build-extensions.sh"
CHECKOUT_DIR = "repo"  # the build context's copy of the checkout at the pinned commit
# The thread settings every sandbox container runs with (harness/sandbox.py container_options).
THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# Debian releases of the python:X.Y-slim images and their glibc: the first one at least as new
# as the lock's manylinux platform runs every wheel the lock was resolved for.
DEBIAN_GLIBC = (("bullseye", 31), ("bookworm", 36), ("trixie", 41))


def public_base(python: str, platform: str) -> str:
    """The Docker Hub image of ``python`` on the oldest Debian whose glibc runs wheels built for
    ``platform`` (``x86_64-manylinux_2_36`` → ``python:3.11-slim-bookworm``)."""
    found = re.search(r"manylinux_2_(\d+)", platform)
    need = int(found[1]) if found else 0
    suite = next((name for name, glibc in DEBIAN_GLIBC if glibc >= need), None)
    return f"python:{python}-slim-{suite}" if suite else f"python:{python}-slim"


def lock_text(record: ImageRecord) -> str:
    """The lock as a requirements file, headed by what it was resolved for."""
    env = record.environment
    if env is None:
        raise ValueError(f"{record.repo}: the image record has no environment ({record.status})")
    as_of = env.exclude_newer.date().isoformat() if env.exclude_newer else "the day it was built"
    head = [
        f"# {record.repo} at {record.sha}: every package of its test environment (dlbench's lock),",
        f"# resolved for Python {env.python_version} ({env.platform}) with releases as of {as_of}.",
    ]
    return "\n".join([*head, *env.lock]) + "\n"


def system_packages(record: ImageRecord, cfg: ImagesConfig, extensions: ExtensionBuild | None) -> list[str]:
    """The Debian packages of the image: what its locked distributions need at run time and,
    when it builds extensions, a compiler's."""
    env = record.environment
    needed = system_packages_for(env.lock if env else [], cfg)
    # the shared libraries' packages a repair found (images/libraries.py)
    repaired = [r.distribution for r in env.repairs if r.debian] if env else []
    return sorted({*needed, *repaired, *(EXTENSION_PACKAGES if extensions else ())})


def dockerfile(
    record: ImageRecord,
    repo: str,
    cfg: ImagesConfig,
    test_env: Mapping[str, str] | None = None,
    extensions: ExtensionBuild | None = None,
    uv_version: str | None = None,
    ci_packages: Sequence[str] = (),
    own: OwnDistribution | None = None,
    wheels: bool = False,
) -> str:
    """The Dockerfile of ``record``'s image (``repo``: owner/name). ``test_env``: what the
    project's own test runs set; ``extensions``: how its extension modules are built;
    ``uv_version``: the uv that builds them (the one the workflow runs); ``ci_packages``:
    the Debian packages its own test runs have (``images.build.project_system_packages``);
    ``own``: the project's own distribution, its metadata copied from ``own/``; ``wheels``:
    pins built from their sdists by the workflow are installed from ``wheels/`` (an old sdist
    may not build with today's build tools)."""
    env = record.environment
    if env is None:
        raise ValueError(f"{record.repo}: the image record has no environment ({record.status})")
    slug = record.repo
    packages = system_packages(record, cfg, extensions)
    optional = [p for p in ci_packages if p not in packages]
    apt = apt_script(packages, optional)
    as_of = env.exclude_newer.date().isoformat() if env.exclude_newer else "the day it was built"
    lines = [
        f"# The test environment of {repo} at {record.sha}, as dlbench built it for the benchmark:",
        f"# Python {env.python_version} ({env.platform}), {len(env.lock)} packages resolved as of {as_of} ({LOCK_FILE}).",
        f"# dlbench built it as {record.tag or '(no tag)'} on {record.base_image}.",
        *_notes(record),
        "#",
        f"# Build it from this folder, with the checkout at the pinned commit in {CHECKOUT_DIR}/:",
        f"#   git clone https://github.com/{repo} {CHECKOUT_DIR} && git -C {CHECKOUT_DIR} checkout {record.sha}",
        f"#   docker build -t dlbench-env/{slug.lower()} .",
        "# --build-arg BASE_IMAGE=<image> builds on another base with the same Python (and `python3 -m venv`),",
        "# --build-arg INDEX_URL=<url> installs from a PyPI mirror.",
        "# Run a task's tests (its `tests` node ids) as the benchmark does, without network:",
        f'#   docker run --rm --network none dlbench-env/{slug.lower()} python -m pytest -p no:cacheprovider "<node id>"',
        f"ARG BASE_IMAGE={public_base(env.python_version, env.platform)}",
        "FROM ${BASE_IMAGE}",
        "ARG INDEX_URL=",
        f"ARG FRAMEWORK_INDEX_URL={cfg.framework_index_url or ''}",
        f"# the runner user (uid {RUNNER_UID}), the venv, the work folders"
        + (f"; Debian packages: {', '.join(packages)}" if packages else "")
        + (f"; where Debian has them, those the project's CI installs: {', '.join(optional)}" if optional else ""),
        f"RUN set -e; {PREPARE}{'; ' + apt if apt else ''}",
        f"COPY {LOCK_FILE} {STEP_INPUTS}/{LOCK_FILE}",
        *([f"COPY {WHEELS_DIR}/ {STEP_INPUTS}/{WHEELS_DIR}/"] if wheels else []),
        f"RUN {VENV_PYTHON} -m pip install --no-cache-dir --no-deps"
        ' ${INDEX_URL:+--index-url "$INDEX_URL"} ${FRAMEWORK_INDEX_URL:+--extra-index-url "$FRAMEWORK_INDEX_URL"}'
        + (f" --find-links {STEP_INPUTS}/{WHEELS_DIR}" if wheels else "")
        + f" -r {STEP_INPUTS}/{LOCK_FILE}",
        f"COPY {CHECKOUT_DIR}/ {REPO_DIR}/",
        *(
            [
                f"# {own.name} {own.version} registered, its code left in {REPO_DIR}",
                f"COPY {OWN_DIR}/ {site_packages(env.python_version)}/",
            ]
            if own
            else []
        ),  # fmt: skip
        *(_extension_steps(record, extensions, uv_version) if extensions else []),
        f"RUN rm -rf {BUILD_DIR}",
        *(f"ENV {key}={_quote(value)}" for key, value in {**RUNTIME_ENV, **THREADS, **(test_env or {})}.items()),
        f"WORKDIR {REPO_DIR}",
        f"USER {RUNNER_UID}:{RUNNER_UID}",
        'CMD ["python"]',
    ]
    return "\n".join(lines) + "\n"


def _notes(record: ImageRecord) -> list[str]:
    env = record.environment
    notes = []
    python, debian = ([r for r in env.repairs if r.debian is system] for system in (False, True)) if env else ([], [])
    if python:
        notes.append("# Repairs in the lock: " + "; ".join(f"{r.spec or r.distribution} ({r.reason})" for r in python))
    if debian:
        notes.append("# Debian packages the repairs added: " + "; ".join(f"{r.distribution} ({r.reason})" for r in debian))  # fmt: skip
    if env and env.dropped:
        notes.append("# Left out: " + "; ".join(f"{d.spec} ({d.reason})" for d in env.dropped))
    if env and env.unresolved:
        notes.append(f"# Modules the tests import that no package provided: {', '.join(env.unresolved)}")
    if env and env.unresolved_libraries:
        notes.append(f"# Shared libraries no Debian package provided: {', '.join(env.unresolved_libraries)}")
    if record.extensions:
        notes.append(f"# The checkout's extension modules: {record.extensions}")
    return [" ".join(n.split()) for n in notes]


def _extension_steps(record: ImageRecord, extensions: ExtensionBuild, uv_version: str | None) -> list[str]:
    """The workflow's extension step (``build-extensions.sh``), with the uv it calls when the
    build needs requirements outside the lock."""
    steps = [f"COPY {EXTENSIONS_SCRIPT} {STEP_INPUTS}/{EXTENSIONS_SCRIPT}"]
    uv = ""
    if extensions.requirements:
        pin = f"uv=={uv_version}" if uv_version else "uv"
        uv = (
            f"{VENV_PYTHON} -m pip install --no-cache-dir --target {BUILD_DIR}/uv-package {pin}"
            f" && ln -s {BUILD_DIR}/uv-package/bin/uv {BUILD_DIR}/uv"
            ' && if [ -n "$INDEX_URL" ]; then export UV_INDEX_URL="$INDEX_URL"; fi && '
        )
    steps.append(f"RUN {uv}sh {STEP_INPUTS}/{EXTENSIONS_SCRIPT}")
    return steps


def _quote(value: str) -> str:
    """A Dockerfile ENV value: double-quoted, with no variable substituted."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def uv_version() -> str | None:
    try:
        return version("uv")
    except PackageNotFoundError:
        return None


def export_environment(record: ImageRecord, clone: CloneRecord, out_dir: Path, cfg: ImagesConfig, downloads: Path) -> Path:  # fmt: skip
    """``out_dir/{repo}/``: the image record, and for a built image its lock and Dockerfile
    (with the wheels of ``downloads``' wheelhouse it installed)."""
    folder = out_dir / record.repo
    write_json(folder / IMAGE_FILE, record)
    if record.environment is None:
        log.warning("%s: no environment to export (%s: %s)", record.repo, record.status, record.error)
        return folder
    checkout = Path(clone.path)
    if not checkout.is_dir():
        raise FileNotFoundError(f"{record.repo}: checkout {checkout} is missing (its extensions and test variables are read from it)")  # fmt: skip
    extensions = extension_build(checkout, set(Lock(pins=record.environment.lock, requirements=[]).versions()))
    write_text(folder / LOCK_FILE, lock_text(record))
    ci_packages = project_system_packages(checkout, cfg)
    own = own_distribution(disk_tree(checkout))
    for rel, data in (own.dist_info() if own else {}).items():
        (folder / OWN_DIR / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / OWN_DIR / rel).write_bytes(data)
    housed = housed_for(record.environment.lock, downloads)
    for wheel in housed:
        (folder / WHEELS_DIR).mkdir(parents=True, exist_ok=True)
        (folder / WHEELS_DIR / wheel.name).write_bytes(wheel.read_bytes())
    text = dockerfile(record, clone.full_name, cfg, runner_environment(checkout), extensions, uv_version(), ci_packages, own, bool(housed))  # fmt: skip
    write_text(folder / DOCKERFILE, text)
    write_text(folder / DOCKERIGNORE, f"{CHECKOUT_DIR}/.git\n**/.git\n")
    if extensions:
        write_text(folder / EXTENSIONS_SCRIPT, build_script(extensions) + "\n")
    return folder


def export_environments(
    benchmark: str | Path,
    clone_paths: Sequence[str | Path],
    image_paths: Sequence[str | Path],
    out_dir: str | Path,
    cfg: ImagesConfig,
    downloads: str | Path,
) -> list[str]:
    """Rule entry point: the environment of every repository with tasks in the benchmark and
    an image record (none on the local backend), each in ``out_dir/{repo}/``; the slugs."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with_tasks = {t.slug for t in read_jsonl(benchmark, BenchmarkTask)}
    clones = {c.slug: c for c in (read_json(p, CloneRecord) for p in clone_paths)}
    records = [r for r in (read_json(p, ImageRecord) for p in image_paths) if r.repo in with_tasks]
    for record in sorted(records, key=lambda r: r.repo):
        export_environment(record, clones[record.repo], out_dir, cfg, Path(downloads))
    missing = sorted(with_tasks - {r.repo for r in records})
    if missing:
        log.warning("no image record, so no environment exported, for %s", ", ".join(missing))
    log.info("environments exported for %d of %d repositories with tasks", len(records), len(with_tasks))
    return sorted(r.repo for r in records)
