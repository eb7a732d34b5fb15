"""Image naming without an engine: content hashes of layers, slugs, an engine that does not answer."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from dlbench.config import ImagesConfig
from dlbench.deps.plan import EnvironmentPlan
from dlbench.images.build import (
    EngineUnavailable,
    _docker_name,
    _droppable,
    build_project_image,
    docker_client,
    dropping_failed_installs,
    framework_tag,
    project_requirements,
    project_tag,
    system_packages_for,
)
from dlbench.images.layers import StepFailed, uv_install_script
from dlbench.records import DeclaredRequirement


@pytest.mark.parametrize(
    ("slug", "name"),
    [("Owner__Name", "owner__name"), ("a.b__c-d", "a.b__c-d"), ("we!rd___x", "we-rd-x"), ("__", "repo")],
)
def test_slug_becomes_a_valid_repository_name(slug: str, name: str) -> None:
    assert _docker_name(slug) == name


def test_project_tag_hashes_base_lock_sha_and_runner_files() -> None:
    tag, digest = project_tag("o__n", "sha256:1", ["numpy==2.0.0"], "abc", {"plugin.py": b"a"})
    assert tag == f"dlbench/project-o__n:{digest[:12]}"
    assert project_tag("o__n", "sha256:1", ["numpy==2.0.0"], "abc", {"plugin.py": b"a"})[0] == tag
    others = {
        project_tag("o__n", "sha256:2", ["numpy==2.0.0"], "abc", {"plugin.py": b"a"})[0],
        project_tag("o__n", "sha256:1", ["numpy==2.0.1"], "abc", {"plugin.py": b"a"})[0],
        project_tag("o__n", "sha256:1", ["numpy==2.0.0"], "abd", {"plugin.py": b"a"})[0],
        project_tag("o__n", "sha256:1", ["numpy==2.0.0"], "abc", {"plugin.py": b"b"})[0],
        project_tag("o__n", "sha256:1", ["numpy==2.0.0"], "abc", {"plugin.py": b"a"}, ["g++"])[0],
    }
    assert tag not in others and len(others) == 5


def test_framework_layer_is_shared_by_pins_not_by_project() -> None:
    assert framework_tag("sha256:1", ["torch==2.6.0"]) == framework_tag("sha256:1", ["torch==2.6.0"])
    assert framework_tag("sha256:1", ["torch==2.6.0"]) != framework_tag("sha256:1", ["torch==2.7.0"])
    assert framework_tag("sha256:1", ["torch==2.6.0"]).startswith("dlbench/framework:")
    assert framework_tag("sha256:1", ["torch==2.6.0"], ["g++"]) != framework_tag("sha256:1", ["torch==2.6.0"])


def test_a_frameworks_system_packages_are_installed_before_it() -> None:
    """torch.compile's inductor compiles C++ for the CPU: a torch layer gets g++ (kornia's
    ``test_dynamo`` tests failed gold on "No working C++ compiler found")."""
    cfg = ImagesConfig()
    assert system_packages_for(["numpy==2.0.0", "torch==2.6.0"], cfg) == ["g++", "python3-dev"]
    assert system_packages_for(["tensorflow==2.15.0"], cfg) == []
    # a wheel that links a system library (OpenCV's non-headless ones: libGL), in the project layer
    assert system_packages_for(["opencv-python==4.11.0.86"], cfg) == ["libgl1", "libglib2.0-0"]
    script = uv_install_script("-r x.txt", ["g++"])
    assert "apt-get install -y -qq --no-install-recommends g++" in script
    assert script.index("apt-get install") < script.index("uv pip install")
    assert "apt-get" not in uv_install_script("-r x.txt")


def test_project_requirements_come_from_the_shared_planner(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy>=1.26\n-e .\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("import yaml\n")
    assert project_requirements(tmp_path) == ["numpy>=1.26", "pyyaml", "pytest>=6.2"]


def test_engine_that_does_not_answer_raises(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailable, match="does not answer"):
        client = docker_client("tcp://127.0.0.1:9", timeout=5)  # discard port: nothing listens
        build_project_image(tmp_path, "o__n", "abc", "base", tmp_path / "log", client=client)


def test_failed_installs_are_dropped_one_after_another_however_many() -> None:
    """neupy's CI file pins five old sdists that do not build on 3.11; three attempts lost the
    image. Each attempt drops the one that failed, until the build passes; a runtime
    requirement that fails ends it with the failure."""
    old = ["matplotlib==1.5.1", "pillow==3.0.0", "h5py==2.8.0", "scipy==0.19.1", "pandas==0.23.4"]
    declared = [DeclaredRequirement(spec=s, name=s.split("==")[0], source="requirements/travis.txt", group="test") for s in old]  # fmt: skip
    runtime = DeclaredRequirement(spec="numpy", name="numpy", source="setup.py", group="runtime")
    plan = EnvironmentPlan(requirements=[*declared, runtime], constraints=[])
    out = io.StringIO()

    def attempt() -> str:
        if failing := [r.spec for r in plan.requirements if r.group == "test"]:
            raise StepFailed("install failed", f"  × Failed to build `{failing[0]}`\n")
        return "built"

    assert dropping_failed_installs(attempt, plan, out) == "built"
    assert plan.requirements == [runtime] and [d.spec for d in plan.skipped] == old
    assert out.getvalue().count("did not install: dropped") == 5

    def runtime_fails() -> str:
        raise StepFailed("install failed", "  × Failed to build `numpy==1.26.4`\n")

    with pytest.raises(StepFailed):
        dropping_failed_installs(runtime_fails, plan, out)


def test_a_failed_install_drops_every_optional_declaration_of_its_name() -> None:
    """A test import and a CI file's line of one sdist that does not build in the image: both
    go at once (one left would put it back in the next lock, and cost another rebuild); the
    project's runtime requirements never."""
    declared = [DeclaredRequirement(spec=spec, name=spec, source=source, group=group) for spec, source, group in [
        ("pesq", "import pesq (tests/test_metric.py)", "import"), ("pesq", ".github/workflows/ci.yml", "ci"),
        ("numpy", "requirements.txt", "runtime")]]  # fmt: skip
    plan = EnvironmentPlan(requirements=declared, constraints=[])
    output = "  × Failed to build `pesq==0.0.4`\n  ├─▶ The build backend returned an error\n"
    assert _droppable(plan, output) == declared[:2]
    assert _droppable(plan, "  × Failed to build `numpy==1.26.4`\n") == []
