"""patch_source on odd candidates (issue 15, items 4 and 5): a function defined twice is
graded as Python binds it (the last definition); a deeply chained expression is a
recorded patch error, never a RecursionError that stops the evaluate job."""

from __future__ import annotations

import pytest

from dlbench.harness.patch import PatchError, patch_source

MODULE = "def scale(x):\n    return x\n\n\nclass Layer:\n    def forward(self, x):\n        return x\n"


def run(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<patched>", "exec"), namespace)  # noqa: S102 - our own test strings
    return namespace


def test_function_defined_twice_is_taken_at_its_last_definition() -> None:
    candidate = "def scale(x):\n    return 'first'\n\n\ndef scale(x):\n    return x * 2\n"
    assert run(candidate)["scale"](3) == 6  # what Python binds
    patched = patch_source(MODULE, "scale", candidate)
    assert run(patched)["scale"](3) == 6 and "first" not in patched


def test_method_defined_twice_in_its_class_is_taken_at_its_last_definition() -> None:
    candidate = (
        "class Layer:\n    def forward(self, x):\n        return 'first'\n\n"
        "    def forward(self, x):\n        return x + 1\n"
    )
    patched = patch_source(MODULE, "Layer.forward", candidate)
    assert run(patched)["Layer"]().forward(1) == 2 and "first" not in patched


def test_three_thousand_operand_chain_is_a_patch_error_not_a_crash() -> None:
    candidate = "def scale(x):\n    return " + " and ".join(["x"] * 3000) + "\n"
    compile(candidate, "<candidate>", "exec")  # legal Python
    with pytest.raises(PatchError, match="nested too deeply"):
        patch_source(MODULE, "scale", candidate)
