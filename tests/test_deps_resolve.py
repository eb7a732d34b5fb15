"""Resolution with the real uv against the real package index (reachable here, as in CI):
dated locks, dropping what cannot be resolved, preferring an existing framework's pins."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from packaging.version import Version

from dlbench.config import StorageConfig
from dlbench.deps.plan import TEST_RUNNER
from dlbench.deps.releases import Release, later_release
from dlbench.deps.resolve import IndexUnavailable, ResolutionError, Target, _blamed, _sdist_build, compile_lock, resolve
from dlbench.deps.sdists import housed_for, wanted_only_as_wheel, wheel_is_pure
from dlbench.images.envcheck import check_script, missing_modules
from dlbench.records import DeclaredRequirement

pytestmark = pytest.mark.xdist_group("uv-cache")


def req(spec: str, group: str = "runtime") -> DeclaredRequirement:
    name = spec.split("=")[0].split("<")[0].split(">")[0].strip().lower()
    return DeclaredRequirement(spec=spec, name=name, source=f"test ({group})", group=group)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Target:
    cache = StorageConfig().downloads_dir()  # the machine's shared cache: metadata fetched once
    return Target(exclude_newer=datetime(2023, 6, 1, tzinfo=UTC), cache_dir=cache)


def test_lock_is_dated_and_complete(target: Target) -> None:
    lock = resolve([req("packaging"), req("six")], [], target)
    versions = lock.versions()
    assert versions["packaging"] == "23.1"  # the newest release before 2023-06-01 (23.2 came in October)
    assert versions["six"] == "1.16.0" and lock.dropped == []
    assert all("==" in pin for pin in lock.pins)


def test_unresolvable_import_is_dropped_and_recorded(target: Target) -> None:
    bogus = req("dlbench-no-such-distribution-7f3a", group="import")
    lock = resolve([req("six"), bogus], [], target)
    assert "six" in lock.versions() and [d.spec for d in lock.dropped] == [bogus.spec]
    assert "dlbench-no-such-distribution-7f3a" in lock.dropped[0].reason and lock.dropped[0].source == "test (import)"


def test_lowest_priority_requirement_of_a_conflict_goes_first(target: Target) -> None:
    lock = resolve([req("packaging>=23", "runtime"), req("packaging<22", "ci")], [], target)
    assert lock.versions()["packaging"] == "23.1" and [d.spec for d in lock.dropped] == ["packaging<22"]


def test_two_files_pinning_one_name_differently_cost_one_pin_not_the_name(target: Target) -> None:
    """Two test requirements files pin ``six`` differently (nncf's datasets==3.0.1 and
    datasets==3.1.0): the conflict is the name's own, and one pin goes, never both."""
    first, second = req("six==1.16.0", "test"), req("six==1.15.0", "test")
    lock = resolve([req("packaging"), first, second], [], target)
    assert lock.versions()["six"] == "1.15.0" and [d.spec for d in lock.dropped] == ["six==1.16.0"]


def test_a_pytest_older_than_the_harness_runs_on_loses_its_pin(target: Target) -> None:
    """neupy's test files pin ``pytest==3.7.2``; the shipped runner needs 6.2 (every one of its
    gold runs ended "supervisor could not start": ``KeyError: 'from_call'``). The harness's
    floor outranks every declaration: the project's pin goes, recorded."""
    lock = resolve([req("six"), req("pytest==3.7.2", "test"), TEST_RUNNER], [], target)
    assert Version(lock.versions()["pytest"]) >= Version("6.2")
    assert [d.spec for d in lock.dropped] == ["pytest==3.7.2"]


def test_declared_requirement_that_does_not_exist_is_dropped_last_and_recorded(target: Target) -> None:
    lock = resolve([req("six"), req("dlbench-no-such-distribution-7f3a", "runtime")], [], target)
    assert list(lock.versions()) == ["six"] and lock.dropped[0].reason.startswith("unresolvable: ")


def test_an_unreachable_index_is_an_error_not_a_reason_to_drop(target: Target) -> None:
    closed = Target(index_url="http://127.0.0.1:9/simple", cache_dir=target.cache_dir / "closed-index")
    with pytest.raises(IndexUnavailable, match="uv pip compile failed"):
        resolve([req("dlbench-no-such-distribution-7f3a")], [], closed)


def test_preferred_pins_are_used_when_they_fit_and_ignored_when_not(target: Target) -> None:
    assert resolve([req("packaging")], [], target, prefer=["packaging==21.3"]).versions()["packaging"] == "21.3"
    with pytest.raises(ResolutionError):  # a pin newer than the commit's date cannot be had as of that date
        resolve([req("packaging")], [], target, prefer=["packaging==24.1"])


def test_check_output_parsing_finds_missing_modules_not_the_projects_own() -> None:
    output = (
        "import datasets: ModuleNotFoundError: No module named 'datasets'\n"
        "E   ModuleNotFoundError: No module named 'hypothesis.strategies'\n"
        "E   ModuleNotFoundError: No module named 'acme._native'\n"
        "ERROR tests/test_x.py - ModuleNotFoundError: No module named 'datasets'\n"
    )
    assert list(missing_modules(output, own={"acme"})) == ["datasets", "hypothesis"]
    assert "importlib.import_module(name)" in check_script({"torch", "numpy"}) and "--collect-only" in check_script(())


def test_many_unavailable_optional_requirements_cost_only_themselves(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More unavailable test requirements than any fixed number of drops, and a git URL declared
    twice: each is found by a cheap run without dependencies, two whole resolutions in all."""
    import dlbench.deps.resolve as resolve_module

    runs: list[bool] = []
    real = resolve_module.compile_lock

    def counted(*args, **kwargs):
        runs.append(bool(kwargs.get("no_deps")))
        return real(*args, **kwargs)

    monkeypatch.setattr(resolve_module, "compile_lock", counted)
    bogus = [req(f"dlbench-no-such-distribution-{i:02d}", group="import") for i in range(15)]
    url = "git+https://github.com/benjaminp/six@1.16.0"
    declared = [req("packaging"), *bogus, DeclaredRequirement(spec="six", name="six", source="requirements-test.txt", group="test", direct_url=url),
                DeclaredRequirement(spec="six", name="six", source="import six (tests/test_x.py)", group="import")]  # fmt: skip
    lock = resolve(declared, [], target)
    assert {"packaging", "six"} <= lock.versions().keys()  # the git URL's package from the index
    assert {d.spec for d in lock.dropped if d.reason.startswith("cannot be had")} == {b.spec for b in bogus}
    assert [d.reason for d in lock.dropped if d.spec == f"six @ {url}"][0].startswith(
        "direct URL git+https://github.com"
    )
    assert runs.count(False) == 2, runs  # whole resolutions: the first, and the one that succeeds


def test_a_requirement_whose_source_does_not_build_here_costs_only_itself(target: Target) -> None:
    """torch-cluster publishes only an sdist on the index, whose setup.py imports torch: uv
    cannot build it to read its metadata. deepchem lost its whole image to this (the
    resolver took any failure but a conflict for the index's fault)."""
    lock = resolve([req("six"), req("torch-cluster==1.6.1")], [], target)
    assert "six" in lock.versions() and [d.spec for d in lock.dropped] == ["torch-cluster==1.6.1"]
    assert lock.dropped[0].reason.startswith("its source does not build here: ")


def test_a_test_import_offered_only_as_a_pure_python_sdist_is_kept_and_built_once(tmp_path) -> None:
    """suod publishes no wheels: a test import of it is built once here (pure Python) and kept
    in the lock instead of dropped with the tests that need it; its wheel goes into the
    wheelhouse, where the next resolution finds it and builds nothing."""
    target = Target(exclude_newer=datetime(2023, 6, 1, tzinfo=UTC), cache_dir=tmp_path)
    lock = resolve([req("six"), req("suod", group="import")], [], target)
    assert "suod" in lock.versions() and lock.from_source == ["suod"] and lock.dropped == []
    assert [w.name for w in housed_for(lock.pins, tmp_path)] == [f"suod-{lock.versions()['suod']}-py3-none-any.whl"]
    again = resolve([req("six"), req("suod", group="import")], [], target)
    assert again.pins == lock.pins and again.from_source == [] and again.dropped == []
    earlier = resolve(
        [req("suod", group="import")], [], replace(target, exclude_newer=datetime(2020, 1, 1, tzinfo=UTC))
    )
    assert Version(earlier.versions()["suod"]) < Version(lock.versions()["suod"])  # never a later release's wheel


def test_a_test_import_offered_only_as_an_sdist_that_compiles_is_kept_for_the_image_to_build(target: Target) -> None:
    """pesq (an audio metric some projects' tests import) publishes no wheels and compiles C:
    kept, and named, so the image gets a compiler; with ``native_sdists`` off it is dropped
    with that cause."""
    lock = resolve([req("six"), req("pesq", group="import")], [], target)
    assert "pesq" in lock.versions() and lock.from_source == lock.native == ["pesq"] and lock.dropped == []
    lock = resolve([req("six"), req("pesq", group="import")], [], replace(target, native_sdists=False))
    assert "pesq" not in lock.versions() and lock.native == []
    assert [d.spec for d in lock.dropped] == ["pesq"] and "builds native code" in lock.dropped[0].reason


def test_a_ci_bound_only_a_compiled_sdist_meets_gives_way_to_the_names_wheels(target: Target) -> None:
    """A CI file's ``markupsafe<2`` has no wheel for Python 3.11 and its sdist compiles (as
    pytorch3d's ``pillow<7`` did, which then failed to build in the image): the bound goes,
    recorded, and the name's wheel as of the date stands in; nothing is left to build."""
    lock = resolve([req("six"), req("markupsafe<2", group="ci"), req("markupsafe", group="import")], [], target)
    assert lock.versions()["markupsafe"] == "2.1.2" and lock.native == lock.from_source == []
    assert [d.spec for d in lock.dropped] == ["markupsafe<2"] and lock.dropped[0].source == "test (ci)"
    assert "no wheel within its bound for Python 3.11" in lock.dropped[0].reason
    assert "markupsafe's wheels stand in" in lock.dropped[0].reason
    alone = resolve([req("six"), req("markupsafe<2", group="ci")], [], target)  # the bound is the only declaration
    assert alone.pins == lock.pins and [d.spec for d in alone.dropped] == ["markupsafe<2"]


@pytest.mark.parametrize(
    ("wheel", "pure"),
    [
        ("Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n", True),
        ("Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py2-none-any\nTag: py3-none-any\n", True),
        ("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n", False),
        ("Wheel-Version: 1.0\nRoot-Is-Purelib: true\n", False),
    ],
)
def test_only_a_none_any_purelib_wheel_counts_as_pure_python(tmp_path, wheel: str, pure: bool) -> None:
    with zipfile.ZipFile(tmp_path / "pkg-1.0-py3-none-any.whl", "w") as archive:
        archive.writestr("pkg/__init__.py", "")
        archive.writestr("pkg-1.0.dist-info/WHEEL", wheel)
    assert wheel_is_pure(tmp_path / "pkg-1.0-py3-none-any.whl")[0] is pure


def test_a_wheels_only_refusal_is_told_from_a_missing_release() -> None:
    assert wanted_only_as_wheel("Because all versions of suod have no usable wheels and you require suod, ...")
    assert not wanted_only_as_wheel("Because dlbench-no-such-distribution-7f3a was not found in the package registry")


def test_a_stale_requirements_file_pin_goes_not_the_packages_own_declaration(target: Target) -> None:
    """CompressAI: requirements.txt pins an old release against pyproject's lower bound, both
    runtime; the conflict drops the requirements file's pin and keeps the name, as declared."""
    declared = [
        DeclaredRequirement(spec="packaging>=23", name="packaging", source="pyproject.toml [project.dependencies]", group="runtime"),
        DeclaredRequirement(spec="packaging==20.9", name="packaging", source="requirements.txt", group="runtime"),
        req("six"),
    ]  # fmt: skip
    lock = resolve(declared, [], target)
    assert lock.versions()["packaging"] == "23.1"
    assert [(d.spec, d.source) for d in lock.dropped] == [("packaging==20.9", "requirements.txt")]


def test_the_resolver_blames_a_whole_name_never_the_start_of_a_longer_one() -> None:
    """nncf's tests declare pytest and pytest-dependency (an sdist only): uv's message names
    only pytest-dependency, and pytest, the prefix of its name, was blamed and dropped, so the
    pure-Python sdist check never saw pytest-dependency."""
    from dlbench.deps.declared import canonical_name

    declared = [
        DeclaredRequirement(spec=spec, name=canonical_name(spec), source="tests/requirements.txt", group="test")
        for spec in ("pytest", "pytest-dependency", "torch", "torch-scatter")
    ]
    said = (
        "Because pytest-dependency==0.6.0 has no usable wheels and you require pytest-dependency==0.6.0, "
        "we can conclude that your requirements are unsatisfiable."
    )
    assert _blamed(declared, said).name == "pytest-dependency"
    assert _blamed(declared, "Because torch-scatter was not found in the package registry").name == "torch-scatter"
    assert _blamed(declared, "Because torch==9.9 was not found").name == "torch"
    assert _blamed(declared[:1], said) is None


def test_an_sdist_builds_with_the_build_tools_of_the_locks_date(tmp_path) -> None:
    """visdom 0.2.4 (an sdist only; pytorch3d's and ignite's tests import it) builds with
    setuptools as of 2025: the date reaches the isolated environments uv builds sdists in
    (``Target.index_environment``), and nothing else is needed."""
    # caches of their own: a wheel built once is reused, whatever would build it now
    dated = Target(exclude_newer=datetime(2025, 6, 1, tzinfo=UTC), cache_dir=tmp_path / "dated")
    assert dated.index_environment()["UV_EXCLUDE_NEWER"].startswith("2025-06-01")
    build = _sdist_build(req("visdom==0.2.4", "test"), [], dated)
    assert build.pure and "its release" not in build.why


@pytest.mark.parametrize("when", [datetime(2026, 7, 1, tzinfo=UTC), None], ids=["as-of-2026", "today"])
def test_an_old_sdist_that_the_dates_build_tools_fail_builds_with_those_of_its_release(tmp_path, when) -> None:
    """A lock dated after setuptools 82 (which dropped ``pkg_resources``, 2026-02) fails
    visdom 0.2.4's setup.py; its build is tried again with the build tools as of its own
    release (2023), and kept: a live rerun on newer code keeps the test requirements an
    older pin kept."""
    build = _sdist_build(req("visdom==0.2.4", "test"), [], Target(exclude_newer=when, cache_dir=tmp_path))
    assert build.pure, build.why
    assert "with the build tools of its release (2023-" in build.why


def test_an_sdist_that_fails_with_the_build_tools_of_its_release_too_stays_dropped(target: Target) -> None:
    """torch-cluster's sdist imports torch in its setup.py whenever it is built: the second
    try fails too, and the first try's cause is the one recorded."""
    build = _sdist_build(req("torch-cluster==1.6.1", "test"), [], target)
    assert not build.built and "torch" in build.why and "its release" not in build.why


def test_a_library_installed_from_its_branch_is_its_first_release_after_the_date(target: Target) -> None:
    """packaging from git on 2023-06-01: its branch then held 23.1 and more, so 23.2
    (2023-10-01) stands in, for packaging alone; six keeps the date's release. A stand-in
    later than ``stand_in_days`` is refused: the date's release stays, with why."""
    branch = DeclaredRequirement(spec="packaging", name="packaging", source="ci.yml", group="ci",
                                 direct_url="git+https://github.com/pypa/packaging.git", name_from_url=True)  # fmt: skip
    lock = resolve([req("six"), req("packaging>=21"), branch], [], target)
    assert lock.versions()["packaging"] == "23.2" and lock.versions()["six"] == "1.16.0"
    assert list(lock.exclude_newer_package) == ["packaging"]
    assert (
        datetime(2023, 10, 1, tzinfo=UTC) < lock.exclude_newer_package["packaging"] < datetime(2023, 10, 3, tzinfo=UTC)
    )
    assert [d.spec for d in lock.dropped] == ["packaging @ git+https://github.com/pypa/packaging.git"]
    assert "first release after 2023-06-01 stands in for it (23.2, 2023-10-01)" in lock.dropped[0].reason

    strict = resolve([req("six"), branch], [], replace(target, stand_in_days=30))
    assert strict.versions()["packaging"] == "23.1" and strict.exclude_newer_package == {}
    assert "23.2 came 122 days later" in strict.dropped[0].reason


def test_the_stand_in_is_the_successor_of_the_releases_before_never_a_backport() -> None:
    at = datetime(2024, 7, 1, tzinfo=UTC)

    def release(version: str, day: str) -> Release:
        when = datetime.fromisoformat(day + "T00:00:00+00:00")
        return Release(Version(version), when, when)

    found = (release("1.26.4", "2024-02-05"), release("2.0.0", "2024-06-16"), release("1.26.5", "2024-07-05"),
             release("2.0.1", "2024-07-20"))  # fmt: skip
    assert later_release(found, at).version == Version("2.0.1")  # 1.26.5 came first, from an older series
    assert later_release(found[:3], at) is None and later_release((), at) is None


def test_a_name_read_off_a_repository_url_that_is_another_projects_on_the_index_is_left_out(target: Target) -> None:
    """Laplace's CI installs ``git+https://git@github.com/wiseodd/asdl@asdfghjkl`` (the
    distribution is asdfghjkl): PyPI's ``asdl`` is fpoli/python-asdl, never installed for it."""
    url = "git+https://git@github.com/wiseodd/asdl@asdfghjkl"
    other = DeclaredRequirement(spec="asdl", name="asdl", source="ci.yml", group="ci", direct_url=url, name_from_url=True)  # fmt: skip
    lock = resolve([req("six"), other], [], target)
    assert "asdl" not in lock.versions() and lock.exclude_newer_package == {}
    assert [d.spec for d in lock.dropped] == [f"asdl @ {url}"]
    assert "names no repository called so" in lock.dropped[0].reason


def test_the_projects_own_distribution_never_enters_the_lock(target: Target) -> None:
    """A test requirement that depends on the project itself (pytest-mock on pytest, as
    pennylane-qiskit on pennylane) keeps its other dependencies; the project's own release
    is not locked (it runs from its checkout: an installed copy could be imported instead)."""
    lock = resolve([req("pytest-mock==3.10.0", "test")], [], replace(target, omit=("pytest",)))
    assert "pytest-mock" in lock.versions() and "pluggy" in lock.versions() and "pytest" not in lock.versions()


def test_a_dependency_the_lock_would_build_is_taken_in_a_version_with_a_wheel(target: Target) -> None:
    """On an old Python the newest release of a dependency may have no wheel for it and no
    bound on the Python either (spaCy's cymem, preshed, murmurhash and thinc for 3.8): the
    resolver takes it, and the image compiles it, or fails to. A version with a wheel is taken
    instead, and recorded; then no pin of the lock needs a source build."""
    old = replace(target, python_version="3.8", platform="x86_64-manylinux_2_31", exclude_newer=datetime(2026, 11, 1, tzinfo=UTC))  # fmt: skip
    lock = resolve([req("spacy")], [], old)
    assert {"cymem", "murmurhash", "preshed", "thinc"} <= set(lock.wheels_preferred), lock.wheels_preferred
    assert compile_lock(lock.pins, [], old, no_build=[":all:"], no_deps=True)[0]  # every pin as a wheel
    assert resolve([req("six")], [], old).wheels_preferred == []  # nothing to prefer: one resolution
