"""Code statistics of ground truths: lines of code, cyclomatic and cognitive complexity."""

from __future__ import annotations

import textwrap

import pytest

from dlbench.report.stats import cognitive_complexity, cyclomatic_complexity, lines_of_code

# SonarSource's white-paper example, in Python (its labelled ``continue`` has no Python form)
SUM_OF_PRIMES = """
def sum_of_primes(limit):
    total = 0
    for i in range(1, limit + 1):      # +1
        for j in range(2, i):          # +2 (nesting 1)
            if i % j == 0:             # +3 (nesting 2)
                break
        total += i
    return total
"""

FLAT_CHAIN = """
def word(number):
    if number == 1:                    # +1
        return "one"
    elif number == 2:                  # +1
        return "a couple"
    else:                              # +1
        return "lots"
"""

MIXED = """
def f(x, items):
    try:
        if x and y and z or w:         # +1 if, +2 boolean sequences
            return [i for i in items]
    except (ValueError, KeyError):     # +1
        return f(x - 1, items)         # +1 recursion
    finally:
        pass
    with open(x) as fh:
        value = 1 if fh else 2         # +1 ternary (nesting 0)
    def inner(a):
        while a:                       # +2 (nested function: nesting 1)
            a -= 1
    return value
"""

METHOD = """
    def visit(self, node):
        if node is None:               # +1
            return 0
        return self.visit(node.left)   # +1 recursion through self
"""


@pytest.mark.parametrize(
    ("source", "expected"),
    [(SUM_OF_PRIMES, 6), (FLAT_CHAIN, 3), (MIXED, 8), (METHOD, 2), ("def g():\n    return 1\n", 0)],
)
def test_cognitive_complexity_follows_sonarsource_rules(source, expected):
    assert cognitive_complexity(source) == expected


def test_else_if_written_as_nested_if_nests():
    nested = textwrap.dedent("""
    def h(a, b):
        if a:              # +1
            pass
        else:              # +1
            if b:          # +2 (nesting 1)
                pass
    """)
    assert cognitive_complexity(nested) == 4


def test_invalid_source_has_no_measures():
    assert cognitive_complexity("def broken(:\n") is None
    assert cyclomatic_complexity("def broken(:\n") is None
    assert lines_of_code("def broken(:\n") is None


def test_radon_measures_of_a_function():
    assert cyclomatic_complexity(SUM_OF_PRIMES) == 4  # two loops, one if, plus one
    assert lines_of_code(SUM_OF_PRIMES) == 8
    assert cyclomatic_complexity(METHOD) == 2


def test_pathological_code_has_no_statistics():
    deep = "def f():\n    return " + "-" * 200_000 + "1\n"
    assert lines_of_code(deep) is None and cognitive_complexity(deep) is None
