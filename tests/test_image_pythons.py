"""Old code is built on the Python of its day (images/pythons.py): chosen by what resolves
(the real uv against the real index), and, in Docker, by what installs; the harness and its
sandbox then run on that Python."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from dlbench.config import ImagesConfig, PythonBase, StorageConfig
from dlbench.deps.declared import declared_requirements
from dlbench.deps.plan import EnvironmentPlan
from dlbench.deps.resolve import Target
from dlbench.deps.tree import SourceTree
from dlbench.harness.evaluate import evaluate_repo
from dlbench.images.pythons import candidates, choose_python
from dlbench.records import (
    CloneRecord,
    CloneStatus,
    DeclaredRequirement,
    Environment,
    EvalStatus,
    ImageRecord,
    ImageStatus,
)
from tests.test_harness_run import CFG, FILES, GOLD_RELU, HOSTILE, NULL_RELU, RELU, SLUG, gen
from tests.test_mine_callgraph import write_tree
from tests.wheels import pure_wheel

# Debian releases: CI reaches Debian's archive for sure (focal, 3.8, is Ubuntu's: DeepReg's run
# and a hand run of the test below on it are the 3.8 evidence, docs/ENVIRONMENTS.md)
BULLSEYE = PythonBase(python="3.9", image="dlbench/base:bullseye", platform="x86_64-manylinux_2_31", suite="bullseye")
TRIXIE = PythonBase(python="3.13", image="dlbench/base:trixie", platform="x86_64-manylinux_2_40", suite="trixie")
SANDBOX_CASES = ["sleep past the timeout in a subprocess", "rogue plugin turns failures into passes", "memory hog"]


def plan(*specs: str, requires_python: list[str] | None = None) -> EnvironmentPlan:
    requirements = [
        DeclaredRequirement(spec=s, name=s.split("=")[0].split("<")[0], source="requirements.txt", group="runtime")
        for s in specs
    ]
    return EnvironmentPlan(requirements, [], requires_python=requires_python or [])


def target_on(day: datetime):
    cache = StorageConfig().downloads_dir()
    return lambda base: Target(python_version=base.python, platform=base.platform, exclude_newer=day, cache_dir=cache)


@pytest.mark.xdist_group("uv-cache")
def test_pins_of_an_old_day_are_built_on_the_newest_python_that_has_them() -> None:
    """tensorflow 2.3.1 has wheels for Python 3.5 to 3.8 only (and no source to build)."""
    old = plan("tensorflow==2.3.1", "pytest")
    choice = choose_python(old, candidates(ImagesConfig(), "dlbench/base:bookworm", old), target_on(datetime(2021, 1, 1, tzinfo=UTC)))  # fmt: skip
    assert choice.base.python == "3.8" and choice.lost == [], choice
    assert choice.tried == [
        "Python 3.11: loses tensorflow==2.3.1",
        "Python 3.10: loses tensorflow==2.3.1",
        "Python 3.9: loses tensorflow==2.3.1",
        "Python 3.8: keeps every requirement",
    ]


@pytest.mark.xdist_group("uv-cache")
def test_pins_that_only_an_older_python_has_wheels_for_are_built_there_not_compiled() -> None:
    """deepchecks pins pandas==1.3.5: an sdist on 3.11 (minutes of compiling, or a failure),
    a wheel on 3.10; what every Python can only build from source (docopt) decides nothing."""
    old = plan("pandas==1.3.5", "docopt==0.6.2", "pytest")
    choice = choose_python(old, candidates(ImagesConfig(), "base", old), target_on(datetime(2022, 1, 1, tzinfo=UTC)))
    assert choice.base.python == "3.10" and choice.lost == [], choice
    assert choice.tried == [
        "Python 3.11: keeps every requirement, builds docopt==0.6.2, pandas==1.3.5 from source",
        "Python 3.10: keeps every requirement, builds docopt==0.6.2 from source",
        "Python 3.9: keeps every requirement, builds docopt==0.6.2 from source",
        "Python 3.8: keeps every requirement, builds docopt==0.6.2 from source",
        "Python 3.12: keeps every requirement, builds docopt==0.6.2, pandas==1.3.5 from source",
        "Python 3.13: keeps every requirement, builds docopt==0.6.2, pandas==1.3.5 from source",
    ]


@pytest.mark.xdist_group("uv-cache")
def test_code_whose_requirements_resolve_stays_on_the_default_python_after_one_resolution() -> None:
    modern = plan("packaging", "pytest")
    choice = choose_python(modern, candidates(ImagesConfig(), "base", modern), target_on(datetime(2024, 1, 1, tzinfo=UTC)))  # fmt: skip
    assert choice.base.python == "3.11" and choice.tried == ["Python 3.11: keeps every requirement"]


@pytest.mark.xdist_group("uv-cache")
def test_a_requirement_no_python_has_costs_the_default_nothing_else() -> None:
    lost = plan("packaging", "dlbench-no-such-distribution-7f3a")
    choice = choose_python(lost, candidates(ImagesConfig(), "base", lost), target_on(datetime(2024, 1, 1, tzinfo=UTC)))
    assert choice.base.python == "3.11" and choice.lost == ["dlbench-no-such-distribution-7f3a"]
    assert len(choice.tried) == 6  # every Python asked, none better


def test_pythons_the_project_excludes_are_tried_last() -> None:
    order = [p.python for p in candidates(ImagesConfig(), "base", plan(requires_python=[">=3.8,<3.10"]))]
    assert order == ["3.9", "3.8", "3.11", "3.10", "3.12", "3.13"]
    assert [p.python for p in candidates(ImagesConfig(), "base", plan(requires_python=[">=3.12"]))][0] == "3.12"
    assert [p.python for p in candidates(ImagesConfig(pythons=[]), "base", plan())] == ["3.11"]


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("setup.py", "from setuptools import setup\nsetup(name='p', python_requires='>=3.6.*, <3.9')\n"),
        ("setup.cfg", "[options]\npython_requires = >=3.6,<3.9\n"),
        ("pyproject.toml", "[project]\nname = 'p'\nrequires-python = '>=3.6,<3.9'\n"),
    ],
)
def test_requires_python_is_read_from_each_declaration_file(path: str, text: str) -> None:
    declared = declared_requirements(SourceTree([path], {path: text}.get))
    assert declared.admits("3.8") and not declared.admits("3.9") and not declared.admits("3.11"), declared


def build_tiny(tmp_path: Path, requirements: str) -> tuple[CloneRecord, ImageRecord]:
    """The tiny project with ``requirements``, its image built with the default Python and bullseye's."""
    from dlbench.harness.code import support_files
    from dlbench.images.build import build_project_image

    repo = write_tree(tmp_path / SLUG, FILES | {"requirements.txt": requirements})
    clone = CloneRecord(full_name="tiny/tinyml", slug=SLUG, clone_url="", path=str(repo), sha="1" * 40, status=CloneStatus.OK)  # fmt: skip
    images = ImagesConfig(pythons=[BULLSEYE])
    image = build_project_image(repo, SLUG, clone.sha, CFG.base_image, tmp_path / "build.log", support_files(), images=images)  # fmt: skip
    return clone, image


# numpy 1.19.5: wheels for Python 3.6 to 3.9, from source on a newer one (which fails here); pytest 6
# brings pluggy 0.13, whose internals the plugin watches under other names
OLD_PIN = "numpy==1.19.5\npytest==6.2.5\n"


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.xdist_group("harness_docker")
def test_a_pin_with_wheels_only_for_an_older_python_is_built_and_sandboxed_there(
    require_docker: None, tmp_path: Path
) -> None:
    clone, image = build_tiny(tmp_path, OLD_PIN)
    assert image.status == ImageStatus.OK and image.base_image == BULLSEYE.image, image.error
    assert image.environment.python_version == "3.9" and "numpy==1.19.5" in image.environment.lock
    # chosen before anything is built: on 3.11 numpy 1.19.5 is an sdist that does not compile
    assert image.environment.python_tried[0] == "Python 3.11: keeps every requirement, builds numpy==1.19.5 from source"
    assert not any("did not build" in t for t in image.environment.python_tried), image.environment

    assert_the_sandbox_holds(clone, image, tmp_path)


# dynet 2.1: an sdist on every Python, whose setup.py imports Cython without declaring it, so
# its build fails at once wherever it is tried (nlp-architect's runtime requirement)
UNBUILDABLE = "numpy\ndynet==2.1\n"


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.xdist_group("harness_docker")
def test_a_required_sdist_that_fails_to_build_with_no_wheel_on_any_python_costs_itself_not_the_image(
    require_docker: None, tmp_path: Path
) -> None:
    """No other Python has a wheel of it: moving on would build it from source again (nlp-architect
    and neupy went through six Pythons, 20 minutes each, and lost their images). It is dropped
    with its cause and the image built on the same Python."""
    _, image = build_tiny(tmp_path, UNBUILDABLE)
    assert image.status == ImageStatus.OK and image.environment.python_version == "3.11", image.error
    assert not any(pin.startswith("dynet==") for pin in image.environment.lock)
    assert any(pin.startswith("numpy==") for pin in image.environment.lock)
    [dropped] = [d for d in image.environment.dropped if d.spec == "dynet==2.1"]
    assert dropped.reason == "Python 3.11: dynet did not build from source, and no configured Python has a wheel of it"
    assert image.environment.python_tried[0] == "Python 3.11: dynet did not build", image.environment.python_tried


# asynctest 0.13.0 (pure Python, every Python 3 per its wheel) decorates with ``asyncio.coroutine``
# at import, which Python 3.11 removed: it installs on 3.11 and fails there at import only.
LOST_NAME = {"requirements.txt": "asynctest==0.13.0\n", "tests/test_async.py": "import asynctest\n\n\ndef test_case():\n    assert asynctest.TestCase\n"}  # fmt: skip


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.xdist_group("harness_docker")
def test_a_library_that_fails_at_import_on_the_default_python_is_built_on_an_older_one(
    require_docker: None, tmp_path: Path
) -> None:
    from dlbench.harness.code import support_files
    from dlbench.images.build import build_project_image

    repo = write_tree(tmp_path / SLUG, FILES | LOST_NAME)
    images = ImagesConfig(pythons=[BULLSEYE])
    image = build_project_image(repo, SLUG, "2" * 40, CFG.base_image, tmp_path / "build.log", support_files(), images=images)  # fmt: skip
    assert image.status == ImageStatus.OK and image.base_image == BULLSEYE.image, image.error
    env = image.environment
    assert env.python_version == "3.9" and "asynctest==0.13.0" in env.lock and not env.unresolved, env
    assert env.python_tried[0].startswith("Python 3.11: the standard library's asyncio lacks a name"), env.python_tried
    assert not env.repairs, env.repairs


def test_moving_to_a_newer_system_is_weighed_by_the_test_files_each_side_loses() -> None:
    """recommenders: bookworm cannot load cornac (8 test files import it); on 3.12 the lock
    has no ``tensorflow<2.16`` (7 test files). Whichever loses fewer test files wins."""
    from dlbench.images.build import files_lost_either_way

    imports = {"cornac": [f"tests/test_c{i}.py" for i in range(8)], "tensorflow": [f"tests/test_t{i}.py" for i in range(7)]}  # fmt: skip
    kept = ["cornac==2.3.0", "numpy==1.26.4", "tensorflow==2.15.1"]
    assert files_lost_either_way(imports, kept, ["cornac==2.3.0", "numpy==1.26.4"], ["cornac"]) == (8, 7)
    assert files_lost_either_way(imports, kept, kept, ["cornac"]) == (8, 0)
    imports["tensorflow"] += ["tests/test_t7.py", "tests/test_t8.py"]
    assert files_lost_either_way(imports, kept, ["cornac==2.3.0", "numpy==1.26.4"], ["cornac"]) == (8, 9)


def test_a_newer_pythons_lock_that_loses_more_test_files_is_refused_before_its_image_is_built(tmp_path: Path) -> None:  # fmt: skip
    """The same weighing, on the lock the newer Python resolved, before anything is built
    (recommenders' second image took 7 minutes to lose the same way)."""
    from dlbench.deps.resolve import Lock
    from dlbench.images.build import MoveLoses, weigh_move

    checkout = write_tree(tmp_path / "repo", {
        "tests/test_cf.py": "import cornac\n",
        "tests/test_tf.py": "import tensorflow\n",
        "tests/test_tf_guarded.py": "try:\n    import tensorflow as tf\nexcept ImportError:\n    tf = None\n",
    })  # fmt: skip
    env = Environment(python_version="3.11", platform="x86_64-manylinux_2_36", lock=["cornac==2.3.0", "tensorflow==2.15.1"])  # fmt: skip
    kept = ImageRecord(repo=SLUG, sha="5" * 40, base_image=CFG.base_image, tag=None, build_log="b.log", status=ImageStatus.OK, environment=env)  # fmt: skip
    weigh = weigh_move(kept, checkout, ["cornac"], "3.12")
    with pytest.raises(MoveLoses, match="Python 3.12 loses imports of 2 test files, the old system 1"):
        weigh(Lock(pins=["cornac==2.3.0"], requirements=[]))
    weigh(Lock(pins=["cornac==2.3.0", "tensorflow==2.16.1"], requirements=[]))  # keeps every import: goes on


# A library whose compiled module needs a newer libstdc++ than the system has fails at import
# with the dynamic loader's words (cornac 2.3.0's wheels, tagged manylinux1, need GCC 13's
# GLIBCXX_3.4.32; Debian bookworm, the default Python's base, has GCC 12's; trixie has GCC 14's).
# This stand-in (pure Python, so one wheel serves every Python) asks the system's libstdc++ the
# same question and raises the same error.
PROBE = """import pathlib

LIB = next(p for p in map(pathlib.Path, ["/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6"]) if p.exists())
if b"GLIBCXX_3.4.32" not in LIB.read_bytes():
    raise ImportError(f"{LIB}: version `GLIBCXX_3.4.32' not found (required by {__file__})")
"""
NEWER_RUNTIME = {
    "requirements.txt": "numpy\nruntime-probe==1.0\n",
    "tests/test_probe.py": "import runtime_probe\n\n\ndef test_case():\n    assert runtime_probe.LIB\n",
}


def probe_wheel(folder: Path) -> Path:
    """``runtime-probe`` 1.0, a pure wheel, housed where the resolver and the image find it."""
    from dlbench.deps.sdists import house

    house(pure_wheel(folder, "runtime-probe", {"runtime_probe/__init__.py": PROBE}), folder / "downloads", datetime(2020, 1, 1, tzinfo=UTC))  # fmt: skip
    return folder / "downloads"


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.xdist_group("harness_docker")
def test_a_library_built_for_a_newer_system_than_the_defaults_is_built_on_a_newer_python(
    require_docker: None, tmp_path: Path
) -> None:
    """recommenders requires ``cornac>=2.3.0,<3``: no pin below the failing release could be
    had, and its image was kept with every cornac test failing at import. A newer Python's
    base, a newer system, has the runtime."""
    from dlbench.harness.code import support_files
    from dlbench.images.build import build_project_image

    repo = write_tree(tmp_path / SLUG, FILES | NEWER_RUNTIME)
    downloads = probe_wheel(tmp_path)
    images = ImagesConfig(pythons=[TRIXIE])
    image = build_project_image(repo, SLUG, "4" * 40, CFG.base_image, tmp_path / "build.log", support_files(), images=images, downloads=downloads)  # fmt: skip
    assert image.status == ImageStatus.OK and image.base_image == TRIXIE.image, image.error
    env = image.environment
    assert env.python_version == "3.13" and "runtime-probe==1.0" in env.lock and not env.unresolved, env
    expected = "Python 3.11: runtime_probe needs GLIBCXX_3.4.32, newer than the base system's C/C++ runtime"
    assert env.python_tried[0] == expected, env.python_tried


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.xdist_group("harness_docker")
def test_the_sandbox_holds_on_a_newer_python(require_docker: None, tmp_path: Path) -> None:
    """Python 3.13 finalizes garbage at other moments: a selector the warm parent left to the
    collector was finalized in a later child and closed a descriptor of its session (every
    failing run after the first was a violation: EBADF at pytest's unconfigure)."""
    from dlbench.harness.code import support_files
    from dlbench.images.build import build_project_image

    repo = write_tree(tmp_path / SLUG, FILES)
    clone = CloneRecord(full_name="tiny/tinyml", slug=SLUG, clone_url="", path=str(repo), sha="3" * 40, status=CloneStatus.OK)  # fmt: skip
    image = build_project_image(repo, SLUG, clone.sha, CFG.base_image, tmp_path / "build.log", support_files(), python=TRIXIE)  # fmt: skip
    assert image.status == ImageStatus.OK and image.environment.python_version == "3.13", image.error
    assert_the_sandbox_holds(clone, image, tmp_path)


def assert_the_sandbox_holds(clone: CloneRecord, image: ImageRecord, tmp_path: Path) -> None:
    """Gold passes and null fails twice in one warm session (the second pair runs after the
    parent has garbage), then a timeout, a rogue plugin and a memory hog are each caught."""
    codes = [("gold", GOLD_RELU), ("m", NULL_RELU)] * 2 + [("m", HOSTILE[name]) for name in SANDBOX_CASES]
    gens = [gen(RELU, code, model=model, sample=i) for i, (model, code) in enumerate(codes)]
    *pairs, timeout, rogue, hog = evaluate_repo(clone, {RELU.task_id: RELU}, gens, image, "docker", CFG, 1, tmp_path / "ev")  # fmt: skip
    assert [r.status for r in pairs] == [EvalStatus.PASS, EvalStatus.FAIL] * 2, [(r.status, r.detail) for r in pairs]
    assert [timeout.status, rogue.status, hog.status] == [
        EvalStatus.TIMEOUT,
        EvalStatus.SANDBOX_VIOLATION,
        EvalStatus.ERROR,
    ], [  # noqa: E501
        (r.status, r.detail) for r in (timeout, rogue, hog)
    ]
    assert not any(r.passed for r in (timeout, rogue, hog))
