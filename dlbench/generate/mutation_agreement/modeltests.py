"""Model-written tests: ask for assertions, parse them, run candidates against them.

The model sees the task's prompt (never the repository's tests) and is asked for
``assert`` statements calling the function. An answer is parsed into test cases: every
``assert`` (at the top level or inside a ``def test_*``) that calls the target — the
function's name, ``.method(`` for a method, the class for ``__init__`` — becomes one
case, with the imports and plain assignments written before it as its setup; duplicates
go, at most ``cap`` stay. Assignments that rebind the target (or its class) are dropped,
and so are the target's names in imports: each test imports the real one from the task's
module, so a model's guess at the module path or a stub of its own cannot stand in for it.

The cases become one synthetic pytest file (``TEST_FILE``, one function per case, node
ids known in advance) that is added to each candidate's copy of the repository; the
harness runs it in the same sandbox sessions as the evaluation (docker or local; the
repository's own tests are not run here) and each node id is graded from the same
unforgeable per-test report (``dlbench.harness.verdict.grade``).
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

from dlbench.config import EvaluateConfig
from dlbench.generate.sanitize import fenced_blocks, strip_thinking
from dlbench.harness.evaluate import (
    NotRunnable,
    candidate_hash,
    new_session,
    run_pool,
    runnable_module,
    unusable_environment,
)
from dlbench.harness.run import Candidate
from dlbench.harness.verdict import Verdict, grade
from dlbench.llm.responses import ResponseCache
from dlbench.logs import Progress
from dlbench.parsing import Unparsable, parse_ast
from dlbench.records import BenchmarkTask, CloneRecord, EvalStatus, ImageRecord, ModelTestCase, TestOutcome

log = logging.getLogger(__name__)

TEST_FILE = "test_dlbench_model_tests.py"
TEST_PREFIX = "test_model_"
TRUSTED = (EvalStatus.PASS, EvalStatus.FAIL)  # runs whose per-test outcomes count


# ------------------------------------------------------------------ asking


def model_tests_request(task: BenchmarkTask, count: int) -> list[dict[str, str]]:
    """The request for ``count`` assertions about ``task`` (its prompt only, no repository tests)."""
    if task.class_name and task.function == "__init__":
        call = f"constructs `{task.class_name}(...)` and checks the new object"
    elif task.class_name:
        call = f"calls `{task.function}` on an instance of `{task.class_name}`"
    else:
        call = f"calls `{task.function}(...)`"
    return [
        {"role": "system", "content": "You write unit tests for Python functions."},
        {
            "role": "user",
            "content": (
                f"{task.prompt.rstrip()}\n\nDo not implement `{task.function}`. Write {count} test cases for it: "
                f"each one Python `assert` statement that {call} with concrete inputs and checks the result. "
                "Put imports (e.g. `import numpy as np`) and helper variables before the asserts. "
                "Return them in a single ```python code block."
            ),
        },
    ]


# ------------------------------------------------------------------ parsing


def parse_tests(raw: str | None, task: BenchmarkTask, cap: int) -> list[ModelTestCase]:
    """Runnable test cases from a model's answer (see the module docstring)."""
    if not raw or cap <= 0:
        return []
    statements = [s for chunk in _code_chunks(raw) for s in _parsed_statements(chunk)]
    cases: list[ModelTestCase] = []
    seen: set[tuple[str, ...]] = set()
    for setup, assertion in _assertions(statements, task, []):
        key = (*setup, assertion)
        if key in seen:
            continue
        seen.add(key)
        cases.append(ModelTestCase(node_id=f"{TEST_FILE}::{TEST_PREFIX}{len(cases)}", assertion=assertion, setup=setup))
        if len(cases) == cap:
            break
    return cases


def _code_chunks(raw: str) -> list[str]:
    text, _ = strip_thinking(raw)
    blocks, _ = fenced_blocks(text)
    return blocks or [text]


def _parsed_statements(chunk: str) -> list[ast.stmt]:
    """The chunk's statements; when it does not parse, those of each line that does."""
    try:
        return parse_ast(chunk).body
    except Unparsable:
        pass
    found = []
    for line in chunk.splitlines():
        try:
            found += parse_ast(line.strip()).body
        except Unparsable:
            continue
    return found


def _assertions(statements: Sequence[ast.stmt], task: BenchmarkTask, setup: list[str]) -> list[tuple[list[str], str]]:
    """(setup, assertion) pairs in order; ``setup`` grows with imports and assignments."""
    found = []
    setup = list(setup)
    for stmt in statements:
        if isinstance(stmt, ast.Assert) and calls_target(stmt, task):
            found.append((list(setup), ast.unparse(stmt)))
        elif isinstance(stmt, ast.FunctionDef) and stmt.name.startswith("test"):
            found += _assertions(stmt.body, task, setup)
        elif (line := _setup_line(stmt, task)) is not None:
            setup.append(line)
    return found


def target_names(task: BenchmarkTask) -> tuple[set[str], set[str]]:
    """(plain names, attribute names) whose call counts as calling the target."""
    if task.class_name and task.function == "__init__":
        return {task.class_name}, set()
    if task.class_name:
        return set(), {task.function}
    return {task.function}, set()


def calls_target(node: ast.AST, task: BenchmarkTask) -> bool:
    names, attributes = target_names(task)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            if (isinstance(func, ast.Name) and func.id in names) or (
                isinstance(func, ast.Attribute) and func.attr in attributes
            ):
                return True
    return False


def _setup_line(stmt: ast.stmt, task: BenchmarkTask) -> str | None:
    """An import (without any name binding the target or its class) or a plain assignment
    that does not rebind them, as source; None for anything else."""
    own = {task.function, task.class_name} - {None}
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        kept = [a for a in stmt.names if (a.asname or a.name).split(".")[0] not in own]
        return ast.unparse(type(stmt)(**{**stmt.__dict__, "names": kept})) if kept else None
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        return None if bound & own else ast.unparse(stmt)
    return None


# ------------------------------------------------------------------ the synthetic test file


def module_name(path: str) -> str:
    """Import name of a repository file: ``pkg/mod.py`` → ``pkg.mod`` (``src/`` layout aware)."""
    parts = list(Path(path).with_suffix("").parts)
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def model_tests_file(task: BenchmarkTask, cases: Sequence[ModelTestCase]) -> str:
    """Source of the synthetic test file: one self-contained function per case."""
    target = task.class_name or task.function
    header = f'"""Model-written tests of {task.task_id} (dlbench mutation_agreement)."""\n'
    functions = []
    for case in cases:
        name = case.node_id.split("::", 1)[1]
        body = [f"from {module_name(task.path)} import {target}", *case.setup, case.assertion]
        lines = "\n".join("    " + line for stmt in body for line in stmt.splitlines())
        functions.append(f"def {name}():\n{lines}\n")
    return header + "\n\n" + "\n\n".join(functions)


# ------------------------------------------------------------------ running


@dataclass(frozen=True)
class TestJob:
    """One candidate of one task against that task's model tests."""

    __test__ = False
    task: BenchmarkTask
    code: str | None
    tests: tuple[ModelTestCase, ...]


@dataclass(frozen=True)
class TestRun:
    """Per-test pass flags (in test order) and the run's status and detail."""

    __test__ = False
    passed: tuple[bool, ...]
    status: str
    detail: str | None = None


class TestRunner(Protocol):
    def run(self, jobs: Sequence[TestJob]) -> list[TestRun]:
        """One result per job, in order."""


class HarnessRunner:
    """Runs candidates against model tests the way the harness evaluates them: patched,
    screened and run in the same warm sessions (docker or local, project imports preloaded).

    Identical (patched module, tests) pairs run once. Per-test outcomes count only from a
    run graded ``pass`` or ``fail``; a timeout, a violation, an early end or an
    infrastructure error counts as failing every test. With a ``cache_dir``, every result
    is stored under the harness's ``candidate_hash`` of what decided it (module, tests,
    backend, limits, support files), so a rerun runs nothing it has run before.
    """

    def __init__(
        self, clone: CloneRecord, image: ImageRecord | None, backend: str, cfg: EvaluateConfig,
        cache_dir: str | Path | None = None,
    ):  # fmt: skip
        self.clone, self.image, self.backend, self.cfg = clone, image, backend, cfg
        self.cache = ResponseCache(cache_dir) if cache_dir else None

    def run(self, jobs: Sequence[TestJob]) -> list[TestRun]:
        results: dict[int, TestRun] = {}
        pending: dict[str, list[int]] = {}
        files: dict[str, tuple[TestJob, dict[str, str]]] = {}
        for i, job in enumerate(jobs):
            early, patched = self._prepare(job)
            if early is not None:
                results[i] = early
                continue
            module = model_tests_file(job.task, job.tests)
            tests = job.task.model_copy(update={"tests": _ids(job)})
            digest = candidate_hash(tests, patched + module, self.backend, self.cfg, seed=self.cfg.test_seed)
            stored = self.cache.get(digest) if self.cache else None
            if stored is not None:
                results[i] = TestRun(tuple(stored["passed"]), stored["status"], stored["detail"])
                continue
            pending.setdefault(digest, []).append(i)
            files[digest] = (job, {job.task.path: patched, TEST_FILE: module})
        items = [
            (digest, Candidate.make(f"agreement/{job.task.task_id}/{n}", changed, _ids(job), seed=self.cfg.test_seed))
            for n, (digest, (job, changed)) in enumerate(files.items())
        ]
        progress = Progress(len(items), f"model tests {self.clone.slug}", unit="task")
        for digest, candidate, run in run_pool(self._factory(), items, self.cfg.jobs) if items else ():
            outcome = _outcome(grade(candidate.tests, candidate.nonce, run), candidate.tests)
            if self.cache:
                self.cache.put(
                    digest, {"passed": list(outcome.passed), "status": outcome.status, "detail": outcome.detail}
                )
            for i in pending[digest]:
                results[i] = outcome
            progress.advance()
        return [results[i] for i in range(len(jobs))]

    def _prepare(self, job: TestJob) -> tuple[TestRun | None, str]:
        """(a result when the candidate cannot run, else None; the patched module)."""
        fail = tuple(False for _ in job.tests)
        if job.code is None:
            return TestRun(fail, EvalStatus.NO_CODE.value, "no code"), ""
        if not job.tests:
            return TestRun((), "no_tests", "no model tests"), ""
        unusable = unusable_environment(self.clone, self.image, self.backend)
        if unusable is not None:
            return TestRun(fail, EvalStatus.IMAGE_ERROR.value, unusable), ""
        try:
            return None, runnable_module(job.task, Path(self.clone.path), job.code, self.cfg)
        except NotRunnable as exc:
            return TestRun(fail, exc.status.value, exc.detail), ""

    def _factory(self):
        """A session per worker: the evaluation's own (``harness.evaluate.new_session``)."""
        return partial(new_session, self.clone, self.image, self.backend, self.cfg)


def _outcome(verdict: Verdict, node_ids: Sequence[str]) -> TestRun:
    trusted = verdict.status in TRUSTED
    return TestRun(
        tuple(trusted and verdict.tests[n] == TestOutcome.PASSED for n in node_ids),
        verdict.status.value,
        verdict.detail,
    )


def _ids(job: TestJob) -> list[str]:
    return [case.node_id for case in job.tests]
