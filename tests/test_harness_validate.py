"""Task validation from gold and null evaluations (pure)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dlbench.config import EvaluateConfig
from dlbench.harness.testset import (
    failing_every_run,
    gold_test_sets,
    noticing,
    passes_on,
    sample_task_ids,
    scaled_timeouts,
    within_budget,
)
from dlbench.harness.validate import validate_tasks, validation_table
from dlbench.records import BenchmarkTask, EvalStatus, Evaluation, TestOutcome
from dlbench.store import write_jsonl


def task(name: str) -> BenchmarkTask:
    return BenchmarkTask(
        task_id=f"o__r:m.py:{name}", repo="o/r", sha="s", path="m.py", function=name, class_name=None, signature="",
        prompt="", ground_truth="", tests=["t.py::test"], stage=None, task=None, data=None, first_added=None,
        last_modified=None, qualname=name, slug="o__r", start_line=1, end_line=2,
    )  # fmt: skip


def ev(name: str, model: str, status: EvalStatus, run: int = 0, exception: str | None = None) -> Evaluation:
    outcome = TestOutcome.PASSED if status == EvalStatus.PASS else TestOutcome.FAILED
    return Evaluation(
        task_id=f"o__r:m.py:{name}", model=model, technique="reference", run=run, status=status,
        passed=status == EvalStatus.PASS, tests={"t.py::test": outcome}, duration_s=0.1,
        detail="pip failed" if status == EvalStatus.IMAGE_ERROR else None, exception=exception,
        causes={} if outcome == TestOutcome.PASSED else {"t.py::test": exception or "assert 1 == 2"},
    )  # fmt: skip


P, F = EvalStatus.PASS, EvalStatus.FAIL
CASES = {
    "ok": ([P, P], [F], True, None),
    "image": ([EvalStatus.IMAGE_ERROR], [EvalStatus.IMAGE_ERROR], False, "image: pip failed"),
    "goldfails": ([F, F], [F], False, "gold fails: fail: t.py::test: KeyError: 'x'"),
    "flakytest": ([P, F], [F], False, "too few tests: 0 left, mine.min_tests is 1 (t.py::test: flaky: passed 1/2"),
    "flaky": ([P, EvalStatus.TIMEOUT], [F], False, "flaky: gold passed 1/2 runs (timeout"),
    "nullpasses": ([P, P], [P], False, "null passes"),
    "nogold": ([], [F], False, "no gold"),
    "nonull": ([P], [], False, "no null"),
}


def table() -> pd.DataFrame:
    tasks = [task(name) for name in CASES]
    gold = [
        ev(n, "gold", s, r, "KeyError: 'x'" if s == F else None)
        for n, (g, _, _, _) in CASES.items()
        for r, s in enumerate(g)
    ]
    null = [ev(n, "null", s) for n, (_, nl, _, _) in CASES.items() for s in nl]
    return validation_table(tasks, gold, null)


def test_every_reason_in_order() -> None:
    rows = table().set_index("task_id")
    for name, (_, _, usable, reason) in CASES.items():
        row = rows.loc[f"o__r:m.py:{name}"]
        assert bool(row["usable"]) is usable, name
        assert pd.isna(row["reason"]) if reason is None else str(row["reason"]).startswith(reason), (
            name,
            row["reason"],
        )
    assert rows.loc["o__r:m.py:flaky", "gold_passes"] == 1 and rows.loc["o__r:m.py:flaky", "gold_runs"] == 2


def test_validate_tasks_writes_csv(tmp_path: Path) -> None:
    bench, gold, null = tmp_path / "b.jsonl", tmp_path / "g.jsonl", tmp_path / "n.jsonl"
    write_jsonl(bench, [task("ok"), task("nullpasses")])
    write_jsonl(gold, [ev("ok", "gold", P), ev("nullpasses", "gold", P)])
    write_jsonl(null, [ev("ok", "null", F), ev("nullpasses", "null", P)])
    validate_tasks(bench, [gold], [null], tmp_path / "validation.csv")
    frame = pd.read_csv(tmp_path / "validation.csv")
    assert frame["usable"].tolist() == [True, False]
    assert frame.columns[:4].tolist() == ["task_id", "repo", "usable", "reason"]


def test_evaluation_refuses_passed_contradicting_its_status() -> None:
    with pytest.raises(ValueError, match="contradicts status"):
        Evaluation.model_validate(ev("x", "gold", F).model_dump() | {"passed": True})
    with pytest.raises(ValueError, match="contradicts status"):
        Evaluation.model_validate(ev("x", "gold", P).model_dump() | {"passed": False})


# One task, four tests, as gold's runs show them.
GOLD_SHOWS = {
    "t.py::test_ok": (TestOutcome.PASSED, None),
    "t.py::test_gpu": (TestOutcome.SKIPPED, "skipped: Skipped: needs CUDA"),
    "t.py::test_dynamo": (TestOutcome.DESELECTED, "deselected by the project's configuration (conftest or addopts)"),
    "t.py::test_download": (TestOutcome.FAILED, "needs network: Temporary failure in name resolution"),
    "t.py::test_removed": (TestOutcome.MISSING, "not found by pytest (no such test in the collected modules)"),
}


def task_of(tests: list[str]) -> BenchmarkTask:
    return task("four").model_copy(update={"tests": tests})


def shown(model: str, outcomes: dict[str, tuple[TestOutcome, str | None]], run: int = 0) -> Evaluation:
    passed = all(o == TestOutcome.PASSED for o, _ in outcomes.values())
    status = EvalStatus.PASS if passed else EvalStatus.FAIL
    return Evaluation(
        task_id="o__r:m.py:four", model=model, technique="reference", run=run, status=status, passed=passed,
        tests={t: o for t, (o, _) in outcomes.items()}, duration_s=0.1,
        causes={t: c for t, (_, c) in outcomes.items() if c},
    )  # fmt: skip


def null_of(tests: list[str]) -> Evaluation:
    return shown("null", {t: (TestOutcome.FAILED, "NotImplementedError") for t in tests})


def test_gold_decides_the_test_set_and_every_dropped_test_says_why() -> None:
    tests = list(GOLD_SHOWS)
    row = validation_table([task_of(tests)], [shown("gold", GOLD_SHOWS, r) for r in (0, 1)], [null_of(tests)]).iloc[0]
    assert bool(row["usable"]) and row["tests"] == 5 and row["tests_kept"] == 1
    assert "t.py::test_gpu: skipped: Skipped: needs CUDA" in row["dropped"]
    assert "t.py::test_removed: not found by pytest" in row["dropped"]
    assert "t.py::test_dynamo: deselected by the project's configuration" in row["dropped"]
    assert "t.py::test_download: needs network" in row["dropped"]


def test_a_test_the_session_never_reached_is_not_dropped() -> None:
    """Missing because the run stopped (a crash) is a failure of that run, unlike a test
    pytest collected everything without finding."""
    stopped = {
        "t.py::test_ok": (TestOutcome.PASSED, None),
        "t.py::test_long": (TestOutcome.MISSING, "the test session ended early"),
    }
    row = validation_table([task_of(list(stopped))], [shown("gold", stopped)], [null_of(list(stopped))]).iloc[0]
    assert not row["usable"] and "t.py::test_long" not in str(row["dropped"])


def timed_out(outcomes: dict[str, tuple[TestOutcome, str | None]], run: int = 0) -> Evaluation:
    return shown("gold", outcomes, run).model_copy(
        update={"status": EvalStatus.TIMEOUT, "passed": False, "durations": {t: 100.0 for t in outcomes}}
    )


def test_a_gold_run_stopped_at_its_time_limit_keeps_the_tests_it_finished() -> None:
    """A long list (the authors list whole files): the tests every gold run finished before
    its limit are the task; the ones a run never reached are dropped, and gold passes."""
    finished = {"t.py::test_a": (TestOutcome.PASSED, None), "t.py::test_b": (TestOutcome.PASSED, None)}
    first = timed_out(finished | {"t.py::test_c": (TestOutcome.MISSING, "the session stopped during it")})
    second = timed_out(finished | {"t.py::test_c": (TestOutcome.PASSED, None)}, run=1)  # a faster run got further
    tests = [*finished, "t.py::test_c"]
    row = validation_table([task_of(tests)], [first, second], [null_of(tests)]).iloc[0]
    assert bool(row["usable"]) and row["tests_kept"] == 2 and row["gold_passes"] == 2
    assert "t.py::test_c: timeout: not reached before gold's run was stopped" in row["dropped"]
    trimmed = gold_test_sets({"o__r:m.py:four": task_of(tests)}, [first, second])["o__r:m.py:four"]
    assert trimmed.tests == list(finished)


def test_a_test_a_timed_out_gold_run_failed_still_fails_gold() -> None:
    outcomes = {
        "t.py::test_a": (TestOutcome.FAILED, "assert 1 == 2"),
        "t.py::test_b": (TestOutcome.MISSING, "the session stopped during it"),
    }
    row = validation_table([task_of(list(outcomes))], [timed_out(outcomes)], [null_of(list(outcomes))]).iloc[0]
    assert not row["usable"] and row["reason"].startswith("gold fails: timeout")


def test_a_test_gold_cannot_collect_in_any_run_is_dropped_and_the_task_keeps_the_others() -> None:
    """A conftest above it imports a module the environment lacks (a requirement that cannot be
    had costs the tests that need it, not the task)."""
    outcomes = {
        "t.py::test_a": (TestOutcome.PASSED, None),
        "h/t.py::test_b": (TestOutcome.MISSING, "h/t.py cannot be collected: missing module visdom"),
    }
    gold = [shown("gold", outcomes, r) for r in (0, 1)]
    row = validation_table([task_of(list(outcomes))], gold, [null_of(list(outcomes))]).iloc[0]
    assert bool(row["usable"]) and row["tests_kept"] == 1
    assert "h/t.py::test_b: fails with the reference code in all 2 gold runs: h/t.py cannot be" in row["dropped"]
    assert failing_every_run(gold) == set()  # the environment's, not a draw: no further seeds


def test_a_module_that_wants_the_network_or_data_at_import_drops_its_tests_as_unavailable() -> None:
    """torchmetrics' feature-sharing tests download weights when their module is imported: the
    sandbox's want, not the reference failing them; too few left is "too few tests"."""
    outcomes = {
        "t.py::test_a": (TestOutcome.PASSED, None),
        "w/t.py::test_b": (TestOutcome.MISSING, "w/t.py cannot be collected: needs network: urlopen error"),
        "d/t.py::test_c": (TestOutcome.MISSING, "d/t.py cannot be collected: needs data not in the repository: x"),
    }
    gold = [shown("gold", outcomes, r) for r in (0, 1)]
    row = validation_table([task_of(list(outcomes))], gold, [null_of(list(outcomes))], min_tests=2).iloc[0]
    assert row["reason"].startswith("too few tests: 1 left"), row["reason"]
    assert "w/t.py::test_b: w/t.py cannot be collected: needs network" in row["dropped"]
    assert "d/t.py::test_c: d/t.py cannot be collected: needs data not in the repository" in row["dropped"]


def test_too_few_tests_left_is_unusable_with_the_dropped_causes() -> None:
    tests = list(GOLD_SHOWS)
    row = validation_table([task_of(tests)], [shown("gold", GOLD_SHOWS)], [null_of(tests)], min_tests=2).iloc[0]
    assert not row["usable"]
    assert row["reason"].startswith("too few tests: 1 left, mine.min_tests is 2 (")
    assert "needs CUDA" in row["reason"] and "needs network" in row["reason"]


def test_a_test_gold_passed_in_one_run_only_is_dropped_and_the_task_keeps_the_others() -> None:
    tests = ["t.py::test_ok", "t.py::test_draw", "t.py::test_also_ok"]
    runs = [
        shown("gold", {t: (TestOutcome.PASSED, None) for t in tests}, 0),
        shown(
            "gold",
            {t: (TestOutcome.PASSED, None) for t in tests} | {tests[1]: (TestOutcome.FAILED, "a single class")},
            1,
        ),
    ]
    row = validation_table([task_of(tests)], runs, [null_of(tests)], min_tests=2).iloc[0]
    assert bool(row["usable"]) and row["tests_kept"] == 2 and row["gold_passes"] == 2
    assert row["dropped"] == "t.py::test_draw: flaky: passed 1/2 gold runs (a single class)"
    assert gold_test_sets({"o__r:m.py:four": task_of(tests)}, runs)["o__r:m.py:four"].tests == [tests[0], tests[2]]


def test_a_test_gold_fails_in_every_run_is_dropped_and_too_few_left_is_gold_fails() -> None:
    outcomes = GOLD_SHOWS | {"t.py::test_ok": (TestOutcome.FAILED, "missing module kornia_rs")}
    tests = list(GOLD_SHOWS)
    row = validation_table([task_of(tests)], [shown("gold", outcomes)], [null_of(tests)]).iloc[0]
    assert row["reason"] == "gold fails: fail: t.py::test_ok: missing module kornia_rs"
    # small-text's ConfidenceEnhancedLinearSVC.__init__: three of many tests build data the
    # classifier refuses, in every run; the others grade the task
    more = {f"t.py::test_{i}": (TestOutcome.PASSED, None) for i in range(3)}
    runs = [shown("gold", outcomes | more, r) for r in (0, 1)]
    row = validation_table([task_of([*tests, *more])], runs, [null_of([*tests, *more])], min_tests=3).iloc[0]
    assert bool(row["usable"]) and row["tests_kept"] == 3 and row["gold_passes"] == 2
    assert "t.py::test_ok: fails with the reference code in all 2 gold runs: missing module kornia_rs" in row["dropped"]


def test_only_a_failure_of_every_complete_gold_run_asks_for_further_seeds() -> None:
    """GOLD_SHOWS fails only on the network: further seeds would not change that."""
    failing = GOLD_SHOWS | {"t.py::test_ok": (TestOutcome.FAILED, "a single class")}
    assert failing_every_run([shown("gold", failing, 0), shown("gold", failing, 1)]) == {"o__r:m.py:four"}
    assert failing_every_run([shown("gold", failing, 0), shown("gold", GOLD_SHOWS, 1)]) == set()
    assert failing_every_run([shown("gold", GOLD_SHOWS, r) for r in (0, 1)]) == set()
    timed_out = shown("gold", GOLD_SHOWS, 1).model_copy(update={"status": EvalStatus.TIMEOUT})
    assert failing_every_run([shown("gold", failing, 0), timed_out]) == {"o__r:m.py:four"}


def test_models_are_graded_on_the_kept_tests_only() -> None:
    trimmed = gold_test_sets({"o__r:m.py:four": task_of(list(GOLD_SHOWS))}, [shown("gold", GOLD_SHOWS)])
    kept = trimmed["o__r:m.py:four"].tests
    assert kept == ["t.py::test_ok"]
    # A candidate that makes a kept test skip does not pass; one that passes it does.
    assert not passes_on(shown("m", {"t.py::test_ok": (TestOutcome.SKIPPED, "skipped: x")}), kept)
    assert passes_on(shown("m", {"t.py::test_ok": (TestOutcome.PASSED, None)}), kept)


def test_seeded_sample_is_stable_and_outside_tasks_say_so() -> None:
    ids = [f"o__r:m.py:f{i}" for i in range(10)]
    first = sample_task_ids(ids, 3, seed=7)
    assert len(first) == 3 and first == sample_task_ids(reversed(ids), 3, seed=7)
    assert len({frozenset(sample_task_ids(ids, 3, seed)) for seed in range(5)}) > 1  # the seed matters
    assert sample_task_ids(ids, 0, seed=7) == set(ids)
    tasks = [task(f"f{i}") for i in range(10)]
    frame = validation_table(tasks, [], [], cfg=EvaluateConfig(sample_tasks=3, sample_seed=7)).set_index("task_id")
    assert set(frame.index[frame["reason"].str.startswith("no gold")]) == first
    assert (frame["reason"].str.startswith("not sampled")).sum() == 7


def with_cases(evaluation: Evaluation, cases: dict[str, TestOutcome], causes: dict[str, str]) -> Evaluation:
    return evaluation.model_copy(update={"cases": cases, "causes": evaluation.causes | causes})


def test_a_test_gold_runs_in_part_keeps_its_cases_by_their_ids() -> None:
    cases = {"t.py::test_dev[cpu]": TestOutcome.PASSED, "t.py::test_dev[cuda]": TestOutcome.SKIPPED}
    gold = with_cases(shown("gold", {"t.py::test_dev": (TestOutcome.SKIPPED, "skipped: no CUDA")}), cases,
                      {"t.py::test_dev[cuda]": "skipped: no CUDA"})  # fmt: skip
    trimmed = gold_test_sets({"o__r:m.py:four": task_of(["t.py::test_dev"])}, [gold])
    kept = trimmed["o__r:m.py:four"].tests
    assert kept == ["t.py::test_dev[cpu]"]
    null = shown("null", {"t.py::test_dev[cpu]": (TestOutcome.FAILED, "NotImplementedError")})
    row = validation_table([task_of(["t.py::test_dev"])], [gold], [null]).iloc[0]
    assert (
        bool(row["usable"])
        and row["tests_kept"] == 1
        and row["dropped"].startswith("t.py::test_dev[cuda]: skipped: no CUDA")
    )
    # The case graded is the one gold ran: a candidate skipping it does not pass.
    assert not passes_on(shown("m", {"t.py::test_dev[cpu]": (TestOutcome.SKIPPED, "skipped: x")}), kept)


def test_a_case_gold_fails_fails_the_task_and_a_test_with_no_case_run_is_dropped() -> None:
    failing = {"t.py::test_dev[cpu]": TestOutcome.FAILED, "t.py::test_dev[cuda]": TestOutcome.SKIPPED}
    gold = with_cases(shown("gold", {"t.py::test_dev": (TestOutcome.FAILED, "AssertionError")}), failing,
                      {"t.py::test_dev[cpu]": "AssertionError"})  # fmt: skip
    row = validation_table([task_of(["t.py::test_dev"])], [gold], [null_of(["t.py::test_dev"])]).iloc[0]
    assert row["reason"] == "gold fails: fail: t.py::test_dev: AssertionError"
    skipped = {"t.py::test_dev[cpu]": TestOutcome.SKIPPED, "t.py::test_dev[cuda]": TestOutcome.SKIPPED}
    gold = with_cases(shown("gold", {"t.py::test_dev": (TestOutcome.SKIPPED, "skipped: x")}), skipped, {})
    row = validation_table([task_of(["t.py::test_dev"])], [gold], [null_of(["t.py::test_dev"])]).iloc[0]
    assert row["reason"].startswith("too few tests: 0 left")


def test_other_models_get_a_timeout_scaled_to_golds_slowest_complete_run() -> None:
    def timed(task_id: str, seconds: float, status: EvalStatus = EvalStatus.PASS) -> Evaluation:
        return Evaluation(task_id=task_id, model="gold", technique="reference", status=status,
                          passed=status == EvalStatus.PASS, tests={}, duration_s=seconds)  # fmt: skip

    gold = [timed("a", 0.5), timed("a", 2.0), timed("b", 10.0), timed("c", 1.0, EvalStatus.TIMEOUT)]
    cfg = EvaluateConfig(timeout_s=60, timeout_factor=10, min_timeout_s=30)
    assert scaled_timeouts(gold, cfg) == {"a": 30.0, "b": 60.0}  # floor, cap; a timed-out gold says nothing
    assert scaled_timeouts(gold, cfg.model_copy(update={"timeout_s": 300})) == {"a": 30.0, "b": 100.0}
    assert scaled_timeouts(gold, cfg.model_copy(update={"timeout_factor": 0})) == {}


def test_a_test_that_needs_data_the_repository_lacks_is_dropped_with_its_path() -> None:
    shows = GOLD_SHOWS | {
        "t.py::test_assets": (TestOutcome.ERROR, "needs data not in the repository: tests/data (...)")
    }
    row = validation_table([task_of(list(shows))], [shown("gold", shows)], [null_of(list(shows))]).iloc[0]
    assert bool(row["usable"]) and row["tests_kept"] == 1
    assert "t.py::test_assets: needs data not in the repository: tests/data" in row["dropped"]


def test_a_test_budget_buys_one_case_of_every_test_before_a_second_of_any() -> None:
    """Gold's slowest complete run prices each kept test (a listed test: its cases summed); the
    budget takes the fastest case of each test function in turn while they fit."""
    seconds = {"t.py::test_fit[a]": 4.0, "t.py::test_fit[b]": 1.0, "t.py::test_fit[c]": 1.5,
               "t.py::test_shape": 0.5, "t.py::test_grad": 6.0, "t.py::test_slow": 30.0}  # fmt: skip
    listed = ["t.py::test_fit", "t.py::test_shape", "t.py::test_grad", "t.py::test_slow"]
    cases = {c: TestOutcome.PASSED for c in seconds if "[" in c}
    runs = [
        with_cases(shown("gold", {t: (TestOutcome.PASSED, None) for t in listed}, r), cases, {}).model_copy(
            update={"durations": {n: s * (1 + r) / 2 for n, s in seconds.items()}}  # run 1 is the slower
        )
        for r in (0, 1)
    ]
    tasks = {"o__r:m.py:four": task_of(listed)}
    # test_fit listed whole costs its three cases (6.5 s); fastest first, test_shape and test_grad fill 8 s
    assert gold_test_sets(tasks, runs, budget_s=8.0)["o__r:m.py:four"].tests == ["t.py::test_shape", "t.py::test_grad"]
    assert gold_test_sets(tasks, runs, budget_s=0.1)["o__r:m.py:four"].tests == ["t.py::test_shape"]  # at least one
    assert gold_test_sets(tasks, runs)["o__r:m.py:four"].tests == listed  # no budget: every kept test
    # kept by its cases (gold ran test_fit only in part): one case of each function before a
    # second of any, so test_grad gets in where test_fit's three cheaper cases would have taken 7 s
    by_case = [*(c for c in seconds if "[" in c), "t.py::test_shape", "t.py::test_grad"]
    assert within_budget(by_case, seconds, budget_s=8.0) == ["t.py::test_fit[b]", "t.py::test_shape", "t.py::test_grad"]
    unpriced = [r.model_copy(update={"durations": {}}) for r in runs]  # recorded before durations were
    assert gold_test_sets(tasks, unpriced, budget_s=8.0)["o__r:m.py:four"].tests == listed


def test_null_is_judged_on_the_tests_the_budget_grades_models_on() -> None:
    """With ``evaluate.test_budget_s`` the other models run only the kept tests within the
    budget: a task whose budgeted tests a missing body passes is no task, even though the
    full set (the slow test null fails) would notice."""
    passing = {t: (TestOutcome.PASSED, None) for t in ("t.py::test_fast", "t.py::test_slow")}
    gold = shown("gold", passing).model_copy(update={"durations": {"t.py::test_fast": 1.0, "t.py::test_slow": 60.0}})
    tests = list(passing)
    budget = EvaluateConfig(test_budget_s=10)
    assert gold_test_sets({"o__r:m.py:four": task_of(tests)}, [gold], 10)["o__r:m.py:four"].tests == ["t.py::test_fast"]
    graded_null = shown("null", {"t.py::test_fast": (TestOutcome.PASSED, None)})  # what the budgeted run reports
    row = validation_table([task_of(tests)], [gold], [graded_null], cfg=budget).iloc[0]
    assert not row["usable"] and "1 of 2 kept tests within evaluate.test_budget_s" in row["reason"]
    full_null = shown(
        "null", {"t.py::test_fast": (TestOutcome.PASSED, None), "t.py::test_slow": (TestOutcome.FAILED, "x")}
    )
    assert validation_table([task_of(tests)], [gold], [full_null]).iloc[0]["usable"]  # no budget: the full set decides


def test_the_budget_takes_first_the_tests_a_missing_body_fails() -> None:
    """Null runs every kept test; the budget then keeps the tests null failed before the
    others, so a task's graded tests notice a missing body whenever a kept test does."""
    tests = ["t.py::test_fast", "t.py::test_other", "t.py::test_slow"]
    passing = {t: (TestOutcome.PASSED, None) for t in tests}
    gold = shown("gold", passing).model_copy(
        update={"durations": {"t.py::test_fast": 1.0, "t.py::test_other": 2.0, "t.py::test_slow": 60.0}}
    )
    null = shown("null", passing | {"t.py::test_slow": (TestOutcome.FAILED, "NotImplementedError")})
    assert noticing([null], tests) == {"t.py::test_slow"}
    tasks = {"o__r:m.py:four": task_of(tests)}
    assert gold_test_sets(tasks, [gold], 10)["o__r:m.py:four"].tests == ["t.py::test_fast", "t.py::test_other"]
    assert gold_test_sets(tasks, [gold], 10, [null])["o__r:m.py:four"].tests == ["t.py::test_slow"]
    assert gold_test_sets(tasks, [gold], 70, [null])["o__r:m.py:four"].tests == tests  # then the others that fit
    row = validation_table([task_of(tests)], [gold], [null], cfg=EvaluateConfig(test_budget_s=10)).iloc[0]
    assert row["usable"], row["reason"]
    # A test null's run never reported is no evidence that it notices anything.
    assert noticing([shown("null", {"t.py::test_fast": (TestOutcome.PASSED, None)})], tests) == set()


def test_the_budget_applies_only_with_null_evaluations(tmp_path: Path) -> None:
    """``dlbench evaluate --gold`` (the workflow's evaluate rule): null itself, graded
    without null's runs, runs every kept test; the other models, given null's, the budget."""
    from dlbench.harness.evaluate import held_to_gold

    tests = ["t.py::test_fast", "t.py::test_slow"]
    passing = {t: (TestOutcome.PASSED, None) for t in tests}
    gold = shown("gold", passing).model_copy(update={"durations": {"t.py::test_fast": 1.0, "t.py::test_slow": 60.0}})
    null = shown("null", passing | {"t.py::test_slow": (TestOutcome.FAILED, "NotImplementedError")})
    write_jsonl(tmp_path / "gold.jsonl", [gold])
    write_jsonl(tmp_path / "null.jsonl", [null])
    cfg, tasks = EvaluateConfig(test_budget_s=10), {"o__r:m.py:four": task_of(tests)}
    assert held_to_gold(tasks, tmp_path / "gold.jsonl", cfg)[0]["o__r:m.py:four"].tests == tests
    budgeted = held_to_gold(tasks, tmp_path / "gold.jsonl", cfg, tmp_path / "null.jsonl")[0]
    assert budgeted["o__r:m.py:four"].tests == ["t.py::test_slow"]
