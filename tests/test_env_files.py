"""pyproject.toml declares the tool's dependencies, requirements/ locks them (`make lock`), and
`make install` and the conda environments install the lock: these tests keep them in step,
offline."""

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCK = "requirements/lock.txt"  # runtime dependencies and the dev group: make install
STAGE_LOCK = "requirements/lock-stage.txt"  # the same and the stage extra: make test, conda
RELOCK = "run `make lock` (docs/CONTRIBUTING.md)"


@dataclass
class Pin:
    version: Version
    marker: Marker | None
    hashes: int
    via: list[str] = field(default_factory=list)  # uv's annotation: who requires it


def project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def declared(lock):
    """The requirements a lock must satisfy: the runtime's and the dev group's, and for the
    stage lock the stage extra's."""
    data = project()
    reqs = data["project"]["dependencies"] + data["dependency-groups"]["dev"]
    if lock == STAGE_LOCK:
        reqs = reqs + data["project"]["optional-dependencies"]["stage"]
    return [Requirement(r) for r in reqs]


def pins(lock):
    """The lock's pins by package name; a package has several where Pythons or platforms need
    different versions."""
    found = {}
    for entry in re.split(r"\n(?=[^\s#])", (ROOT / lock).read_text()):
        if entry.startswith("#"):  # the header
            continue
        spec, *rest = entry.split("\n")
        requirement = Requirement(spec.split("\\")[0])
        (pinned,) = requirement.specifier
        assert pinned.operator == "==", f"{lock}: {spec} is not an exact pin"
        via = [re.sub(r"^#\s*(via\b)?\s*", "", line.strip()) for line in rest if line.lstrip().startswith("#")]
        pin = Pin(Version(pinned.version), requirement.marker, entry.count("--hash=sha256:"), [v for v in via if v])
        found.setdefault(canonicalize_name(requirement.name), []).append(pin)
    return found


def conda_pip_section(path):
    env = yaml.safe_load((ROOT / path).read_text())
    return env["dependencies"], next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))


@pytest.mark.parametrize("lock", [LOCK, STAGE_LOCK])
def test_lock_satisfies_every_declared_requirement(lock):
    locked = pins(lock)
    unmet = []
    for req in declared(lock):
        versions = [pin.version for pin in locked.get(canonicalize_name(req.name), [])]
        if not versions or not all(req.specifier.contains(v, prereleases=True) for v in versions):
            unmet.append(f"{req} (locked: {', '.join(map(str, versions)) or 'absent'})")
    assert not unmet, f"{lock} does not satisfy pyproject.toml: {'; '.join(unmet)}; {RELOCK}"


@pytest.mark.parametrize("lock", [LOCK, STAGE_LOCK])
def test_lock_requires_nothing_pyproject_dropped(lock):
    direct = {
        name
        for name, entries in pins(lock).items()
        if any(v.startswith("dlbench (pyproject.toml") for pin in entries for v in pin.via)
    }
    assert direct == {canonicalize_name(r.name) for r in declared(lock)}, RELOCK


@pytest.mark.parametrize("lock", [LOCK, STAGE_LOCK])
def test_every_pin_carries_hashes(lock):
    assert all(pin.hashes for entries in pins(lock).values() for pin in entries)


def test_locks_agree_on_every_shared_pin():
    """`make test` adds the stage lock to `make install`'s environment: it must move nothing."""
    stage = pins(STAGE_LOCK)
    for name, entries in pins(LOCK).items():
        assert {p.version for p in entries} <= {p.version for p in stage[name]}, f"{name}: {RELOCK}"


def test_lock_starts_at_the_oldest_supported_python():
    requires = SpecifierSet(project()["project"]["requires-python"])
    floor = next(s.version for s in requires if s.operator == ">=")
    lock_python = re.search(r"^LOCK_PYTHON := (\S+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert Version(lock_python) == Version(floor)


@pytest.mark.parametrize("path", ["environment.yml", "workflow/envs/dlbench.yaml"])
def test_conda_environments_install_the_lock(path):
    """Both name only the stage lock, by a path relative to the file (the rules' environment is
    read from Snakemake's copy in .snakemake/conda/, at the same depth), on a Python the
    project supports."""
    dependencies, pip = conda_pip_section(path)
    assert len(pip) == 1 and pip[0].startswith("-r ")
    assert ((ROOT / path).parent / pip[0].removeprefix("-r ")).resolve() == ROOT / STAGE_LOCK
    (python,) = [d.removeprefix("python=") for d in dependencies if isinstance(d, str) and d.startswith("python=")]
    assert SpecifierSet(project()["project"]["requires-python"]).contains(python)


def test_required_stack_present():
    names = {canonicalize_name(r.name) for r in declared(LOCK)}
    assert {"snakemake", "pygithub", "gitpython", "libcst", "pydantic", "openai", "docker", "pandas", "pytest"} <= names
