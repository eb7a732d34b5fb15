"""Backend-neutral running: requests to a supervisor, sessions that survive a killed one.

A *session* is one long-lived supervisor (``supervisor.py serve``) reached over a line
channel: a local subprocess (``local.py``) or an exec inside a warm container
(``sandbox.py``). Whatever a candidate does to its supervisor, the session notices (no
answer in time, end of stream), records it, and starts a fresh supervisor for the next.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import select
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar, Self

from dlbench.config import EvaluateConfig
from dlbench.harness.verdict import Part, RunResult
from dlbench.records import Environment

log = logging.getLogger(__name__)

BACKENDS = ("docker", "local")
REPLY_GRACE_S = 30.0  # beyond the candidate's own limit: copying, start-up, clean-up
START_TIMEOUT_S = 300.0  # container start and preloading a framework stack on a loaded machine
STOP_POLL_S = 1.0  # how often a reader looks whether its session was closed (wait_readable)
PRELOAD = ("numpy", "pytest")
# Never imported before forking: importing pip switches setuptools' distutils shim off for the
# process (setuptools' ``spec_for_pip``: "stdlib distutils when running under pip"), so every
# child's ``import setuptools`` then failed (``AssertionError: .../distutils/core.py``:
# neurodiffeq's tests reach it through triton, 11 of 20 sampled tasks lost).
NEVER_PRELOADED = frozenset({"pip"})
# Import names that differ from distribution names. The supervisor refuses a module whose
# import starts a thread that stays busy (a fork then can deadlock): the child imports it.
IMPORT_NAMES = {
    "scikit-learn": "sklearn", "pillow": "PIL", "opencv-python": "cv2", "pyyaml": "yaml", "scikit-image": "skimage",
    "tensorflow-cpu": "tensorflow", "tensorflow-gpu": "tensorflow",
}  # fmt: skip
NO_LANDLOCK = (
    "the container's kernel offers no Landlock, so candidates could read the reference in the original checkout; "
    "use Linux 5.13+ with Landlock enabled, or set evaluate.hide_reference: if_available"
)


@dataclass(frozen=True)
class Candidate:
    """One candidate ready to run: the patched files of its copy and the node ids to run."""

    key: str
    files: dict[str, str]
    tests: list[str]
    nonce: str
    timeout_s: float | None = None  # its own limit (scaled to gold's runtime), else the config's
    seed: int | None = None  # each test's random state (``evaluate.test_seed``); None: unseeded
    target: str | None = None  # ``path:qualname`` of the task's function: its return values are checked
    sessions: tuple[tuple[str, ...], ...] = ()  # its tests split into pytest sessions (``suites``); () for one

    @classmethod
    def make(
        cls,
        key: str,
        files: dict[str, str],
        tests: list[str],
        timeout_s: float | None = None,
        seed: int | None = None,
        target: str | None = None,
        sessions: Sequence[Sequence[str]] = (),
    ) -> Candidate:
        split = tuple(tuple(s) for s in sessions) if len(sessions) > 1 else ()
        return cls(key, files, tests, secrets.token_hex(6), timeout_s, seed, target, split)

    def parts(self) -> list[Candidate]:
        """One candidate per pytest session its tests need, each with its own canaries."""
        if not self.sessions:
            return [self]
        return [
            replace(self, key=f"{self.key}#{n}", tests=list(tests), nonce=secrets.token_hex(6), sessions=())
            for n, tests in enumerate(self.sessions, 1)
        ]

    def limit(self, cfg: EvaluateConfig) -> float:
        return self.timeout_s or cfg.timeout_s


def request(candidate: Candidate, cfg: EvaluateConfig) -> dict:
    return {
        "id": candidate.key,
        "files": candidate.files,
        "tests": candidate.tests,
        "nonce": candidate.nonce,
        "timeout_s": candidate.limit(cfg),
        "memory_mb": cfg.memory_mb,
        "output_limit": cfg.output_limit_kb * 1024,
        "nproc": cfg.pids,
        "seed": candidate.seed,
        "target": candidate.target,
    }


def run_sessions(candidate: Candidate, run_one: Callable[[Candidate], RunResult]) -> RunResult:
    """``candidate``'s run by ``run_one``; a candidate whose tests need several pytest sessions
    runs them one after another, each within the candidate's limit."""
    parts = candidate.parts()
    if len(parts) == 1:
        return run_one(candidate)
    return RunResult.of_parts([Part(part.tests, part.nonce, run_one(part)) for part in parts])


def preload_for(checkout: Path, environment: Environment | None = None) -> tuple[str, ...]:
    """Modules a supervisor imports once for this project: pytest, numpy and its dependencies:
    those its image's environment resolved (recorded when it was built), else those its
    checkout declares (planned again: the local backend has no image)."""
    if environment is not None:
        requirements = [r.spec for r in environment.requirements]
    else:
        from dlbench.images.build import project_requirements

        try:
            requirements = project_requirements(checkout)
        except Exception:  # noqa: BLE001 - a warm-up hint only: the image build reports bad files
            requirements = []
    names = [re.split(r"[\s\[<>=!~;@]", r.strip(), maxsplit=1)[0].lower() for r in requirements]
    modules = [IMPORT_NAMES.get(n, n.replace("-", "_")) for n in names if n]
    return tuple(m for m in dict.fromkeys([*PRELOAD, *modules]) if m not in NEVER_PRELOADED)


def preload_args(
    preload: tuple[str, ...], discover: bool, skip: tuple[str, ...] = (), private: tuple[str, ...] | None = None
) -> list[str]:
    """Supervisor arguments: modules to import once, whether to add the project's own
    third-party imports (``evaluate.preload``), those never to import before forking
    (``skip``: an earlier supervisor found their imports starting threads that stay busy,
    or changing the environment), and the modules the session's requests may rewrite (``private``: every other module of the
    project is compiled once; None: none is, ``evaluate.compile_cache``)."""
    never = [arg for name in dict.fromkeys(skip) for arg in ("--skip-preload", name)]
    cache = [arg for rel in private or () for arg in ("--private", rel)]
    return ["--preload", ",".join(preload), *(["--discover"] if discover else []), *never, *cache]


def ready_summary(key: str, ready: dict) -> str:
    """What a warm supervisor holds, for the run's log: a module left out of the preload is
    imported again by every candidate, a cost that shows in no verdict."""
    preloaded, left_out = ready.get("preloaded") or [], ready.get("not_preloaded") or []
    text = f"supervisor for {key} ready: {len(preloaded)} modules preloaded"
    return text + (f"; not preloaded (threads or environment): {', '.join(left_out)}" if left_out else "")


class SessionLost(RuntimeError):
    """The supervisor stopped answering (killed, crashed, or stuck past every limit)."""


def wait_readable(source, deadline: float, stopped: Callable[[], bool]) -> bool:
    """Whether ``source`` (a socket or file descriptor) has data before ``deadline``;
    ``SessionLost`` once ``stopped()``: another thread closed the session (Ctrl-C). Closing
    wakes a reader already in select(), not one about to enter it, so it looks every
    ``STOP_POLL_S``."""
    while (left := deadline - time.monotonic()) > 0:
        if stopped():
            raise SessionLost("the session was closed")
        if select.select([source], [], [], min(left, STOP_POLL_S))[0]:
            return True
    return False


class Session(ABC):
    """A supervisor behind a line channel; restarted after it is lost.

    Sessions start one at a time: on a small machine two warm-ups at once take longer than
    one after the other, and a later session of the same project (``key``) starts without
    the modules an earlier supervisor found starting threads, so it needs no restart."""

    backend = "?"
    _starting: ClassVar[threading.Lock] = threading.Lock()
    _thread_starters: ClassVar[dict[str, tuple[str, ...]]] = {}

    def __init__(self, cfg: EvaluateConfig, key: str):
        self.cfg, self.key = cfg, key
        self.started = False

    def learned_skip(self) -> tuple[str, ...]:
        return self._thread_starters.get(self.key, ())

    @abstractmethod
    def _start(self) -> None: ...

    @abstractmethod
    def _send(self, data: bytes) -> None: ...

    @abstractmethod
    def _recv_line(self, deadline: float) -> bytes:
        """One line from the supervisor; raise ``SessionLost`` at end of stream or deadline."""

    @abstractmethod
    def _stop(self) -> None: ...

    def outside_fault(self) -> str | None:
        """Why the session died from outside the candidate's reach (the engine, the OOM killer
        of the host, ``docker kill``), or None when only the candidate can have ended it."""
        return None

    def start(self) -> dict:
        with self._starting:
            self._start()
            ready = json.loads(self._recv_line(time.monotonic() + START_TIMEOUT_S))
        if not ready.get("ready"):
            raise SessionLost(f"supervisor did not start: {ready}")
        if self.backend == "docker" and self.cfg.hide_reference == "required" and not ready.get("landlock"):
            raise SessionLost(NO_LANDLOCK)
        self._thread_starters[self.key] = tuple(ready.get("not_preloaded") or ())
        self.started = True
        log.info("%s", ready_summary(self.key, ready))
        return ready

    def run(self, candidate: Candidate) -> RunResult:
        return run_sessions(candidate, self._run_one)

    def _run_one(self, candidate: Candidate) -> RunResult:
        if not self.started:
            try:
                self.start()
            except Exception as exc:  # noqa: BLE001 - engine, start-up or channel: infrastructure, not the candidate
                log.warning("%s supervisor could not start for %s: %s", self.backend, candidate.key, exc)
                self.close()
                return RunResult(infra=f"{self.backend} supervisor could not start: {exc}"[:2000])
        try:
            self._send((json.dumps(request(candidate, self.cfg)) + "\n").encode())
            answer = json.loads(self._recv_line(time.monotonic() + candidate.limit(self.cfg) + REPLY_GRACE_S))
            if answer.get("id") != candidate.key:  # out of step, or not written by the supervisor
                raise SessionLost(f"answer for another request: {str(answer.get('id'))[:100]!r}")
            if answer.get("restart"):  # the candidate changed the supervisor's own state
                self.close()
            return RunResult.from_response(answer)
        except (SessionLost, OSError, ValueError) as exc:
            outside = self.outside_fault()  # before close(), which removes the evidence
            log.warning("%s supervisor lost while running %s: %s; restarting it", self.backend, candidate.key, exc)
            self.close()
            if outside:
                return RunResult(infra=f"{outside} during the run ({exc})"[:2000])
            return RunResult(violations=[f"the supervisor was killed or stopped answering during the run ({exc})"])

    def close(self) -> None:
        if self.started:
            try:
                self._send(b'{"op": "exit"}\n')
            except (OSError, ValueError, SessionLost):
                pass
        self._stop()
        self.started = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resolve_backend(name: str, base_image: str = EvaluateConfig().base_image) -> str:
    """``docker`` or ``local``; ``auto`` picks docker when an engine answers and has the base image."""
    if name in BACKENDS:
        return name
    if name != "auto":
        raise ValueError(f"unknown backend {name!r} (auto, docker or local)")
    from dlbench.images.build import EngineUnavailable, docker_client, ensure_base_image

    try:
        client = docker_client(timeout=20)
        client.ping()
        if ensure_base_image(base_image, client, pull=False):
            return "docker"
        reason = f"base image {base_image!r} is missing"
    except (EngineUnavailable, Exception) as exc:  # noqa: BLE001 - any engine failure means: no docker
        reason = f"no Docker engine ({exc})"
    log.warning("backend auto: %s; using the LOCAL backend, which is NOT a sandbox", reason)
    return "local"
