"""Test discovery honours the project's pytest configuration (and its precedence rules)."""

from __future__ import annotations

from dlbench.mine.paths import DEFAULT_LAYOUT
from dlbench.mine.tests import find_test_cases
from tests.test_mine_callgraph import mine_tree
from tests.test_mine_tests import load

LIB = {
    "lib/__init__.py": "",
    "lib/core.py": """
        def used_by_tests(x):
            return x

        def used_by_benchmarks(x):
            return x
    """,
    "tests/test_core.py": """
        from lib.core import used_by_tests

        def test_one():
            used_by_tests(1)

        def check_two():
            used_by_tests(2)

        class TestCore:
            def test_three(self):
                used_by_tests(3)

        class SuiteCore:
            def check_four(self):
                used_by_tests(4)
    """,
    "benchmarks/speed_test.py": """
        from lib.core import used_by_benchmarks

        def test_a():
            used_by_benchmarks(1)

        def test_b():
            used_by_benchmarks(2)

        def test_c():
            used_by_benchmarks(3)
    """,
}


def node_ids(tmp_path, files) -> list[str]:
    repo = load(tmp_path, files)
    return [case.node_id for case in find_test_cases(repo.table, "acme/lib", repo.layout)]


def test_testpaths_limit_collection_and_tasks(tmp_path):
    files = dict(LIB)
    files["pyproject.toml"] = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    result = mine_tree(tmp_path, files, min_tests=3)
    assert [t.node_id for t in result.tests] == [
        "tests/test_core.py::test_one",
        "tests/test_core.py::TestCore::test_three",
    ]
    assert [f.qualname for f in result.functions] == []  # used_by_tests: 2 tests; benchmarks not collected
    result = mine_tree(tmp_path / "all", dict(LIB), min_tests=3)
    assert [f.qualname for f in result.functions] == ["used_by_benchmarks"]


def test_name_patterns_from_setup_cfg(tmp_path):
    files = dict(LIB)
    files["setup.cfg"] = "[tool:pytest]\npython_files = test_*.py\npython_classes = Suite\npython_functions = check_*\n"
    assert node_ids(tmp_path, files) == ["tests/test_core.py::check_two", "tests/test_core.py::SuiteCore::check_four"]


def test_norecursedirs_from_tox_ini(tmp_path):
    files = dict(LIB)
    files["tox.ini"] = "[tox]\nenvlist = py3\n\n[pytest]\nnorecursedirs = bench*\n"
    assert all(not n.startswith("benchmarks/") for n in node_ids(tmp_path, files))
    assert "tests/test_core.py::test_one" in node_ids(tmp_path / "again", files)


def test_pytest_ini_wins_even_empty_and_unmatched_testpaths_fall_back(tmp_path):
    files = dict(LIB)
    files["pytest.ini"] = "# options elsewhere are ignored\n"
    files["pyproject.toml"] = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    assert load(tmp_path, files).layout == DEFAULT_LAYOUT
    files = dict(LIB)
    files["pyproject.toml"] = '[tool.pytest.ini_options]\ntestpaths = "missing"\n'
    assert any(n.startswith("benchmarks/") for n in node_ids(tmp_path / "unmatched", files))


def test_testpaths_globs(tmp_path):
    files = dict(LIB)
    files["pytest.ini"] = "[pytest]\ntestpaths =\n    bench*\n"
    assert node_ids(tmp_path, files) == [f"benchmarks/speed_test.py::test_{c}" for c in "abc"]


def test_paths_the_projects_commands_name_are_collected_beside_testpaths(tmp_path):
    """pytest reads testpaths only when given no path; a CI step running ``pytest ./benchmarks/``
    collects there although testpaths names another folder (DeepReg: ``testpaths = deepreg``)."""
    files = dict(LIB)
    files["pytest.ini"] = "[pytest]\ntestpaths = lib\n"
    files[".github/workflows/ci.yml"] = "jobs:\n  t:\n    steps:\n      - run: pytest --durations=20 ./benchmarks/\n"
    assert node_ids(tmp_path, files) == [f"benchmarks/speed_test.py::test_{c}" for c in "abc"]
    files[".github/workflows/ci.yml"] = "jobs:\n  t:\n    steps:\n      - run: pytest tests/test_core.py\n"
    assert node_ids(tmp_path / "file", files) == [
        "tests/test_core.py::test_one",
        "tests/test_core.py::TestCore::test_three",
    ]
    files[".github/workflows/ci.yml"] = "jobs:\n  t:\n    steps:\n      - run: pytest missing/\n"
    assert node_ids(tmp_path / "none", files) == []  # a path that is not there adds nothing: pytest's lib/


def test_unittest_suites_a_script_runs_are_test_modules_where_no_module_has_pytests_names(tmp_path):
    """torchdiffeq keeps its tests in ``tests/*_tests.py`` (unittest classes a ``run_all.py``
    star-imports): no module pytest's defaults collect, so 0 test cases were found. Its suites
    are collected then; beside modules pytest's names collect, such a name is not a test's."""
    suite = "import unittest\n\nfrom lib.core import used_by_tests\n\n\nclass OdeTests(unittest.TestCase):\n    def test_solve(self):\n        used_by_tests(1)\n"  # fmt: skip
    files = {"lib/__init__.py": "", "lib/core.py": "def used_by_tests(x):\n    return x\n", "tests/odeint_tests.py": suite,
             "tests/run_all.py": "import unittest\nfrom odeint_tests import *\n\nif __name__ == '__main__':\n    unittest.main()\n"}  # fmt: skip
    assert node_ids(tmp_path, files) == ["tests/odeint_tests.py::OdeTests::test_solve"]
    files["tests/test_core.py"] = "from lib.core import used_by_tests\n\n\ndef test_one():\n    used_by_tests(2)\n"
    assert node_ids(tmp_path / "mixed", files) == ["tests/test_core.py::test_one"]
