"""Tested, not just reached (``mine.tested_by``) and helpers of functions under test (``mine.reach``)."""

from __future__ import annotations

import pytest

from tests.test_mine_callgraph import calls_of, mine_tree

LIB = {
    "lib/__init__.py": "from .model import Model\n",
    "lib/model.py": """
        from ._helpers import _normalize, scale


        class Base:
            def __init__(self, n):
                self.n = _normalize(n)


        class Model(Base):
            def __init__(self, n):
                super().__init__(n)
                self.rate = scale(n)

            def fit(self, x):
                return self._step(x)

            def _step(self, x):
                return scale(x)
    """,
    "lib/_helpers.py": """
        import numpy as np


        def _normalize(n):
            return np.abs(n)


        def scale(x):
            return _normalize(x) * 2
    """,
    "tests/conftest.py": """
        import pytest
        from lib import Model

        @pytest.fixture
        def model() -> Model:
            return Model(3)
    """,
    "tests/test_model.py": """
        import unittest

        from lib import Model


        def test_fit(model):
            model.fit(1)


        def test_fit_again(model):
            model.fit(2)


        def test_builds_its_own():
            Model(2).fit(3)


        class TestSetUp(unittest.TestCase):
            def setUp(self):
                self.model = Model(4)

            def test_fit(self):
                self.model.fit(4)
    """,
}
FIT = "lib/model.py:Model.fit"
INIT = "lib/model.py:Model.__init__"


def test_constructor_reached_only_through_fixtures_is_not_tested(tmp_path):
    calls = calls_of(mine_tree(tmp_path, LIB, min_tests=1, tested_by="called"))
    assert calls["tests/test_model.py::test_fit"] == [FIT]
    assert calls["tests/test_model.py::TestSetUp::test_fit"] == [FIT]  # setUp builds it
    assert calls["tests/test_model.py::test_builds_its_own"] == [INIT, FIT]


def test_focused_drops_constructors_of_objects_built_to_call_something_else(tmp_path):
    calls = calls_of(mine_tree(tmp_path, LIB, min_tests=1, tested_by="focused"))
    assert calls["tests/test_model.py::test_builds_its_own"] == [FIT]
    files = dict(LIB)
    files["tests/test_init.py"] = """
        from lib import Model

        from lib._helpers import scale

        def test_init_alone():
            assert Model(2).rate == 4

        def test_built_for_a_function():
            scale(Model(2))
    """
    calls = calls_of(mine_tree(tmp_path / "alone", files, min_tests=1, tested_by="focused"))
    assert calls["tests/test_init.py::test_init_alone"] == [INIT]
    assert calls["tests/test_init.py::test_built_for_a_function"] == ["lib/_helpers.py:scale"]


def test_reached_counts_fixtures_and_setup(tmp_path):
    calls = calls_of(mine_tree(tmp_path, LIB, min_tests=1, tested_by="reached"))
    assert calls["tests/test_model.py::test_fit"] == [INIT, FIT]
    assert calls["tests/test_model.py::TestSetUp::test_fit"] == [INIT, FIT]


@pytest.mark.parametrize(("tested_by", "tasks"), [("focused", [FIT]), ("called", [FIT]), ("reached", [INIT, FIT])])
def test_min_tests_applies_to_the_counted_tests(tmp_path, tested_by, tasks):
    result = mine_tree(tmp_path, LIB, min_tests=3, tested_by=tested_by)
    assert sorted(f"{f.path}:{f.qualname}" for f in result.functions) == sorted(tasks)


def test_transitive_reach_adds_library_helpers(tmp_path):
    direct = calls_of(mine_tree(tmp_path / "direct", LIB, min_tests=1, tested_by="called"))
    transitive = calls_of(mine_tree(tmp_path / "transitive", LIB, min_tests=1, tested_by="called", reach="transitive"))
    helpers = ["lib/_helpers.py:_normalize", "lib/_helpers.py:scale"]
    # fit → self._step → scale → _normalize (numpy's abs leaves the repository).
    assert transitive["tests/test_model.py::test_fit"] == [*helpers, "lib/model.py:Model._step", FIT]
    # The constructor → super().__init__ → Base.__init__ → _normalize; and scale.
    assert transitive["tests/test_model.py::test_builds_its_own"] == [
        *helpers,
        "lib/model.py:Base.__init__",
        INIT,
        "lib/model.py:Model._step",
        FIT,
    ]
    assert all(set(direct[node]) <= set(calls) for node, calls in transitive.items())


def test_max_tests_keeps_the_tests_that_call_a_function_most_directly(tmp_path):
    """``scale`` runs in every test, but only test_scale_* call it: with ``max_tests`` they are
    kept, the one reaching fewest other functions first; the rest reach it through ``fit``."""
    files = dict(LIB)
    files["tests/test_scale.py"] = """
        from lib import Model
        from lib._helpers import _normalize, scale

        def test_scale_alone():
            scale(1)

        def test_scale_among_others():
            _normalize(scale(1))
    """
    options = {"tested_by": "called", "reach": "transitive"}
    everything = mine_tree(tmp_path / "all", files, min_tests=1, **options)
    capped = mine_tree(tmp_path / "capped", files, min_tests=1, max_tests=1, **options)
    two = mine_tree(tmp_path / "two", files, min_tests=1, max_tests=2, **options)

    def tests(result, qualname):
        return next(f.tests for f in result.functions if f.qualname == qualname)

    assert len(tests(everything, "scale")) == 6  # four through fit or the constructor
    assert tests(capped, "scale") == ["tests/test_scale.py::test_scale_alone"]
    assert tests(two, "scale") == [
        "tests/test_scale.py::test_scale_alone",
        "tests/test_scale.py::test_scale_among_others",
    ]
    assert tests(capped, "Model.fit") == ["tests/test_model.py::TestSetUp::test_fit"]  # ties: by node id
    assert {c.node_id: c.direct for c in capped.calls}["tests/test_scale.py::test_scale_alone"] == [
        "lib/_helpers.py:scale"
    ]
