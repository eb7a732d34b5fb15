"""The ``local`` backend: the supervisor as a subprocess of this Python, rlimits per child.

NOT a sandbox: the candidate runs as the current user with the network and the file
system of the host; only the rlimits (address space, CPU time, file size, processes when
not root), the wall-clock limit and the per-candidate temp copy stand between it and the
machine. It exists for machines without a container engine; it warns loudly when used.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from dlbench.config import EvaluateConfig
from dlbench.harness.run import PRELOAD, Session, SessionLost, preload_args, wait_readable

log = logging.getLogger(__name__)

SHIPPED = Path(__file__).resolve().parent / "shipped"
SUPERVISOR = SHIPPED / "supervisor.py"
PLUGIN = SHIPPED / "plugin.py"
WARNING = (
    "LOCAL BACKEND: candidate code runs on this machine as %s, with its network and files; "
    "rlimits and timeouts only. This is NOT a sandbox: use the docker backend for untrusted code."
)


# Variables candidate code may see: nothing else of the host's environment (API keys, tokens).
ENV_ALLOWED = ("PATH", "LANG", "PYTHONPATH", "TMPDIR", "TZ")
ENV_ALLOWED_PREFIXES = ("LC_",)
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def candidate_env(host: Mapping[str, str], home: str) -> dict[str, str]:
    """The supervisor's (and so the candidate's) environment: an allow-list of the host's."""
    env = {k: v for k, v in host.items() if k in ENV_ALLOWED or k.startswith(ENV_ALLOWED_PREFIXES)}
    return env | THREADS | {"HOME": home, "PYTHONDONTWRITEBYTECODE": "1"}


def warn_not_a_sandbox() -> None:
    log.warning(WARNING, os.environ.get("USER") or os.getuid())


class LocalSession(Session):
    """``supervisor.py serve`` as a child process, over its stdin/stdout."""

    backend = "local"

    def __init__(
        self,
        repo: Path,
        cfg: EvaluateConfig,
        preload: tuple[str, ...] = PRELOAD,
        test_env: Mapping[str, str] | None = None,
        private: tuple[str, ...] | None = None,
    ):
        super().__init__(cfg, key=str(Path(repo).resolve()))
        self.repo, self.preload, self.test_env = Path(repo).resolve(), preload, dict(test_env or {})
        self.private = private  # the modules requests may rewrite (preload_args)
        self.proc: subprocess.Popen | None = None
        self.work: str | None = None
        self.buffer = b""

    def _start(self) -> None:
        warn_not_a_sandbox()
        self.work = tempfile.mkdtemp(prefix="dlbench-local-")
        cmd = [
            sys.executable, str(SUPERVISOR), "serve", "--repo", str(self.repo), "--work", self.work,
            "--plugin", str(PLUGIN), *preload_args(self.preload, self.cfg.preload, self.learned_skip(), self.private),
        ]  # fmt: skip
        env = self.test_env | candidate_env(os.environ, self.work)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=self.work)
        self.buffer = b""

    def _send(self, data: bytes) -> None:
        if self.proc is None or self.proc.stdin is None:
            raise SessionLost("no supervisor")
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _recv_line(self, deadline: float) -> bytes:
        if self.proc is None or self.proc.stdout is None:
            raise SessionLost("no supervisor")
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            if not wait_readable(fd, deadline, lambda: self.proc is None):
                raise SessionLost("no answer before the deadline")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise SessionLost(f"supervisor exited ({self.proc.poll()})")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def _stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()  # stdin's close flushes: a dead supervisor breaks the pipe
                except OSError:
                    pass
            self.proc = None
        if self.work:
            shutil.rmtree(self.work, ignore_errors=True)
            self.work = None
