"""Code statistics of ground-truth functions: lines of code, cyclomatic and cognitive complexity.

Lines of code are radon's source lines (``sloc``: neither blank nor comment-only) and
cyclomatic complexity is radon's McCabe number (``radon.complexity.cc_visit``).

Cognitive complexity follows SonarSource's definition (G. Ann Campbell, "Cognitive
Complexity", 2018), written here over Python's ``ast``:

- +1 for each ``if``, ``elif``, ``else``, conditional expression, ``for``, ``while``,
  ``except`` clause and ``match``; the ``if``, conditional expression, loops, ``except`` and
  ``match`` (not ``elif``/``else``) add the current nesting level on top;
- the nesting level rises inside those structures and inside nested functions, lambdas and
  classes; ``try``, ``finally`` and ``with`` add nothing and do not nest;
- +1 for each sequence of like boolean operators: ``a and b and c`` is 1, ``a and b or c``
  is 2 (a ``BoolOp`` counts unless its parent is a ``BoolOp`` with the same operator);
- +1 for each recursive call (a call to the function's own name, or ``self.<name>`` /
  ``cls.<name>`` in a method);
- ``break``/``continue`` carry no label in Python and so add nothing; comprehensions add
  nothing (our choice: they read as one expression).
"""

from __future__ import annotations

import ast
import textwrap

from radon.complexity import cc_visit
from radon.raw import analyze

from dlbench.parsing import Unparsable, parse_ast

_NESTING_STATEMENTS = (ast.For, ast.AsyncFor, ast.While)


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
    """SonarSource cognitive complexity of the functions in ``source`` (summed); ``None`` if invalid."""
    tree = parse_function_source(source)
    if tree is None:
        return None
    return sum(
        _Cognitive(fn.name).function(fn) for fn in tree.body if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
    )


class _Cognitive:
    """Scores one top-level function; ``name`` identifies recursive calls."""

    def __init__(self, name: str):
        self.name = name

    def function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
        return self.block(fn.body, 0) + sum(self.expr(d, 0) for d in fn.decorator_list)

    def block(self, statements: list[ast.stmt], nesting: int) -> int:
        return sum(self.stmt(s, nesting) for s in statements)

    def stmt(self, node: ast.stmt, nesting: int) -> int:
        if isinstance(node, ast.If):
            return self.if_chain(node, nesting)
        if isinstance(node, _NESTING_STATEMENTS):
            head = node.iter if isinstance(node, ast.For | ast.AsyncFor) else node.test
            return (
                1
                + nesting
                + self.expr(head, nesting)
                + self.block(node.body, nesting + 1)
                + self.else_block(node.orelse, nesting)
            )
        if isinstance(node, ast.Try | ast.TryStar):
            handlers = sum(1 + nesting + self.block(h.body, nesting + 1) for h in node.handlers)
            rest = self.block(node.body, nesting) + self.block(node.finalbody, nesting)
            return handlers + rest + self.else_block(node.orelse, nesting)
        if isinstance(node, ast.Match):
            cases = sum(self.block(c.body, nesting + 1) + self.expr(c.guard, nesting + 1) for c in node.cases)
            return 1 + nesting + self.expr(node.subject, nesting) + cases
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return self.block(node.body, nesting + 1)
        return self.children(node, nesting)

    def if_chain(self, node: ast.If, nesting: int, is_elif: bool = False) -> int:
        score = (1 if is_elif else 1 + nesting) + self.expr(node.test, nesting) + self.block(node.body, nesting + 1)
        orelse = node.orelse
        # ``elif`` is an If alone in orelse starting at the same column as its ``if``
        if len(orelse) == 1 and isinstance(orelse[0], ast.If) and orelse[0].col_offset == node.col_offset:
            return score + self.if_chain(orelse[0], nesting, is_elif=True)
        return score + self.else_block(orelse, nesting)

    def else_block(self, orelse: list[ast.stmt], nesting: int) -> int:
        return 1 + self.block(orelse, nesting + 1) if orelse else 0

    def expr(self, node: ast.AST | None, nesting: int, parent: ast.AST | None = None) -> int:
        if node is None:
            return 0
        score = 0
        if isinstance(node, ast.BoolOp) and not (isinstance(parent, ast.BoolOp) and type(parent.op) is type(node.op)):
            score += 1
        if isinstance(node, ast.IfExp):
            score += 1 + nesting
            return score + sum(self.expr(part, nesting + 1, node) for part in (node.test, node.body, node.orelse))
        if isinstance(node, ast.Lambda):
            return self.expr(node.body, nesting + 1, node)
        if isinstance(node, ast.Call) and self.is_recursive(node.func):
            score += 1
        return score + sum(self.expr(child, nesting, node) for child in ast.iter_child_nodes(node))

    def children(self, node: ast.AST, nesting: int) -> int:
        """Score a simple statement: only the expressions inside it can add."""
        return sum(
            self.stmt(child, nesting) if isinstance(child, ast.stmt) else self.expr(child, nesting, node)
            for child in ast.iter_child_nodes(node)
        )

    def is_recursive(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Name):
            return func.id == self.name
        return (
            isinstance(func, ast.Attribute)
            and func.attr == self.name
            and isinstance(func.value, ast.Name)
            and func.value.id in {"self", "cls"}
        )
