"""What the host's grader and the code run in the container (supervisor, pytest plugin) agree on.

Plain Python (the standard library only): it ships into every project image beside the supervisor as
``dlbench_protocol.py`` (a name no project's module takes; ``code.support_files``), and the
host imports it as ``dlbench.harness.protocol``, so grading never imports pytest or the
in-container code.
"""

from __future__ import annotations

import posixpath
import random

OWN_DIR = ".dlbench"  # in a candidate's copy: its TMPDIR, HOME and basetemp
# Words canary names are drawn from: plain test vocabulary, so a hook that spares or targets
# tests by name cannot tell a canary from the task's tests. Not the task's own words, nor
# words projects select by ("slow", "gpu", "onnx", "large"): a conftest that deselects or
# skips by name must not touch a canary.
WORDS = (
    "shape", "batch", "dtype", "output", "values", "basic", "default", "edge", "dims", "axis", "mask", "weights",
    "scale", "input", "forward", "result", "update", "call", "params", "config", "compute", "state", "init", "apply",
)  # fmt: skip
# One shape for both tests (only their data differ); a failure without a traceback to
# format or an assertion to explain, which would cost every candidate ~20 ms.
CANARY_BODY = """\
import pytest


def {fail}():
    expected = {wrong!r}
    result = sorted(expected)
    if result != expected:
        pytest.fail(f"{{result}} != {{expected}}", pytrace=False)


def {ok}():
    expected = {right!r}
    result = sorted(expected)
    if result != expected:
        pytest.fail(f"{{result}} != {{expected}}", pytrace=False)
"""


def canary(nonce: str, tests: list[str]) -> tuple[str, str, str]:
    """(file, must-fail id, must-pass id) of one run's canary tests, drawn from ``nonce``: a
    module in the folder the task's test files share, named like tests (the supervisor
    writes it with ``canary_source``; the host derives the same ids to grade them)."""
    draw = random.Random(nonce)
    # the folder all of them share: a broken conftest below it costs only the tests under it
    folders = {t.split("::")[0].rpartition("/")[0] for t in tests}
    folder = posixpath.commonpath(list(folders)) if folders and "" not in folders else ""
    stem = f"test_{draw.choice(WORDS)}_{draw.choice(WORDS)}{draw.randrange(2, 10)}"
    fail, ok = (
        f"test_{draw.choice(WORDS)}_{draw.choice(WORDS)}_{i}" for i in (draw.randrange(1, 5), draw.randrange(5, 9))
    )
    path = f"{folder}/{stem}.py" if folder else f"{stem}.py"
    return path, f"{path}::{fail}", f"{path}::{ok}"


def canary_source(nonce: str, tests: list[str]) -> str:
    """The canary module: two tests shaped like a task's, one failing, one passing."""
    _, fail, ok = canary(nonce, tests)
    draw = random.Random(nonce + "/values")
    right = sorted(draw.sample(range(100), 4))
    return CANARY_BODY.format(fail=fail.rpartition("::")[2], ok=ok.rpartition("::")[2], wrong=right[::-1], right=right)


def selects(node_id: str, selected: list[str]) -> bool:
    """``node_id`` is a selected id, one of its parametrized cases, or inside a selected class."""
    return any(node_id == s or node_id.startswith((s + "[", s + "::")) for s in selected)
