"""Automatic failure taxonomy of failing candidates.

Every failing candidate gets one fine-grained kind, decided from its evaluation status, its
per-test outcomes and the text of its first exception (``exception``; then ``detail``, except
for status ``fail``, whose detail only lists the failing node ids):

========================  =====================================================  ===========
kind                      evidence                                               top level
========================  =====================================================  ===========
``syntax_error``          status ``syntax_error``; SyntaxError/IndentationError  Syntax
``hallucinated_object``   NameError, ImportError, ModuleNotFoundError,           Runtime
                          AttributeError on a *module* ("module 'x' has no
                          attribute")
``wrong_attribute``       any other AttributeError (on an object or class)       Runtime
``wrong_input_type``      TypeError                                              Runtime
``shape_mismatch``        ValueError/IndexError/RuntimeError whose message       Runtime
                          speaks of shape, dimension, size, broadcast or axis
                          (numpy broadcast errors, torch size mismatches);
                          numpy AxisError
``other_runtime``         any other exception raised by the candidate            Runtime
``wrong_result``          AssertionError, "DID NOT RAISE" (pytest.raises), or    Functional
                          tests failed without an exception
``missing_code``          status ``no_code``; NotImplementedError                Functional
``timeout``               status ``timeout``; TimeoutError                       Performance
``infrastructure``        status ``image_error``/``infra_error``/``api_error``   Infrastructure
``other``                 anything else (sandbox violation, patch error without  Other
                          a syntax problem, missing test reports)
========================  =====================================================  ===========

Top-level categories. The paper groups the bugs of LLM-generated DL code in a taxonomy
whose leaves are the kinds above (syntax errors, hallucinated APIs, wrong attributes, wrong
input types, shape mismatches, wrong results, performance, missing code). Its exact
top-level labels could not be checked offline, so the top level here is the common split of
code-generation bugs into Syntax, Runtime and Functional bugs, with timeouts kept apart as
Performance, plus two groups that are not model bugs: Infrastructure (our harness or image
failed; reported apart, never blamed on a model) and Other. ``DL_SPECIFIC`` marks the kinds
that are specific to deep-learning code (shape/dimension mismatch; wrong input type, e.g. a
tensor of the wrong kind or dtype). The mapping is the one table ``TOP_LEVEL``: change it there.
"""

from __future__ import annotations

import re

SYNTAX_ERROR = "syntax_error"
HALLUCINATED_OBJECT = "hallucinated_object"
WRONG_ATTRIBUTE = "wrong_attribute"
WRONG_INPUT_TYPE = "wrong_input_type"
SHAPE_MISMATCH = "shape_mismatch"
OTHER_RUNTIME = "other_runtime"
WRONG_RESULT = "wrong_result"
MISSING_CODE = "missing_code"
TIMEOUT = "timeout"
INFRASTRUCTURE = "infrastructure"
OTHER = "other"

TOP_LEVEL: dict[str, str] = {
    SYNTAX_ERROR: "Syntax",
    HALLUCINATED_OBJECT: "Runtime",
    WRONG_ATTRIBUTE: "Runtime",
    WRONG_INPUT_TYPE: "Runtime",
    SHAPE_MISMATCH: "Runtime",
    OTHER_RUNTIME: "Runtime",
    WRONG_RESULT: "Functional",
    MISSING_CODE: "Functional",
    TIMEOUT: "Performance",
    INFRASTRUCTURE: "Infrastructure",
    OTHER: "Other",
}
KINDS = list(TOP_LEVEL)
DL_SPECIFIC = frozenset({SHAPE_MISMATCH, WRONG_INPUT_TYPE})

_STATUS_KIND = {
    "syntax_error": SYNTAX_ERROR,
    "no_code": MISSING_CODE,
    "timeout": TIMEOUT,
    "image_error": INFRASTRUCTURE,
    "infra_error": INFRASTRUCTURE,
    "api_error": INFRASTRUCTURE,
    "sandbox_violation": OTHER,
}
# "E   numpy.core._exceptions.SomeError: msg" or "torch.nn.modules.module.ModuleAttributeError"
_EXCEPTION = re.compile(r"(?<![\w.])((?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*(?:Error|Exception|Exit)))\b(?::\s*(.*))?")
_SHAPE_WORDS = re.compile(
    r"shape|dimension|\bdims?\b|\bndim|broadcast|\baxis\b|size mismatch|sizes? of tensors?|must match the size"
    r"|mat\d? and mat\d?|size \d+ is different|expected .*size|out of bounds for (?:axis|dimension)",
    re.IGNORECASE,
)
_NOT_RAISED = re.compile(r"\bDID NOT RAISE\b")  # pytest.raises saw no exception: the behaviour is wrong
_BARE_ASSERT = re.compile(r"^\s*(?:E\s+)?assert\b", re.MULTILINE)  # pytest's rewritten assert, no class name
_MODULE_ATTRIBUTE = re.compile(r"module '[\w.]+' has no attribute")
_NAME_KINDS = {
    "SyntaxError": SYNTAX_ERROR,
    "IndentationError": SYNTAX_ERROR,
    "TabError": SYNTAX_ERROR,
    "NameError": HALLUCINATED_OBJECT,
    "ImportError": HALLUCINATED_OBJECT,
    "ModuleNotFoundError": HALLUCINATED_OBJECT,
    "TypeError": WRONG_INPUT_TYPE,
    "AssertionError": WRONG_RESULT,
    "NotImplementedError": MISSING_CODE,
    "TimeoutError": TIMEOUT,
    "AxisError": SHAPE_MISMATCH,  # numpy: an axis beyond the array's dimensions
}


def exception_name(text: str | None) -> tuple[str, str] | None:
    """First exception class named in ``text`` (last dotted part) and its message, if any."""
    if not text:
        return None
    match = _EXCEPTION.search(text)
    if match is None:
        return None
    return match.group(2), (match.group(3) or "").strip()


def kind_of_exception(name: str, message: str) -> str:
    """Fine-grained kind of one exception raised while the task's tests ran."""
    if name == "AttributeError":
        return HALLUCINATED_OBJECT if _MODULE_ATTRIBUTE.search(message) else WRONG_ATTRIBUTE
    if name in _NAME_KINDS:
        return _NAME_KINDS[name]
    if name in {"ValueError", "IndexError", "RuntimeError"} and _SHAPE_WORDS.search(message):
        return SHAPE_MISMATCH
    return OTHER_RUNTIME


def classify(status: str, tests: dict[str, str], exception: str | None, detail: str | None = None) -> str:
    """Fine-grained kind of one failing candidate (see the module docstring)."""
    if status in _STATUS_KIND:
        return _STATUS_KIND[status]
    # a failing run's detail only lists failing node ids (which may contain "Error"): not evidence
    texts = (exception,) if status == "fail" else (exception, detail)
    for text in texts:
        if text and _NOT_RAISED.search(text):
            return WRONG_RESULT
        found = exception_name(text)
        if found is not None:
            return kind_of_exception(*found)
        if text and _BARE_ASSERT.search(text):
            return WRONG_RESULT
    if status == "patch_error":
        return OTHER
    if any(outcome == "failed" for outcome in tests.values()):
        return WRONG_RESULT  # a failed assertion whose text was not kept
    return OTHER


def top_level(kind: str) -> str:
    """The paper-level category of a fine-grained kind."""
    return TOP_LEVEL[kind]
