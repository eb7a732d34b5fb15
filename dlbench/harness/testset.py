"""A task's test set is what gold shows (the tasks a run evaluates: ``dlbench.subset``).

A test that gold skips, xfails, sees deselected by the project's own configuration, that
pytest does not find at all (a listed id the code at the pin no longer has), or that fails
for want of the network (the sandbox has none) or of data the repository does
not hold (a folder its CI fetches from elsewhere), is not part of the task: it
is dropped with the cause gold's run recorded. So is a test a gold run stopped at its time
limit never finished (the authors list whole files: pyro's ``ReweightedWakeSleep._loss``
lists 43 inference tests, of which 20 finish in 300 s on one core): the task keeps the
tests gold finished, and passes on them. So is a test that passed in some of gold's
complete runs and failed in others (a random draw, a race), and one that failed in every
one of them (a test the project's own code fails: small-text's multi-label tests build
five classes for a three-class classifier): neither can tell a right body from a wrong
one. A task left with too few tests by the latter is ``gold fails`` with that cause. A
parametrized test (or a listed class) that gold ran only in part keeps, by their own node
ids, the cases gold ran: a test with a CUDA case skipped on this machine still grades its
CPU cases. Models are graded on the tests kept, so a candidate that makes a kept test or
case skip does not pass. With ``evaluate.test_budget_s`` they are graded on those of the
kept tests that fit the budget in gold's time (``within_budget``), the tests null's runs
fail taken first: null runs every kept test, so the budget never leaves out all the tests
that notice a missing body.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from itertools import zip_longest

from dlbench.config import EvaluateConfig
from dlbench.harness.protocol import selects
from dlbench.harness.verdict import NOT_FOUND, UNAVAILABLE, UNCOLLECTABLE
from dlbench.records import BenchmarkTask, EvalStatus, Evaluation, TestOutcome
from dlbench.subset import sample_task_ids as sample_task_ids  # moved there (dlbench.subset); kept importable here

NOT_RUN = frozenset({TestOutcome.SKIPPED, TestOutcome.XFAIL, TestOutcome.DESELECTED})
FAILED = frozenset({TestOutcome.FAILED, TestOutcome.ERROR})
NOT_PASSED = FAILED | {TestOutcome.MISSING}  # a test whose module could not be collected is missing
COMPLETE = frozenset({EvalStatus.PASS, EvalStatus.FAIL})  # the grader found the run whole
JUDGED = COMPLETE | {EvalStatus.TIMEOUT}  # and runs stopped at their limit: what they finished counts
TIMED_OUT = "timeout: not reached before gold's run was stopped at its time limit (evaluate.timeout_s)"
GOLD_FAILS = "fails with the reference code"


def dropped_tests(gold: Iterable[Evaluation]) -> dict[str, str]:
    """Node or case id → why gold's runs show it is not part of the task (first cause seen)."""
    gold = list(gold)
    dropped: dict[str, str] = {}
    for evaluation in gold:
        for node_id, outcome in (evaluation.tests | evaluation.cases).items():
            cause = evaluation.causes.get(node_id, outcome.value)
            if outcome in NOT_RUN or (outcome in NOT_PASSED and unavailable(cause)) or _absent(outcome, cause):
                dropped.setdefault(node_id, cause)
            elif outcome == TestOutcome.MISSING and evaluation.status == EvalStatus.TIMEOUT:
                dropped.setdefault(node_id, TIMED_OUT)
    return failing_tests(gold) | flaky_tests(gold) | dropped


def unavailable(cause: str) -> bool:
    """The test, or the module it is in, wants what the sandbox cannot give (network, data, GPU)."""
    return cause.startswith(UNAVAILABLE) or cause.partition(f" {UNCOLLECTABLE}: ")[2].startswith(UNAVAILABLE)


def _absent(outcome: TestOutcome, cause: str) -> bool:
    """A listed test the code does not have: pytest collected everything and never found it
    (a published id of a test removed since; pyro's ``test_triangular_solve``)."""
    return outcome == TestOutcome.MISSING and cause.startswith(NOT_FOUND)


def failing_tests(gold: list[Evaluation]) -> dict[str, str]:
    """Node or case id → ``fails with the reference code ...`` for what failed in every complete
    gold run (after further seeds, ``gold.py``): a test the project's own code fails cannot
    tell a right body from a wrong one (SWE-bench grades only on tests its gold patch passes)."""
    complete = [e for e in gold if e.status in COMPLETE]
    return {
        node_id: f"{GOLD_FAILS} in all {len(complete)} gold runs: {causes[0]}"
        for node_id, causes in _failed_throughout(complete).items()
    }


def _failed_throughout(complete: list[Evaluation]) -> dict[str, list[str]]:
    """Node or case id → its cause in each run, for what failed in every one of ``complete``
    (a test whose module, or a conftest above it, gold could not import counts as failed)."""
    return {
        node_id: [e.causes.get(node_id, "failed") for e in complete]
        for node_id in dict.fromkeys(n for e in complete for n in e.tests | e.cases)
        if all(outcome(e, node_id) in FAILED or _uncollectable(e, node_id) for e in complete)
    }


def _uncollectable(evaluation: Evaluation, node_id: str) -> bool:
    return outcome(evaluation, node_id) == TestOutcome.MISSING and UNCOLLECTABLE in evaluation.causes.get(node_id, "")


def flaky_tests(gold: list[Evaluation]) -> dict[str, str]:
    """Node or case id → ``flaky: ...`` for what passed in some complete gold runs and failed in others."""
    complete = [e for e in gold if e.status in COMPLETE]
    flaky: dict[str, str] = {}
    for node_id in dict.fromkeys(n for e in complete for n in e.tests | e.cases):
        outcomes = [outcome(e, node_id) for e in complete]
        passes = outcomes.count(TestOutcome.PASSED)
        failing = next((e for e, o in zip(complete, outcomes, strict=True) if o in FAILED), None)
        if passes and failing is not None:
            cause = failing.causes.get(node_id, "failed")
            flaky[node_id] = f"flaky: passed {passes}/{len(complete)} gold runs ({cause})"
    return flaky


def failing_every_run(gold: Iterable[Evaluation]) -> set[str]:
    """Tasks a test (or case) of which failed in every complete gold run, for a cause that is
    not the machine's (network, data): only runs from further seeds tell a draw from a fault."""
    runs: dict[str, list[Evaluation]] = defaultdict(list)
    for e in gold:
        if e.status in COMPLETE:
            runs[e.task_id].append(e)
    return {
        task_id
        for task_id, complete in runs.items()
        if any(
            not any(c.startswith(UNAVAILABLE) or UNCOLLECTABLE in c for c in causes)
            for causes in _failed_throughout(complete).values()
        )
    }


def kept_tests(tests: list[str], dropped: Mapping[str, str], gold: Iterable[Evaluation] = ()) -> list[str]:
    """The listed ids gold did not drop; for a dropped one, the cases of it that gold ran and
    did not drop (none when gold ran none: the test is dropped whole)."""
    cases = list(dict.fromkeys(c for e in gold for c in e.cases))
    kept: list[str] = []
    for test in tests:
        if test not in dropped:
            kept.append(test)
        else:
            kept += [c for c in cases if selects(c, [test]) and c not in dropped]
    return kept


def dropped_of(tests: list[str], dropped: Mapping[str, str], kept: list[str]) -> dict[str, str]:
    """What one task loses: its dropped tests and cases (a test that keeps some of its cases
    is named by the cases it loses, not as dropped whole)."""
    partial = {t for t in tests if any(selects(k, [t]) for k in kept)}
    return {t: why for t, why in dropped.items() if selects(t, tests) and t not in partial}


def tests_represented(tests: list[str], kept: list[str]) -> int:
    """How many listed tests keep something (a test counts once however many cases it keeps)."""
    return sum(1 for test in tests if any(selects(k, [test]) for k in kept))


def outcome(evaluation: Evaluation, test_id: str) -> TestOutcome | None:
    return evaluation.tests.get(test_id) or evaluation.cases.get(test_id)


def passes_on(evaluation: Evaluation, kept: list[str]) -> bool:
    """Every kept test (or case) passed, in a run the grader found complete, or in one stopped
    at its time limit after they all had (the tests it never reached are not kept)."""
    return (
        evaluation.status in JUDGED and bool(kept) and all(outcome(evaluation, t) == TestOutcome.PASSED for t in kept)
    )


def gold_test_sets(
    tasks: Mapping[str, BenchmarkTask], gold: Iterable[Evaluation], budget_s: float = 0.0,
    null: Iterable[Evaluation] = (),
) -> dict[str, BenchmarkTask]:  # fmt: skip
    """The tasks with only the tests gold kept (a task gold kept nothing of stays whole:
    it is unusable anyway, and its candidates still get a verdict), within ``budget_s``
    seconds of gold's test time when it is set (``within_budget``), the tests null's runs
    failed (``noticing``) taken first."""
    by_task: dict[str, list[Evaluation]] = defaultdict(list)
    for evaluation in gold:
        by_task[evaluation.task_id].append(evaluation)
    null_by_task: dict[str, list[Evaluation]] = defaultdict(list)
    for evaluation in null:
        null_by_task[evaluation.task_id].append(evaluation)
    trimmed = {}
    for task_id, task in tasks.items():
        kept = kept_tests(task.tests, dropped_tests(by_task[task_id]), by_task[task_id])
        kept = graded_tests(kept, by_task[task_id], null_by_task[task_id], budget_s)
        trimmed[task_id] = task.model_copy(update={"tests": kept}) if kept else task
    return trimmed


def graded_tests(kept: list[str], gold: list[Evaluation], null: Iterable[Evaluation], budget_s: float) -> list[str]:
    """The kept tests the models other than gold and null are graded on: every one, or with
    ``budget_s`` those within the budget, the tests null's runs failed first (validation
    judges null on the same set)."""
    if not budget_s:
        return kept
    return within_budget(kept, gold_seconds(kept, gold), budget_s, noticing(null, kept))


def noticing(null: Iterable[Evaluation], kept: list[str]) -> set[str]:
    """The kept tests a missing body fails: one of null's judged runs ran them and they failed
    (a test its run never reported is no evidence either way)."""
    failed = (TestOutcome.FAILED, TestOutcome.ERROR)
    return {t for e in null if e.status in JUDGED for t in kept if outcome(e, t) in failed}


def gold_seconds(kept: list[str], gold: list[Evaluation]) -> dict[str, float]:
    """Each kept id's time in gold's slowest complete run, or run stopped at its time limit (a
    listed test: its cases summed); an id no such run timed (gold recorded before durations
    were) is left out."""
    seconds: dict[str, float] = {}
    for e in (e for e in gold if e.status in JUDGED and e.durations):
        for test in kept:
            spent = sum(s for nid, s in e.durations.items() if selects(nid, [test]))
            seconds[test] = max(seconds.get(test, 0.0), spent)
    return seconds


def within_budget(kept: list[str], seconds: Mapping[str, float], budget_s: float, first: Collection[str] = ()) -> list[str]:  # fmt: skip
    """The kept ids that fit ``budget_s`` seconds, in their order: ``first`` (the tests that
    notice a missing body) before the others, and within each, rounds over the test
    functions (a parametrized test's cases are one function), each giving its fastest case
    not yet taken, so the budget buys one case of every test before a second of any; at
    least one id. All of them when one was never timed."""
    if any(t not in seconds for t in kept) or sum(seconds.values()) <= budget_s:
        return kept
    chosen: set[str] = set()
    spent = 0.0
    for group in ([t for t in kept if t in first], [t for t in kept if t not in first]):
        functions: dict[str, list[str]] = defaultdict(list)
        for test in sorted(group, key=lambda t: seconds[t]):
            functions[test.split("[", 1)[0]].append(test)
        for test in (t for rank in zip_longest(*functions.values()) for t in rank if t is not None):
            if not chosen or spent + seconds[test] <= budget_s:
                chosen.add(test)
                spent += seconds[test]
    return [t for t in kept if t in chosen]


def scaled_timeouts(gold: Iterable[Evaluation], cfg: EvaluateConfig) -> dict[str, float]:
    """Each task's limit for the other models: ``timeout_factor`` times gold's slowest complete
    run, within [``min_timeout_s``, ``timeout_s``] (a hanging candidate costs seconds, not the
    whole budget). Nothing when the factor is 0 or gold never ran whole."""
    slowest: dict[str, float] = {}
    for e in gold:
        if e.status in COMPLETE:
            slowest[e.task_id] = max(slowest.get(e.task_id, 0.0), e.duration_s)
    if not cfg.timeout_factor:
        return {}
    return {t: min(cfg.timeout_s, max(cfg.min_timeout_s, cfg.timeout_factor * s)) for t, s in slowest.items()}
