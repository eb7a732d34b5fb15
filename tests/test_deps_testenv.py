"""The variables a project's own test runs set are part of its test environment: read from its
CI steps, runner modules, nox sessions and tox, and given to every run of its tests."""

from __future__ import annotations

from pathlib import Path

from dlbench.deps.testenv import runner_environment
from dlbench.records import EvalStatus
from tests.test_harness_integrity import ONE, project_task, run_local
from tests.test_mine_callgraph import write_tree

WORKFLOW = """\
name: tests
env:
  WORKFLOW_LEVEL: "1"
  FROM_MATRIX: ${{ matrix.backend }}
jobs:
  test:
    env:
      PKG_LOG: quiet
      GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}
      HOME: /root
    steps:
      - run: pip install -e .
        env: {INSTALL_ONLY: "yes"}
      - run: python -m pkg.tests.run_tests numpy
        env:
          STEP_LEVEL: "on"
          PKG_LOG: step-wins
"""
RUNNER = """\
import os
import sys

import pytest

os.environ["PKG_BACKEND"] = "numpy"
os.environ.setdefault("PKG_SEED", "7")
os.environ["API_KEY"] = "not-taken"
sys.exit(pytest.main(["pkg/tests"]))
"""
NOXFILE = """\
import nox


@nox.session
def tests(session):
    session.env["NOX_LEVEL"] = "2"
    session.run("pytest", env={"NOX_RUN": "3", "PKG_BACKEND": "torch"})
"""
TOX = "[testenv]\nsetenv =\n    TOX_LEVEL = 4\n    ROOT = {toxinidir}\ncommands = pytest\n"
CONFTEST = """\
import os

if os.environ.get("PKG_BACKEND") != "numpy":
    raise RuntimeError("set PKG_BACKEND: run the tests through pkg.tests.run_tests")
"""
GPU_WORKFLOW = """\
name: GPU tests
env:
  TORCH_VERSION: 2.3.0
jobs:
  accelerated:
    runs-on: [single-gpu-x64]
    env:
      SUITE: gpu
    steps:
      - run: python -m pytest -m "${{ env.SUITE }}" tests
"""
FILES = {
    ".github/workflows/tests.yml": WORKFLOW,
    ".github/workflows/tests-gpu.yml": GPU_WORKFLOW,
    "pkg/__init__.py": "",
    "pkg/core.py": "def one():\n    return 1\n",
    "pkg/tests/__init__.py": "",
    "pkg/tests/run_tests.py": RUNNER,
    "pkg/tests/conftest.py": CONFTEST,
    "pkg/tests/test_core.py": "from pkg.core import one\n\n\ndef test_one():\n    assert one() == 1\n",
    "noxfile.py": NOXFILE,
    "tox.ini": TOX,
}


def test_variables_from_every_kind_of_runner(tmp_path: Path) -> None:
    env = runner_environment(write_tree(tmp_path / "repo", FILES))
    assert env == {
        "PKG_BACKEND": "numpy",  # the runner module CI calls comes first (nox's torch loses)
        "PKG_SEED": "7",
        "STEP_LEVEL": "on",
        "PKG_LOG": "step-wins",  # the step's value over its job's
        "WORKFLOW_LEVEL": "1",
        "NOX_LEVEL": "2",
        "NOX_RUN": "3",
        "TOX_LEVEL": "4",
    }  # not: matrix values, secrets, HOME, an install step's, a credential, {toxinidir}, a GPU job's


def test_a_suite_that_needs_its_runners_variable_passes_gold(tmp_path: Path) -> None:
    record, task = project_task(tmp_path, FILES, "one", ["pkg/tests/test_core.py::test_one"], ONE)
    [gold] = run_local(record, task, [("gold", ONE)], tmp_path / "ev")
    assert gold.status == EvalStatus.PASS, (gold.detail, gold.causes)


STEP_OWN = """\
jobs:
  test:
    steps:
      - run: pytest tests
        env: {BACKEND: cpu}
      - run: JAX_ENABLE_X64=1 pytest tests/test_x.py
        env: {BACKEND: cpu}
      - run: pytest tests/test_mcmc.py::test_chain
        env: {JAX_CHECK_TRACER_LEAKS: 1, BACKEND: cpu}
"""


def test_a_variable_one_test_step_of_several_sets_is_that_steps_own(tmp_path: Path) -> None:
    """numpyro's job runs pytest in three steps; one checks four tests for tracer leaks
    (``JAX_CHECK_TRACER_LEAKS``): not the suite's environment. What every step sets is."""
    write_tree(tmp_path, {".github/workflows/ci.yml": STEP_OWN})
    assert runner_environment(tmp_path) == {"BACKEND": "cpu"}
