"""Grade one candidate from the supervisor's result: pure functions over strings and dicts.

Only the per-test events from the report pipe count (never the candidate's stdout; the
exit code only as a cross-check). A pass needs: a complete session (``hello``,
``collected`` … ``finish``), no tampering, no violation, the fail canary reported failed and
the pass canary passed (so a run that turns failures into passes, or ends early, cannot
pass), and every expected node id reported ``passed`` (a parametrized id: every one of its
cases). Cross-checks against a stream written by hand: every report carries a numeric
duration and names a collected id, and the child's exit code equals the ``finish`` event's
status, which must be 1 (the fail canary always fails).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dlbench.harness.protocol import canary, selects
from dlbench.records import EvalStatus, TestOutcome

PHASES = ("setup", "call", "teardown")
TAMPER = "pytest internals replaced"
# A repository file but code that a run changed or removed (supervisor ``wrote``): a test's own
# output (torchview's tests render into tests/test_output/), not held against gold; another
# model's run is held to the files gold's runs of the task changed, since a data file a later
# test reads could otherwise be forged.
WROTE = "changed or removed the repository's "
PYTEST_ABORTED = (2, 3, 4)  # interrupted, internal error, usage error
CANARIES_UNRUNNABLE = "the canary tests cannot run beside these tests (the project's fixtures fail them at setup)"
TESTS_FAILED = 1  # pytest's exit status of every complete run: the fail canary always fails
ALL_PASSED = 0  # a complete run's, only when the canaries were lost with their module (_lost_with_their_module)
UNCOLLECTABLE = "cannot be collected"  # a listed test's module, or a conftest above it, failed to import
NEEDS_NETWORK = "needs network"
# What the sandbox's missing network looks like from inside a test (DNS, sockets, HTTP clients).
NETWORK_ERRORS = re.compile(
    r"Temporary failure in name resolution|Name or service not known|No address associated with hostname|"
    r"nodename nor servname|Network is unreachable|getaddrinfo failed|Failed to resolve|Could not resolve host|"
    r"Failed to establish a new connection|Max retries exceeded with url|urlopen error|socket\.gaierror|"
    r"couldn't connect to 'https?://|connection to the Hub|offline mode is enabled|on the Hugging Face Hub either|"
    r"LocalEntryNotFoundError|If you were trying to load it from 'https://huggingface\.co|"
    # httpx's, when a library's shared client was closed (huggingface_hub closes it in a forked
    # process, and the library raises its own error ``from None``): an HTTP request all the same
    r"Cannot send a request, as the client has been closed",
    re.IGNORECASE,
)
NEEDS_DATA = "needs data not in the repository"
NEEDS_GPU = "needs a GPU"
# What a CUDA call says on a machine without a GPU (small-text's AMP tests, a CUDA checkpoint).
GPU_ERRORS = re.compile(
    r"Found no NVIDIA driver on your system|Torch not compiled with CUDA enabled|No CUDA GPUs are available|"
    r"no CUDA-capable device is detected|Attempting to deserialize object on a CUDA device"
)
UNAVAILABLE = (NEEDS_NETWORK, NEEDS_DATA, NEEDS_GPU)  # what the sandbox cannot give a test, whatever the code
# Data a library fetches on request and names when it is missing (NLTK's corpora and models,
# torchvision's datasets): the project's CI downloads it first; the sandbox cannot.
DOWNLOADED_DATA = (
    (
        re.compile(r"Resource '?([\w./-]+?)'? not found\.\s+Please use the NLTK Downloader"),
        "NLTK's {0} (nltk.download)",
    ),
    (
        re.compile(r"Dataset not found or corrupted\. You can use download=True"),
        "a torchvision dataset (download=True)",
    ),
)
# A file or folder the test expected and did not find (open(), pathlib, Hugging Face datasets).
MISSING_PATH = re.compile(
    r"No such file or directory|doesn't contain any data files|does not exist|not found|Unable to find", re.IGNORECASE
)
NOT_FOUND = "not found by pytest"  # collection ended whole without the test: the code has no such test
MISSING_MODULE = re.compile(r"No module named '([^']+)'")
MISSING_FIXTURE = re.compile(r"fixture '([^']+)' not found")
CAUSE_CHARS = 300
# Terminal colour codes: a plugin (pytest-sugar) or FORCE_COLOR can colour the failure text
# the plugin reports; a recorded cause is plain words.
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
UNFINISHED = "did not run to the end"
STOPPED_DURING = f"{UNFINISHED} (the session stopped during the test)"
OUT_OF_MEMORY = "out of memory: the test session was killed at the sandbox's memory limit (evaluate.memory_mb)"
TEXT_CAUSE_CHARS = 4000  # of a run's output, searched for the cause of an aborted session


@dataclass(frozen=True)
class RunResult:
    """What the supervisor reports about one run (its JSON response)."""

    events: list[str] = field(default_factory=list)
    output: str = ""
    output_bytes: int = 0
    output_exceeded: bool = False
    timed_out: bool = False
    exit_code: int | None = None
    violations: list[str] = field(default_factory=list)
    wrote: list[str] = field(default_factory=list)  # repository files but code the run changed or removed
    infra: str | None = None
    wall_s: float = 0.0
    cmd: list[str] = field(default_factory=list)
    oom: bool = False  # the container's memory cgroup killed a process during the run
    phases: dict[str, float] = field(default_factory=dict)  # seconds of each part (supervisor._phases)
    parts: list[Part] = field(default_factory=list)  # one run per pytest session (``of_parts``), never a response's

    @classmethod
    def from_response(cls, data: Mapping[str, Any]) -> RunResult:
        known = cls.__dataclass_fields__.keys() - {"parts"}
        return cls(**{k: v for k, v in data.items() if k in known})

    @classmethod
    def of_parts(cls, parts: list[Part]) -> RunResult:
        """One candidate's runs in several pytest sessions (``suites``): graded each on its own
        (``grade``), their evidence kept together, session after session."""
        runs = [part.run for part in parts]
        phases: dict[str, float] = {}
        for run in runs:
            for name, seconds in run.phases.items():
                phases[name] = round(phases.get(name, 0.0) + seconds, 4)
        return cls(
            events=[line for run in runs for line in run.events],
            output="".join(f"== pytest session {n} of {len(parts)}: {' '.join(part.tests)}\n{part.run.output}"
                           for n, part in enumerate(parts, 1)),
            output_bytes=sum(run.output_bytes for run in runs), output_exceeded=any(run.output_exceeded for run in runs),
            timed_out=any(run.timed_out for run in runs),
            exit_code=next((run.exit_code for run in runs if run.exit_code != TESTS_FAILED), runs[-1].exit_code),
            violations=[v for run in runs for v in run.violations], wrote=[w for run in runs for w in run.wrote],
            infra=next((run.infra for run in runs if run.infra), None), wall_s=round(sum(run.wall_s for run in runs), 4),
            cmd=runs[0].cmd, oom=any(run.oom for run in runs), phases=phases, parts=parts,
        )  # fmt: skip


@dataclass(frozen=True)
class Part:
    """The run of one pytest session of a candidate's: its tests and canaries' nonce."""

    tests: list[str]
    nonce: str
    run: RunResult


@dataclass
class Events:
    """The parsed report stream."""

    hello: bool = False
    finish: bool = False
    exitstatus: int | None = None
    collected: set[str] | None = None  # None: no ``collected`` event
    collect_errors: list[tuple[str, str | None]] = field(default_factory=list)
    collect_skipped: dict[str, str | None] = field(default_factory=dict)  # module node id → reason
    deselected: set[str] = field(default_factory=set)  # by the project's own configuration
    neutralised: list[str] = field(default_factory=list)  # options of the project's addopts the harness dropped
    rootdir: str | None = None  # the run's copy of the repository
    phases: dict[str, dict[str, dict]] = field(default_factory=dict)  # nodeid → when → event
    problems: list[str] = field(default_factory=list)
    observed: list[str] = field(default_factory=list)  # what candidate code was seen doing (dlbench_guard, plugin)
    foreign: list[tuple[str, str]] = field(default_factory=list)  # (file, source) of code run from a writable place


@dataclass(frozen=True)
class Verdict:
    status: EvalStatus
    tests: dict[str, TestOutcome]
    detail: str | None = None
    exception: str | None = None
    causes: dict[str, str] = field(default_factory=dict)
    cases: dict[str, TestOutcome] = field(default_factory=dict)
    observed: list[str] = field(default_factory=list)
    durations: dict[str, float] = field(default_factory=dict)  # node id → seconds of its phases

    @property
    def test_seconds(self) -> float:
        return round(sum(self.durations.values()), 6)

    @property
    def passed(self) -> bool:
        return self.status == EvalStatus.PASS


def canary_ids(nonce: str, tests: list[str]) -> tuple[str, str]:
    """(must fail, must pass) node ids of the canary module the supervisor adds to every run."""
    return canary(nonce, tests)[1:]


def parse_events(lines: Iterable[str]) -> Events:
    """Parse report lines; malformed lines, duplicate phases and tampering are problems."""
    ev = Events()
    for n, line in enumerate(lines, 1):
        try:
            event = json.loads(line)
            kind = event["ev"]
        except (ValueError, TypeError, KeyError):
            ev.problems.append(f"malformed report line {n}: {line[:80]!r}")
            continue
        if kind == "hello":
            if ev.hello:
                ev.problems.append("second hello in the report")
            ev.hello = True
        elif kind == "finish":
            ev.finish = True
            ev.exitstatus = event.get("exitstatus")
        elif kind == "collected":
            if ev.collected is not None:
                ev.problems.append("second collected event in the report")
            ev.collected = {str(i) for i in event.get("ids") or []}
        elif kind == "collect_error":
            ev.collect_errors.append((str(event.get("nodeid")), event.get("exc") or event.get("text")))
        elif kind == "collect_skipped":
            ev.collect_skipped[str(event.get("nodeid"))] = event.get("reason")
        elif kind == "deselected":
            ev.deselected.update(str(i) for i in event.get("ids") or [])
        elif kind == "config":
            ev.neutralised = list(dict.fromkeys([*ev.neutralised, *(str(o) for o in event.get("neutralised") or [])]))
            ev.rootdir = str(event["rootdir"]) if event.get("rootdir") else None
        elif kind == "tamper":
            what = ", ".join(event.get("what", []))
            if not any(p.startswith(TAMPER) for p in ev.problems):  # it repeats after every test
                ev.problems.append(f"{TAMPER} (seen at {event.get('stage')}): {what}")
        elif kind == "report":
            _add_phase(ev, event)
        elif kind == "set_aside":  # an installed plugin that ended the session, left out of the run
            ev.neutralised.append(f"plugin {event.get('plugin')} set aside: {event.get('cause')}")
        elif kind == "observed":
            ev.observed.append(str(event.get("what"))[:CAUSE_CHARS])
        elif kind == "foreign_code":
            ev.foreign.append((str(event.get("file")), str(event.get("source") or "")))
        else:
            ev.problems.append(f"unknown report event {kind!r}")
    return ev


def _add_phase(ev: Events, event: dict) -> None:
    phases = ev.phases.setdefault(str(event.get("nodeid")), {})
    when = event.get("when")
    if when not in PHASES:
        ev.problems.append(f"report with unknown phase {when!r}")
    elif when in phases:
        ev.problems.append(f"duplicate {when} report for {event.get('nodeid')}")
    elif not ev.hello or ev.finish or ev.collected is None:
        ev.problems.append(f"report outside the session for {event.get('nodeid')}")
    elif str(event.get("nodeid")) not in ev.collected:
        ev.problems.append(f"report for a test that was not collected: {event.get('nodeid')}")
    elif not _is_number(event.get("duration")):
        ev.problems.append(f"report without a duration for {event.get('nodeid')}")
    else:
        phases[when] = event


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def item_outcome(phases: Mapping[str, dict]) -> TestOutcome:
    """One collected item from its setup/call/teardown reports."""
    if any(p.get("xfail") for p in phases.values()):
        return TestOutcome.XFAIL
    for when in ("setup", "teardown"):
        if phases.get(when, {}).get("outcome") == "failed":
            return TestOutcome.ERROR
    if any(p.get("outcome") == "skipped" for p in phases.values()):
        return TestOutcome.SKIPPED
    call = phases.get("call")
    if call is None or "teardown" not in phases:
        return TestOutcome.MISSING  # never ran to the end
    return TestOutcome.PASSED if call.get("outcome") == "passed" else TestOutcome.FAILED


def canary_outcome(node_id: str, phases: Mapping[str, Mapping[str, dict]]) -> TestOutcome:
    """A canary by its setup and call. The canaries run last, so a project's session-scoped
    fixture that fails as the session ends fails in their teardown: a check over the whole
    suite that a task's few tests never satisfy (GPflow's posteriors conftest: "no tests have
    been registered for the following posteriors"), which says nothing of how their own
    outcome was reported."""
    own = dict(phases.get(node_id, {}))
    if "teardown" in own:
        own["teardown"] = {**own["teardown"], "outcome": "passed"}
    return node_outcome(node_id, {node_id: own})


def canaries_failed_in_setup(canary_tests: Iterable[str], phases: Mapping[str, Mapping[str, dict]]) -> str | None:
    """The errors, when both canaries failed at setup, before their bodies ran: a project
    fixture that cannot serve a test it does not know (one keyed on each test's name). Such a
    run says nothing of how outcomes are reported: neither a violation nor, ever, a pass."""
    own = [phases.get(c, {}) for c in canary_tests]
    if any("call" in p or p.get("setup", {}).get("outcome") != "failed" for p in own):
        return None
    return "; ".join(dict.fromkeys(p["setup"].get("exc") or "an error at setup" for p in own))


SEVERITY = [TestOutcome.ERROR, TestOutcome.FAILED, TestOutcome.MISSING, TestOutcome.XFAIL, TestOutcome.SKIPPED]


def node_outcome(
    node_id: str,
    phases: Mapping[str, Mapping[str, dict]],
    deselected: Iterable[str] = (),
    skipped_modules: Iterable[str] = (),
) -> TestOutcome:
    """A listed node id: its own item, or every item the plugin ran for it (parametrized
    cases ``node_id[...]``, methods of a listed class); deselected when none ran and the
    project's configuration deselected it, skipped when its whole module was."""
    items = [p for nid, p in phases.items() if selects(nid, [node_id])]
    if not items:
        if skipped_module(node_id, skipped_modules) is not None:
            return TestOutcome.SKIPPED
        return TestOutcome.DESELECTED if any(selects(nid, [node_id]) for nid in deselected) else TestOutcome.MISSING
    outcomes = {item_outcome(p) for p in items}
    return next((o for o in SEVERITY if o in outcomes), TestOutcome.PASSED)


def _first_exception(expected: list[str], tests: Mapping[str, TestOutcome], ev: Events) -> str | None:
    for node_id in expected:
        if tests[node_id] == TestOutcome.PASSED:
            continue
        for nid, phases in ev.phases.items():
            if selects(nid, [node_id]):
                exc = next((p["exc"] for w in PHASES if (p := phases.get(w)) and p.get("exc")), None)
                if exc:
                    return exc
    return next((exc for _, exc in ev.collect_errors if exc), None)


def describe(text: str | None, summary: str | None = None) -> str | None:
    """An exception or pytest message in words a researcher can act on: a known cause found
    in ``text``, else ``summary`` (the exception's own one-line message), else its last line."""
    text, summary = (t and ANSI_ESCAPE.sub("", t) for t in (text, summary))
    text = "\n".join(t for t in (text, summary) if t)
    if not text:
        return None
    if found := MISSING_MODULE.search(text):
        return f"missing module {found[1]}"
    if found := MISSING_FIXTURE.search(text):
        return f"fixture {found[1]} not found"
    if line := _error_line(text, NETWORK_ERRORS):
        return f"{NEEDS_NETWORK}: {_message(line)}"
    if line := _error_line(text, GPU_ERRORS):
        return f"{NEEDS_GPU}: {_message(line)}"
    lines = [line for line in (summary or text).splitlines() if line.strip()]
    return _message(lines[-1]) if lines else None


def _error_line(text: str, errors: re.Pattern) -> str | None:
    """The line that shows one of ``errors``: an exception's own (``E``) line first, not the
    source line that raised it."""
    lines = text.splitlines()
    return next((line for line in [*(ln for ln in lines if ln.startswith("E ")), *lines] if errors.search(line)), None)


def _message(line: str) -> str:
    """One line of a traceback without pytest's ``E`` margin, cut to ``CAUSE_CHARS``."""
    return re.sub(r"^E\s+", "", line.strip())[:CAUSE_CHARS]


def skipped_module(node_id: str, skipped_modules: Iterable[str]) -> str | None:
    """The skipped module (or folder) that holds ``node_id``, if any."""
    module = node_id.split("::")[0]
    return next((m for m in skipped_modules if module == m or module.startswith(m.rstrip("/") + "/")), None)


def node_cause(node_id: str, outcome: TestOutcome, ev: Events) -> str:
    """Why one listed test did not pass."""
    runs = [ph for nid, ph in ev.phases.items() if selects(nid, [node_id])]
    reports = [p for ph in runs for w in PHASES if (p := ph.get(w))]
    reason = next((p["reason"] for p in reports if p.get("reason")), None)
    failure = next((p for p in reports if p.get("outcome") == "failed"), {})
    if outcome == TestOutcome.SKIPPED and not runs and (module := skipped_module(node_id, ev.collect_skipped)):
        return f"skipped: {ev.collect_skipped[module] or 'no reason given'} (the whole of {module})"
    if outcome == TestOutcome.SKIPPED:
        return f"skipped: {reason or 'no reason given'}"
    if outcome == TestOutcome.XFAIL:
        return f"xfail: {reason or 'no reason given'}"
    if outcome == TestOutcome.DESELECTED:
        return "deselected by the project's configuration (conftest or addopts)"
    if outcome == TestOutcome.MISSING:
        return _missing_cause(node_id, runs, ev)
    text = "\n".join(t for t in (failure.get("text"), failure.get("exc")) if t)
    return _wanting(describe(failure.get("text"), failure.get("exc")), text, ev.rootdir) or outcome.value


def _wanting(cause: str | None, text: str, rootdir: str | None) -> str | None:
    """``cause``, or the data outside the repository ``text`` names as missing unless the cause
    is already something the sandbox cannot give (a dataset neither on disk nor reachable: network)."""
    if cause is not None and cause.startswith(UNAVAILABLE):
        return cause
    return missing_data(ANSI_ESCAPE.sub("", text), rootdir) or cause


def missing_data(text: str, rootdir: str | None) -> str | None:
    """``needs data not in the repository: <what>`` when the failure is a file or folder inside
    the run's copy that is not there, or data a library says must be downloaded: data the
    project's CI fetches (another repository, LFS, a download script), which no body of the
    function can supply."""
    for pattern, what in DOWNLOADED_DATA:
        if found := pattern.search(text):
            return f"{NEEDS_DATA}: {what.format(*found.groups())}"
    if not rootdir:
        return None
    root = rootdir.rstrip("/") + "/"
    for line in text.splitlines():
        start = line.find(root)
        if start >= 0 and MISSING_PATH.search(line):
            path = re.split(r"[\s'\"]", line[start + len(root) :], maxsplit=1)[0]
            return f"{NEEDS_DATA}: {path} ({_message(line)})"
    return None


NOT_RUN = frozenset({TestOutcome.MISSING, TestOutcome.SKIPPED, TestOutcome.DESELECTED})


def _lost_with_their_module(
    canary_tests: Sequence[str], canaries: list[TestOutcome], tests: Mapping[str, TestOutcome]
) -> bool:
    """The canaries did not run, and neither did any of the task's tests in the module they
    joined: the module could not be imported (a candidate that breaks it) or was skipped or
    deselected whole (``pytest.importorskip`` at its top). Its tests then cannot pass, so the
    run needs no canary to be judged."""
    module = canary_tests[0].split("::")[0]
    own = [outcome for node_id, outcome in tests.items() if node_id.split("::")[0] == module]
    return set(canaries) <= NOT_RUN and bool(own) and set(own) <= NOT_RUN


def _module_error(node_id: str, ev: Events) -> str | None:
    """The collection error of the module ``node_id`` is in, or of a folder above it (its
    conftest); "" when the error came without its text."""
    module = node_id.split("::")[0]
    return next((exc or "" for nid, exc in ev.collect_errors if nid == module or module.startswith(nid + "/")), None)


def _missing_cause(node_id: str, runs: list[dict], ev: Events) -> str:
    module = node_id.split("::")[0]
    error = _module_error(node_id, ev)
    if error is not None:  # a module importing a dataset the sandbox lacks: that want, as a test's would be
        return f"{module} {UNCOLLECTABLE}: {_wanting(describe(error), error, ev.rootdir) or 'collection error'}"
    if runs:
        return STOPPED_DURING
    if any(selects(nid, [node_id]) for nid in ev.collected or ()):
        return f"{UNFINISHED} (collected, never reached: the session stopped before it)"
    if ev.collected is None:  # a session that ended at start-up (a conftest's error) tells nothing of the test
        return f"{UNFINISHED} (the session ended before collecting the tests)"
    return f"{NOT_FOUND} (no such test in the collected modules)"


def _causes(tests: Mapping[str, TestOutcome], ev: Events) -> dict[str, str]:
    return {nid: node_cause(nid, outcome, ev) for nid, outcome in tests.items() if outcome != TestOutcome.PASSED}


def case_outcomes(expected: list[str], ev: Events) -> dict[str, TestOutcome]:
    """Each item that ran under a listed id without being it (a parametrized case, a method of
    a listed class): gold's cases let a task keep the cases of a test that gold ran only in part."""
    listed = set(expected)
    return {nid: item_outcome(ph) for nid, ph in ev.phases.items() if nid not in listed and selects(nid, expected)}


def output_cause(output: str) -> str:
    """Why pytest produced no (complete) report, from its own output (the terminal reporter is off,
    so this is pytest's error text: an unusable conftest, a usage error, a crash)."""
    return describe(output[-TEXT_CAUSE_CHARS:]) or "no output"


def observations(ev: Events, screen_code: Callable[[str], list[str]] | None) -> list[str]:
    """What candidate code was seen doing, with code run from a writable place that the static
    screen (``screen_code``) refuses; compiled code there is refused outright by the guard."""
    found = list(ev.observed)
    for file, source in ev.foreign if screen_code is not None else ():
        refused = screen_code(source)
        if refused:
            found.append(f"ran code from {file} that the screen refuses: {'; '.join(refused)}"[:CAUSE_CHARS])
    return list(dict.fromkeys(found))


def grade(
    expected: list[str],
    nonce: str,
    run: RunResult,
    allowed: Collection[str] | None = frozenset(),
    screen_code: Callable[[str], list[str]] | None = None,
) -> Verdict:
    """The verdict rule (DESIGN.md "Verdicts") over one supervisor result. ``allowed``: what
    gold's runs of the task were seen doing (None: this is gold, the reference: nothing it
    does is held against it); anything else candidate code was seen doing is a violation."""
    if run.parts:
        return combined([grade(part.tests, part.nonce, part.run, allowed, screen_code) for part in run.parts])
    ev = parse_events(run.events)
    seen = observations(ev, screen_code) + [f"{WROTE}{rel}" for rel in run.wrote]
    canary_tests = canary_ids(nonce, expected)
    tests = {node_id: node_outcome(node_id, ev.phases, ev.deselected, ev.collect_skipped) for node_id in expected}
    durations = {
        nid: round(sum(float(p.get("duration") or 0) for p in ph.values()), 6)
        for nid, ph in ev.phases.items()
        if nid not in canary_tests
    }
    exception = _first_exception(expected, tests, ev)

    cases = case_outcomes(expected, ev)

    def verdict(status: EvalStatus, detail: str | None) -> Verdict:
        causes = _causes(tests, ev) | _causes(cases, ev)
        if run.oom:  # the test that was running when the memory cgroup killed the session
            causes = {k: OUT_OF_MEMORY if v == STOPPED_DURING else v for k, v in causes.items()}
        return Verdict(status, tests, detail, exception, causes, cases, seen, durations)

    if not expected:
        return verdict(EvalStatus.ERROR, "task lists no tests")
    if run.infra:
        return verdict(EvalStatus.INFRA_ERROR, run.infra)
    violations = ev.problems + run.violations
    if allowed is not None:
        violations += [f"seen: {what}" for what in seen if what not in allowed]
    if run.output_exceeded:
        violations.append(f"output or report limit exceeded ({run.output_bytes} bytes of output)")
    if violations:
        return verdict(EvalStatus.SANDBOX_VIOLATION, joined(violations))
    if run.timed_out:
        return verdict(EvalStatus.TIMEOUT, f"timeout after {run.wall_s:.0f} s (wall-clock limit; the run was killed)")
    if not ev.hello:
        return verdict(EvalStatus.ERROR, f"no report: {output_cause(run.output)} (exit code {run.exit_code})")
    if not ev.finish and run.oom:
        return verdict(EvalStatus.ERROR, f"{OUT_OF_MEMORY} (exit code {run.exit_code})")
    if not ev.finish:
        return verdict(
            EvalStatus.ERROR, f"the test session ended early: {output_cause(run.output)} (exit code {run.exit_code})"
        )
    canaries = [canary_outcome(c, ev.phases) for c in canary_tests]
    if canaries == [TestOutcome.MISSING, TestOutcome.MISSING] and ev.exitstatus in PYTEST_ABORTED:
        return verdict(
            EvalStatus.ERROR,
            f"pytest stopped before running tests (exit status {ev.exitstatus}): {output_cause(run.output)}",
        )
    if ev.collected is None:
        return verdict(EvalStatus.SANDBOX_VIOLATION, "the report has no collected event")
    # Canaries lost with their module (the supervisor ran pytest again without the folder of a
    # conftest that cannot be imported: ignite's handlers/ conftest imports visdom) leave no test
    # failing, and the run cannot pass: that module's listed tests did not run either.
    lost = _lost_with_their_module(canary_tests, canaries, tests)
    complete = (TESTS_FAILED, ALL_PASSED) if lost else (TESTS_FAILED,)
    if run.exit_code != ev.exitstatus or ev.exitstatus not in complete:
        return verdict(
            EvalStatus.SANDBOX_VIOLATION,
            f"exit code {run.exit_code} and reported exit status {ev.exitstatus} disagree with a complete run ({TESTS_FAILED})",
        )
    unrunnable = canaries_failed_in_setup(canary_tests, ev.phases)
    if unrunnable is not None:
        return verdict(EvalStatus.ERROR, joined([f"{CANARIES_UNRUNNABLE}: {unrunnable}"]))
    if canaries != [TestOutcome.FAILED, TestOutcome.PASSED] and not lost:
        return verdict(EvalStatus.SANDBOX_VIOLATION, "canary tests misreported: outcomes were altered")
    if all(o == TestOutcome.PASSED for o in tests.values()):
        return verdict(EvalStatus.PASS, None)
    failing = [f"{nid}: {cause}" for nid, cause in _causes(tests, ev).items()]  # the listed ids, not each case
    return verdict(EvalStatus.FAIL, joined(failing))


DETAIL_CHARS = 2000


def joined(parts: Sequence[str], limit: int = DETAIL_CHARS) -> str:
    """``parts`` joined with ``; `` within ``limit`` characters, cut only between words: gold's
    repairs read module names out of a detail (``missing module tensorflow``), and a cut
    inside one named a module ``ten`` that the image repair then asked the index for."""
    text = "; ".join(parts)
    if len(text) <= limit:
        return text
    return text[: limit - 2].rsplit(" ", 1)[0] + " …"


# Which session's status a candidate run in several takes: any violation, else any fault of
# the machine (run again), else the first that is not a pass; a pass needs every one.
RUN_SEVERITY = (
    EvalStatus.SANDBOX_VIOLATION, EvalStatus.INFRA_ERROR, EvalStatus.TIMEOUT, EvalStatus.ERROR, EvalStatus.FAIL,
)  # fmt: skip


def combined(verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict over a candidate's pytest sessions (``RunResult.of_parts``)."""
    ranked = [v for status in RUN_SEVERITY for v in verdicts if v.status == status]
    worst = ranked[0] if ranked else verdicts[0]
    details = [v.detail for v in verdicts if v.status == worst.status and v.detail]
    return Verdict(
        worst.status, _merged(v.tests for v in verdicts), joined(details) or None,
        worst.exception or next((v.exception for v in verdicts if v.exception), None),
        _merged(v.causes for v in verdicts), _merged(v.cases for v in verdicts),
        list(dict.fromkeys(what for v in verdicts for what in v.observed)), _merged(v.durations for v in verdicts),
    )  # fmt: skip


def _merged(mappings: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {key: value for mapping in mappings for key, value in mapping.items()}
