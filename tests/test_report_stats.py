"""Code statistics of ground truths: lines of code, cyclomatic and cognitive complexity.

The cognitive figures are complexipy's; each case is scored by hand from the rules in
``dlbench/report/stats.py`` (SonarSource's definition as complexipy reads it), so a release
of complexipy that reads the rules differently fails here rather than moving the tables."""

from __future__ import annotations

import textwrap

import pytest

from dlbench.report.stats import (
    COGNITIVE_TOOL,
    INSTRUMENTS,
    cognitive_complexity,
    cyclomatic_complexity,
    lines_of_code,
)

# SonarSource's white-paper example, in Python (its labelled ``continue`` has no Python form)
SUM_OF_PRIMES = """
def sum_of_primes(limit):
    total = 0
    for i in range(1, limit + 1):      # +1
        for j in range(2, i):          # +2 (nesting 1)
            if i % j == 0:             # +3 (nesting 2)
                break                  # (no label: nothing)
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

# A comprehension reads as the loop it is: each ``for`` +1 plus its nesting, each ``if`` +1.
COMPREHENSION = """
def positives(rows):
    return [x for row in rows for x in row if x > 0]   # +1 for, +1 for, +1 if
"""

COMPREHENSION_IN_LOOP = """
def row_sums(rows, keep):
    total = 0
    for row in rows:                                  # +1
        total += sum(x for x in row if keep(x))       # +2 for (nesting 1), +1 if
    return total
"""

MIXED = """
def f(x, items):
    try:
        if x and y and z or w:         # +1 if, +2 boolean sequences (and, or)
            return [i for i in items]  # +2 comprehension's for (nesting 1)
    except (ValueError, KeyError):     # +1
        return f(x - 1, items)         # +1 recursion
    finally:
        pass
    with open(x) as fh:
        value = 1 if fh else 2         # +1 conditional expression (nesting 0)
    def inner(a):
        while a:                       # +2 (nested function: nesting 1)
            a -= 1
    return value
"""

# A class's methods are scored; a call through ``self`` is not counted as recursion.
CLASS = """
class Visitor:
    def visit(self, node):
        if node is None:               # +1
            return 0
        return self.visit(node.left)
    def leaves(self, nodes):
        for node in nodes:             # +1
            if not node.children:      # +2 (nesting 1)
                yield node
"""


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (SUM_OF_PRIMES, 6),
        (FLAT_CHAIN, 3),
        (COMPREHENSION, 3),
        (COMPREHENSION_IN_LOOP, 4),
        (MIXED, 10),
        (CLASS, 4),
        ("def g():\n    return 1\n", 0),
    ],
    ids=["white-paper", "flat-chain", "comprehension", "comprehension-in-loop", "mixed", "class", "straight"],
)
def test_cognitive_complexity_by_hand(source, expected):
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


def test_an_indented_method_is_scored_as_written():
    method = textwrap.indent(CLASS.split("class Visitor:\n")[1], "    ")  # as mining hands a method over
    assert cognitive_complexity(method) == 4


def test_the_instruments_are_named_with_their_versions():
    assert COGNITIVE_TOOL.startswith("complexipy ") and COGNITIVE_TOOL.split()[1][0].isdigit()
    assert COGNITIVE_TOOL in INSTRUMENTS and "radon " in INSTRUMENTS


def test_invalid_source_has_no_measures():
    assert cognitive_complexity("def broken(:\n") is None
    assert cyclomatic_complexity("def broken(:\n") is None
    assert lines_of_code("def broken(:\n") is None


def test_radon_measures_of_a_function():
    assert cyclomatic_complexity(SUM_OF_PRIMES) == 4  # two loops, one if, plus one
    assert lines_of_code(SUM_OF_PRIMES) == 8


def test_pathological_code_has_no_statistics():
    deep = "def f():\n    return " + "-" * 200_000 + "1\n"
    assert lines_of_code(deep) is None and cognitive_complexity(deep) is None
    nested = "def f():\n    return " + "-" * 500 + "1\n"  # Python takes it, complexipy's parser refuses it
    assert lines_of_code(nested) == 2 and cognitive_complexity(nested) is None
