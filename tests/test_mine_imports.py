"""Name resolution in Python's import order: a package's own bindings before its submodules."""

from __future__ import annotations

from dlbench.mine.symbols import Symbol
from tests.test_mine_callgraph import calls_of, mine_tree
from tests.test_mine_tests import load

# ``filters`` re-exports functions under their submodules' names (kornia's layout).
SHADOWED = {
    "kor/__init__.py": """
        from . import filters
        from . import losses
    """,
    "kor/filters/__init__.py": """
        from .canny import canny
        from .sobel import sobel as sobel
        from .blur import *
    """,
    "kor/filters/canny.py": """
        def canny(x):
            return x
    """,
    "kor/filters/sobel.py": """
        def sobel(x):
            return x
    """,
    "kor/filters/blur.py": """
        __all__ = ["box_blur"]

        def box_blur(x):
            return x

        def median_blur(x):
            return x

        def _private(x):
            return x
    """,
    "kor/losses/__init__.py": "from .total_variation import total_variation\n",
    "kor/losses/total_variation.py": """
        def total_variation(x):
            return x
    """,
    "kor/losses/other.py": """
        def other(x):
            return x
    """,
}


def test_reexported_function_shadows_its_submodule(tmp_path):
    table = load(tmp_path, SHADOWED).table
    assert table.resolve_global("kor.filters.canny") == Symbol("function", "kor/filters/canny.py", "canny")
    assert table.resolve_global("kor.losses.total_variation") == Symbol(
        "function", "kor/losses/total_variation.py", "total_variation"
    )
    # Not bound by the package's ``__init__``: the submodule.
    assert table.resolve_global("kor.losses.other") == Symbol("module", "kor/losses/other.py")
    assert table.resolve_global("kor.losses.other.other") == Symbol("function", "kor/losses/other.py", "other")


def test_star_imports_follow_all(tmp_path):
    table = load(tmp_path, SHADOWED).table
    assert table.resolve_global("kor.filters.box_blur") == Symbol("function", "kor/filters/blur.py", "box_blur")
    assert table.resolve_global("kor.filters.median_blur") is None  # not in ``__all__``


def test_tests_calling_shadowing_reexports_reach_the_function(tmp_path):
    files = dict(SHADOWED)
    files["tests/test_filters.py"] = """
        import kor
        import kor.filters as KF
        from kor.filters import canny, sobel
        from kor.losses import total_variation

        def test_from_import():
            canny(1)
            sobel(1)

        def test_package_attribute():
            kor.losses.total_variation(1)
            KF.canny(1)

        def test_reexport():
            total_variation(1)
    """
    calls = calls_of(mine_tree(tmp_path, files, min_tests=1))
    assert calls["tests/test_filters.py::test_from_import"] == [
        "kor/filters/canny.py:canny",
        "kor/filters/sobel.py:sobel",
    ]
    assert calls["tests/test_filters.py::test_package_attribute"] == [
        "kor/filters/canny.py:canny",
        "kor/losses/total_variation.py:total_variation",
    ]
    assert calls["tests/test_filters.py::test_reexport"] == ["kor/losses/total_variation.py:total_variation"]


def test_name_bound_to_what_a_guarded_import_factory_returns(tmp_path):
    # cleanlab's ``Datalab = _datalab_import_factory()``: the factory imports the class
    # inside a try block and returns it (a stand-in when an optional dependency is missing).
    files = {
        "lab/__init__.py": """
            class Unavailable:
                def __init__(self, message):
                    self.message = message

            def _lab_factory():
                try:
                    from .core import Lab as _Lab
                    return _Lab
                except ImportError:
                    return Unavailable("missing")

            def _made():
                return Unavailable("x")

            Lab = _lab_factory()
            made = _made()
        """,
        "lab/core.py": """
            class Lab:
                def __init__(self, data):
                    self.data = data

                def find(self):
                    return 1
        """,
        "tests/test_lab.py": """
            from lab import Lab, made

            def test_lab():
                lab = Lab(data=[])
                lab.find()

            def test_instance_is_no_class():
                made.message
        """,
    }
    calls = calls_of(mine_tree(tmp_path, files))
    assert calls["tests/test_lab.py::test_lab"] == ["lab/core.py:Lab.__init__", "lab/core.py:Lab.find"]
    assert calls["tests/test_lab.py::test_instance_is_no_class"] == []
