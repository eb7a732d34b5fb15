"""Code statistics of ground-truth functions: lines of code, cyclomatic and cognitive complexity.

Each measure comes from a named, versioned tool, so a published figure says what made it
(``INSTRUMENTS``, written beside every table that shows them):

- lines of code: radon's source lines (``sloc``: neither blank nor comment-only);
- cyclomatic complexity: radon's McCabe number (``radon.complexity.cc_visit``), summed over
  the functions of the source;
- cognitive complexity: complexipy (``complexipy.code_complexity``; Rust, on PyPI), its
  implementation of SonarSource's definition (G. Ann Campbell, "Cognitive Complexity", 2018),
  summed over the functions and methods of the source. Its reading, which the tests pin:
  +1 for ``if``/``elif``/``else``, a conditional expression, ``for``/``while``, each
  ``except``, ``match``, each sequence of like boolean operators and a call of the function
  by its bare name; structures that nest (``if``, loops, ``except``, ``match``, a
  comprehension's ``for``) add their nesting level on top; a comprehension counts as a loop
  (+1 and nesting for each ``for``, +1 for each ``if``); ``break``/``continue``, ``try``,
  ``with``, a loop's ``else``, a lambda's body and decorators add nothing; ``self.f()``
  inside ``f`` is not counted as recursion.
"""

from __future__ import annotations

import ast
import logging
import textwrap
from importlib.metadata import version

import complexipy
from radon.complexity import cc_visit
from radon.raw import analyze

from dlbench.parsing import Unparsable, parse_ast

log = logging.getLogger(__name__)

RADON = f"radon {version('radon')}"
COGNITIVE_TOOL = f"complexipy {version('complexipy')}"
INSTRUMENTS = f"LOC: {RADON} (sloc); cyclomatic: {RADON} (McCabe); cognitive: {COGNITIVE_TOOL}"


def parse_function_source(source: str) -> ast.Module | None:
    """Parse a function's source as a module (methods arrive indented); ``None`` if invalid."""
    try:
        return parse_ast(textwrap.dedent(source))
    except Unparsable:
        return None


def lines_of_code(source: str) -> int | None:
    """Source lines that are neither blank nor comment-only (radon ``sloc``)."""
    if parse_function_source(source) is None:
        return None
    return analyze(textwrap.dedent(source)).sloc


def cyclomatic_complexity(source: str) -> int | None:
    """McCabe complexity of the top-level functions in ``source`` (summed), via radon."""
    if parse_function_source(source) is None:
        return None
    blocks = cc_visit(textwrap.dedent(source))
    return sum(block.complexity for block in blocks) if blocks else 1


def cognitive_complexity(source: str) -> int | None:
    """Cognitive complexity of the functions and methods in ``source`` (summed) by complexipy;
    ``None`` if Python cannot parse it (or complexipy's parser refuses what Python takes)."""
    if parse_function_source(source) is None:  # also guards complexipy from pathological nesting
        return None
    try:
        return complexipy.code_complexity(textwrap.dedent(source)).complexity
    except ValueError as exc:  # "Failed to parse code: ..."
        log.warning("%s: %s", COGNITIVE_TOOL, exc)
        return None
