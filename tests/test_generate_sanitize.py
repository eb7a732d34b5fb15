"""Code extraction from raw answers: every case with its expected status."""

from __future__ import annotations

import pytest

from dlbench.generate.sanitize import check_code, extract_code
from dlbench.records import GenStatus

FENCE = "```"


def block(code: str, tag: str = "python") -> str:
    return f"{FENCE}{tag}\n{code}{FENCE}\n"


def test_single_fenced_block():
    raw = "Sure!\n\n" + block("def f(x):\n    return x + 1\n") + "\nThis adds one."
    got = extract_code(raw, "f")
    assert got.status == GenStatus.OK and got.code == "def f(x):\n    return x + 1\n"


def test_chooses_the_block_defining_the_function_among_several():
    raw = (
        block("import numpy as np\n\ndef helper(a):\n    return a\n")
        + "and the function:\n"
        + block("def relu(x):\n    return np.maximum(x, 0)\n")
        + "Usage:\n"
        + block("print(relu(np.arange(3)))\n")
    )
    got = extract_code(raw, "relu")
    assert got.status == GenStatus.OK and got.code.startswith("def relu(x):")


def test_block_with_helpers_and_imports_is_kept_whole():
    code = "import math\n\n\ndef _sq(v):\n    return v * v\n\n\ndef norm(xs):\n    return math.sqrt(sum(_sq(x) for x in xs))\n"
    got = extract_code(block(code), "norm")
    assert got.status == GenStatus.OK and got.code == code


def test_whole_class_returned_for_a_method_is_kept():
    code = "class Layer:\n    def __init__(self):\n        self.w = 1\n\n    def forward(self, x):\n        return self.w * x\n"
    got = extract_code(block(code), "forward")
    assert got.status == GenStatus.OK and got.code == code


def test_indented_method_block_is_dedented():
    got = extract_code(block("    def forward(self, x):\n        return x\n"), "forward")
    assert got.status == GenStatus.OK and got.code == "def forward(self, x):\n    return x\n"


def test_unfenced_code_after_prose():
    raw = "Here it is:\ndef f(x):\n    return 2 * x\n\nThat doubles x."
    got = extract_code(raw, "f")
    assert got.status == GenStatus.OK and got.code == "def f(x):\n    return 2 * x\n"


def test_unfenced_code_only():
    got = extract_code("def f():\n    return 1", "f")
    assert got.status == GenStatus.OK and got.code == "def f():\n    return 1\n"


def test_prose_only_is_no_code():
    got = extract_code("I am sorry, I cannot help with that request.", "f")
    assert got.status == GenStatus.NO_CODE and got.code is None


def test_empty_answer_is_no_code():
    assert extract_code("", "f").status == GenStatus.NO_CODE
    assert extract_code(None, "f").status == GenStatus.NO_CODE


def test_code_for_another_function_is_no_code():
    got = extract_code(block("def g():\n    return 1\n"), "f")
    assert got.status == GenStatus.NO_CODE and "`f`" in got.detail


def test_unclosed_fence_is_truncated():
    raw = "Here:\n```python\ndef f(x):\n    if x > 0:\n        return ["
    got = extract_code(raw, "f")
    assert got.status == GenStatus.TRUNCATED and got.code.startswith("def f(x):")


def test_length_finish_reason_without_parsable_code_is_truncated():
    raw = "def f(x):\n    return (x +"
    assert extract_code(raw, "f", finish_reason="length").status == GenStatus.TRUNCATED


def test_unclosed_fence_that_still_parses_is_ok():
    got = extract_code("```python\ndef f():\n    return 1\n", "f")
    assert got.status == GenStatus.OK


def test_thinking_text_is_dropped():
    raw = "<think>Maybe def f(x): return x? No, ```python\ndef f(): pass``` is wrong.</think>\n" + block(
        "def f(x):\n    return -x\n"
    )
    got = extract_code(raw, "f")
    assert got.status == GenStatus.OK and got.code == "def f(x):\n    return -x\n"


@pytest.mark.parametrize(("finish", "status"), [("length", GenStatus.TRUNCATED), ("stop", GenStatus.NO_CODE)])
def test_answer_ending_inside_thinking(finish, status):
    assert extract_code("<think>let me consider def f(", "f", finish_reason=finish).status == status


def test_syntax_error_is_recorded_with_the_code():
    raw = block("def f(x)\n    return x\n")
    got = extract_code(raw, "f")
    assert got.status == GenStatus.SYNTAX_ERROR and got.code.startswith("def f(x)") and "SyntaxError" in got.detail


def test_non_python_blocks_are_ignored():
    raw = block("pip install numpy\n", "bash") + block("def f():\n    return 0\n")
    assert extract_code(raw, "f").code == "def f():\n    return 0\n"


def test_last_defining_block_wins_when_revised():
    raw = block("def f():\n    return 1\n") + "Actually, better:\n" + block("def f():\n    return 2\n")
    assert extract_code(raw, "f").code == "def f():\n    return 2\n"


def test_check_code_for_predictions():
    assert check_code("def f():\n    return 1\n", "f").status == GenStatus.OK
    assert check_code("def f(:\n", "f").status == GenStatus.SYNTAX_ERROR
    assert check_code("x = 1\n", "f").status == GenStatus.NO_CODE
    assert check_code("  ", "f").status == GenStatus.NO_CODE


@pytest.mark.parametrize(
    "body",
    ["x = " + "(" * 2500, "x = " + "-" * 200_000 + "1", "x = '\udcff'"],
    ids=["unclosed", "minuses", "surrogate"],
)
@pytest.mark.parametrize("fenced", [True, False])
def test_pathological_answers_are_syntax_errors(body, fenced):
    code = f"def f(a):\n    {body}\n"
    raw = f"```python\n{code}```\n" if fenced else code
    result = extract_code(raw, "f")
    assert result.status is GenStatus.SYNTAX_ERROR and result.detail
    assert check_code(code, "f").status is GenStatus.SYNTAX_ERROR


def test_oversized_answer_is_a_syntax_error_without_parsing():
    from dlbench.generate.sanitize import MAX_ANSWER_CHARS

    raw = "def f(a):\n" + "    a += 1\n" * (MAX_ANSWER_CHARS // 10)
    result = extract_code(raw, "f")
    assert result.status is GenStatus.SYNTAX_ERROR and "characters" in result.detail
    assert check_code(raw, "f").status is GenStatus.SYNTAX_ERROR
