"""The dual execution agreement rule on hand-built pass matrices."""

from __future__ import annotations

import pytest

from dlbench.generate.mutation_agreement.dual_execution import (
    CODE_ALL_FAILING,
    CODE_NO_TESTS,
    DUAL,
    NO_CANDIDATE,
    Group,
    bare_code,
    choose,
    rank,
)

T, F = True, False
CODE = ["def f(x):\n    return x\n"] * 8


def test_largest_agreeing_group_beats_a_single_candidate_passing_more():
    matrix = [[T, F, F], [T, T, T], [T, F, F], [T, F, F], [T, T, F]]
    choice = choose(matrix, CODE[:5])
    assert choice.rule == DUAL
    # groups: {0,2,3} 3 × 1 = 3; {1} 1 × 3 = 3; {4} 1 × 2 = 2 → tie 3–3 goes to more tests passed
    assert choice.chosen == 1
    assert [(g.members, g.score) for g in choice.groups] == [((1,), 3), ((0, 2, 3), 3), ((4,), 2)]


def test_score_is_size_times_tests_passed():
    matrix = [[T, T, F], [T, T, F], [F, F, T], [T, T, F]]
    choice = choose(matrix, CODE[:4])
    assert choice.chosen == 0 and choice.groups[0] == Group((0, 1, 3), 2, 6)


def test_full_tie_goes_to_the_earliest_candidate():
    matrix = [[F, T], [T, F]]  # two groups of one, one test each
    assert choose(matrix, CODE[:2]).chosen == 0
    assert choose(matrix[::-1], CODE[:2]).chosen == 0


def test_tie_on_score_and_tests_goes_to_the_larger_group():
    groups = [Group((0,), 2, 4), Group((1, 2), 1, 4), Group((3, 4), 2, 4)]
    assert [g.members for g in rank(groups)] == [(3, 4), (0,), (1, 2)]


def test_candidates_without_code_are_never_chosen():
    matrix = [[T, T], [T, F], [T, F]]
    choice = choose(matrix, [None, CODE[0], CODE[0]])
    assert choice.chosen == 1 and all(0 not in g.members for g in choice.groups)


def test_no_candidate_with_code():
    assert choose([], []).rule == NO_CANDIDATE
    choice = choose([[T], [F]], [None, None])
    assert choice.chosen is None and choice.rule == NO_CANDIDATE and choice.groups == ()


def test_single_candidate():
    assert choose([[F, T]], CODE[:1]).chosen == 0
    assert choose([[F, F]], CODE[:1]).rule == CODE_ALL_FAILING
    assert choose([[]], CODE[:1]).rule == CODE_NO_TESTS


def test_no_tests_the_largest_group_of_equal_normalised_code_wins():
    codes = [
        "def f(x):\n    return x + 1\n",
        "def f(x):\n    return x * 2\n",
        "def f(x):\n    # doubled\n    return x*2\n",
        'def f(x):\n    """Double."""\n    return (x * 2)\n',
    ]
    choice = choose([[], [], [], []], codes)
    assert choice.rule == CODE_NO_TESTS and choice.chosen == 1
    assert [g.members for g in choice.groups] == [(1, 2, 3), (0,)]


def test_all_failing_falls_back_to_code_agreement():
    codes = ["def f():\n    return 1\n", "def f():\n    return 2\n", "def f():\n    return 2\n"]
    choice = choose([[F, F], [F, F], [F, F]], codes)
    assert choice.rule == CODE_ALL_FAILING and choice.chosen == 1


def test_code_agreement_ties_go_to_the_earliest_group():
    codes = ["def f():\n    return 1\n", "def f():\n    return 2\n"]
    assert choose([[], []], codes).chosen == 0


def test_unparsable_code_compares_as_text():
    assert bare_code("def f(:\n  pass  \n") == "def f(:\n  pass"
    assert bare_code("x = 1  # one\n") == bare_code("x=1")


def test_bad_matrices_are_refused():
    with pytest.raises(ValueError, match="rows for"):
        choose([[T]], CODE[:2])
    with pytest.raises(ValueError, match="differ in length"):
        choose([[T], [T, F]], CODE[:2])
