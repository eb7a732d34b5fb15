"""Which Python a project's image is built on.

Requirements are resolved as of the pinned commit's date, and old code pins what its day
had: ``tensorflow==2.3.1`` has wheels for Python 3.5 to 3.8 only, so on the default Python
(3.11) the project's own framework cannot be had and every test fails; code newer than the
default may need a newer Python. A project is built on the default Python when a release of
each of its runtime and test requirements can be had there; otherwise on the first other
configured Python (``images.pythons``: older ones newest first, then newer ones) where they
can, or else on the one that loses fewest. Pythons the project's ``requires-python`` excludes
are tried last. A required package that then fails to build from source (an sdist is a
release too) sends the build to the next Python (``images/build.py``). Each Python tried,
and what it lost, is recorded in the image's environment.

Base images of older Pythons are pulled where a registry is reachable, else bootstrapped
here from their Debian or Ubuntu release by ``docker/base/build.sh`` (as root).
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

import docker
from dlbench.config import ImagesConfig, PythonBase
from dlbench.deps.plan import PRIORITY, EnvironmentPlan, drop_priority
from dlbench.deps.resolve import Target, going_with, unavailable

log = logging.getLogger(__name__)

BASE_BUILDER = Path(__file__).resolve().parents[2] / "docker" / "base" / "build.sh"
BASE_BUILD_TIMEOUT_S = 1800
REQUIRED_FROM = PRIORITY["test"]  # test, repair and runtime requirements: what the tests cannot do without


@dataclass
class PythonChoice:
    base: PythonBase
    lost: list[str] = field(default_factory=list)  # required specs the chosen Python cannot have
    tried: list[str] = field(default_factory=list)  # per Python tried: what it would lose


def candidates(cfg: ImagesConfig, base_image: str, plan: EnvironmentPlan) -> list[PythonBase]:
    """The default Python first, then the older ones newest first, then the newer ones oldest
    first (code past the default's day may need them); the ones the project's
    ``requires-python`` excludes after the rest, in the same order."""
    default = PythonBase(python=cfg.python_version, image=base_image, platform=cfg.platform)
    others = sorted((p for p in cfg.pythons if p.python != default.python), key=lambda p: Version(p.python))
    older = [p for p in reversed(others) if Version(p.python) < Version(default.python)]
    newer = [p for p in others if Version(p.python) > Version(default.python)]
    every = [default, *older, *newer]
    return [p for p in every if plan.admits(p.python)] + [p for p in every if not plan.admits(p.python)]


def required_lost(
    plan: EnvironmentPlan, target: Target, wheels: bool = False, among: Collection[str] | None = None
) -> list[str]:
    """The runtime and test requirements (``among``: those of these specs) no release of which
    can be had for ``target`` (``wheels``: no wheel of which), each asked for without its
    dependencies (cheap: no whole resolution per Python)."""
    required = [r for r in plan.requirements if drop_priority(r) >= REQUIRED_FROM and (among is None or r.spec in among)]  # fmt: skip
    return sorted({r.spec for blamed, _ in unavailable(required, plan.constraints, target, wheels).gone for r in going_with(required, blamed)})  # fmt: skip


def built_from_source(plan: EnvironmentPlan, target: Target) -> list[str]:
    """The required specs of which no wheel can be had for ``target``: each is built from its
    source there, or lost when it has none either. Old code pins its day's releases (deepchecks:
    ``pandas==1.3.5``, ``scikit-learn==1.0.2``), which have wheels for the
    Pythons of that day only; on a newer one each compiles for minutes, or fails to."""
    return required_lost(plan, target, wheels=True)


def choose_python(
    plan: EnvironmentPlan, options: Sequence[PythonBase], target_for: Callable[[PythonBase], Target]
) -> PythonChoice:
    """The first of ``options`` that can have every required requirement as a wheel; else,
    of those that can have every one, the one building fewest from source; else the one
    losing fewest (the earlier on a tie). A single option is taken without asking the index."""
    if len(options) == 1:
        return PythonChoice(options[0])
    best, best_cost = None, None
    tried: list[str] = []
    for base in options:
        target = target_for(base)
        no_wheel = built_from_source(plan, target)  # what has a wheel is never lost: one run when all have
        lost = required_lost(plan, target, among=set(no_wheel)) if no_wheel else []
        sources = [] if lost else no_wheel
        tried.append(f"Python {base.python}: " + _outcome(lost, sources))
        if best_cost is None or (len(lost), len(sources)) < best_cost:
            best, best_cost = PythonChoice(base, lost), (len(lost), len(sources))
        if not lost and not sources:
            break
    assert best is not None  # options is never empty (images/build.py refuses to choose from none)
    return PythonChoice(best.base, best.lost, tried)


def _outcome(lost: list[str], sources: list[str]) -> str:
    if lost:
        return f"loses {', '.join(lost)}"
    return "keeps every requirement" + (f", builds {', '.join(sources)} from source" if sources else "")


def available(
    base: PythonBase, client: docker.DockerClient, ensure: Callable[[str, docker.DockerClient], bool]
) -> bool:
    """Whether ``base``'s image is here, can be pulled, or is bootstrapped here now from its release."""
    return ensure(base.image, client) or (base.suite is not None and build_base(base.suite, base.image, client))


def build_base(suite: str, tag: str, client: docker.DockerClient) -> bool:
    """``docker/base/build.sh --suite SUITE`` as ``tag`` (root only: debootstrap needs it)."""
    if not BASE_BUILDER.is_file() or os.geteuid() != 0:
        log.info(
            "cannot bootstrap %s here (%s)", tag, "not root" if BASE_BUILDER.is_file() else "no docker/base/build.sh"
        )
        return False
    env = {**os.environ, "DLBENCH_BASE_TAG": tag}
    try:
        done = subprocess.run(["bash", str(BASE_BUILDER), "--suite", suite], env=env, capture_output=True,
                              text=True, timeout=BASE_BUILD_TIMEOUT_S)  # fmt: skip
    except subprocess.TimeoutExpired:
        log.warning("bootstrapping %s from %s took over %d s", tag, suite, BASE_BUILD_TIMEOUT_S)
        return False
    if done.returncode != 0:
        log.warning("bootstrapping %s from %s failed: %s", tag, suite, done.stderr.strip()[-800:])
        return False
    client.images.get(tag)
    return True
