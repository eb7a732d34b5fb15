"""The Debian packages a project's own test runs have (dlbench/deps/system.py), read from its
CI files and its test files, and the shell that installs them (images/layers.apt_script)."""

from __future__ import annotations

from pathlib import Path

from dlbench.config import ImagesConfig
from dlbench.deps.system import apt_installs, ci_packages, declared_system_packages, runner_tools
from dlbench.images.build import project_system_packages
from dlbench.images.layers import apt_script, uv_install_script

WORKFLOW = """
on: [push]
jobs:
  tests:
    runs-on: ubuntu-latest
    steps:
      - run: |
          sudo apt-get update
          sudo apt-get install -y --no-install-recommends graphviz \\
            libhdf5-dev=1.10.* ${{ matrix.extra }} python3-dev
      - run: sudo apt install ffmpeg && echo done
      - run: python -m pytest tests
  docs:
    runs-on: ubuntu-latest
    steps:
      - run: sudo apt-get install -y texlive pandoc
      - run: make html
  gpu-tests:
    runs-on: [self-hosted, gpu]
    steps:
      - run: apt-get install -y nvidia-cuda-toolkit
      - run: pytest tests
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_apt_install_lines_give_literal_package_names():
    command = (
        "sudo DEBIAN_FRONTEND=noninteractive apt-get -qq install -y gcc-9 'g++-9' ninja-build=1.10 $PKGS; apt update"
    )
    assert list(apt_installs(command)) == ["gcc-9", "g++-9", "ninja-build"]
    assert list(apt_installs("apt install -y \\\n  ffmpeg libsm6 | tee log")) == ["ffmpeg", "libsm6"]
    assert list(apt_installs("pip install graphviz && apt-get remove git")) == []


def test_only_jobs_that_run_tests_on_a_cpu_count(tmp_path: Path):
    root = write(tmp_path, {".github/workflows/ci.yml": WORKFLOW})
    assert ci_packages(root) == ["graphviz", "libhdf5-dev", "ffmpeg"]


def test_a_program_the_tests_call_is_a_runner_tool(tmp_path: Path):
    calls = "import subprocess\n\ndef test_init(tmp_path):\n    subprocess.check_call(['git', 'init'], cwd=tmp_path)\n"
    mentions = "URL = 'https://github.com/acme/x.git'\n\ndef test_url():\n    assert 'git' in URL\n"
    assert runner_tools(write(tmp_path / "calls", {"tests/test_repo.py": calls})) == ["git"]
    assert runner_tools(write(tmp_path / "mentions", {"tests/test_url.py": mentions, "pkg/vcs.py": calls})) == []
    shell = "import os\n\ndef test_head():\n    os.system('git rev-parse HEAD')\n"
    assert runner_tools(write(tmp_path / "shell", {"pkg/tests/conftest.py": shell})) == ["git"]


def test_the_image_gets_them_unless_configured_off(tmp_path: Path):
    root = write(tmp_path, {".github/workflows/ci.yml": WORKFLOW, "tests/test_git.py": "CMD = ['git', 'status']\n"})
    assert declared_system_packages(root) == ["ffmpeg", "git", "graphviz", "libhdf5-dev"]
    assert project_system_packages(root, ImagesConfig(), installed={"ffmpeg"}) == ["git", "graphviz", "libhdf5-dev"]
    assert project_system_packages(root, ImagesConfig(ci_system_packages=False)) == []


def test_required_packages_fail_the_step_optional_ones_are_left_out():
    script = apt_script(["g++"], ["graphviz", "no-such-deb"])
    assert script.index("apt-get update") < script.index("--no-install-recommends g++ >/dev/null")
    # set -e stops at a required package that does not install: it is its own command
    assert "; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends g++ >/dev/null;" in script
    assert 'for p in graphviz no-such-deb; do if apt-cache show --no-all-versions "$p"' in script
    assert script.endswith("rm -rf /var/lib/apt/lists/*") and apt_script() == ""
    assert "for p in" not in uv_install_script("-r x.txt", ["g++"]) and "apt-get" not in uv_install_script("-r x.txt")
