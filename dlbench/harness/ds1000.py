"""DS-1000 candidates in the sandbox: one warm container of the shared DS-1000 image per worker,
one test program per candidate, a verdict the candidate cannot write.

The container is the DL-Bench candidates' (``sandbox.container_options``: no network, the
memory/CPU/pids limits, read-only root with a small ``/tmp``, uid 10001, every capability
dropped, ``no-new-privileges``, the owner labels that let an interrupted run's containers be
removed). Each candidate is one ``docker exec`` of the shipped runner
(``harness/shipped/ds1000_runner.py``: what it guarantees is in its docstring and in
docs/DS1000.md), with the request on stdin and one JSON reply on stdout. Before anything
runs, the solution's program (the problem's ``exec_context`` with the solution at
``[insert]``) goes through the static screen (``harness/screen.py``, ``evaluate.screen``),
with the reference's program as what is allowed.

Grading is a pure function of the reply (``grade``): a pass only when the runner reports
that both test calls returned. A reply that never comes while the container still runs
(the candidate killed the runner) is a ``sandbox_violation``; a container stopped from
outside is an ``infra_error``, left out of the scores. Each candidate's evidence (program,
reply, verdict) is kept under ``evidence_root``, keyed by a hash of what decides the verdict,
so a rerun skips candidates already judged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import socket
import struct
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from docker.errors import DockerException, NotFound

import docker
from dlbench.config import EvaluateConfig
from dlbench.harness.code import DS1000_RUNNER, ds1000_support_files
from dlbench.harness.sandbox import (
    STOP_SETTLE_S,
    LockdownMissing,
    check_lockdown,
    container_options,
    engine_name,
    remove_container,
    remove_orphans_once,
)
from dlbench.harness.screen import screen
from dlbench.images.build import RUNNER_UID, SUPPORT_DIR, docker_client
from dlbench.logs import Progress
from dlbench.records import Ds1000Evidence, Ds1000Problem, EvalStatus, Evaluation, Generation, GenStatus, TestOutcome
from dlbench.store import read_json, write_json

log = logging.getLogger(__name__)

REPLY_GRACE_S = 30.0  # past the program's own limit: the runner's start and clean-up
EXEC_CONTEXT = re.compile(r"exec_context\s*=\s*r?(\"\"\"|''')(.*?)\1", re.S)
OUTCOME_STATUS = {
    "returned": EvalStatus.PASS,
    "raised": EvalStatus.FAIL,
    "timeout": EvalStatus.TIMEOUT,
    "no_verdict": EvalStatus.ERROR,
    "violation": EvalStatus.SANDBOX_VIOLATION,
    "forged": EvalStatus.SANDBOX_VIOLATION,
}


class RunnerLost(RuntimeError):
    """No reply from the runner, and the status that gets: ``infra_error`` when the container was
    stopped from outside, ``timeout`` when the runner fell silent past its own limit and the grace,
    ``sandbox_violation`` when it ended without one (only the program beside it could do that)."""

    def __init__(self, message: str, status: EvalStatus):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- pure parts


def program_of(problem: Ds1000Problem, solution: str) -> str | None:
    """The program the test runs: the context's ``exec_context`` with the solution at
    ``[insert]`` (None where the context keeps it some other way)."""
    found = EXEC_CONTEXT.search(problem.code_context)
    return found.group(2).replace("[insert]", solution) if found else None


def screened(problem: Ds1000Problem, solution: str) -> list[str]:
    """Forbidden uses in the solution's program that the reference's program does not make."""
    program = program_of(problem, solution)
    if program is None:
        return screen(solution, problem.reference_code)
    return screen(program, program_of(problem, problem.reference_code) or problem.reference_code)


def grade(reply: Mapping) -> tuple[EvalStatus, str | None, dict[str, TestOutcome], str | None, list[str]]:
    """(status, detail, test outcomes, exception, violations) of a runner's reply: a pass is
    the outcome ``returned`` with every test call passed, nothing else."""
    outcome = str(reply.get("outcome", ""))
    status = OUTCOME_STATUS.get(outcome, EvalStatus.SANDBOX_VIOLATION)
    raw = reply.get("tests") if isinstance(reply.get("tests"), Mapping) else {}
    tests = {str(k): TestOutcome.PASSED if v == "passed" else TestOutcome.FAILED for k, v in raw.items()}
    violations = [str(v) for v in reply.get("violations") or []]
    if status == EvalStatus.PASS and (not tests or any(o != TestOutcome.PASSED for o in tests.values())):
        status = EvalStatus.SANDBOX_VIOLATION
        violations.append("a reply claiming a pass without every test call passed")
    detail = reply.get("detail") or (None if outcome in OUTCOME_STATUS else f"an unknown outcome {outcome!r}")
    exception = reply.get("exception")
    return status, detail, tests, str(exception) if exception else None, violations


# ---------------------------------------------------------------- the container


class Ds1000Sandbox:
    """One warm sandbox container of the DS-1000 image; candidates run one at a time."""

    def __init__(self, image: str, cfg: EvaluateConfig, client: docker.DockerClient | None = None):
        self.image, self.cfg = image, cfg
        self.client = client or docker_client()
        self.container = None

    def run(self, context: str, solution: str, timeout_s: float) -> dict:
        """The runner's reply for one candidate; raises ``RunnerLost`` when none comes."""
        if self.container is None:
            self._start()
        request = {"code_context": context, "solution": solution, "timeout_s": timeout_s, "sweep": True}
        try:
            return self._exchange(json.dumps(request).encode(), timeout_s + REPLY_GRACE_S)
        except (RunnerLost, DockerException):
            self.close()  # whatever the candidate (or the engine) left, the next one gets a fresh container
            raise

    def _start(self) -> None:
        remove_orphans_once(self.client)
        options = container_options(self.cfg, engine=engine_name(self.client))
        self.container = self.client.containers.run(self.image, ["sleep", "infinity"], **options)
        try:
            check_lockdown(self.container, options)
        except LockdownMissing as exc:  # the engine's fault: an infrastructure error, no container left
            self.close()
            raise RunnerLost(str(exc), EvalStatus.INFRA_ERROR) from exc

    def _exchange(self, request: bytes, limit: float) -> dict:
        api = self.client.api
        command = ["python", "-I", f"{SUPPORT_DIR}/{DS1000_RUNNER}"]
        user = f"{RUNNER_UID}:{RUNNER_UID}"
        exec_id = api.exec_create(self.container.id, command, stdin=True, stdout=True, stderr=True, user=user)["Id"]
        sock = api.exec_start(exec_id, socket=True)
        raw = getattr(sock, "_sock", sock)
        try:
            raw.sendall(request)
            raw.shutdown(socket.SHUT_WR)
            stdout, stderr = _read_all(raw, time.monotonic() + limit)
        except OSError:  # the stream broke while the request went in: no reply
            stdout, stderr = b"", b""
        finally:
            raw.close()
        lines = stdout.decode("utf-8", "replace").strip().splitlines()
        try:
            reply = json.loads(lines[-1]) if len(lines) == 1 else None
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            if self.stopped_from_outside():
                raise RunnerLost("the sandbox container was stopped from outside", EvalStatus.INFRA_ERROR)
            why = f"the runner ended without its reply; its stderr: {stderr[-1500:].decode('utf-8', 'replace')}"
            raise RunnerLost(why, EvalStatus.SANDBOX_VIOLATION)
        return reply

    def stopped_from_outside(self) -> bool:
        """The container is gone or stopped: the engine's or an operator's doing (a candidate
        cannot stop it: its init ignores signals from inside)."""
        deadline = time.monotonic() + STOP_SETTLE_S
        while True:
            try:
                self.container.reload()
            except (NotFound, DockerException):
                return True
            if not (self.container.attrs.get("State") or {}).get("Running"):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)

    def close(self) -> None:
        if self.container is not None:
            remove_container(self.container)
            self.container = None


def _read_all(sock, deadline: float) -> tuple[bytes, bytes]:
    """The exec's stdout and stderr until it ends (the engine's multiplexed stream)."""
    buffer, out, err = b"", b"", b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RunnerLost("the runner did not reply within its limit and the grace", EvalStatus.TIMEOUT)
        sock.settimeout(min(left, 5.0))
        try:
            chunk = sock.recv(1 << 16)
        except TimeoutError:
            continue
        except OSError:  # the engine dropped the stream (a container killed): no reply, as at its end
            return out, err
        if not chunk:
            return out, err
        buffer += chunk
        while len(buffer) >= 8:
            stream, size = struct.unpack(">BxxxL", buffer[:8])
            if len(buffer) < 8 + size:
                break
            payload, buffer = buffer[8 : 8 + size], buffer[8 + size :]
            if stream == 2:
                err = (err + payload)[-65536:]
            else:
                out = (out + payload)[-(1 << 22) :]


# ---------------------------------------------------------------- evaluating candidates


@dataclass(frozen=True)
class Ds1000Job:
    gen: Generation
    problem: Ds1000Problem | None
    evidence: Path


def evidence_path(root: Path, gen: Generation) -> Path:
    return root / gen.model / gen.technique / f"{gen.task_id.replace('/', '-')}-r{gen.run}-s{gen.sample}.json"


def verdict_key(job: Ds1000Job, image: str, cfg: EvaluateConfig, timeout_s: float) -> str:
    """What decides a verdict: the problem, the code, the image, the runner, the limits."""
    limits = cfg.model_dump(include={"memory_mb", "cpus", "pids", "screen"}) | {"timeout_s": timeout_s}
    runner = hashlib.sha256(ds1000_support_files()[DS1000_RUNNER]).hexdigest()
    problem = job.problem.model_dump(mode="json") if job.problem else None
    blob = json.dumps([problem, job.gen.code, image, runner, limits], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def evaluate_ds1000(
    problems: Sequence[Ds1000Problem],
    generations: Iterable[Generation],
    image: str,
    cfg: EvaluateConfig,
    timeout_s: float,
    evidence_root: Path,
    jobs: int = 1,
    client: docker.DockerClient | None = None,
) -> list[Evaluation]:
    """Every candidate's evaluation, in the generations' order (one container per worker)."""
    by_id = {p.task_id: p for p in problems}
    work = [Ds1000Job(g, by_id.get(g.task_id), evidence_path(evidence_root, g)) for g in generations]
    client = client or docker_client()
    free: list[Ds1000Sandbox] = []
    lock = threading.Lock()
    progress = Progress(len(work), "evaluate DS-1000", unit="candidate")

    def one(job: Ds1000Job) -> Evaluation:
        with lock:
            sandbox = free.pop() if free else Ds1000Sandbox(image, cfg, client)
        try:
            return evaluate_one(job, sandbox, image, cfg, timeout_s)
        finally:
            with lock:
                free.append(sandbox)
            progress.advance()

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(one, work))
    finally:
        for sandbox in free:
            sandbox.close()


def evaluate_one(job: Ds1000Job, sandbox: Ds1000Sandbox, image: str, cfg: EvaluateConfig, timeout_s: float) -> Evaluation:  # fmt: skip
    """One candidate's verdict: reused from its evidence when nothing deciding it changed."""
    key = verdict_key(job, image, cfg, timeout_s)
    if job.evidence.exists():
        kept = read_json(job.evidence, Ds1000Evidence)
        if kept.key == key and kept.evaluation.status != EvalStatus.INFRA_ERROR:
            return kept.evaluation
    evaluation, reply = _judge(job, sandbox, cfg, timeout_s)
    write_json(job.evidence, Ds1000Evidence(key=key, solution=job.gen.code, reply=reply, evaluation=evaluation))
    return evaluation


def _judge(job: Ds1000Job, sandbox: Ds1000Sandbox, cfg: EvaluateConfig, timeout_s: float) -> tuple[Evaluation, dict | None]:  # fmt: skip
    gen = job.gen
    if job.problem is None:
        return _record(gen, EvalStatus.PATCH_ERROR, f"no DS-1000 problem {gen.task_id!r}"), None
    if gen.status == GenStatus.API_ERROR:
        return _record(gen, EvalStatus.API_ERROR, gen.detail or "the endpoint did not answer"), None
    if gen.code is None or not gen.code.strip():
        return _record(gen, EvalStatus.NO_CODE, gen.detail or f"generation status {gen.status}"), None
    if cfg.screen and (refused := screened(job.problem, gen.code)):
        return _record(gen, EvalStatus.SANDBOX_VIOLATION, f"refused by the screen: {'; '.join(refused)}", observed=refused), None  # fmt: skip
    try:
        reply = sandbox.run(job.problem.code_context, gen.code, timeout_s)
    except RunnerLost as exc:
        return _record(gen, exc.status, str(exc)[:2000]), None
    except DockerException as exc:
        return _record(gen, EvalStatus.INFRA_ERROR, f"the Docker engine failed: {exc}"[:2000]), None
    status, detail, tests, exception, violations = grade(reply)
    evaluation = _record(gen, status, detail, tests, float(reply.get("duration_s") or 0.0), exception, violations)
    return evaluation, reply


def _record(
    gen: Generation,
    status: EvalStatus,
    detail: str | None,
    tests: Mapping[str, TestOutcome] | None = None,
    duration_s: float = 0.0,
    exception: str | None = None,
    observed: Sequence[str] = (),
) -> Evaluation:
    return Evaluation(
        task_id=gen.task_id, model=gen.model, technique=gen.technique, run=gen.run, sample=gen.sample,
        status=status, passed=status == EvalStatus.PASS, tests=dict(tests or {}), duration_s=duration_s,
        detail=detail, backend="docker", exception=exception, observed=list(observed),
    )  # fmt: skip
