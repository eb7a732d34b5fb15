"""Which pytest session each of a task's tests runs in (``harness/suites``)."""

from __future__ import annotations

from pathlib import Path

from dlbench.harness.suites import config_file, sessions
from tests.test_mine_callgraph import write_tree

TESTS = ["tests/torch/test_a.py::test_a", "tests/tf/test_b.py::test_b", "tests/torch/sub/test_c.py::C::test_c"]


def test_tests_under_their_own_pytest_ini_run_apart(tmp_path: Path) -> None:
    write_tree(tmp_path, {"tests/torch/pytest.ini": "[pytest]\n", "tests/tf/pytest.ini": "", "pyproject.toml": ""})
    assert sessions(tmp_path, TESTS) == [[TESTS[0], TESTS[2]], [TESTS[1]]]
    assert config_file(tmp_path, "tests/torch/sub/test_c.py") == "tests/torch/pytest.ini"


def test_one_configuration_for_all_is_one_session(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"})
    assert sessions(tmp_path, TESTS) == [TESTS]
    assert config_file(tmp_path, "tests/tf/test_b.py") == "pyproject.toml"
    assert sessions(tmp_path / "nothing", TESTS) == [TESTS]  # no configuration at all: one session too


def test_only_files_that_configure_pytest_count(tmp_path: Path) -> None:
    """A pyproject.toml, tox.ini or setup.cfg without a pytest section (or one pytest could not
    read) is passed over, as pytest passes it over; pytest.ini counts even empty."""
    write_tree(tmp_path, {
        "tests/torch/pyproject.toml": "[tool.black]\nline-length = 100\n",
        "tests/torch/tox.ini": "[tox]\nenvlist = py311\n",
        "tests/torch/setup.cfg": "[tool:pytest]\nmarkers = slow\n",
        "tests/tf/pyproject.toml": "[tool.pytest\nbroken",
        "tests/tf/tox.ini": "[pytest]\naddopts = -x\n",
        "tests/torch/sub/setup.cfg": "[metadata]\nname = x\n",
    })  # fmt: skip
    assert config_file(tmp_path, "tests/torch/sub/test_c.py") == "tests/torch/setup.cfg"
    assert config_file(tmp_path, "tests/tf/test_b.py") == "tests/tf/tox.ini"
    assert sessions(tmp_path, TESTS) == [[TESTS[0], TESTS[2]], [TESTS[1]]]
