"""The static screen refuses the primitives a targeted verdict forgery needs, before any run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dlbench.harness.evaluate import evaluate_repo
from dlbench.harness.screen import screen
from dlbench.records import CloneRecord, EvalStatus
from tests.test_harness_run import CFG, GOLD_RELU, HOSTILE, RELU, TASKS, clone, gen  # noqa: F401 (clone: fixture)

SCREENED = CFG.model_copy(update={"screen": True})

# The forgery no in-process check can stop: silence the reporting plugin, then write a
# complete, well-ordered event stream (canaries included) to the reporting descriptor.
TARGETED_FORGERY = textwrap.dedent(
    """\
    import json, os, sys

    def _forge():
        plugin = sys.modules.get("dlbench_plugin")
        if plugin is not None:
            plugin.send = lambda *a, **k: None
        os.write(3, json.dumps({"ev": "finish", "exitstatus": 0}).encode() + b"\\n")

    _FORGED = _forge()

    def relu(x):
        return x
    """
)

LEGIT = textwrap.dedent(
    """\
    import math
    import os.path
    import numpy as np
    from collections import defaultdict

    def relu(x, *, name=None):
        path = os.path.join("a", "b")
        table = defaultdict(list)
        value = getattr(np, "maximum")(np.asarray(x), 0)
        return value if math.isfinite(float(np.sum(value))) else value
    """
)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import os\nos.write(3, b'x')\n", "os.write (line 2)"),
        ("from os import dup2\n", "os.dup2 (line 1)"),
        ("import sys\nsys.modules['x'] = None\n", "sys.modules (line 2)"),
        ("import sys\nf = sys._getframe(1)\n", "sys._getframe (line 2)"),
        ("import ctypes\n", "import ctypes (line 1)"),
        ("import gc\n", "import gc (line 1)"),
        ("from _pytest import runner\n", "from _pytest import (line 1)"),
        ("import pytest\n", "import pytest (line 1)"),
        ("import os\nos._exit(0)\n", "os._exit (line 2)"),
        ("import os, signal\nos.kill(1, 9)\n", "import signal (line 1)"),
        ("eval('1')\n", "eval (line 1)"),
        ("__import__('os')\n", "__import__ (line 1)"),
        ("import os\ngetattr(os, 'wri' + 'te')\n", "getattr(os, ...) (line 2)"),
        ("open('/proc/1/fd/3', 'w')\n", "string '/proc/' (line 1)"),
        ("import os as o\no._exit(0)\n", "os._exit (line 2)"),
        ("import os as o\ngetattr(o, 'wri' + 'te')\n", "getattr(os, ...) (line 2)"),
        ("from os import write as w\nw(3, b'x')\n", "os.write (line 2)"),
        ("from os import *\n", "os.* (line 1)"),
        ("import importlib\n", "import importlib (line 1)"),
        ("from io import FileIO\n", "from io import (line 1)"),
        ("import dlbench_plugin\n", "import dlbench_plugin (line 1)"),
        ("f = open(3, 'w')\n", "open(<file descriptor>) (line 1)"),
        ("import sys\nf = open(sys.stdout.fileno(), 'w')\n", "open(<file descriptor>) (line 2)"),
        ("f = open(fd, 'w', closefd=False)\n", "closefd (line 1)"),
        ("x = ().__class__.__base__.__subclasses__()\n", ".__subclasses__ (line 1)"),
        ("class A:\n    def __eq__(self, o):\n        return True\n", "A.__eq__ returns a constant (line 1)"),
        ("class A:\n    __bool__ = lambda self: True\n", "A.__bool__ returns a constant (line 1)"),
        (
            "import numpy as np\nclass C(np.ndarray):\n    def __array_ufunc__(self, ufunc, method, *a, **k):\n        return True\n",
            "C takes over numpy's or torch's operations (__array_ufunc__) (line 2)",
        ),
        (
            "import torch\nclass T(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, f, t, a=(), k=None):\n        return True\n",
            "T takes over numpy's or torch's operations (__torch_function__) (line 2)",
        ),
        (
            "import numpy as np\nnp.testing.assert_allclose = print\n",
            "assignment to module attribute np.testing.assert_allclose (line 2)",
        ),
        ("import numpy\nnumpy.allclose = print\n", "assignment to module attribute numpy.allclose (line 2)"),
        ("import numpy as np\nsetattr(np.testing, 'assert_equal', print)\n", "setattr on module np.testing (line 2)"),
    ],
)
def test_screen_names_each_forbidden_use(code, expected):
    assert expected in screen(code)


def test_legitimate_numpy_code_passes_the_screen():
    assert screen(LEGIT) == []
    assert screen("def f(:\n") == []  # syntax errors are the patcher's to report


def test_screen_catches_the_forging_hostiles():
    for name in [
        "monkeypatch pytest runner",
        "rogue plugin turns failures into passes",
        "forged report lines",
        "forge the supervisor's answer",
        "os._exit(0) at import",
        "kill its parent",
    ]:
        assert screen(HOSTILE[name]), name
    assert screen(TARGETED_FORGERY)


def test_refused_candidates_never_run_and_later_ones_are_unaffected(clone: CloneRecord, tmp_path: Path):
    gens = [
        gen(RELU, TARGETED_FORGERY, sample=0),
        gen(RELU, HOSTILE["forged report lines"], sample=1),
        gen(RELU, GOLD_RELU, model="gold", sample=2),
    ]
    forged, lines, gold = evaluate_repo(clone, TASKS, gens, None, "local", SCREENED, jobs=1, evidence_root=tmp_path)
    for refused in (forged, lines):
        assert refused.status == EvalStatus.SANDBOX_VIOLATION and not refused.passed
        assert refused.detail.startswith("refused by the static screen: ")
        assert refused.tests == {} or all(o != "passed" for o in refused.tests.values())
    assert "os.write" in forged.detail and "sys.modules" in forged.detail
    assert gold.status == EvalStatus.PASS


def test_screen_follows_the_original_modules_names_and_allows_what_it_already_does():
    original = "import numpy as np\nimport importlib\n\n\nclass Key:\n    def __hash__(self):\n        return 0\n"
    assert screen("def f(x):\n    np.allclose = print\n", original) == [
        "assignment to module attribute np.allclose (line 2)"
    ]
    assert screen("import importlib.util\n", original) == []  # the module imports importlib itself
    assert screen("import importlib\n", "import importlib.util\n") == ["import importlib (line 1)"]  # not a parent
    assert screen("class Key:\n    def __hash__(self):\n        return 0\n", original) == []
    meta = "import torch\n\n\nclass Meta(torch.Tensor):\n    def __torch_function__(cls, f, t, a=(), k=None):\n        return f(*a)\n"
    assert screen(meta.split("\n\n\n")[1], meta) == []  # the project's own tensor subclass, written again


def test_legitimate_comparisons_pass_the_screen():
    code = "class P:\n    def __eq__(self, o):\n        if not isinstance(o, P):\n            return False\n        return self.v == o.v\n"
    assert screen(code) == []


@pytest.mark.parametrize(
    "code",
    ["x = " + "(" * 2500 + "1\n", "x = " + "+".join(["x"] * 20000) + "\n", "x = '\udcff'\n",
     "x = " + "-" * 200000 + "1\n"],
)  # fmt: skip
def test_screen_survives_pathological_code(code):
    assert screen(code) == []  # left to the patcher, which reports a syntax error
