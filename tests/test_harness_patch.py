"""Patching candidates into modules (pure, inline strings)."""

from __future__ import annotations

import pytest

from dlbench.harness.patch import CandidateSyntaxError, PatchError, patch_source

MODULE = '''"""Ops module."""
from __future__ import annotations

import math

SCALE = 2


def helper(x):
    return x + 1


@cache_it
def target(x):
    """Old docstring."""
    return x


class Layer:
    """A layer."""

    def __init__(self, k):
        self.k = k

    @property
    def forward(self):
        return self.k

    def other(self):
        return 0


def after():
    return target(1)
'''


def exec_module(source: str) -> dict:
    namespace: dict = {"cache_it": lambda f: f}
    exec(compile(source, "<patched>", "exec"), namespace)  # noqa: S102 - our own inline test modules
    return namespace


def test_bare_function_replaces_target_and_keeps_decorators() -> None:
    out = patch_source(MODULE, "target", "def target(x):\n    return x * 3\n")
    assert "@cache_it\ndef target(x):\n    return x * 3" in out
    assert "Old docstring" not in out
    assert exec_module(out)["after"]() == 3


def test_candidate_decorators_win() -> None:
    out = patch_source(MODULE, "target", "@staticmethod\ndef target(x):\n    return x\n")
    assert "@staticmethod\ndef target" in out and "@cache_it" not in out


def test_imports_helpers_and_constants_come_along() -> None:
    cand = "import numpy as np\nfrom os import path\nimport math\nOFFSET = 5\n\ndef _twice(v):\n    return 2 * v\n\ndef target(x):\n    return _twice(x) + OFFSET\n"
    out = patch_source(MODULE, "target", cand)
    lines = out.splitlines()
    # imports after the docstring and the __future__ import, existing ones not repeated
    assert lines[1] == "from __future__ import annotations"
    assert lines[2:4] == ["import numpy as np", "from os import path"]
    assert out.count("import math") == 1
    assert out.index("def _twice") < out.index("def target") and "OFFSET = 5" in out


def test_extras_keep_their_order_and_example_calls_are_dropped() -> None:
    cand = "def _make():\n    return 7\n\n_K = _make()\n\nclass _Box:\n    pass\n\ndef target(x):\n    return x + _K\n\nprint(target(1))\n"
    out = patch_source(MODULE, "target", cand)
    assert out.index("def _make") < out.index("_K = _make()") < out.index("class _Box") < out.index("def target")
    assert "print(" not in out and exec_module(out)["target"](1) == 8


def test_helpers_the_module_defines_are_not_replaced() -> None:
    cand = "def helper(x):\n    return -1\n\nSCALE = 99\n\ndef target(x):\n    return helper(x) * SCALE\n"
    out = patch_source(MODULE, "target", cand)
    assert "return -1" not in out and "SCALE = 99" not in out
    assert exec_module(out)["target"](1) == 4


def test_method_from_bare_function_keeps_property() -> None:
    out = patch_source(MODULE, "Layer.forward", "def forward(self):\n    return self.k * 10\n")
    ns = exec_module(out)
    assert ns["Layer"](2).forward == 20
    assert "    @property\n    def forward(self):\n        return self.k * 10" in out


def test_method_taken_from_whole_class_with_helper_methods() -> None:
    cand = (
        "import math\n\nclass Layer:\n    def __init__(self, k):\n        self.k = -1\n\n"
        "    def _scale(self):\n        return 100\n\n    def forward(self):\n        return self.k * self._scale()\n"
    )
    out = patch_source(MODULE, "Layer.forward", cand)
    ns = exec_module(out)
    assert ns["Layer"](3).forward == 300  # the original __init__ stays
    assert "def _scale(self)" in out and ns["Layer"](3).other() == 0


def test_async_and_nested_class_paths() -> None:
    module = "class A:\n    class B:\n        async def run(self):\n            return 1\n"
    out = patch_source(module, "A.B.run", "async def run(self):\n    return 2\n")
    assert "async def run(self):\n            return 2" in out


def test_syntax_error_in_candidate() -> None:
    with pytest.raises(CandidateSyntaxError, match="not valid Python"):
        patch_source(MODULE, "target", "def target(x):\n    return (\n")


def test_candidate_without_the_function_is_a_patch_error() -> None:
    with pytest.raises(PatchError, match="no function or method named 'target'") as info:
        patch_source(MODULE, "target", "def something_else():\n    pass\n")
    assert not isinstance(info.value, CandidateSyntaxError)


def test_target_missing_in_module_is_a_patch_error() -> None:
    with pytest.raises(PatchError, match="not found"):
        patch_source(MODULE, "Layer.missing", "def missing(self):\n    pass\n")


def test_patched_module_must_compile() -> None:
    with pytest.raises(CandidateSyntaxError, match="does not compile"):
        patch_source(MODULE, "target", "def target(x, x):\n    return x\n")


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        ("def target(x):\n    return " + "(" * 2500 + "x\n", "too many nested parentheses"),  # segfaults libcst
        ("def target(x):\n    return " + "+".join(["x"] * 20000) + "\n", "RecursionError"),  # hangs libcst
        ("def target(x):\n    return '\udcff'\n", "surrogates not allowed"),  # UnicodeEncodeError in libcst
        ("x = " + "-" * 200000 + "1\n", "too large"),  # MemoryError in ast.parse
        ("x = " + "-" * 90000 + "1\n", "MemoryError"),
        ("def target(x):\n    return 1\n" + "#" * 100_001, "too large"),
    ],
)
def test_pathological_candidates_are_syntax_errors_not_crashes(candidate: str, message: str) -> None:
    with pytest.raises(CandidateSyntaxError, match=message):
        patch_source(MODULE, "target", candidate)


PROPERTY_MODULE = """\
class Dataset:
    @property
    def x(self):
        return self._x

    @x.setter
    def x(self, x_new):
        self._x = x_new
"""
SETTER = "@x.setter\ndef x(self, x_new):\n    self._x = list(x_new)\n"


def test_a_property_setter_task_replaces_the_setter_not_the_getter() -> None:
    """Getter and setter share a name: the task's line says which one is the task's."""
    patched = patch_source(PROPERTY_MODULE, "Dataset.x", SETTER, "m.py", line=6)
    namespace: dict = {}
    exec(compile(patched, "m.py", "exec"), namespace)
    data = namespace["Dataset"]()
    data.x = (1, 2)
    assert data.x == [1, 2] and patched.count("@property") == 1
    getter = "@property\ndef x(self):\n    return tuple(self._x)\n"
    assert (
        "return tuple(self._x)"
        in patch_source(PROPERTY_MODULE, "Dataset.x", getter, "m.py", line=2).split("@x.setter")[0]
    )
    assert patch_source(PROPERTY_MODULE, "Dataset.x", SETTER, "m.py").count("@property") == 1  # no line: the last one


FALLBACK_MODULE = """\
try:
    import fastlib

    class Kernel:
        def __call__(self, x):
            return fastlib.run(x)

except ImportError:
    fastlib = None

    class Kernel:
        def __call__(self, x):
            return x * 2

if fastlib is None:
    def scale(x):
        return x * 3
else:
    def scale(x):
        return fastlib.scale(x)
"""


def test_a_definition_inside_a_try_or_if_block_is_patched_where_it_is() -> None:
    """A fallback definition (in ``except ImportError:``, under ``if``) is a task like any
    other: the task's line picks the one of that name that is the task's, the other stays."""
    method = "def __call__(self, x):\n    return helper(x) + 1\n\n\ndef helper(x):\n    return x * 2\n"
    patched = patch_source(FALLBACK_MODULE, "Kernel.__call__", method, "m.py", line=12)
    assert "return fastlib.run(x)" in patched and "            return x * 2" not in patched
    assert patched.index("def helper") < patched.index("try:")  # its helper at module level, before the block
    namespace: dict = {}
    exec(compile(patched, "m.py", "exec"), namespace)
    assert namespace["Kernel"]()(3) == 7
    patched = patch_source(FALLBACK_MODULE, "scale", "def scale(x):\n    return x * 4\n", "m.py", line=17)
    assert "return fastlib.scale(x)" in patched
    namespace = {}
    exec(compile(patched, "m.py", "exec"), namespace)
    assert namespace["scale"](2) == 8
    in_else = patch_source(FALLBACK_MODULE, "scale", "def scale(x):\n    return x * 4\n", "m.py", line=20)
    assert "return x * 3" in in_else and "return fastlib.scale(x)" not in in_else
    unlined = patch_source(FALLBACK_MODULE, "scale", "def scale(x):\n    return x * 4\n")  # no line: the last
    assert "return x * 3" in unlined and "return fastlib.scale(x)" not in unlined
