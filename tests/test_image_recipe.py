"""Image recipe without an engine: dependency discovery, naming, content hashing."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlbench.harness.image import (
    EngineUnavailable,
    ImageBuildError,
    _docker_name,
    build_project_image,
    docker_client,
    image_tag,
    project_requirements,
    render_recipe,
)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_requirements_inline_includes_and_drop_the_project_itself(tmp_path: Path) -> None:
    requirements = "# deps\nnumpy>=1.26  # arrays\n-r requirements/extra.txt\n--constraint=constraints.txt\n-e .\n./\n"
    files = {
        "requirements.txt": requirements,
        "requirements/extra.txt": "scipy\n-r ../requirements.txt\n",  # a cycle is read once
        "constraints.txt": "numpy<3\n",
    }
    write(tmp_path, files)
    assert project_requirements(tmp_path) == (["numpy>=1.26", "scipy"], ["numpy<3"])


def test_includes_outside_the_checkout_are_not_read(tmp_path: Path) -> None:
    write(tmp_path, {"outside.txt": "leak\n", "repo/requirements.txt": "-r ../outside.txt\ntorch\n"})
    assert project_requirements(tmp_path / "repo") == (["torch"], [])


def test_pyproject_dependencies_and_test_extras(tmp_path: Path) -> None:
    pyproject = (
        '[project]\nname = "My_Lib"\ndependencies = ["numpy", "torch>=2"]\n'
        '[project.optional-dependencies]\ntest = ["hypothesis", "my-lib[docs]"]\ndocs = ["sphinx"]\n'
    )
    write(tmp_path, {"requirements.txt": "numpy\n", "pyproject.toml": pyproject})
    assert project_requirements(tmp_path) == (["numpy", "torch>=2", "hypothesis"], [])


def test_broken_pyproject_is_a_recipe_error(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[project\n"})
    with pytest.raises(ImageBuildError, match="pyproject.toml is not valid TOML"):
        render_recipe(tmp_path, "base", {})


def test_no_declared_dependencies_still_installs_pytest(tmp_path: Path) -> None:
    _, files = render_recipe(tmp_path, "python:3.11-slim", {})
    assert files["build/requirements.txt"] == "pytest\n"


def test_checkout_and_src_layout_are_on_the_path(tmp_path: Path) -> None:
    _, files = render_recipe(tmp_path, "python:3.11-slim", {})
    assert "PYTHONPATH=/work/repo:/work/repo/src " in files["Dockerfile"]


@pytest.mark.parametrize(
    ("slug", "name"),
    [("Owner__Name", "owner__name"), ("a.b__c-d", "a.b__c-d"), ("we!rd___x", "we-rd-x"), ("__", "repo")],
)
def test_slug_becomes_a_valid_repository_name(slug: str, name: str) -> None:
    assert _docker_name(slug) == name


def test_tag_is_a_content_hash(tmp_path: Path) -> None:
    repo = write(tmp_path, {"requirements.txt": "numpy\n"})
    recipe, _ = render_recipe(repo, "base", {})
    tag = image_tag("o__n", "abc", "sha256:1", recipe)
    assert tag.startswith("dlbench/project-o__n:") and len(tag.split(":")[1]) == 12
    assert image_tag("o__n", "abc", "sha256:1", render_recipe(repo, "base", {})[0]) == tag
    with_support, _ = render_recipe(repo, "base", {"plugin.py": b"x"})
    changed_requirement, _ = render_recipe(write(repo, {"requirements.txt": "numpy<2\n"}), "base", {})
    others = {
        image_tag("o__n", "abd", "sha256:1", recipe),
        image_tag("o__n", "abc", "sha256:2", recipe),
        image_tag("o__n", "abc", "sha256:1", with_support),
        image_tag("o__n", "abc", "sha256:1", changed_requirement),
    }
    assert tag not in others and len(others) == 4


def test_support_file_bytes_are_hashed() -> None:
    one, _ = render_recipe(Path("/nonexistent"), "base", {"plugin.py": b"a"})
    two, _ = render_recipe(Path("/nonexistent"), "base", {"plugin.py": b"b"})
    assert one != two


def test_engine_that_does_not_answer_raises(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailable, match="does not answer"):
        client = docker_client("tcp://127.0.0.1:9", timeout=5)  # discard port: nothing listens
        build_project_image(tmp_path, "o__n", "abc", "base", tmp_path / "log", client=client)
