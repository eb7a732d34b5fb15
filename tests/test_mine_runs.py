"""The project's own test commands (``mine.runs``): what they deselect, read conservatively."""

from __future__ import annotations

import pytest

from dlbench.config import MineConfig
from dlbench.mine.cache import load_repo
from dlbench.mine.runs import PytestCommand, deselection, marker_value, read_commands
from dlbench.mine.tests import find_test_cases
from tests.test_mine_callgraph import write_tree


@pytest.mark.parametrize(
    ("expression", "marks", "value"),
    [
        ("not optional", {"optional"}, False),
        ("not optional", set(), None),  # a mark no static reading sees may still be added
        ("optional", set(), None),
        ("optional", {"optional"}, True),
        ("not pytorch and not optional", {"optional"}, False),
        ("not pytorch and not optional", {"slow"}, None),
        ("slow or not optional", {"optional"}, None),
        ("(gpu or tpu) and not slow", {"gpu", "slow"}, False),
        ("gpu or tpu", {"tpu"}, True),
        ("not (gpu or slow)", {"slow"}, False),
        ("mark-with-dash", {"mark-with-dash"}, None),  # outside this reading: never deselects
        ("with_args(x=1)", {"with_args"}, None),
    ],
)
def test_marker_expressions_are_false_only_whatever_unseen_marks_are(expression, marks, value):
    assert marker_value(expression, frozenset(marks)) is value


def test_commands_are_read_from_nox_tox_ci_make_and_scripts(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "noxfile.py": """
                import nox

                @nox.session
                def unit(session):
                    session.install("pytest")
                    session.run("pytest", "-m", "not optional", "tests/unit", *session.posargs)
                    session.run("python", "-m", "pytest", "-mnot gpu")
                    session.run("pytest", "-m", MARKS)
                    session.run("flake8", "src")
            """,
            "tox.ini": "[testenv]\ncommands =\n    pytest -m 'not slow' --ignore=tests/big {posargs}\n"
            "[testenv:gpu]\ncommands = pytest -m gpu\n",
            ".github/workflows/ci.yml": """
                jobs:
                  test:
                    steps:
                      - run: pip install pytest pytest-cov
                      - run: |
                          CUDA_VISIBLE_DEVICES="" coverage run -m pytest --cov src \\
                            --cov-report xml tests/unit/test_a.py::test_a -m "not distributed" && echo done
                      - run: uv run pytest -k fast
            """,
            "Makefile": "test:\n\tpytest --maxfail 3 -m 'not net' tests\n",
            "tests/run.sh": 'eval "pytest ${ARGS}"\ncmd="pytest -m x"\n',
            "tests/unit/test_a.py": "",
            "tests/big/test_b.py": "",
            "src/lib.py": "",
        },
    )
    files = ["tests/unit/test_a.py", "tests/big/test_b.py", "src/lib.py"]
    commands = read_commands(root, files, ["-m", "not ini"])
    assert commands == (  # files in path order
        # ``--cov src`` takes ``src`` as a path: a wider command only ever deselects less
        PytestCommand(".github/workflows/ci.yml", "not distributed", ("src", "tests/unit/test_a.py")),
        PytestCommand(".github/workflows/ci.yml", "not ini"),  # the ini's ``-m`` where none is passed
        PytestCommand("Makefile", "not net", ("tests",)),
        PytestCommand("noxfile.py", "not optional", ("tests/unit",)),
        PytestCommand("noxfile.py", "not gpu"),
        PytestCommand("noxfile.py", opaque=True),  # ``-m MARKS``: not literal
        PytestCommand("tests/run.sh", opaque=True),
        PytestCommand("tox.ini", "not slow", ignores=("tests/big",)),
        PytestCommand("tox.ini", "gpu"),
    )


def test_a_test_is_deselected_only_when_every_command_collecting_it_leaves_it_out():
    commands = (
        PytestCommand("ci.yml", "not slow", ignores=("tests/test_frameworks.py",)),
        PytestCommand("ci.yml", None, ("tests/test_frameworks.py",)),
        PytestCommand("noxfile.py", "not slow and not optional", ("tests/unit",)),
    )
    slow = frozenset({"slow"})
    assert (
        deselection(commands, "tests/test_core.py", slow)
        == 'deselected by the project\'s test commands: -m "not slow" (ci.yml)'
    )
    assert deselection(commands, "tests/unit/test_x.py", slow).count("-m") == 2
    assert deselection(commands, "tests/test_frameworks.py", slow) is None  # run there without -m
    assert deselection(commands, "tests/test_core.py", frozenset({"gpu"})) is None
    # a file no command collects is judged by every command's expression
    only_unit = commands[2:]
    assert deselection(only_unit, "tests/integration/test_y.py", frozenset({"optional"})) is not None
    assert deselection(only_unit + (PytestCommand("run.sh", opaque=True),), "tests/unit/t.py", slow) is None
    assert deselection((), "tests/test_core.py", slow) is None


def test_mining_keeps_tests_no_project_command_runs_with_why(tmp_path):
    """small-text: every nox session passes ``-m "not optional"``; its SetFit tests are
    marked ``optional`` on the class, the module or the test, and make no task."""
    root = write_tree(
        tmp_path / "repo",
        {
            "noxfile.py": """
                import nox

                @nox.session
                def unit_tests(session):
                    session.run("pytest", "-m", "not pytorch and not optional", "tests/unit")

                @nox.session
                def unit_tests_transformers(session):
                    session.run("pytest", "-m", "not optional", "tests/unit")
            """,
            "calc/ops.py": "def relu(x):\n    return x\n",
            "tests/unit/test_ops.py": """
                import unittest
                import pytest
                from pytest import mark
                from calc.ops import relu

                @mark.optional
                def test_setfit():
                    relu(1)

                @pytest.mark.pytorch
                def test_torch():
                    relu(1)

                @pytest.mark.optional
                class Base(unittest.TestCase):
                    def test_base(self):
                        relu(1)

                class TestDerived(Base):
                    def test_own(self):
                        relu(1)
            """,
            "tests/integration/test_module.py": """
                import pytest
                from calc.ops import relu

                pytestmark = pytest.mark.optional

                def test_hnsw():
                    relu(1)
            """,
        },
    )
    repo = load_repo(root, MineConfig(), tmp_path / "cache")
    skipped = {c.node_id: c.skipped for c in find_test_cases(repo.table, "acme/lib", repo.layout)}
    both = 'deselected by the project\'s test commands: -m "not optional" (noxfile.py), -m "not pytorch and not optional" (noxfile.py)'
    assert skipped == {
        "tests/unit/test_ops.py::test_setfit": both,
        "tests/unit/test_ops.py::test_torch": None,  # the transformers session runs it
        "tests/unit/test_ops.py::Base::test_base": both,
        "tests/unit/test_ops.py::TestDerived::test_base": both,
        "tests/unit/test_ops.py::TestDerived::test_own": both,
        "tests/integration/test_module.py::test_hnsw": both,
    }
