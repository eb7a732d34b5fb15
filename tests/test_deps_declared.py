"""Dependency discovery on small synthetic projects: every declaration source, each with its group."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlbench.deps.declared import declared_requirements, group_kind, is_dependency_file, requirement_record
from dlbench.deps.imports import distribution_for, module_imports, third_party_imports
from dlbench.deps.plan import plan_environment
from dlbench.deps.tree import SourceTree, disk_tree
from tests.test_mine_callgraph import write_tree


def tree_of(files: dict[str, str]) -> SourceTree:
    return SourceTree(paths=sorted(files), reader=files.get)


def specs(found, group: str | None = None) -> list[str]:
    return [r.spec for r in found.requirements if group is None or r.group == group]


def test_requirements_files_follow_includes_and_constraints() -> None:
    found = declared_requirements(tree_of({
        "requirements.txt": "numpy>=1.22  # arrays\n-r requirements/base.txt\n-c constraints.txt\n-e .\n",
        "requirements/base.txt": "scipy\\\n  >=1.10\n-r ../requirements.txt\n",  # a cycle back
        "constraints.txt": "numpy<2\n",
        "requirements-test.txt": "pytest\nhypothesis\n-c constraints.txt\n",  # read once though named twice
        "docs/requirements.txt": "sphinx\n",
    }))  # fmt: skip
    assert specs(found, "runtime") == ["numpy>=1.22", "scipy>=1.10"]
    assert specs(found, "test") == ["pytest", "hypothesis"]
    assert specs(found, "docs") == ["sphinx"]
    assert found.constraints == ["numpy<2"]


def test_a_ci_services_requirements_file_is_the_tests_and_a_websites_the_docs() -> None:
    """neupy's requirements/travis.txt pins ``matplotlib==1.5.1`` beside main.txt's
    ``matplotlib>=1.5.1``: as runtime, the pin could not go when its sdist failed to build."""
    found = declared_requirements(tree_of({
        "requirements/main.txt": "matplotlib>=1.5.1\n",
        "requirements/travis.txt": "matplotlib==1.5.1\n",
        "requirements-appveyor.txt": "pywin32\n",
        "site/requirements.txt": "bs4==0.0.1\n",
    }))  # fmt: skip
    assert specs(found, "runtime") == ["matplotlib>=1.5.1"]
    assert specs(found, "test") == ["pywin32", "matplotlib==1.5.1"] and specs(found, "docs") == ["bs4==0.0.1"]


def test_pyproject_groups_extras_and_pep735_includes() -> None:
    found = declared_requirements(tree_of({"pyproject.toml": """
[project]
name = "acme"
dependencies = ["numpy"]
[project.optional-dependencies]
torch = ["torch>=2"]
test = ["pytest"]
[dependency-groups]
lint = ["ruff"]
dev = [{include-group = "lint"}, "coverage"]
[tool.poetry.group.extra.dependencies]
einops = "^0.7"
"""}))  # fmt: skip
    assert [(r.spec, r.group) for r in found.requirements] == [
        ("numpy", "runtime"), ("torch>=2", "extra:torch"), ("pytest", "extra:test"), ("ruff", "group:lint"),
        ("ruff", "group:dev"), ("coverage", "group:dev"), ("einops>=0.7", "group:extra"),
    ]  # fmt: skip
    assert (
        group_kind("extra:test") == "test"
        and group_kind("extra:torch") == "optional"
        and group_kind("group:docs") == "docs"
    )


def test_setup_py_is_read_statically_never_run() -> None:
    found = declared_requirements(tree_of({"setup.py": """
import os
os.system("echo never run")
BASE = ["numpy>=1.20", "tqdm"]
EXTRAS = {"vision": ["pillow"]}
EXTRAS["all"] = EXTRAS["vision"] + ["matplotlib"]
setup(name="acme", install_requires=BASE + ["pandas"], extras_require=EXTRAS, tests_require=["pytest"])
"""}))  # fmt: skip
    assert specs(found, "runtime") == ["numpy>=1.20", "tqdm", "pandas"]
    assert specs(found, "extra:all") == ["pillow", "matplotlib"]
    assert specs(found, "test") == ["pytest"]


def test_setup_py_functions_that_only_return_their_lists_are_read() -> None:
    """``install_requires=_install_requires()`` whose function returns module-level lists
    joined (sparseml's setup.py: nothing of it was read, its runtime pins and extras with it);
    an item computed from what only running the file knows (an f-string, a flag) is left out."""
    found = declared_requirements(tree_of({"setup.py": """
is_release = os.environ.get("RELEASE")
_deps = ["numpy>=1.17.0,<2.0", "onnx<1.15"]
_nm_deps = [f"{'zoo' if is_release else 'zoo-nightly'}>=1.7"]
_torch_deps = ["torch>=1.7"]
def _install_requires():
    \"\"\"What it needs.\"\"\"
    return _nm_deps + _deps
def _extras():
    return {"torch": _torch_deps, "transformers": _torch_deps + ["transformers<4.41"]}
def _loops():
    return _loops()
def _reads(path):
    return [path]
setup(name="acme", install_requires=_install_requires(), extras_require=_extras(), tests_require=_loops() or _reads("x"))
"""}))  # fmt: skip
    assert specs(found, "runtime") == ["numpy<2.0,>=1.17.0", "onnx<1.15"]
    assert specs(found, "extra:transformers") == ["torch>=1.7", "transformers<4.41"]
    assert specs(found, "extra:torch") == ["torch>=1.7"] and specs(found, "test") == []


def test_requirements_files_setup_py_reads_decide_what_the_folders_others_are() -> None:
    """roboflow inference's setup.py reads 15 of its requirements folder's files into
    ``install_requires``; the others (GPU builds, flash-attn, other runtimes) are alternatives,
    read as extras, not as the runtime every image must hold. A file read by a parameterless
    function (``os.path.join(HERE, 'requirements', 'main.txt')``) counts too, and so does a
    file discovery would not read on its own (``deps/testing.txt``); a file whose name says
    test keeps that group; a folder setup.py reads nothing from stays as it was."""
    found = declared_requirements(tree_of({
        "setup.py": """
import os
def read(paths):
    return [line for p in paths for line in open(p)]
def main_requirements():
    with open(os.path.join(os.path.dirname(__file__), "requirements", "main.txt")) as f:
        return f.read().splitlines()
setup(name="acme", install_requires=read(["requirements/_requirements.txt", "requirements/requirements.cpu.txt",
      "requirements/requirements.test.unit.txt"]) + main_requirements(),
      extras_require={"sam": read(["requirements/requirements.sam.txt"])}, tests_require=read(["deps/testing.txt"]))
""",
        "requirements/_requirements.txt": "numpy\n",
        "requirements/requirements.cpu.txt": "onnxruntime\n",
        "requirements/requirements.gpu.txt": "onnxruntime-gpu\n",
        "requirements/requirements.pali.flash_attn.txt": "flash-attn\n",
        "requirements/requirements.test.unit.txt": "pytest\n",
        "requirements/requirements.sam.txt": "rasterio\n",
        "requirements/main.txt": "scipy\n",
        "deps/testing.txt": "hypothesis\n",
        "other/requirements.txt": "pandas\n",
    }))  # fmt: skip
    assert sorted(specs(found, "runtime")) == ["numpy", "onnxruntime", "pandas", "scipy"]
    assert specs(found, "extra:gpu") == ["onnxruntime-gpu"] and specs(found, "extra:pali.flash_attn") == ["flash-attn"]
    assert specs(found, "extra:sam") == ["rasterio"] and specs(found, "test") == ["hypothesis", "pytest"]


def test_requirements_files_only_an_extra_reads_are_read_as_before() -> None:
    """mmengine's ``install_requires`` is a variable set in an ``if`` and its ``all`` extra
    reads ``requirements.txt``: nothing says which of its files are alternatives."""
    found = declared_requirements(tree_of({
        "setup.py": """
if os.getenv("LITE"):
    install_requires = parse_requirements("requirements/runtime_lite.txt")
else:
    install_requires = parse_requirements()
setup(name="acme", install_requires=install_requires, extras_require={"all": parse_requirements("requirements.txt")})
""",
        "requirements.txt": "-r requirements/runtime.txt\n",
        "requirements/runtime.txt": "numpy\n",
        "requirements/runtime_lite.txt": "tqdm\n",
    }))  # fmt: skip
    assert sorted(specs(found, "runtime")) == ["numpy", "tqdm"]
    assert {r.group for r in found.requirements} == {"runtime"}


def test_setup_py_arguments_passed_as_a_mapping_are_read() -> None:
    """``setup(**configuration)``: the keyword arguments live in a module-level dict whose other
    entries are computed (``readme()``): its literal ones are still the declarations."""
    found = declared_requirements(tree_of({"setup.py": """
def readme():
    return open("README.rst").read()
configuration = {
    "name": "acme",
    "long_description": readme(),
    "install_requires": ["numpy >= 1.23", "tqdm"],
    "extras_require": {"plot": ["matplotlib"]},
    "tests_require": ["pytest"],
    "python_requires": ">=3.9",
}
setup(**configuration)
"""}))  # fmt: skip
    assert specs(found, "runtime") == ["numpy>=1.23", "tqdm"]
    assert specs(found, "extra:plot") == ["matplotlib"] and specs(found, "test") == ["pytest"]
    assert found.requires_python == [">=3.9"]


def test_setup_cfg_tox_nox_conda_and_ci_files() -> None:
    found = declared_requirements(tree_of({
        "setup.cfg": "[options]\ninstall_requires =\n    numpy\n    scipy; python_version>'3.8'\n[options.extras_require]\ntest = pytest-mock\n",  # noqa: E501
        "tox.ini": "[testenv]\ndeps =\n    py38: pytest-xdist\n    -rreq-tox.txt\n",
        "req-tox.txt": "hypothesis\n",
        "noxfile.py": "import nox\n@nox.session\ndef tests(session):\n    session.install('-r', 'requirements-ci.txt', 'einops', '--pre')\n",  # noqa: E501
        "requirements-ci.txt": "timm\n",
        "environment.yml": "dependencies:\n  - python=3.11\n  - pip:\n    - kornia\n",
        ".github/workflows/tests.yml": "steps:\n  - run: pip install --upgrade torch==2.4.0+cpu 'onnx>=1' --index-url https://x/cpu --progress-bar off && pytest\n",  # noqa: E501
        ".github/workflows/release.yml": "steps:\n  - run: pip install twine\n",  # runs no tests: not read
    }))  # fmt: skip
    by_spec = {r.spec: r.group for r in found.requirements}
    assert by_spec["numpy"] == "runtime" and by_spec['scipy; python_version > "3.8"'] == "runtime"
    assert by_spec["pytest-mock"] == "extra:test"
    assert by_spec["pytest-xdist"] == by_spec["hypothesis"] == by_spec["einops"] == by_spec["timm"] == "test"
    assert by_spec["kornia"] == "runtime"
    assert by_spec["torch==2.4.0"] == by_spec["onnx>=1"] == "ci"  # the local +cpu label is the index's release
    assert "twine" not in by_spec and "https://x/cpu" not in by_spec and "off" not in by_spec  # option values


def test_direct_urls_keep_their_name_and_broken_files_are_recorded_not_raised() -> None:
    found = declared_requirements(tree_of({
        "requirements.txt": "git+https://github.com/acme/fid@abc\nnumpy\nhttps://example.org/download\n",
        "pyproject.toml": "[project\nname=",
        "setup.py": "def broken(:\n",
    }))  # fmt: skip
    assert (
        specs(found) == ["fid", "numpy"] and found.requirements[0].direct_url == "git+https://github.com/acme/fid@abc"
    )
    reasons = " | ".join(f"{s.source}: {s.reason}" for s in found.skipped)
    assert "direct URL: no distribution name in it" in reasons
    assert "pyproject.toml: not valid TOML" in reasons and "setup.py does not parse" in reasons


@pytest.mark.parametrize(
    ("spec", "name", "kept"),
    [
        ("git+https://github.com/cornellius-gp/gpytorch.git", "gpytorch", "gpytorch"),
        ("git+https://github.com/cornellius-gp/linear_operator.git@main", "linear-operator", "linear_operator"),
        ("git+https://gitlab.com/a/b/c.git#egg=real-name", "real-name", "real-name"),
        (
            "kornia[x] @ git+https://github.com/kornia/kornia ; python_version > '3'",
            "kornia",
            'kornia[x]; python_version > "3"',
        ),  # fmt: skip
        ("https://github.com/o/tiny_lib/archive/refs/heads/main.zip", "tiny-lib", "tiny_lib"),
        ("https://example.org/dist/foo_bar-1.0-py3-none-any.whl", "foo-bar", "foo-bar"),
        ("https://example.org/dist/foo-2.1.tar.gz", "foo", "foo"),
    ],
)
def test_a_requirement_given_as_a_url_keeps_its_name_and_url(spec: str, name: str, kept: str) -> None:
    record = requirement_record(spec, "ci.yml", "ci")
    assert not isinstance(record, str), record
    assert (record.name, record.spec, record.direct_url) == (name, kept, spec.split(" ; ")[0].split(" @ ")[-1])
    assert record.name_from_url == (name in {"gpytorch", "linear-operator", "tiny-lib"})  # the repository's name only


def test_a_ci_install_from_a_git_branch_is_a_requirement_with_its_url() -> None:
    """botorch's CI installs its sibling libraries from their main branches."""
    found = declared_requirements(tree_of({
        ".github/workflows/test.yml": "jobs:\n  t:\n    steps:\n      - run: |\n          uv pip install "
        "git+https://github.com/cornellius-gp/gpytorch.git\n          pytest -ra\n",
        "requirements-c.txt": "numpy\n-c constraints.txt\n", "constraints.txt": "gpytorch @ git+https://x/g.git\nscipy<2\n",
    }))  # fmt: skip
    by_name = {r.name: r for r in found.requirements}
    assert by_name["gpytorch"].direct_url == "git+https://github.com/cornellius-gp/gpytorch.git"
    assert by_name["gpytorch"].group == "ci" and found.constraints == ["scipy<2"]  # a URL constrains nothing


def test_a_version_only_ci_knows_keeps_the_name_and_other_expressions_are_left_out() -> None:
    """PennyLane's GPU job runs ``pip install torch==${{ env.TORCH_VERSION }}``: split on its
    spaces it read as three requirements, ``env.TORCH_VERSION`` one the resolver looked for."""
    found = declared_requirements(tree_of({
        ".github/workflows/test.yml": "jobs:\n  t:\n    steps:\n      - run: |\n"
        "          pip install torch==${{ env.TORCH_VERSION }} jax[cpu]==$JAX ${{ matrix.extra }} scipy\n"
        "          pytest\n",
        "tox.ini": "[testenv]\ndeps =\n    numpy=={env:NUMPY_VERSION}\n    {[base]deps}\n",
    }))  # fmt: skip
    assert sorted(specs(found)) == ["jax[cpu]", "numpy", "scipy", "torch"]
    assert not found.skipped  # nothing left for the resolver to fail on


def test_dependency_files_selection_reads() -> None:
    assert is_dependency_file("requirements-dev.txt") and is_dependency_file("requirements/test.txt")
    assert is_dependency_file(".github/workflows/ci.yml") and is_dependency_file("pyproject.toml")
    assert not is_dependency_file("pkg/setup.py") and not is_dependency_file("a/b/c/d/requirements.txt")


def test_test_imports_skip_stdlib_own_modules_and_optional_imports() -> None:
    tree = tree_of({
        "acme/__init__.py": "",
        "tests/helpers.py": "import yaml\n",
        "tests/conftest.py": "import pytest\nimport _pytest.fixtures\nimport __main__\n"
                             "try:\n    import horovod\nexcept ImportError:\n    horovod = None\n",
        "tests/test_a.py": "import os, numpy as np\nimport acme\nimport helpers\nfrom sklearn.metrics import f1_score\n"
                           "def test_x():\n    import apex\n    pytest.importorskip('cv2')\n",
    })  # fmt: skip
    imports = third_party_imports(tree)
    assert sorted(imports) == [
        "_pytest",
        "cv2",
        "numpy",
        "pytest",
        "sklearn",
        "yaml",
    ]  # not horovod, apex (optional), acme, helpers, the interpreter's __main__; _pytest is pytest's
    assert [distribution_for(m) for m in ("sklearn", "cv2", "yaml", "numpy", "_pytest", "_jsonnet")] == [
        "scikit-learn", "opencv-python-headless", "pyyaml", "numpy", "pytest", "jsonnet"]  # fmt: skip
    assert module_imports("from . import x\nimport a.b\n") == {"a"}


def test_plan_takes_declared_test_groups_and_imported_extras(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": '[project]\nname = "acme"\ndependencies = ["numpy"]\n'
        '[project.optional-dependencies]\nvision = ["pillow>=9", "timm"]\nall = ["acme[vision]"]\n',
        "requirements-dev.txt": "acme[all]\npytest-cov\n",
        "docs/requirements.txt": "pillow==8.0\n",
        "acme/__init__.py": "",
        "tests/test_v.py": "from PIL import Image\nimport matplotlib\n",
    }
    write_tree(tmp_path, files)
    plan = plan_environment(disk_tree(tmp_path))
    chosen = {r.spec: r.group for r in plan.requirements}
    # acme[all] expands to the vision extra; docs pins never leak in; an undeclared import is added
    assert chosen == {"numpy": "runtime", "pillow>=9": "extra:vision", "timm": "extra:vision", "pytest-cov": "dev",
                      "matplotlib": "import", "pytest>=6.2": "harness"}  # fmt: skip
    assert plan.own_names == {"acme"}


def test_an_extra_the_tests_import_inside_try_or_a_function_is_installed(tmp_path: Path) -> None:
    """An extra's entry the tests import in a ``try`` block is installed; an undeclared
    optional import (``apex``) is still not added."""
    files = {
        "pyproject.toml": '[project]\nname = "acme"\ndependencies = ["numpy"]\n'
        '[project.optional-dependencies]\nhf = ["transformers>=4"]\nserve = ["fastapi"]\n',
        "acme/__init__.py": "",
        "tests/test_t.py": "try:\n    from transformers import AutoModel\nexcept ImportError:\n    pass\n"
                           "def test_x():\n    import apex\n",
    }  # fmt: skip
    write_tree(tmp_path, files)
    chosen = {r.spec: r.group for r in plan_environment(disk_tree(tmp_path)).requirements}
    assert chosen == {"numpy": "runtime", "transformers>=4": "extra:hf", "pytest>=6.2": "harness"}


def test_an_extra_named_like_a_tested_part_of_the_project_is_installed_whole(tmp_path: Path) -> None:
    """small-text: tests import ``small_text.integrations.transformers`` (which imports
    ``transformers`` itself, guarded); its ``transformers`` extra is what its noxfile installs."""
    files = {
        "pyproject.toml": '[project]\nname = "small-text"\ndependencies = ["numpy"]\n'
        '[project.optional-dependencies]\ntransformers = ["small-text[pytorch]", "transformers>=4"]\n'
        'pytorch = ["torch>=2"]\nserve = ["fastapi"]\n',
        "small_text/integrations/transformers/__init__.py": "",
        "tests/test_t.py": "try:\n    from small_text.integrations.transformers import Model\nexcept ImportError:\n    pass\n",
    }  # fmt: skip
    write_tree(tmp_path, files)
    chosen = {r.spec: r.group for r in plan_environment(disk_tree(tmp_path)).requirements}
    assert chosen == {
        "numpy": "runtime",
        "torch>=2": "extra:pytorch",
        "transformers>=4": "extra:transformers",
        "pytest>=6.2": "harness",
    }


def test_conda_environment_files_a_ci_step_builds_the_test_environment_from() -> None:
    """deepchem's CI merges conda environment files (named ``env_*.yml``, not ``environment*``)
    in ``requirements/`` and installs the result; their pip sections are the test environment
    (biopython, transformers, torchdata were missing from its image). A macOS job's file is not
    the Linux image's; a separator glued to an argument (``pip;``) is not part of it."""
    workflow = (
        "steps:\n  - run: |\n      python -m pip install --upgrade pip;\n      pip install conda-merge;\n"
        "      cd requirements\n"
        "      conda-merge env_common.yml torch/env_torch.cpu.yml > env.yml\n"
        "      conda-merge env_common.yml env_mac.yml > env.yml\n"
        "      conda env update --file ./extra/env_test.yml\n"
        "  - run: pytest deepchem\n"
    )
    found = declared_requirements(tree_of({
        ".github/workflows/test.yml": workflow,
        "requirements/env_common.yml": "dependencies:\n  - openmm\n  - pip:\n    - biopython\n    - transformers>=4.34\n",
        "requirements/torch/env_torch.cpu.yml": "dependencies:\n  - pip:\n    - -f https://x/torch_stable.html\n    - torchdata<0.8.0\n",  # noqa: E501
        "requirements/env_mac.yml": "dependencies:\n  - pip:\n    - tensorflow-macos\n",
        "requirements/extra/env_test.yml": "dependencies:\n  - pip:\n    - pytest-cov\n",
        "requirements/env_unused.yml": "dependencies:\n  - pip:\n    - never-named\n",
    }))  # fmt: skip
    specs_found = {r.spec for r in found.requirements}
    assert {"biopython", "transformers>=4.34", "torchdata<0.8.0", "pytest-cov", "pip", "conda-merge"} <= specs_found
    assert not specs_found & {"tensorflow-macos", "never-named", "openmm", "pip;", "conda-merge;"}


def test_own_extras_from_ci_and_the_all_idiom_of_setup_py(tmp_path: Path) -> None:
    """cleanlab's pattern: extras built with ``list(set(sum(EXTRAS.values(), [])))`` and a CI
    job running ``pip install -e ".[all]"`` before pytest."""
    files = {
        "setup.py": 'VISION = ["pillow"]\nEXTRAS = {"vision": VISION, "plots": ["matplotlib"]}\n'
        'EXTRAS["all"] = list(set(sum(EXTRAS.values(), [])))\nsetup(name="acme", extras_require=EXTRAS)\n',
        "setup.cfg": "[metadata]\nname = acme\n",
        ".github/workflows/ci.yml": 'steps:\n  - run: pip install -e ".[all]" && python -m pytest\n',
        "acme/__init__.py": "",
    }
    write_tree(tmp_path, files)
    assert specs(declared_requirements(disk_tree(tmp_path)), "extra:all") == ["pillow", "matplotlib"]
    chosen = {r.spec: r.group for r in plan_environment(disk_tree(tmp_path)).requirements}
    assert chosen == {"pillow": "extra:all", "matplotlib": "extra:all", "pytest>=6.2": "harness"}


def test_a_frozen_environment_beside_the_package_metadata_is_set_aside() -> None:
    """CompressAI's requirements.txt is a pip freeze of 2023 (114 exact pins: pytest 6.2.4,
    torch 1.8.1) beside pyproject's dependencies: it is set aside, named with its cause; a
    short pinned test file stays, and so does a freeze where no metadata declares anything."""
    freeze = "".join(f"pkg{i}=={i}.0\n" for i in range(40)) + "pytest==6.2.4\nJinja2<3.1\n"  # edited by hand
    pyproject = '[project]\nname = "x"\ndependencies = ["torch>=1.13.1"]\n'
    found = declared_requirements(tree_of({"pyproject.toml": pyproject, "requirements.txt": freeze,
                                           "requirements-test.txt": "pytest==8.3.0\nhypothesis==6.0\n"}))  # fmt: skip
    assert specs(found) == ["torch>=1.13.1", "pytest==8.3.0", "hypothesis==6.0"]
    assert [(d.source, d.reason) for d in found.skipped] == [
        (
            "requirements.txt",
            "a frozen environment (41 of 42 requirements exact pins) beside the package's declared dependencies",
        )
    ]
    alone = declared_requirements(tree_of({"requirements.txt": freeze}))
    assert len(specs(alone)) == 42 and alone.skipped == []
