"""Resolve a project's test requirements into a lock (``name==version`` of every package),
as of the pinned commit's date, with uv.

``uv pip compile --exclude-newer DATE`` sees only releases uploaded before the commit, so
old code meets the numpy or torch it was written for. When the requirements cannot be
resolved together, the optional requirements (what the tests import, CI lines, extras,
dev groups) that cannot be had at all are found first, each with a cheap run that asks for
the distribution alone (``--no-deps``: one index look-up, not a whole resolution), and
dropped with their cause: however many there are, they cost only the tests that need them.
Then, for real conflicts, the requirement the resolver names with the lowest priority is
dropped and recorded, until the rest resolves. A direct URL (``name @ git+https://...``, a
CI's ``pip install git+...`` of a library's branch) is not fetched: the index's releases of
that name stand in, up to its first release after the date (``deps.releases``: the branch as
of the commit held everything released before and more), recorded. An
optional requirement offered only as an sdist is built once here and kept when it is pure
Python (``deps.sdists``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion

from dlbench.deps.declared import canonical_name, from_package_metadata
from dlbench.deps.plan import PRIORITY, drop_priority
from dlbench.deps.releases import (
    ReleasesUnavailable,
    cutoff_for,
    first_release_after,
    names_repository,
    release_of,
    source_file,
)
from dlbench.deps.sdists import SdistBuild, build_sdist, housed_as_of, wanted_only_as_wheel
from dlbench.records import DeclaredRequirement, DroppedRequirement

OPTIONAL_BELOW = PRIORITY["test"]  # import, ci, optional, docs, dev: the tests can do without them
DEFAULT_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
RESOLVE_TIMEOUT_S = 600
UNSATISFIABLE = "No solution found"  # uv's word for a conflict (not a network or index failure)
BUILD_FAILED = re.compile(r"Failed to build `(?P<name>[A-Za-z0-9._-]+)")  # a source it built for metadata
SOURCE_FAILS = "its source does not build here"
DIRECT = frozenset({"vcs", "directory", "archive"})  # a pylock package's keys when it is not the index's
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)")


class ResolutionError(RuntimeError):
    """The requirements cannot be resolved even after dropping what the resolver blamed."""


class IndexUnavailable(RuntimeError):
    """The resolver could not ask the index (network, proxy, index down): not the project's
    fault, so nothing is recorded and a rerun tries again."""


@dataclass(frozen=True)
class Target:
    """What the lock is for: the base image's Python and platform, and where packages come from."""

    python_version: str = "3.11"
    platform: str = "x86_64-manylinux_2_36"
    exclude_newer: datetime | None = None
    index_url: str | None = None
    extra_index_url: str | None = None
    cache_dir: Path | None = None
    exclude_newer_package: tuple[tuple[str, datetime], ...] = ()  # (name, date): later dates for these
    stand_in_days: int = 365  # how late a release may come to stand in for a git branch (0: none)
    # the project's own distributions: it runs from its checkout, so a release of it that a
    # test requirement depends on (pennylane-qiskit on pennylane) is never installed beside it
    omit: tuple[str, ...] = ()
    native_sdists: bool = True  # an optional sdist-only requirement that compiles is kept (built in the image)

    def package_options(self) -> list[str]:
        """uv's options for the per-distribution dates (uv reads no environment variable for
        them): the same for resolving on the host and installing in an image."""
        return [f"--exclude-newer-package={name}={when.isoformat()}" for name, when in self.exclude_newer_package]

    def with_package_dates(self, dates: Mapping[str, datetime]) -> Target:
        """This target with later dates for single distributions (a lock's, to install it)."""
        return replace(self, exclude_newer_package=tuple(sorted(dates.items())))

    def index_environment(self) -> dict[str, str]:
        """Where packages come from and as of when, as uv's environment: the same for resolving
        on the host and installing in an image. The date reaches the isolated environments
        uv builds sdists in: with today's setuptools (82 dropped ``pkg_resources``) visdom
        0.2.4, pinned as of 2025, no longer builds (pytorch3d's and ignite's tests import it)."""
        env = {"UV_INDEX_URL": self.index_url} if self.index_url else {}
        if self.extra_index_url:
            env |= {"UV_EXTRA_INDEX_URL": self.extra_index_url, "UV_INDEX_STRATEGY": "unsafe-best-match"}
        if self.exclude_newer:
            env["UV_EXCLUDE_NEWER"] = self.exclude_newer.isoformat()
        return env


@dataclass
class Lock:
    pins: list[str]  # name==version, sorted by name
    requirements: list[DeclaredRequirement]  # what was resolved (after drops)
    dropped: list[DroppedRequirement] = field(default_factory=list)
    from_source: list[str] = field(default_factory=list)  # wheels-only names kept as sdists built here
    native: list[str] = field(default_factory=list)  # of those, the ones that compile: the image needs a compiler
    wheels_preferred: list[str] = field(default_factory=list)  # dependencies taken in a version with a wheel
    exclude_newer_package: dict[str, datetime] = field(default_factory=dict)  # stand-ins' later dates

    def versions(self) -> dict[str, str]:
        return {canonical_name(m["name"]): m["version"] for m in map(PIN.match, self.pins) if m}


def uv_binary() -> str:
    """The uv next to this interpreter (installed with dlbench), else the one on PATH."""
    local = Path(sys.executable).with_name("uv")
    found = str(local) if local.is_file() else shutil.which("uv")
    if not found:
        raise ResolutionError("uv is not installed: pip install uv (a dlbench dependency)")
    return found


def resolve(
    requirements: Sequence[DeclaredRequirement], constraints: Sequence[str], target: Target, prefer: Sequence[str] = ()
) -> Lock:
    """A lock for ``requirements``. With ``prefer`` (pins of an existing framework layer) the
    lock must keep every requirement and those pins, or ``ResolutionError`` is raised."""
    if prefer:
        return _resolve_dropping(list(requirements), [*constraints, *prefer], target, allow_drops=False)
    return _resolve_dropping(list(requirements), list(constraints), target, allow_drops=True)


def _resolve_dropping(requirements: list[DeclaredRequirement], constraints: list[str], target: Target, allow_drops: bool) -> Lock:  # fmt: skip
    requirements, dates, dropped = stand_ins(requirements, target)
    target = target.with_package_dates(dates)
    checked, from_source = not allow_drops, dict[str, bool]()
    while True:
        no_build = _wheels_only(requirements, from_source)
        ok, output = compile_lock([r.spec for r in requirements], constraints, target, no_build)
        if ok:
            output, preferred = _wheels_preferred(requirements, constraints, target, no_build, output)
            return Lock(pins=_pins(output), wheels_preferred=preferred, requirements=requirements, dropped=dropped, from_source=sorted(from_source),
                        native=sorted(name for name, native in from_source.items() if native),
                        exclude_newer_package=dates)  # fmt: skip
        if UNSATISFIABLE not in output:
            failed = _failed_to_build(requirements, output) if allow_drops else None
            if failed is None:
                raise IndexUnavailable(f"uv pip compile failed: {_cause(output)}")
            requirements, gone = _drop_name(requirements, failed, f"{SOURCE_FAILS}: {_cause(output)}")
            dropped += gone
            continue
        if not checked:  # first, every optional requirement that cannot be had at all, cheaply
            checked = True
            requirements, missing, from_source = _without_unavailable(requirements, constraints, target)
            if missing or from_source:
                dropped += missing
                continue
        blamed = _blamed(requirements, output) if allow_drops else None
        if blamed is None:
            raise ResolutionError(_cause(output))
        requirements, gone = _drop_name(requirements, blamed, f"unresolvable: {_cause(output)}")
        dropped += gone


def _wheels_preferred(
    requirements: list[DeclaredRequirement], constraints: list[str], target: Target, no_build: list[str], output: str
) -> tuple[str, list[str]]:
    """(the lock, the names it takes as wheels in another version): a dependency the lock
    would build from source is asked for as a wheel, where some version of it has one that
    fits, every declared requirement keeping its version. The resolver takes the highest
    version allowed, sdist or not: beside deepchecks' pins on Python 3.10 it chose
    ``scipy==1.6.1``, which has no 3.10 wheel, and the image compiled it, failed, and was
    built again. A name no version of which has a wheel that fits (uv names it) keeps its
    source, and the next run asks for the rest: one more run per such name."""
    declared = {r.name for r in requirements}
    wanted = [name for name in _sources_only(output) if name not in declared]
    kept = [pin for pin in _pins(output) if canonical_name(pin.split("==")[0]) in declared]  # the project's stay
    while wanted:
        ok, retried = compile_lock([r.spec for r in requirements], [*constraints, *kept], target, [*no_build, *wanted])
        if ok:
            return retried, wanted
        named = [name for name in wanted if _mentions(canonical_name(retried), name)]
        if UNSATISFIABLE not in retried or not named:
            break
        wanted = [name for name in wanted if name not in named]
    return output, []


def _wheels_only(requirements: Sequence[DeclaredRequirement], from_source: Mapping[str, bool]) -> list[str]:
    """What the tests merely import, or a CI file installs, is asked for as a wheel;
    ``from_source``: such names whose sdist was found to build here (``unavailable``)."""
    return [r.name for r in requirements if drop_priority(r) <= PRIORITY["ci"] and r.name not in from_source]


def _drop_name(
    requirements: list[DeclaredRequirement], blamed: DeclaredRequirement, reason: str
) -> tuple[list[DeclaredRequirement], list[DroppedRequirement]]:
    """``blamed`` and every other declaration of its name that counts no more (``going_with``)."""
    gone = going_with(requirements, blamed, reason)
    kept = [r for r in requirements if r not in gone]
    return kept, [DroppedRequirement(spec=r.spec, source=r.source, reason=reason) for r in gone]


def going_with(
    requirements: Sequence[DeclaredRequirement], blamed: DeclaredRequirement, message: str = ""
) -> list[DeclaredRequirement]:
    """The declarations of ``blamed``'s name that go when it goes: those that count no more
    (a CI file's and an import's alike). One the project declares with a higher priority,
    or in its package metadata where ``blamed`` is a requirements file's, stays: CompressAI's
    requirements.txt pins ``torch==1.8.1`` against its pyproject's ``torch>=1.13.1``, and
    dropping the name with the conflict left the project without its framework. Where the
    resolver's ``message`` sets two versions of the name against each other, only ``blamed``'s
    spec goes: nncf's test files pin ``datasets==3.0.1`` and ``datasets==3.1.0``, and both went."""
    same = [r for r in requirements if r.name == blamed.name and authority(r) <= authority(blamed)]
    if _conflicts_with_itself(blamed.name, message):
        return [r for r in same if r.spec == blamed.spec]
    return same


def _conflicts_with_itself(name: str, message: str) -> bool:
    """The resolver's words name two different versions of ``name`` (``you require x==1 and x==2``)."""
    versions = re.findall(rf"(?<![a-z0-9-]){re.escape(name)}\s*([=<>!~]=?[^\s,;]+)", canonical_name(message))
    return len(set(versions)) >= 2


def authority(requirement: DeclaredRequirement) -> tuple[int, bool]:
    """How much a declaration counts: its priority, then whether the package metadata says it."""
    return drop_priority(requirement), from_package_metadata(requirement.source)


def _without_unavailable(
    requirements: list[DeclaredRequirement], constraints: list[str], target: Target
) -> tuple[list[DeclaredRequirement], list[DroppedRequirement], dict[str, bool]]:
    """The optional requirements no release of which can be had, dropped with their cause, and
    the names kept as sdists (``unavailable``)."""
    required = {r.name for r in requirements if drop_priority(r) >= OPTIONAL_BELOW}
    optional = [r for r in requirements if drop_priority(r) < OPTIONAL_BELOW and r.name not in required]
    dropped: list[DroppedRequirement] = []
    found = unavailable(optional, constraints, target)
    for blamed, cause in found.gone:
        requirements, gone = _drop_name(requirements, blamed, f"cannot be had: {cause}")
        dropped += gone
    requirements = _swapped(requirements, [(bounded, bare) for bounded, bare, _ in found.relaxed])
    for bounded, bare, cause in found.relaxed:
        reason = (
            f"no wheel within its bound for Python {target.python_version} ({cause}): {bare.spec}'s wheels stand in"
        )
        dropped.append(DroppedRequirement(spec=bounded.spec, source=bounded.source, reason=reason))
    return requirements, dropped, found.from_source


@dataclass
class Availability:
    """What ``unavailable`` found among the requirements it was asked about."""

    gone: list[tuple[DeclaredRequirement, str]] = field(default_factory=list)  # (requirement, the resolver's words)
    from_source: dict[str, bool] = field(default_factory=dict)  # wheels-only names kept as sdists → compiles
    # (a declaration with a version bound, the same without it, why its bound went)
    relaxed: list[tuple[DeclaredRequirement, DeclaredRequirement, str]] = field(default_factory=list)


def unavailable(
    requirements: Sequence[DeclaredRequirement], constraints: Sequence[str], target: Target, wheels: bool = False
) -> Availability:
    """Each of ``requirements`` of which no release can be had for ``target`` (not on the
    index as of the date, no wheel where one is needed; ``wheels``: every one asked for as a
    wheel, no source built), found by asking for them without their dependencies: one small
    run per such requirement, never a whole resolution. A wheels-only requirement with no
    wheel is built from its sdist here: kept when its wheel is pure Python; else, when only
    its version bound stands between it and the name's wheels, the bound goes (``relaxed``):
    pytorch3d's CI installs ``pillow<7``, which has no wheel for Python 3.11, and Pillow 6
    built here, against the host's libjpeg headers, failed to build in the image, which has
    none, and cost the image a whole second build; else kept when it compiles
    (``kept_from_source``), to be built in the image."""
    left, found = list(requirements), Availability()
    gone, from_source = found.gone, found.from_source
    while left:
        no_build = [r.name for r in left] if wheels else _wheels_only(left, from_source)
        ok, output = compile_lock([r.spec for r in left], constraints, target, no_build, no_deps=True)
        if ok:
            break
        if UNSATISFIABLE not in output:
            failed = _failed_to_build(left, output)
            if failed is None:
                raise IndexUnavailable(f"uv pip compile failed: {_cause(output)}")
            gone.append((failed, f"{SOURCE_FAILS}: {_cause(output)}"))
            left = [r for r in left if r not in going_with(left, failed, output)]
            continue
        blamed = _blamed(left, output)
        if blamed is None:
            break
        cause = _cause(output)
        if blamed.name in no_build and wanted_only_as_wheel(cause) and not wheels:
            same = [r for r in left if r.name == blamed.name]  # the release they all allow is the one to build
            build = _sdist_build(blamed, [*constraints, *(r.spec for r in same if r is not blamed)], target)
            if not build.pure and (wider := _without_bounds(same, constraints, target)):
                found.relaxed += [(r, bare, build.why) for r, bare in wider]
                left = _swapped(left, wider)
                continue
            if kept_from_source(build, target):
                from_source[blamed.name] = not build.pure
                continue
            cause = f"{cause} ({build.why})"
        gone.append((blamed, cause))
        left = [r for r in left if r not in going_with(left, blamed, output)]
    return found


def _without_bounds(
    same: Sequence[DeclaredRequirement], constraints: Sequence[str], target: Target
) -> list[tuple[DeclaredRequirement, DeclaredRequirement]]:
    """(declaration, the same without its version bound) for each of ``same`` (one name's
    declarations) that has a bound, when some release of the name as of the date has a
    wheel for ``target``; none otherwise."""
    bounded = [r for r in same if Requirement(r.spec).specifier]
    if not bounded:
        return []
    ok, _ = compile_lock([bounded[0].name], constraints, target, no_build=[bounded[0].name], no_deps=True)
    return [(r, r.model_copy(update={"spec": _unbounded(r.spec)})) for r in bounded] if ok else []


def _unbounded(spec: str) -> str:
    parsed = Requirement(spec)
    parsed.specifier = SpecifierSet()
    return str(parsed)


def _swapped(
    requirements: Sequence[DeclaredRequirement], swaps: Sequence[tuple[DeclaredRequirement, DeclaredRequirement]]
) -> list[DeclaredRequirement]:
    replacement = {id(old): new for old, new in swaps}
    return [replacement.get(id(r), r) for r in requirements]


def kept_from_source(build: SdistBuild, target: Target) -> bool:
    """A pure-Python sdist installs in any image; one that compiles, where ``target`` allows
    native sdists: the image gets a compiler and builds it (``images/build.py``)."""
    return build.pure or (build.built and target.native_sdists)


def _sdist_build(requirement: DeclaredRequirement, constraints: Sequence[str], target: Target) -> SdistBuild:
    """The release of ``requirement`` the date allows, built from its sdist: with the build
    tools as of the date, and where they fail, with those as of the release (an old sdist
    may build only with the tools of its day: setuptools 82 dropped ``pkg_resources``, which
    visdom 0.2.4's setup.py imports)."""
    ok, output = compile_lock([requirement.spec], constraints, target, no_deps=True)
    pins = _pins(output) if ok else []
    if not pins:
        return SdistBuild(False, False, f"no sdist either: {_cause(output)}" if not ok else "no sdist either")
    if target.cache_dir is None:
        return SdistBuild(False, False, "no download cache to keep its wheel in")
    name, _, version = pins[0].partition("==")
    try:
        release = release_of(name, version, target.index_url, host_ca_bundle())
        source = source_file(name, version, target.index_url, host_ca_bundle())
    except (ReleasesUnavailable, InvalidVersion) as exc:
        return SdistBuild(False, False, f"its files are not listed: {exc}")
    if release is None or source is None:
        return SdistBuild(False, False, "no sdist either")
    released, env = cutoff_for(release), _uv_environment() | target.index_environment()
    build = build_sdist(source, uv_binary(), env, target.cache_dir, released, host_ca_bundle())
    if build.built or (target.exclude_newer and released >= target.exclude_newer):
        return build
    dated = env | {"UV_EXCLUDE_NEWER": released.isoformat()}
    retry = build_sdist(source, uv_binary(), dated, target.cache_dir, released, host_ca_bundle())
    if not retry.built:
        return build
    return replace(retry, why=f"{retry.why}, with the build tools of its release ({released:%Y-%m-%d})")


def stand_ins(requirements: Sequence[DeclaredRequirement], target: Target) -> tuple[list[DeclaredRequirement], dict[str, datetime], list[DroppedRequirement]]:  # fmt: skip
    """Requirements given as a URL (never fetched) resolved from the index: (those kept, the
    later date that lets each one's first release after ``target``'s date stand in, within
    ``stand_in_days``, and the record of what stands in). A name read off a repository's URL
    is kept only where the index's project of that name names that repository."""
    kept, dates, notes = [], {}, []
    for r in requirements:
        if r.direct_url is None:
            kept.append(r)
            continue
        spec, why = f"{r.spec} @ {r.direct_url}", f"direct URL {r.direct_url} is not fetched"
        if r.name_from_url and not names_repository(r.name, target.index_url, host_ca_bundle()):
            notes.append(DroppedRequirement(spec=spec, source=r.source, reason=f"{why}: the index's {r.name} names no repository called so (another project's name, or it does not say): left out"))  # fmt: skip
            continue
        reason, cutoff = _stand_in(r.name, target)
        if cutoff:
            dates[r.name] = max(cutoff, dates.get(r.name, cutoff))
        kept.append(r)
        notes.append(DroppedRequirement(spec=spec, source=r.source, reason=f"{why}: {reason}"))
    return kept, dates, notes


def _stand_in(name: str, target: Target) -> tuple[str, datetime | None]:
    """(what stands in for ``name``'s URL, the date that lets the resolver see it)."""
    if target.exclude_newer is None or target.stand_in_days <= 0:
        return f"the index's release of {name} stands in", None
    try:
        release = first_release_after(name, target.exclude_newer, target.index_url, host_ca_bundle())
    except ReleasesUnavailable as exc:
        return f"the index's release of {name} as of {target.exclude_newer.date()} stands in ({exc})", None
    if release is None or release.first_upload - target.exclude_newer > timedelta(days=target.stand_in_days):
        later = f"{release.version} came {(release.first_upload - target.exclude_newer).days} days later" if release else "none came later"  # fmt: skip
        return f"the index's release of {name} as of {target.exclude_newer.date()} stands in ({later})", None
    first = release.first_upload.date()
    return f"{name}'s first release after {target.exclude_newer.date()} stands in for it ({release.version}, {first})", cutoff_for(release)  # fmt: skip


def compile_lock(specs: Sequence[str], constraints: Sequence[str], target: Target, no_build: Sequence[str] = (), no_deps: bool = False) -> tuple[bool, str]:  # fmt: skip
    """(resolved, uv's output): the lock text on success, the resolver's message otherwise.

    ``no_build``: distributions taken only as wheels. What the tests merely import, or a CI
    file installs, must not need a compiler in the image (an sdist-only match is dropped)."""
    command = [uv_binary(), "pip", "compile", "-", "--quiet", "--no-header", "--no-annotate", "--format", "pylock.toml",
               "--python-version", target.python_version, "--python-platform", target.platform]  # fmt: skip
    if target.exclude_newer:
        command += ["--exclude-newer", target.exclude_newer.isoformat(), *target.package_options()]
    for name in no_build:
        command.append(f"--only-binary={name}")  # joined: a name is never read as an option
    if no_deps:
        command.append("--no-deps")
    command += [f"--no-emit-package={name}" for name in target.omit]
    if target.cache_dir:
        command += ["--cache-dir", str(target.cache_dir)]
    with tempfile.TemporaryDirectory(prefix="dlbench-compile-") as tmp:
        if constraints:
            (Path(tmp) / "constraints.txt").write_text("\n".join(constraints) + "\n")
            command += ["--constraint", str(Path(tmp) / "constraints.txt")]
        command += _wheelhouse_options(Path(tmp) / "wheels", target)
        try:
            done = subprocess.run(command, input="\n".join(specs) + "\n", capture_output=True, text=True,
                                  timeout=RESOLVE_TIMEOUT_S, env=_uv_environment() | target.index_environment())  # fmt: skip
        except subprocess.TimeoutExpired:
            return False, f"uv pip compile timed out after {RESOLVE_TIMEOUT_S} s"
    return done.returncode == 0, done.stdout if done.returncode == 0 else done.stderr


def _wheelhouse_options(folder: Path, target: Target) -> list[str]:
    """The wheels built here from sdists (``deps/sdists.py``) whose releases ``target``'s date
    allows, offered to the resolver in ``folder`` (links): never one of a later release."""
    housed = housed_as_of(target.cache_dir, target.exclude_newer)
    if not housed:
        return []
    folder.mkdir()
    for wheel in housed:
        (folder / wheel.name).symlink_to(wheel)
    return ["--find-links", str(folder)]


def _uv_environment() -> dict[str, str]:
    """uv trusts the host's CA bundle (and any proxy's CA in it) like pip does here. It never
    fetches an interpreter: a lock for another Python needs none, and where downloads are
    unreachable asking for one cost about 10 s per resolution."""
    env = {**os.environ, "UV_NO_PROGRESS": "1", "UV_PYTHON_DOWNLOADS": "never"}
    bundle = host_ca_bundle()
    if "SSL_CERT_FILE" not in env and bundle:
        env["SSL_CERT_FILE"] = str(bundle)
    return env


def host_ca_bundle() -> Path | None:
    """The CA bundle installs trust (``DLBENCH_CA_BUNDLE``, default the system's)."""
    path = Path(os.environ.get("DLBENCH_CA_BUNDLE", DEFAULT_CA_BUNDLE))
    return path if path.is_file() else None


def _packages(output: str) -> list[dict]:
    """The index's packages of a lock (PEP 751, uv's ``pylock.toml``); a direct URL's has no version."""
    return [p for p in tomllib.loads(output).get("packages", []) if "version" in p and not DIRECT.intersection(p)]


def _pins(output: str) -> list[str]:
    pins = [f"{p['name']}=={p['version']}" for p in _packages(output)]
    return sorted(pins, key=lambda pin: canonical_name(pin.split("==")[0]))


def _sources_only(output: str) -> list[str]:
    """The lock's packages it lists no wheel of that fits its target (uv lists only those):
    each would be built from its source in the image."""
    return [canonical_name(p["name"]) for p in _packages(output) if not p.get("wheels")]


def _failed_to_build(requirements: list[DeclaredRequirement], message: str) -> DeclaredRequirement | None:
    """The declared requirement whose source the resolver could not build to read its metadata
    (deepchem's ``torch-cluster`` sdist imports torch in its setup.py): it cannot be had here,
    like one with no release; a build failure of anything else is not the requirements' to pay."""
    names = {canonical_name(m["name"]) for m in BUILD_FAILED.finditer(message)}
    return min((r for r in requirements if r.name in names), key=authority, default=None)


def _blamed(requirements: list[DeclaredRequirement], message: str) -> DeclaredRequirement | None:
    """The requirement of least ``authority`` whose name the resolver's message mentions: the
    whole name, never the start of a longer one (``pytest`` is not in ``pytest-dependency``)."""
    text = canonical_name(message)
    return min((r for r in requirements if _mentions(text, r.name)), key=authority, default=None)


def _mentions(text: str, name: str) -> bool:
    """Whether ``text`` (canonical) names ``name``: the whole name, never the start of a longer one."""
    return re.search(rf"(?<![a-z0-9-]){re.escape(name)}(?!-?[a-z0-9])", text) is not None


def _cause(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    causes = [line.removeprefix("cause:").strip() for line in lines if line.startswith(("cause:", "╰─▶", "Because"))]
    return " ".join(causes or lines[-3:])[:800]
