"""What the host's grader and the code run in the container (supervisor, pytest plugin) agree on.

Plain Python (the standard library only): it ships into every project image beside the supervisor as
``dlbench_protocol.py`` (a name no project's module takes; ``code.support_files``), and the
host imports it as ``dlbench.harness.protocol``, so grading never imports pytest or the
in-container code.
"""

from __future__ import annotations

import posixpath
import random
import re

OWN_DIR = ".dlbench"  # in a candidate's copy: its TMPDIR, HOME and basetemp
# Protocols through which a class answers for numpy's or torch's operations on its objects:
# an ndarray subclass whose ``__array_ufunc__`` answers ``less_equal`` with True passes
# ``np.testing.assert_allclose`` with any values, a tensor subclass's ``__torch_function__``
# answering ``torch.allclose`` with True passes that (the screen refuses a candidate's class
# defining one, the plugin reports one a candidate's class statement makes).
OPERATION_PROTOCOLS = frozenset({"__array_ufunc__", "__array_function__", "__torch_function__", "__torch_dispatch__"})
# Words canary names are drawn from: plain test vocabulary, so a hook that spares or targets
# tests by name cannot tell a canary from the task's tests. Not the task's own words, nor
# words projects select by ("slow", "gpu", "onnx", "large"): a conftest that deselects or
# skips by name must not touch a canary.
WORDS = (
    "shape", "batch", "dtype", "output", "values", "basic", "default", "edge", "dims", "axis", "mask", "weights",
    "scale", "input", "forward", "result", "update", "call", "params", "config", "compute", "state", "init", "apply",
)  # fmt: skip
# pytest's default test module names: the canaries join the last such module a task's tests
# are in (a doctest's or a project-named module gets a module of their own).
TEST_MODULE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test)\.py$")
# One shape for both tests (only their data differ); a failure without a traceback to
# format or an assertion to explain, which would cost every candidate ~20 ms. pytest is
# imported in each body: appended to a project's module, the canaries rebind none of its names.
CANARY_BODY = """\


def {fail}():
    import pytest
    expected = {wrong!r}
    result = sorted(expected)
    if result != expected:
        pytest.fail(f"{{result}} != {{expected}}", pytrace=False)


def {ok}():
    import pytest
    expected = {right!r}
    result = sorted(expected)
    if result != expected:
        pytest.fail(f"{{result}} != {{expected}}", pytrace=False)
"""


def canary(nonce: str, tests: list[str]) -> tuple[str, str, str]:
    """(file, must-fail id, must-pass id) of one run's canary tests, drawn from ``nonce`` (the
    supervisor writes them with ``canary_source``; the host derives the same ids to grade them).

    The file is the last test module the task's tests are in, the canaries appended to it: they
    run last, under the conditions its tests run under (its conftests, its module's fixtures, a
    fixture keyed on the module's name: torchgeo's datasets conftest patches
    ``torchgeo.datasets.<the module's name>``), and a hook that singles out that module's tests
    singles out the canaries too. Otherwise a module of their own, named like tests, in the
    folder the task's files share."""
    draw = random.Random(nonce)
    stem = f"test_{draw.choice(WORDS)}_{draw.choice(WORDS)}{draw.randrange(2, 10)}"
    fail, ok = (
        f"test_{draw.choice(WORDS)}_{draw.choice(WORDS)}_{i}" for i in (draw.randrange(1, 5), draw.randrange(5, 9))
    )
    files = list(dict.fromkeys(t.split("::")[0] for t in tests))
    modules = [f for f in files if TEST_MODULE.search(f)]
    path = modules[-1] if modules else _own_module(files, stem)
    return path, f"{path}::{fail}", f"{path}::{ok}"


def _own_module(files: list[str], stem: str) -> str:
    """A new module in the folder all of ``files`` share: a broken conftest below it costs only
    the tests under it."""
    folders = {f.rpartition("/")[0] for f in files}
    folder = posixpath.commonpath(list(folders)) if folders and "" not in folders else ""
    return f"{folder}/{stem}.py" if folder else f"{stem}.py"


def canary_source(nonce: str, tests: list[str]) -> str:
    """The canaries' source, to append to their file: two tests shaped like a task's, one
    failing, one passing."""
    _, fail, ok = canary(nonce, tests)
    draw = random.Random(nonce + "/values")
    right = sorted(draw.sample(range(100), 4))
    return CANARY_BODY.format(fail=fail.rpartition("::")[2], ok=ok.rpartition("::")[2], wrong=right[::-1], right=right)


def selects(node_id: str, selected: list[str]) -> bool:
    """``node_id`` is a selected id, one of its parametrized cases, or inside a selected class."""
    return any(node_id == s or node_id.startswith((s + "[", s + "::")) for s in selected)
