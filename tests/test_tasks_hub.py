"""The exported benchmark is a Hugging Face dataset: its card's YAML metadata declares what
`datasets.load_dataset` finds in the folder, and each repository's test environment is
exported beside the tasks as a lock and a Dockerfile that plain Docker builds."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from datasets import Features, load_dataset
from datasets.exceptions import NonMatchingSplitsSizesError
from packaging.requirements import Requirement

from dlbench.config import ImagesConfig
from dlbench.deps.sdists import house
from dlbench.images.extensions import ExtensionBuild, build_script
from dlbench.images.layers import RUNTIME_ENV
from dlbench.images.recipe import dockerfile, export_environments, public_base
from dlbench.records import (
    BenchmarkTask,
    CloneRecord,
    CloneStatus,
    Environment,
    ImageRecord,
    ImageStatus,
    RepairStep,
    repo_slug,
)
from dlbench.report.card import card_file
from dlbench.report.hub import hub_license, metadata, size_category
from dlbench.store import read_jsonl, write_json
from tests.test_tasks_assemble import GOOD, THIN, run_assemble
from tests.wheels import pure_wheel

DOCKER_INSTRUCTIONS = {"ARG", "FROM", "RUN", "COPY", "ENV", "WORKDIR", "USER", "CMD"}
# A lock pip installs in seconds: pytest and what it needs, as of mid-2024.
SMALL_LOCK = ["iniconfig==2.0.0", "packaging==24.1", "pluggy==1.5.0", "pytest==8.3.2"]


def image_record(slug: str, lock: list[str] = SMALL_LOCK, **env: object) -> ImageRecord:
    return ImageRecord(
        repo=slug,
        sha="c" * 40,
        base_image="dlbench/base:bookworm",
        tag=f"dlbench/project-{slug}:0123456789ab",
        status=ImageStatus.OK,
        build_log=f"logs/build_image/{slug}.build.log",
        environment=Environment(
            python_version="3.11",
            platform="x86_64-manylinux_2_36",
            exclude_newer=datetime(2024, 8, 1, tzinfo=UTC),
            lock=lock,
            **env,
        ),
    )


def export(tmp_path: Path, records: list[ImageRecord] | None = None, files: dict[str, str] | None = None) -> Path:  # fmt: skip
    """The assembled test world's benchmark folder with its environments and card, as the
    workflow's rules leave it (``assemble``, ``export_environments``, ``dataset_card``);
    ``files``: more files of each checkout; the download cache is ``tmp_path/downloads``."""
    out, _, _ = run_assemble(tmp_path, "bench")
    folder = out.jsonl.parent
    clones, images = [], []
    for record in records if records is not None else [image_record(repo_slug(GOOD)), image_record(repo_slug(THIN))]:
        checkout = tmp_path / "checkouts" / record.repo
        checkout.mkdir(parents=True, exist_ok=True)
        (checkout / "tox.ini").write_text("[testenv]\nsetenv =\n    LIB_BACKEND = numpy\n")  # the project's runs set it
        for name, text in (files or {}).items():
            (checkout / name).write_text(text)
        clone = CloneRecord(
            full_name=record.repo.replace("__", "/"),
            slug=record.repo,
            clone_url="x",
            path=str(checkout),
            sha=record.sha,
            status=CloneStatus.OK,
        )
        clones.append(tmp_path / "clones" / f"{record.repo}.json")
        images.append(tmp_path / "images" / f"{record.repo}.json")
        write_json(clones[-1], clone)
        write_json(images[-1], record)
    environments = folder / "environments"
    export_environments(out.jsonl, clones, images, environments, ImagesConfig(), tmp_path / "downloads")
    card_file(out.jsonl, out.repos, tmp_path / "merged.jsonl", tmp_path / "agreement.csv", tmp_path / "tables",
              folder / "README.md", 0.5, environments=environments)  # fmt: skip
    return folder


def card_metadata(folder: Path) -> dict:
    text = (folder / "README.md").read_text()
    match = re.match(r"---\n(.*?\n)---\n", text, re.S)
    assert match, "the card starts with YAML front matter"
    return yaml.safe_load(match[1])


def instructions(text: str) -> list[tuple[str, str]]:
    """A Dockerfile's (instruction, arguments), comments left out; no line continues another."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert not any(line.endswith("\\") for line in lines)
    return [tuple(line.split(" ", 1)) for line in lines]


def test_the_card_declares_what_load_dataset_finds(tmp_path, monkeypatch):
    folder = export(tmp_path)
    meta = card_metadata(folder)
    tasks = read_jsonl(folder / "dlbench.jsonl", BenchmarkTask)
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": "dlbench.parquet"}]}]
    assert meta["license"] == ["mit"] and "license_name" not in meta  # every task's repository is MIT
    assert meta["task_categories"] == ["text-generation"] and meta["size_categories"] == ["n<1K"]
    assert meta["language"] == ["en"] and "code" in meta["tags"] and meta["pretty_name"]
    declared = Features._from_yaml_list(meta["dataset_info"]["features"])
    assert declared == Features.from_arrow_schema(pq.read_schema(folder / "dlbench.parquet"))
    assert list(declared) == list(BenchmarkTask.model_fields)

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    loaded = load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))
    assert list(loaded) == ["test"]  # the default config only: repos.csv, the JSON files and environments/ are not data
    split = loaded["test"]
    assert (
        split.features == declared and split.num_rows == len(tasks) == meta["dataset_info"]["splits"][0]["num_examples"]
    )
    assert [BenchmarkTask.model_validate(row) for row in split] == tasks  # every value as assembled
    assert loaded["test"].info.splits["test"].num_bytes == meta["dataset_info"]["splits"][0]["num_bytes"]


def test_load_dataset_checks_the_cards_split_size(tmp_path, monkeypatch):
    """The card's `splits` are read, not ignored (datasets drops them without `num_bytes`): a
    card that miscounts the rows fails to load."""
    folder = export(tmp_path)
    card = folder / "README.md"
    rows = card_metadata(folder)["dataset_info"]["splits"][0]["num_examples"]
    card.write_text(card.read_text().replace(f"num_examples: {rows}\n", f"num_examples: {rows + 1}\n", 1))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(NonMatchingSplitsSizesError):
        load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))


def test_each_repository_with_tasks_gets_its_environment(tmp_path):
    folder = export(tmp_path)
    slug = repo_slug(GOOD)
    assert sorted(p.name for p in (folder / "environments").iterdir()) == [slug]  # owner/thin has no task
    env = folder / "environments" / slug
    assert sorted(p.name for p in env.iterdir()) == [".dockerignore", "Dockerfile", "image.json", "lock.txt"]
    assert ImageRecord.model_validate_json((env / "image.json").read_text()) == image_record(slug)
    pins = [Requirement(line) for line in (env / "lock.txt").read_text().splitlines() if not line.startswith("#")]
    assert [f"{r.name}{r.specifier}" for r in pins] == SMALL_LOCK

    steps = instructions((env / "Dockerfile").read_text())
    assert {name for name, _ in steps} <= DOCKER_INSTRUCTIONS
    assert steps[0] == ("ARG", "BASE_IMAGE=python:3.11-slim-bookworm") and steps[1] == ("FROM", "${BASE_IMAGE}")
    copied = [args.split()[0] for name, args in steps if name == "COPY"]
    assert copied == ["lock.txt", "repo/"]  # the lock from this folder, the checkout from the consumer's clone
    install = next(args for name, args in steps if name == "RUN" and "pip install" in args)
    assert "--no-deps" in install and "-r /opt/dlbench-build/in/lock.txt" in install
    env_lines = dict(args.split("=", 1) for name, args in steps if name == "ENV")
    assert {k: json.loads(v) for k, v in env_lines.items()} == {
        **RUNTIME_ENV, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "LIB_BACKEND": "numpy",
    }  # fmt: skip
    assert steps[-3:] == [("WORKDIR", "/work/repo"), ("USER", "10001:10001"), ("CMD", '["python"]')]
    assert (env / ".dockerignore").read_text().splitlines() == ["repo/.git", "**/.git"]

    card = (folder / "README.md").read_text()
    assert "## Test environments" in card and "## License" in card
    assert (
        f"| {slug} | 3.11 | x86_64-manylinux_2_36 | 2024-08-01 | 4 | 0 | - |" in card
    )  # slug, Python, platform, as of, packages, repairs, extensions
    assert "1 of 1 repositories with tasks have a rebuildable environment." in card


def test_frameworks_extensions_and_repairs_reach_the_dockerfile(tmp_path):
    record = image_record(
        "owner__good",
        lock=["opencv-python==4.11.0.86", "torch==2.4.0", *SMALL_LOCK],
        frameworks=["torch==2.4.0"],
        repairs=[
            RepairStep(round=1, module="yaml", distribution="pyyaml", reason="gold run: missing module yaml"),
            RepairStep(
                round=1,
                module="libgomp.so.1",
                distribution="libgomp1",
                reason="E   OSError: libgomp.so.1: cannot open shared object file",
                debian=True,
            ),  # fmt: skip
        ],
        unresolved_libraries=["libcuda.so.1"],
    )
    record.extensions = "built 2 extension module(s) in place in 40 s"
    cfg = ImagesConfig(framework_index_url="https://download.pytorch.org/whl/cpu")
    text = dockerfile(record, "owner/good", cfg, extensions=ExtensionBuild(("cython>=3",)), uv_version="0.5.1")
    steps = instructions(text)
    prepare = next(args for name, args in steps if name == "RUN")
    # torch's, OpenCV's (its wheel links libGL), the one a shared library's repair found, and the build's
    assert "apt-get install -y -qq --no-install-recommends g++ libgl1 libglib2.0-0 libgomp1 python3-dev" in prepare
    assert ("ARG", "FRAMEWORK_INDEX_URL=https://download.pytorch.org/whl/cpu") in steps
    assert ("COPY", "build-extensions.sh /opt/dlbench-build/in/build-extensions.sh") in steps
    build = next(args for name, args in steps if name == "RUN" and "build-extensions.sh" in args)
    assert "uv==0.5.1" in build and "ln -s /opt/dlbench-build/uv-package/bin/uv /opt/dlbench-build/uv" in build
    assert "# Repairs in the lock: pyyaml (gold run: missing module yaml)\n" in text
    assert "# Debian packages the repairs added: libgomp1 (E OSError: libgomp.so.1: cannot open" in text
    assert "# Shared libraries no Debian package provided: libcuda.so.1" in text
    assert "# The checkout's extension modules: built 2 extension module(s) in place in 40 s" in text


def test_an_extension_build_is_exported_as_the_workflows_own_script(tmp_path):
    checkout = tmp_path / "checkouts" / "owner__good"
    checkout.mkdir(parents=True)
    (checkout / "setup.py").write_text(
        "from setuptools import Extension, setup\nsetup(ext_modules=[Extension('m', ['m.c'])])\n"
    )
    folder = export(tmp_path, [image_record("owner__good")])
    script = (folder / "environments/owner__good/build-extensions.sh").read_text()
    assert script == build_script(ExtensionBuild(("setuptools",))) + "\n"  # setup.py's import, outside the lock


def test_a_failed_image_exports_its_record_only(tmp_path):
    failed = image_record("owner__good").model_copy(
        update={"environment": None, "status": ImageStatus.IMAGE_ERROR, "error": "no Python keeps torch==0.4"}
    )
    folder = export(tmp_path, [failed])
    assert [p.name for p in (folder / "environments/owner__good").iterdir()] == ["image.json"]
    card = (folder / "README.md").read_text()
    assert "| owner__good | - | - | - | 0 | 0 | no image: no Python keeps torch==0.4 |" in card
    assert "0 of 1 repositories with tasks have a rebuildable environment." in card


def test_without_images_the_card_says_no_environment_is_exported(tmp_path):
    folder = export(tmp_path, [])
    assert not list((folder / "environments").iterdir())
    assert "No environment is exported: no image was built for these tasks" in (folder / "README.md").read_text()


@pytest.mark.parametrize(
    ("spdx", "hub"),
    [("MIT", "mit"), ("Apache-2.0", "apache-2.0"), ("GPL-3.0-only", "gpl-3.0"), ("BSD-3-Clause", "bsd-3-clause"),
     (None, "unknown"), ("NOASSERTION", "unknown"), ("BlueOak-1.0.0", "other")],
)  # fmt: skip
def test_repository_licenses_as_hub_ids(spdx, hub):
    assert hub_license(spdx) == hub


def test_an_unlisted_license_is_named_and_linked(tmp_path):
    out, _, _ = run_assemble(tmp_path, "bench")
    tasks = read_jsonl(out.jsonl, BenchmarkTask)
    other = [*tasks, tasks[0].model_copy(update={"repo": "owner/other", "license": "BlueOak-1.0.0"})]
    meta = metadata(other)
    assert meta["license"] == ["mit", "other"] and meta["license_link"] == "repos.csv"


@pytest.mark.parametrize(("rows", "category"), [(0, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"), (520, "n<1K")])
def test_size_category(rows, category):
    assert size_category(rows) == category


@pytest.mark.parametrize(
    ("python", "platform", "base"),
    [("3.11", "x86_64-manylinux_2_36", "python:3.11-slim-bookworm"), ("3.10", "x86_64-manylinux_2_35", "python:3.10-slim-bookworm"),
     ("3.8", "x86_64-manylinux_2_31", "python:3.8-slim-bullseye"), ("3.12", "x86_64-manylinux_2_39", "python:3.12-slim-trixie"),
     ("3.13", "linux", "python:3.13-slim-bullseye")],
)  # fmt: skip
def test_public_base_runs_the_locks_wheels(python, platform, base):
    assert public_base(python, platform) == base


def probe_wheel(tmp_path: Path) -> Path:
    """A pure wheel of a distribution no index has, as the wheelhouse keeps one."""
    return pure_wheel(tmp_path, "dlbench-housed-probe", {"housed_probe/__init__.py": ""})


def test_plain_docker_builds_the_exported_environment_and_runs_a_test(require_docker, tmp_path):
    """The exported folder, a checkout in repo/ and `docker build`: the image runs the project's
    test with no network. Built on the local base (nothing is pulled here), as a consumer
    would pass another base with the same Python. A pin the workflow built from its sdist is
    installed from the wheel exported beside the lock (this one is on no index)."""
    pyproject = '[project]\nname = "good"\nversion = "2.0"\n[project.entry-points."good.ops"]\ntwice = "lib:double"\n'
    house(probe_wheel(tmp_path), tmp_path / "downloads", datetime(2024, 1, 1, tzinfo=UTC))  # on no index
    record = image_record("owner__good", [*SMALL_LOCK, "dlbench-housed-probe==1.0"])
    folder = export(tmp_path, [record], {"pyproject.toml": pyproject})
    context = folder / "environments/owner__good"
    assert sorted(p.name for p in (context / "wheels").iterdir()) == ["dlbench_housed_probe-1.0-py3-none-any.whl"]
    (context / "repo/tests").mkdir(parents=True)
    (context / "repo/pyproject.toml").write_text(pyproject)
    (context / "repo/lib.py").write_text("def double(x):\n    return 2 * x\n")
    (context / "repo/tests/test_lib.py").write_text(
        "import os\nfrom importlib.metadata import entry_points, version\nfrom lib import double\n\n"
        "def test_double():\n    assert double(2) == 4 and os.environ['LIB_BACKEND'] == 'numpy'\n"
        "    [twice] = entry_points(group='good.ops')  # the project's own, registered without its code\n"
        "    assert twice.load() is double and version('good') == '2.0'\n"
        "    import housed_probe  # from the wheel the workflow built from its sdist, shipped beside the lock\n"
    )
    (context / "repo/.git").mkdir()  # left out by .dockerignore, as copy_tree_into leaves it out
    tag = f"dlbench-env-test/owner__good:{uuid.uuid4().hex[:12]}"
    build = ["docker", "build", "--network", "host", "--build-arg", "BASE_IMAGE=dlbench/base:bookworm", "-t", tag, "."]
    try:
        done = subprocess.run(build, cwd=context, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        run = [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            tag,
            "python",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
        ]
        ran = subprocess.run([*run, "tests/test_lib.py::test_double"], capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr
        listing = subprocess.run(["docker", "run", "--rm", tag, "sh", "-c", "id -u; ls -A /work/repo; ls /opt"],
                                 capture_output=True, text=True, timeout=60).stdout.split()  # fmt: skip
        assert listing[0] == "10001" and ".git" not in listing and "dlbench-build" not in listing
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)  # this test's own image only
    shutil.rmtree(context / "repo")
