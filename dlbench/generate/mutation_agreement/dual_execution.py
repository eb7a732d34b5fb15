"""Dual execution agreement (CodeT): pure functions over a pass matrix.

``matrix[i][j]`` says whether candidate ``i`` passed model test ``j``. Candidates without
code (``codes[i] is None``) are never grouped or chosen.

Rule ``dual_agreement`` (some candidate passes some test): candidates with identical pass
patterns form a group; a group scores ``size × tests passed``. Groups rank by score, then
tests passed, then size (all descending), then their first member's index (ascending);
the first member of the top group — the earliest candidate in input order, i.e. the
lowest variant, then the lowest sample — is chosen.

Rule ``code_agreement`` (no tests, or every candidate fails every test): the pass matrix
says nothing, so candidates with identical *normalised* code (parsed and unparsed: no
comments, no formatting, no docstrings; unparsable code compares as stripped text) form
groups; the largest group wins, ties to the earliest first member, whose first member is
chosen. Groups then carry ``tests_passed`` 0 and ``score`` = size.

Rule ``no_candidate``: no candidate has code; nothing is chosen.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from dlbench.parsing import Unparsable, parse_ast

DUAL = "dual_agreement"
CODE_NO_TESTS = "code_agreement (no model tests)"
CODE_ALL_FAILING = "code_agreement (every candidate fails every model test)"
NO_CANDIDATE = "no_candidate"


@dataclass(frozen=True)
class Group:
    members: tuple[int, ...]  # candidate indices, ascending
    tests_passed: int
    score: int

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class Choice:
    chosen: int | None
    rule: str
    groups: tuple[Group, ...]  # ranked, best first


def choose(matrix: Sequence[Sequence[bool]], codes: Sequence[str | None]) -> Choice:
    """The candidate chosen by dual execution agreement (see the module docstring)."""
    if len(matrix) != len(codes):
        raise ValueError(f"{len(matrix)} pass-matrix rows for {len(codes)} candidates")
    eligible = [i for i, code in enumerate(codes) if code is not None]
    if not eligible:
        return Choice(None, NO_CANDIDATE, ())
    n_tests = len(matrix[eligible[0]])
    if any(len(matrix[i]) != n_tests for i in eligible):
        raise ValueError("pass-matrix rows differ in length")
    if n_tests and any(any(matrix[i]) for i in eligible):
        groups = rank(pattern_groups(matrix, eligible))
        return Choice(groups[0].members[0], DUAL, tuple(groups))
    rule = CODE_NO_TESTS if not n_tests else CODE_ALL_FAILING
    groups = rank(code_groups(codes, eligible))
    return Choice(groups[0].members[0], rule, tuple(groups))


def pattern_groups(matrix: Sequence[Sequence[bool]], eligible: Sequence[int]) -> list[Group]:
    """Groups of identical pass patterns, scored size × tests passed."""
    by_pattern: dict[tuple[bool, ...], list[int]] = {}
    for i in eligible:
        by_pattern.setdefault(tuple(bool(x) for x in matrix[i]), []).append(i)
    return [Group(tuple(m), sum(p), len(m) * sum(p)) for p, m in by_pattern.items()]


def code_groups(codes: Sequence[str | None], eligible: Sequence[int]) -> list[Group]:
    """Groups of identical normalised code, scored by size."""
    by_code: dict[str, list[int]] = {}
    for i in eligible:
        by_code.setdefault(bare_code(codes[i] or ""), []).append(i)
    return [Group(tuple(m), 0, len(m)) for m in by_code.values()]


def rank(groups: Sequence[Group]) -> list[Group]:
    """Best first: score, tests passed, size (descending), first member (ascending)."""
    return sorted(groups, key=lambda g: (-g.score, -g.tests_passed, -g.size, g.members[0]))


def bare_code(code: str) -> str:
    """Code without comments, formatting or docstrings (the stripped text when it does not parse)."""
    try:
        tree = parse_ast(code)
    except Unparsable:
        return code.strip()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body:
            first = body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)
