"""An interrupted evaluator leaves no container: Ctrl-C and SIGTERM close its sessions at
once; after kill -9, the next run removes the containers of the dead evaluator (labelled
with it), and never those of a live one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dlbench.harness.sandbox import LABEL, OWNER_LABEL, owner_id, remove_orphans
from dlbench.images.build import docker_client
from dlbench.records import CloneRecord, CloneStatus, ImageRecord
from dlbench.store import write_json
from tests.test_harness_projects import TASKS, project, project_image  # noqa: F401 (fixtures)

ROOT = Path(__file__).resolve().parent.parent
# An evaluator busy with a candidate that sleeps: the moment to interrupt it.
EVALUATOR = """\
import faulthandler
import signal
import sys
from pathlib import Path

from dlbench.config import EvaluateConfig
from dlbench.harness.evaluate import evaluate_repo
from dlbench.records import BenchmarkTask, CloneRecord, Generation, ImageRecord

clone = CloneRecord.model_validate_json(Path(sys.argv[1]).read_text())
image = ImageRecord.model_validate_json(Path(sys.argv[2]).read_text())
task = BenchmarkTask.model_validate_json(sys.argv[3])
faulthandler.register(signal.SIGUSR1)  # the test's view into a hung evaluator
slow = "def relu(x):\\n    import time\\n    time.sleep(900)\\n    return x\\n"
gen = Generation(task_id=task.task_id, model="m", technique="t", code=slow)
cfg = EvaluateConfig(timeout_s=900, screen=False)
evaluate_repo(clone, {task.task_id: task}, [gen], image, "docker", cfg, 1, Path(sys.argv[4]))
"""


def containers_of(pid: int) -> list:
    owner = owner_id(pid) or f"gone:{pid}"
    return [
        c
        for c in docker_client().containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)
        if c.labels.get(OWNER_LABEL) == owner
    ]


def start_evaluator(project: Path, image: ImageRecord, tmp_path: Path) -> tuple[subprocess.Popen, str]:
    clone = CloneRecord(
        full_name="proj/calc", slug=image.repo, clone_url="", path=str(project), sha="0" * 40, status=CloneStatus.OK
    )
    write_json(tmp_path / "clone.json", clone)
    write_json(tmp_path / "image.json", image)
    (tmp_path / "evaluator.py").write_text(EVALUATOR)
    args = [str(tmp_path / n) for n in ("evaluator.py", "clone.json", "image.json")]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, *args, TASKS[0].model_dump_json(), str(tmp_path / "evidence")],
        env=env,
        preexec_fn=default_sigint,
    )
    owner = wait_for(lambda: owner_id(proc.pid) if containers_of(proc.pid) else None, proc)
    return proc, owner


def candidate_running(pid: int) -> bool:
    return any("c1" in c.exec_run(["ls", "/tmp/dlbench"]).output.decode() for c in containers_of(pid))


def signal_dispositions(pid: int) -> str:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return "; ".join(line for line in status if line.startswith(("SigBlk", "SigIgn", "SigCgt")))


def default_sigint() -> None:
    """As from a terminal: pytest-xdist's workers ignore SIGINT, and a child that starts with
    it ignored never gets Python's KeyboardInterrupt handler (so Ctrl-C would do nothing)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(found, proc: subprocess.Popen, limit_s: float = 90.0):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if value := found():
            return value
        assert proc.poll() is None, f"the evaluator exited ({proc.returncode}) before its container started"
        time.sleep(0.5)
    raise AssertionError("no container started")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_evaluator_removes_its_containers(
    sig: int, project: Path, project_image: ImageRecord, tmp_path: Path
) -> None:
    proc, owner = start_evaluator(project, project_image, tmp_path)
    wait_for(lambda: candidate_running(proc.pid), proc)  # its copy exists: the candidate is running
    dispositions = signal_dispositions(proc.pid)
    proc.send_signal(sig)
    try:
        # The engine can take minutes to remove a container while another build commits a large
        # layer; an evaluator that waited for its candidate (900 s) would still be caught.
        assert proc.wait(timeout=300) != 0
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)  # its threads' stacks to stderr
        time.sleep(1)
        proc.kill()
        raise AssertionError(f"the evaluator ignored signal {sig}; before it: {dispositions}") from None
    left = docker_client().containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner}"})
    assert left == []


def test_containers_of_a_killed_evaluator_are_removed_by_the_next_run(
    project: Path, project_image: ImageRecord, tmp_path: Path
) -> None:
    proc, owner = start_evaluator(project, project_image, tmp_path)
    alive = docker_client().containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner}"})
    assert alive and not {c.short_id for c in alive} & set(remove_orphans(docker_client()))  # its evaluator lives
    proc.kill()
    proc.wait(timeout=30)
    assert docker_client().containers.list(
        all=True, filters={"label": f"{OWNER_LABEL}={owner}"}
    )  # kill -9: left behind
    assert {c.short_id for c in alive} <= set(remove_orphans(docker_client()))
    assert docker_client().containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner}"}) == []
