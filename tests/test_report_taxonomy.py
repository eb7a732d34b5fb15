"""Failure taxonomy: pure classification of inline exception strings and statuses."""

from __future__ import annotations

import pytest

from dlbench.report import taxonomy as tx

FAILED = {"tests/test_m.py::test_a": "failed"}


@pytest.mark.parametrize(
    ("exception", "kind"),
    [
        ("SyntaxError: invalid syntax (model.py, line 3)", tx.SYNTAX_ERROR),
        ("IndentationError: unexpected indent", tx.SYNTAX_ERROR),
        ("NameError: name 'conv2d' is not defined", tx.HALLUCINATED_OBJECT),
        ("ModuleNotFoundError: No module named 'torchvision'", tx.HALLUCINATED_OBJECT),
        ("ImportError: cannot import name 'fast_resize' from 'visionkit.ops'", tx.HALLUCINATED_OBJECT),
        ("AttributeError: module 'numpy' has no attribute 'softmax'", tx.HALLUCINATED_OBJECT),
        ("AttributeError: 'Tensor' object has no attribute 'numpy_'", tx.WRONG_ATTRIBUTE),
        ("AttributeError: type object 'Layer' has no attribute 'build'", tx.WRONG_ATTRIBUTE),
        ("TypeError: forward() takes 2 positional arguments but 3 were given", tx.WRONG_INPUT_TYPE),
        ("ValueError: operands could not be broadcast together with shapes (3,4) (5,)", tx.SHAPE_MISMATCH),
        ("ValueError: shapes (2,3) and (2,3) not aligned: 3 (dim 1) != 2 (dim 0)", tx.SHAPE_MISMATCH),
        ("IndexError: index 5 is out of bounds for axis 0 with size 3", tx.SHAPE_MISMATCH),
        ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)", tx.SHAPE_MISMATCH),
        (
            "RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
            tx.SHAPE_MISMATCH,
        ),
        ("ValueError: learning rate must be positive", tx.OTHER_RUNTIME),
        ("IndexError: list index out of range", tx.OTHER_RUNTIME),
        ("ZeroDivisionError: division by zero", tx.OTHER_RUNTIME),
        ("AssertionError: assert array([1, 2]) == array([1, 3])", tx.WRONG_RESULT),
        ("E       assert 0.5 == 0.25", tx.WRONG_RESULT),
        ("Failed: DID NOT RAISE <class 'ValueError'>", tx.WRONG_RESULT),
        ("numpy.exceptions.AxisError: axis 2 is out of bounds for array of dimension 2", tx.SHAPE_MISMATCH),
        ("ValueError: matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core", tx.SHAPE_MISMATCH),
        ("NotImplementedError", tx.MISSING_CODE),
        ("TimeoutError: step took too long", tx.TIMEOUT),
        ("E   numpy.core._exceptions._UFuncNoLoopError: ufunc 'add' did not contain a loop", tx.OTHER_RUNTIME),
    ],
)
def test_exception_text_decides_the_kind(exception, kind):
    assert tx.classify("fail", FAILED, exception) == kind


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        ("syntax_error", tx.SYNTAX_ERROR),
        ("no_code", tx.MISSING_CODE),
        ("timeout", tx.TIMEOUT),
        ("infra_error", tx.INFRASTRUCTURE),
        ("image_error", tx.INFRASTRUCTURE),
        ("sandbox_violation", tx.OTHER),
    ],
)
def test_status_decides_before_the_exception(status, kind):
    assert tx.classify(status, {}, "AssertionError: assert 1 == 2") == kind


def test_detail_is_read_when_the_exception_is_missing():
    assert tx.classify("error", {}, None, "collection failed: E   TypeError: bad operand") == tx.WRONG_INPUT_TYPE


def test_detail_of_a_failing_run_lists_node_ids_and_is_not_read_for_exceptions():
    detail = "tests/test_errors.py::test_raises_ValueError: failed"
    assert (
        tx.classify("fail", {"tests/test_errors.py::test_raises_ValueError": "failed"}, None, detail) == tx.WRONG_RESULT
    )


def test_failed_tests_without_exception_text_are_wrong_results_and_nothing_is_other():
    assert tx.classify("fail", FAILED, None) == tx.WRONG_RESULT
    assert tx.classify("fail", {"t::a": "missing"}, None) == tx.OTHER
    assert tx.classify("patch_error", {}, "function 'f' not found in candidate") == tx.OTHER
    assert tx.classify("patch_error", {}, "SyntaxError: unexpected EOF") == tx.SYNTAX_ERROR


def test_every_kind_has_a_top_level_category():
    assert {tx.top_level(k) for k in tx.KINDS} == {
        "Syntax",
        "Runtime",
        "Functional",
        "Performance",
        "Infrastructure",
        "Other",
    }
    assert tx.top_level(tx.SHAPE_MISMATCH) == "Runtime" and tx.SHAPE_MISMATCH in tx.DL_SPECIFIC


def test_exception_name_takes_the_last_dotted_part():
    assert tx.exception_name("torch.nn.modules.module.ModuleAttributeError: x") == ("ModuleAttributeError", "x")
    assert tx.exception_name("all good") is None
    assert tx.exception_name(None) is None
