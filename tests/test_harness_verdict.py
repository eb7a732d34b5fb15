"""The verdict rule over supervisor results (pure, inline strings), spoofing included."""

from __future__ import annotations

import json

import pytest

from dlbench.harness.verdict import WROTE, Part, RunResult, canary_ids, grade, node_outcome, parse_events
from dlbench.records import EvalStatus, TestOutcome

NONCE = "n0nce"
T1 = "tests/test_a.py::test_one"
T2 = "tests/test_a.py::test_param"
FAIL_CANARY, PASS_CANARY = canary_ids(NONCE, [T1, T2])


def report(nodeid: str, outcome: str = "passed", when: str = "call", **extra) -> str:
    return json.dumps({"ev": "report", "nodeid": nodeid, "when": when, "outcome": outcome, "duration": 0.01} | extra)


def item(nodeid: str, call: str = "passed", exc: str | None = None) -> list[str]:
    return [report(nodeid, when="setup"), report(nodeid, call, exc=exc), report(nodeid, when="teardown")]


def session(*items: list[str], finish: bool = True, canaries: bool = True, tests: list[str] = (T1, T2)) -> list[str]:
    """A well-formed stream as the plugin writes it: ``collected`` names every reported id."""
    lines = []
    for part in items:
        lines += part
    if canaries:
        fail, ok = canary_ids(NONCE, list(tests))
        lines += item(fail, "failed", "AssertionError: canary") + item(ok)
    ids = list(dict.fromkeys(json.loads(line)["nodeid"] for line in lines))
    head = ['{"ev": "hello", "pid": 1}', json.dumps({"ev": "collected", "ids": ids})]
    return head + lines + (['{"ev": "finish", "exitstatus": 1}'] if finish else [])


def verdict(lines: list[str], **run):
    return grade([T1, T2], NONCE, RunResult(events=lines, **({"exit_code": 1} | run)))


def test_all_listed_tests_passed_is_a_pass() -> None:
    v = verdict(session(item(T1), item(T2 + "[a]"), item(T2 + "[b]")))
    assert v.status == EvalStatus.PASS and v.passed
    assert v.tests == {T1: TestOutcome.PASSED, T2: TestOutcome.PASSED}
    assert v.test_seconds > 0
    assert set(v.durations) == {T1, T2 + "[a]", T2 + "[b]"}  # each node that ran; the canaries are ours
    assert v.test_seconds == pytest.approx(sum(v.durations.values()))


def test_one_failing_parametrized_case_fails_the_node() -> None:
    v = verdict(session(item(T1), item(T2 + "[a]"), item(T2 + "[b]", "failed", "ValueError: bad")))
    assert v.status == EvalStatus.FAIL and v.tests[T2] == TestOutcome.FAILED
    assert v.exception == "ValueError: bad"


def test_missing_test_is_not_a_pass() -> None:
    v = verdict(session(item(T1)))
    assert v.status == EvalStatus.FAIL and v.tests[T2] == TestOutcome.MISSING


def test_skip_xfail_and_setup_error_are_not_passes() -> None:
    skipped = [report(T2, when="setup", outcome="skipped")]
    assert verdict(session(item(T1), skipped)).tests[T2] == TestOutcome.SKIPPED
    xfail = [report(T2, when="setup"), report(T2, "skipped", xfail=True), report(T2, when="teardown")]
    assert verdict(session(item(T1), xfail)).tests[T2] == TestOutcome.XFAIL
    xpass = [report(T2, when="setup"), report(T2, "passed", xfail=True), report(T2, when="teardown")]
    assert verdict(session(item(T1), xpass)).status == EvalStatus.FAIL
    error = [report(T2, when="setup", outcome="failed", exc="RuntimeError: fixture")]
    v = verdict(session(item(T1), error))
    assert v.tests[T2] == TestOutcome.ERROR and v.exception == "RuntimeError: fixture"


def test_spoofed_passed_in_stdout_cannot_score() -> None:
    output = f"{T1} PASSED\n{T2} PASSED\n" + report(T1) + "\n" + "===== 2 passed in 0.01s =====\n"
    v = verdict(session(item(T1, "failed", "AssertionError: assert 1 == 2"), item(T2)), output=output)
    assert v.status == EvalStatus.FAIL and v.tests[T1] == TestOutcome.FAILED


def test_no_report_with_exit_code_zero_is_an_error() -> None:
    v = verdict([], exit_code=0, output="2 passed")
    assert v.status == EvalStatus.ERROR and "no report" in v.detail


def test_run_that_ends_early_is_not_a_pass() -> None:
    v = verdict(session(item(T1), item(T2), finish=False, canaries=False), exit_code=0)
    assert v.status == EvalStatus.ERROR and "ended early" in v.detail


def test_timeout_wins_over_partial_reports() -> None:
    v = verdict(session(item(T1), finish=False, canaries=False), timed_out=True)
    assert v.status == EvalStatus.TIMEOUT and v.tests[T2] == TestOutcome.MISSING


def test_a_test_collected_but_never_reached_says_the_session_stopped_before_it() -> None:
    """stanza's run timed out in its first test: the two after it were collected, not missing."""
    lines = session(item(T1), finish=False, canaries=False)
    lines[1] = json.dumps({"ev": "collected", "ids": [T1, T2 + "[a]"]})
    v = verdict(lines, timed_out=True)
    assert v.causes[T2] == "did not run to the end (collected, never reached: the session stopped before it)"
    lines[1] = json.dumps({"ev": "collected", "ids": [T1]})
    assert verdict(lines, timed_out=True).causes[T2].startswith("not found by pytest")


def test_a_session_that_ended_at_start_up_says_so_for_every_test() -> None:
    """A conftest's error before collection (two conftests adding one option) is no news of
    the tests: not "not found by pytest", which drops a test from the task for good."""
    v = verdict(['{"ev": "hello", "pid": 1}'], exit_code=70)
    assert v.status == EvalStatus.ERROR
    assert set(v.causes.values()) == {"did not run to the end (the session ended before collecting the tests)"}


def part(test: str, *items: list[str], **run) -> Part:
    return Part([test], NONCE, RunResult(events=session(*items, tests=[test]), **({"exit_code": 1} | run)))


def test_a_candidate_run_in_several_sessions_passes_only_if_each_does() -> None:
    def graded(*parts: Part):
        return grade([T1, T2], "another", RunResult.of_parts(list(parts)))  # each part's own nonce counts

    both = graded(part(T1, item(T1)), part(T2, item(T2)))
    assert both.status == EvalStatus.PASS and both.tests == {T1: TestOutcome.PASSED, T2: TestOutcome.PASSED}
    assert set(both.durations) == {T1, T2}
    failed = graded(part(T1, item(T1)), part(T2, item(T2, "failed", "ValueError: bad")))
    assert failed.status == EvalStatus.FAIL and failed.tests[T2] == TestOutcome.FAILED
    assert failed.exception == "ValueError: bad" and list(failed.causes) == [T2]
    fail, ok = canary_ids(NONCE, [T2])
    events = session(item(T2), item(fail), item(ok), canaries=False, tests=[T2])  # the fail canary passed
    forged = Part([T2], NONCE, RunResult(events=events, exit_code=1))
    assert graded(part(T1, item(T1, "failed")), forged).status == EvalStatus.SANDBOX_VIOLATION
    timed_out = graded(part(T1, item(T1)), part(T2, item(T2), timed_out=True))
    assert timed_out.status == EvalStatus.TIMEOUT


def test_a_supervisors_answer_cannot_bring_sessions_of_its_own() -> None:
    answer = {"events": session(item(T1), item(T2)), "exit_code": 1, "parts": [{"tests": [T1], "nonce": "x"}]}
    assert RunResult.from_response(answer).parts == []


def test_forged_duplicate_report_is_a_violation() -> None:
    lines = session(item(T1, "failed"), item(T2))
    lines.insert(2, report(T1, "passed"))  # written before the real one
    v = verdict(lines)
    assert v.status == EvalStatus.SANDBOX_VIOLATION and "duplicate call report" in v.detail


def test_malformed_or_outside_session_lines_are_violations() -> None:
    assert verdict(session(item(T1), item(T2)) + ["PASSED"]).status == EvalStatus.SANDBOX_VIOLATION
    late = session(item(T1), [report(T2, when="setup")]) + [report(T2), report(T2, when="teardown")]
    assert "outside the session" in verdict(late).detail


def test_canary_turned_into_a_pass_is_a_violation() -> None:
    lines = [line.replace('"failed"', '"passed"') for line in session(item(T1), item(T2))]
    v = verdict(lines)
    assert v.status == EvalStatus.SANDBOX_VIOLATION and v.detail == "canary tests misreported: outcomes were altered"


def test_a_session_fixture_failing_as_the_session_ends_is_not_the_canaries_doing() -> None:
    """The canaries run last: a project's session-scoped check over the whole suite fails in the
    last item's teardown (GPflow's posterior registry), and gold's run is still whole."""
    fail, ok = canary_ids(NONCE, [T1, T2])
    must_fail = item(fail, "failed", "AssertionError: canary")
    ends = [*item(ok)[:2], report(ok, "failed", when="teardown", exc="AssertionError: no tests registered for X")]
    v = verdict(session(item(T1), item(T2), must_fail, ends, canaries=False))
    assert v.status == EvalStatus.PASS, v.detail
    turned = [line.replace('"failed"', '"passed"') for line in must_fail]  # its call turned into a pass
    assert verdict(session(item(T1), item(T2), turned, ends, canaries=False)).status == EvalStatus.SANDBOX_VIOLATION


def test_canaries_failed_at_setup_are_an_error_naming_each_cause_and_one_of_them_alone_a_violation() -> None:
    fail, ok = canary_ids(NONCE, [T1, T2])

    def at_setup(nid: str, exc: str) -> list[str]:
        return [report(nid, when="setup", outcome="failed", exc=exc), report(nid, when="teardown")]

    both = at_setup(fail, "ModuleNotFoundError: pkg.a") + at_setup(ok, "ModuleNotFoundError: pkg.b")
    v = verdict(session(item(T1), item(T2), both, canaries=False))
    assert v.status == EvalStatus.ERROR and not v.passed
    assert v.detail.endswith("ModuleNotFoundError: pkg.a; ModuleNotFoundError: pkg.b"), v.detail
    one = item(fail, "passed") + at_setup(ok, "RuntimeError: x")  # the must-fail one's call ran: and passed
    assert verdict(session(item(T1), item(T2), one, canaries=False)).status == EvalStatus.SANDBOX_VIOLATION


def test_canaries_lost_with_their_module_that_cannot_be_collected_leave_a_failure_never_a_pass() -> None:
    """The canaries join the task's test module: a candidate whose import breaks it takes them
    along, and that module's tests cannot pass; reported passes beside it are forged."""
    broken = [json.dumps({"ev": "collect_error", "nodeid": "tests/test_a.py", "exc": "NameError: name 'x'"})]
    v = verdict(session(broken, canaries=False))
    assert v.status == EvalStatus.FAIL and "tests/test_a.py cannot be collected: NameError" in v.detail, v.detail
    forged = verdict(session(broken, item(T1), item(T2), canaries=False))
    assert forged.status == EvalStatus.SANDBOX_VIOLATION
    fail, ok = canary_ids(NONCE, [T1, T2])
    skipped = [report(nid, when="setup", outcome="skipped") for nid in (T1, T2, fail, ok)]  # importorskip-like
    v = verdict(session(skipped, canaries=False))
    assert v.status == EvalStatus.FAIL, (v.status, v.detail)
    only_canaries = [report(nid, when="setup", outcome="skipped") for nid in (fail, ok)]
    assert verdict(session(item(T1), item(T2, "failed"), only_canaries, canaries=False)).status == (
        EvalStatus.SANDBOX_VIOLATION
    ), "the task's tests ran: skipping the canaries alone is an alteration"


def test_canaries_lost_with_a_folder_whose_conftest_cannot_be_imported_end_a_complete_run_at_exit_status_0() -> None:
    """The supervisor runs pytest again without the folder of a conftest that cannot be imported
    (ignite's handlers/ conftest imports visdom, which the image lacks): the canaries, in the
    task's module there, go with it, so nothing fails and pytest ends at 0. That run is a
    failure of the listed test in that folder, never a violation, and never a pass."""
    there, elsewhere = "tests/handlers/test_a.py::test_one", "tests/engine/test_b.py::test_two"
    tests = [elsewhere, there]
    broken = json.dumps({"ev": "collect_error", "nodeid": "tests/handlers", "exc": "ModuleNotFoundError: visdom"})
    lines = session([broken], item(elsewhere), canaries=False, tests=tests)
    lines[-1] = '{"ev": "finish", "exitstatus": 0}'
    v = grade(tests, NONCE, RunResult(events=lines, exit_code=0))
    assert v.status == EvalStatus.FAIL and v.tests[there] == TestOutcome.MISSING, (v.status, v.detail)
    assert "tests/handlers/test_a.py cannot be collected: " in v.causes[there]
    ran = session([broken], item(elsewhere), item(there), canaries=False, tests=tests)  # its tests ran after all
    ran[-1] = '{"ev": "finish", "exitstatus": 0}'
    assert grade(tests, NONCE, RunResult(events=ran, exit_code=0)).status == EvalStatus.SANDBOX_VIOLATION


def test_missing_canaries_are_a_violation() -> None:
    v = verdict(session(item(T1), item(T2), canaries=False))
    assert v.status == EvalStatus.SANDBOX_VIOLATION


def test_tamper_event_and_file_violations() -> None:
    tamper = session(item(T1), item(T2)) + [
        '{"ev": "tamper", "stage": "collection", "what": ["runner.call_and_report"]}'
    ]
    assert "runner.call_and_report" in verdict(tamper).detail
    assert (
        verdict(session(item(T1), item(T2)), violations=["changed tests/test_a.py"]).status
        == EvalStatus.SANDBOX_VIOLATION
    )
    assert verdict(session(item(T1), item(T2)), output_exceeded=True).status == EvalStatus.SANDBOX_VIOLATION


def test_a_data_file_a_run_changed_is_gold_s_own_output_and_held_against_others_only_where_gold_did_not() -> None:
    """A repository file but code that the run changed (supervisor ``wrote``): gold's tests
    writing their output (torchview's tests/test_output/) pass and record it; another model's
    run passes where gold's runs wrote the same file, and is a violation where they did not
    (a candidate overwriting the expected values a later test reads)."""
    lines = session(item(T1), item(T2))
    gold = grade([T1, T2], NONCE, RunResult(events=lines, exit_code=1, wrote=["tests/out/graph.gv"]), allowed=None)
    assert gold.status == EvalStatus.PASS and gold.observed == [f"{WROTE}tests/out/graph.gv"]
    same = grade([T1, T2], NONCE, RunResult(events=lines, exit_code=1, wrote=["tests/out/graph.gv"]), allowed=gold.observed)  # fmt: skip
    assert same.status == EvalStatus.PASS
    forged = RunResult(events=lines, exit_code=1, wrote=["tests/data/expected.json"])
    other = grade([T1, T2], NONCE, forged, allowed=gold.observed)
    assert other.status == EvalStatus.SANDBOX_VIOLATION and "tests/data/expected.json" in other.detail


def test_infra_error_is_reported_apart() -> None:
    assert verdict([], infra="supervisor: OSError").status == EvalStatus.INFRA_ERROR


def test_node_outcome_matches_only_its_own_cases() -> None:
    phases = parse_events(session(item(T1 + "_other"))).phases
    assert node_outcome(T1, phases) == TestOutcome.MISSING


def test_pytest_aborted_before_running_is_an_error_not_a_violation() -> None:
    lines = session(canaries=False, finish=False) + ['{"ev": "finish", "exitstatus": 4}']
    v = verdict(lines)
    assert v.status == EvalStatus.ERROR and "exit status 4" in v.detail


# ---------------------------------------------------------------- a stream written by hand


def test_complete_stream_is_a_pass_only_with_the_matching_exit_code() -> None:
    good = session(item(T1), item(T2))
    assert verdict(good).status == EvalStatus.PASS
    for code in (0, 2, None, -9):  # ``os._exit(0)`` after forging, a killed child, no status at all
        v = verdict(good, exit_code=code)
        assert v.status == EvalStatus.SANDBOX_VIOLATION and "exit code" in v.detail, code


def test_finish_status_other_than_one_is_a_violation() -> None:
    lines = session(item(T1), item(T2))
    lines[-1] = '{"ev": "finish", "exitstatus": 0}'
    assert verdict(lines, exit_code=0).status == EvalStatus.SANDBOX_VIOLATION


def test_stream_without_collected_event_is_a_violation() -> None:
    lines = [line for line in session(item(T1), item(T2)) if '"collected"' not in line]
    v = verdict(lines)
    assert v.status == EvalStatus.SANDBOX_VIOLATION and "outside the session" in v.detail


def test_report_for_an_id_that_was_not_collected_is_a_violation() -> None:
    lines = session(item(T1), item(T2))
    collected = json.loads(lines[1])
    collected["ids"].remove(T2)
    lines[1] = json.dumps(collected)
    v = verdict(lines)
    assert v.status == EvalStatus.SANDBOX_VIOLATION and f"not collected: {T2}" in v.detail


def test_report_without_numeric_duration_is_a_violation() -> None:
    for duration in (None, "0.1", True, -1):
        lines = session(item(T1), item(T2))
        forged = json.loads(lines[2]) | {"duration": duration}
        lines[2] = json.dumps(forged)
        v = verdict(lines)
        assert v.status == EvalStatus.SANDBOX_VIOLATION and "without a duration" in v.detail, duration


def test_second_collected_event_is_a_violation() -> None:
    lines = session(item(T1), item(T2))
    lines.insert(2, lines[1])
    assert "second collected" in verdict(lines).detail


def test_task_without_tests_is_an_error_never_a_pass() -> None:
    v = grade([], NONCE, RunResult(events=session(), exit_code=1))
    assert v.status == EvalStatus.ERROR and v.detail == "task lists no tests"


def test_listed_class_covers_its_methods_as_the_plugin_selects_them() -> None:
    cls = "tests/test_a.py::TestK"
    lines = session(item(f"{cls}::test_x"), item(f"{cls}::test_y", "failed", "ValueError: y"), tests=[cls])
    v = grade([cls], NONCE, RunResult(events=lines, exit_code=1))
    assert v.tests == {cls: TestOutcome.FAILED} and v.exception == "ValueError: y"


def config_event(rootdir: str) -> str:
    return json.dumps({"ev": "config", "rootdir": rootdir, "inifile": None, "neutralised": []})


def test_a_folder_of_the_repository_that_is_not_there_is_data_the_sandbox_lacks() -> None:
    empty = "datasets.data_files.EmptyDatasetError: The directory at /tmp/dlbench/c4/tests/data doesn't contain any data files"
    absent = "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/dlbench/c4/assets/x.csv'"
    elsewhere = "FileNotFoundError: [Errno 2] No such file or directory: '/home/runner/x.csv'"
    lines = session(item(T1, "failed", empty), item(T2, "failed", absent))
    v = verdict([lines[0], config_event("/tmp/dlbench/c4"), *lines[1:]])
    assert v.causes[T1] == f"needs data not in the repository: tests/data ({empty})"
    assert v.causes[T2] == f"needs data not in the repository: assets/x.csv ({absent})"
    other = verdict([lines[0], config_event("/tmp/dlbench/c4"), *session(item(T1, "failed", elsewhere), item(T2))[1:]])
    assert other.causes[T1] == elsewhere  # outside the repository: the code's own doing


def test_a_module_reading_data_the_repository_lacks_at_import_cannot_be_collected_for_want_of_it() -> None:
    """torchmetrics' detection tests read COCO files its CI downloads into tests/_data."""
    absent = "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/dlbench/c4/tests/_data/x.json'"
    broken = [json.dumps({"ev": "collect_error", "nodeid": "tests/test_a.py", "exc": absent})]
    lines = session(broken, canaries=False)
    v = verdict([lines[0], config_event("/tmp/dlbench/c4"), *lines[1:]])
    assert v.causes[T1] == f"tests/test_a.py cannot be collected: needs data not in the repository: tests/_data/x.json ({absent})"  # fmt: skip


def test_data_a_library_must_download_is_data_the_sandbox_lacks() -> None:
    """ignite's ROUGE tests tokenize with NLTK's punkt_tab, which its CI downloads first."""
    nltk = (
        "LookupError: \n"
        + "*" * 70
        + "\n  Resource 'punkt_tab' not found.\n  Please use the NLTK Downloader to obtain "
        "the resource:\n\n  >>> import nltk\n  >>> nltk.download('punkt_tab')\n" + "*" * 70
    )
    vision = "RuntimeError: Dataset not found or corrupted. You can use download=True to download it"
    v = verdict(session(item(T1, "failed", nltk), item(T2, "failed", vision)))
    assert v.causes[T1] == "needs data not in the repository: NLTK's punkt_tab (nltk.download)"
    assert v.causes[T2] == "needs data not in the repository: a torchvision dataset (download=True)"


def test_a_cuda_call_on_a_machine_without_a_gpu_needs_a_gpu() -> None:
    """small-text's AMP tests build a CUDA scaler; gold drops them as the network's are."""
    driver = (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
        "installed a driver from http://www.nvidia.com/Download/index.aspx"
    )
    v = verdict(session(item(T1, "failed", f"    scaler = torch.cuda.amp.GradScaler()\nE   {driver}"), item(T2)))
    assert v.causes[T1] == f"needs a GPU: {driver}"
    v = verdict(session(item(T1, "failed", "AssertionError: Torch not compiled with CUDA enabled"), item(T2)))
    assert v.causes[T1] == "needs a GPU: AssertionError: Torch not compiled with CUDA enabled"


def test_a_dataset_neither_in_the_repository_nor_reachable_needs_the_network() -> None:
    hub = "FileNotFoundError: Couldn't find any data file at /tmp/dlbench/c4/SetFit/TREC-QC. Couldn't find 'SetFit/TREC-QC' on the Hugging Face Hub either"
    lines = session(item(T1, "failed", hub), item(T2))
    v = verdict([lines[0], config_event("/tmp/dlbench/c4"), *lines[1:]])
    assert v.causes[T1].startswith("needs network: ")


def test_a_cause_coloured_by_a_plugin_is_recorded_in_plain_words() -> None:
    """torchio's tests install pytest-sugar, and its failure text came with colour codes
    (``\\x1b[1m\\x1b[31mE   socket.gaierror``) into every recorded cause."""
    coloured = "\x1b[1m\x1b[31mE   socket.gaierror: [Errno -3] Temporary failure in name resolution\x1b[0m"
    v = verdict(session(item(T1, "failed", coloured), item(T2)))
    assert v.causes[T1] == "needs network: socket.gaierror: [Errno -3] Temporary failure in name resolution"
    v = verdict(session(item(T1, "failed", "\x1b[31mE   ValueError: shapes differ\x1b[0m"), item(T2)))
    assert v.causes[T1] == "ValueError: shapes differ"
