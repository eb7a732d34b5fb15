"""Test files and test cases as pytest collects them; symbol-table naming and resolution."""

from __future__ import annotations

from dlbench import records
from dlbench.config import MineConfig
from dlbench.mine.cache import load_repo
from dlbench.mine.callgraph import build_calls
from dlbench.mine.symbols import Symbol, list_python_files
from dlbench.mine.tests import find_test_cases, is_test_support
from tests.test_mine_callgraph import write_tree


def load(tmp_path, files):
    root = write_tree(tmp_path / "repo", files)
    return load_repo(root, MineConfig(), tmp_path / "cache")


def test_test_cases_follow_pytest_collection(tmp_path):
    repo = load(
        tmp_path,
        {
            "tests/test_a.py": """
                import unittest
                import pytest

                def test_top():
                    pass

                def helper_test():
                    pass

                @pytest.mark.parametrize("x", [1, 2])
                def test_param(x):
                    pass

                class TestPlain:
                    def test_m(self):
                        pass

                    def check(self):
                        pass

                class TestWithInit:
                    def __init__(self):
                        pass

                    def test_ignored(self):
                        pass

                class Base(unittest.TestCase):
                    def test_base(self):
                        pass

                class Derived(Base):
                    def test_own(self):
                        pass

                class TestDisabled:
                    __test__ = False

                    def test_no(self):
                        pass

                @pytest.mark.parametrize("y", [1])
                class TestParamClass:
                    def test_p(self, y):
                        pass
            """,
            "pkg/ops_test.py": "def test_suffix():\n    pass\n",
            "pkg/ops.py": "def test_like_name():\n    pass\n",
            "tests/helpers.py": "def test_not_collected():\n    pass\n",
        },
    )
    cases = {c.node_id: c for c in find_test_cases(repo.table, "acme/lib")}
    assert sorted(cases) == [
        "pkg/ops_test.py::test_suffix",
        "tests/test_a.py::Base::test_base",
        "tests/test_a.py::Derived::test_base",
        "tests/test_a.py::Derived::test_own",
        "tests/test_a.py::TestParamClass::test_p",
        "tests/test_a.py::TestPlain::test_m",
        "tests/test_a.py::test_param",
        "tests/test_a.py::test_top",
    ]
    assert cases["tests/test_a.py::test_param"].parametrized
    assert cases["tests/test_a.py::TestParamClass::test_p"].parametrized
    assert not cases["tests/test_a.py::test_top"].parametrized
    assert cases["tests/test_a.py::Derived::test_base"].kind == records.TestKind.UNITTEST_METHOD
    assert cases["tests/test_a.py::TestPlain::test_m"].kind == records.TestKind.PYTEST_METHOD
    assert cases["tests/test_a.py::test_top"].kind == records.TestKind.PYTEST_FUNCTION
    assert cases["tests/test_a.py::test_top"].line == 4
    assert cases["tests/test_a.py::test_top"].repo == "acme/lib"


def test_tests_the_project_always_skips_keep_their_reason_and_reach_nothing(tmp_path):
    """As ignite's Visdom module, Laplace's and small-text's marked tests: a skip that holds
    whatever the environment; ``skipif`` and a guarded module-level skip decide when run."""
    repo = load(
        tmp_path,
        {
            "calc/ops.py": "def relu(x):\n    return x\n",
            "tests/test_marks.py": """
                import sys
                import unittest
                from unittest import skip

                import pytest
                from pytest import mark

                from calc.ops import relu

                @pytest.mark.skip(reason="not yet supported")
                def test_marked():
                    relu(1)

                @mark.skip
                def test_bare_mark():
                    relu(1)

                @pytest.mark.skipif(sys.platform == "win32", reason="posix only")
                def test_conditional():
                    relu(1)

                @skip("flaky upstream")
                class SkippedBase(unittest.TestCase):
                    def test_base(self):
                        relu(1)

                class Derived(SkippedBase):
                    def test_own(self):
                        relu(1)

                class TestMethods:
                    @unittest.skip("apex issue")
                    def test_method(self):
                        relu(1)

                    def test_runs(self):
                        relu(1)
            """,
            "tests/test_module_mark.py": """
                import pytest
                from calc.ops import relu

                pytestmark = [
                    pytest.mark.distributed,
                    pytest.mark.skip(reason="Visdom is unmaintained"),
                ]

                def test_logger():
                    relu(1)
            """,
            "tests/test_module_gone.py": """
                import pytest
                from calc.ops import relu

                pytest.skip("moved to the benchmarks", allow_module_level=True)

                def test_gone():
                    relu(1)
            """,
            "tests/test_module_skip.py": """
                import sys
                import pytest
                from calc.ops import relu

                if sys.platform == "darwin":
                    pytest.skip("Skip if on MacOS", allow_module_level=True)

                def test_timing():
                    relu(1)
            """,
        },
    )
    cases = find_test_cases(repo.table, "acme/lib")
    skipped = {c.node_id: c.skipped for c in cases}
    assert skipped == {
        "tests/test_marks.py::test_marked": "not yet supported",
        "tests/test_marks.py::test_bare_mark": "no reason given",
        "tests/test_marks.py::test_conditional": None,
        "tests/test_marks.py::SkippedBase::test_base": "flaky upstream",
        "tests/test_marks.py::Derived::test_base": "flaky upstream",
        "tests/test_marks.py::Derived::test_own": "flaky upstream",
        "tests/test_marks.py::TestMethods::test_method": "apex issue",
        "tests/test_marks.py::TestMethods::test_runs": None,
        "tests/test_module_mark.py::test_logger": "Visdom is unmaintained",
        "tests/test_module_gone.py::test_gone": "moved to the benchmarks",
        "tests/test_module_skip.py::test_timing": None,
    }
    calls = {c.node_id: c.calls for c in build_calls(repo, cases, "acme/lib")}
    assert {node for node, reached in calls.items() if reached} == {
        node for node, reason in skipped.items() if reason is None
    }
    assert calls["tests/test_marks.py::TestMethods::test_runs"] == ["calc/ops.py:relu"]


def test_test_support_files(tmp_path):
    repo = load(
        tmp_path,
        {
            "lib/core.py": "def f():\n    pass\n",
            "lib/testing.py": "import pytest\n",
            "tests/data/make.py": "def g():\n    pass\n",
            "conftest.py": "",
        },
    )
    support = {p for p, s in repo.table.summaries.items() if is_test_support(p, s)}
    assert support == {"lib/testing.py", "tests/data/make.py", "conftest.py"}


def test_module_names_and_resolution(tmp_path):
    repo = load(
        tmp_path,
        {
            "src/pkg/__init__.py": "from .a import *\nfrom .b import Thing as Alias\n__all__ = ['f']\n",
            "src/pkg/a.py": "from .inner.c import f\n",
            "src/pkg/b.py": "class Thing(Root):\n    pass\nfrom pkg.root import Root\n",
            "src/pkg/root.py": "class Root:\n    def go(self):\n        pass\n",
            "src/pkg/inner/__init__.py": "",
            "src/pkg/inner/c.py": "def f():\n    pass\n",
            "tests/test_x.py": "import pkg\nimport random\n",
            "tools/random.py": "def random():\n    pass\n",
        },
    )
    table = repo.table
    assert table.module_name["src/pkg/inner/c.py"] == "pkg.inner.c"
    assert table.module_name["tests/test_x.py"] == "test_x"
    # Star import, then a re-export in a.py, followed transitively.
    assert table.resolve("tests/test_x.py", "pkg.f") == Symbol("function", "src/pkg/inner/c.py", "f")
    # An alias of a class, and a method inherited from a base imported after the class.
    assert table.resolve("tests/test_x.py", "pkg.Alias.go") == Symbol("function", "src/pkg/root.py", "Root.go")
    # A top-level folder module named like the stdlib does not shadow it.
    assert table.resolve("tests/test_x.py", "random.random") is None
    assert table.resolve("tests/test_x.py", "pkg.missing") is None


def test_listed_files_skip_tool_and_build_folders(tmp_path):
    root = write_tree(
        tmp_path / "repo",
        {
            "pkg/env/step.py": "",
            "pkg/build/make.py": "",
            "build/lib/pkg/copy.py": "",
            ".tox/py/x.py": "",
            "venv/lib/y.py": "",
            "pkg/__pycache__/z.py": "",
            "x.egg-info/w.py": "",
        },
    )
    assert list_python_files(root) == ["pkg/build/make.py", "pkg/env/step.py"]
