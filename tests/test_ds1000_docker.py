"""The DS-1000 track in the Docker sandbox: the shared image built from the package list (once:
it is reused by its content hash), gold passing and null failing every sample problem, hostile
candidates that must fail with gold passing after them in the same container, a timeout, a
container stopped from outside (an infrastructure fault, not the model's), and verdicts reused
from their evidence."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from dlbench.config import DS1000_PACKAGES, EvaluateConfig, ImagesConfig
from dlbench.generate.ds1000 import null_solution
from dlbench.harness.code import ds1000_support_files
from dlbench.harness.ds1000 import Ds1000Job, Ds1000Sandbox, evaluate_ds1000, evaluate_one, evidence_path
from dlbench.harness.sandbox import LABEL
from dlbench.images.build import docker_client
from dlbench.images.environment import build_environment_image
from dlbench.records import EvalStatus, Generation, ImageStatus
from dlbench.report.external import load_ds1000_problems
from tests.conftest import ROOT

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("ds1000")]

BASE = "dlbench/base:bookworm"
PROBLEMS = {p.task_id: p for p in load_ds1000_problems(ROOT / "resources/ds1000/sample.jsonl")}
# No screen: each candidate meets the runner's own layers (the screen refuses most of them first).
UNSCREENED = EvaluateConfig(screen=False, jobs=1)


@pytest.fixture(scope="module")
def image(require_docker, tmp_path_factory) -> str:
    log = tmp_path_factory.mktemp("ds1000-image") / "build.log"
    record = build_environment_image("ds1000", DS1000_PACKAGES, BASE, log, ds1000_support_files(), ImagesConfig())
    assert record.status == ImageStatus.OK, (record.error, log.read_text()[-3000:])
    assert record.environment and any(pin.startswith("pandas==") for pin in record.environment.lock)
    return record.tag


def candidate(task_id: str, model: str, code: str, sample: int = 0) -> Generation:
    return Generation(task_id=task_id, model=model, technique="reference", sample=sample, code=code)


def test_gold_passes_and_null_fails_every_sample_problem(image, tmp_path):
    gens = [candidate(t, "gold", p.reference_code) for t, p in PROBLEMS.items()]
    gens += [candidate(t, "null", null_solution(p.reference_code)) for t, p in PROBLEMS.items()]
    found = evaluate_ds1000(list(PROBLEMS.values()), gens, image, EvaluateConfig(jobs=2), 120, tmp_path)
    gold = [e for e in found if e.model == "gold"]
    null = [e for e in found if e.model == "null"]
    assert all(e.passed and e.backend == "docker" for e in gold), [(e.task_id, e.detail, e.exception) for e in gold]
    assert all(e.status == EvalStatus.FAIL and e.exception.startswith("NotImplementedError") for e in null)
    assert gold[PROBLEMS_ORDER.index("Numpy/4")].tests == {"test_execution": "passed", "test_string": "passed"}


PROBLEMS_ORDER = list(PROBLEMS)

HOSTILE = {  # a solution to Numpy/3 (reverse the columns of a) → the status it must get
    "the verdict pipe forged, then exit status 0": (
        "import os\nfor fd in range(3, 64):\n    try:\n"
        '        os.write(fd, b\'{"tests": {"test_execution": "passed"}, "nonce": "0"}\\n\')\n'
        "    except OSError:\n        pass\nos._exit(0)\n",
        EvalStatus.SANDBOX_VIOLATION,
    ),
    "exit status 0 alone": ("import os\nos._exit(0)\n", EvalStatus.ERROR),
    "sys.exit(0)": ("import sys\nsys.exit(0)\n", EvalStatus.FAIL),
    "the runner killed": (
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nresult = a[:, ::-1]\n",
        EvalStatus.SANDBOX_VIOLATION,
    ),  # fmt: skip
    "the comparison replaced": (
        "import numpy as np\nnp.testing.assert_array_equal = print\nresult = 0\n",
        EvalStatus.SANDBOX_VIOLATION,
    ),  # fmt: skip
    "a value equal to anything": (
        "class Y:\n    def __eq__(self, o):\n        return True\nresult = Y()\n",
        EvalStatus.SANDBOX_VIOLATION,
    ),  # fmt: skip
    "a passing verdict printed": (
        'print(\'{"outcome": "returned", "tests": {"test_execution": "passed"}}\')\nresult = 0\n',
        EvalStatus.FAIL,
    ),  # fmt: skip
}


def test_hostile_candidates_fail_and_gold_passes_after_them_in_the_same_container(image, tmp_path):
    problem = PROBLEMS["Numpy/3"]
    sandbox = Ds1000Sandbox(image, UNSCREENED)
    try:
        for i, (name, (code, status)) in enumerate(HOSTILE.items()):
            job = Ds1000Job(candidate(problem.task_id, "hostile", code, i), problem, tmp_path / f"{i}.json")
            found = evaluate_one(job, sandbox, image, UNSCREENED, 60)
            assert (found.status, found.passed) == (status, False), (name, found.detail, found.exception)
            gold = Ds1000Job(
                candidate(problem.task_id, "gold", problem.reference_code, i), problem, tmp_path / f"g{i}.json"
            )
            assert evaluate_one(gold, sandbox, image, UNSCREENED, 60).passed, name
    finally:
        sandbox.close()


def test_the_screen_refuses_them_first_when_it_is_on(image, tmp_path):
    problem = PROBLEMS["Numpy/3"]
    gens = [candidate(problem.task_id, "hostile", code, i) for i, (code, _) in enumerate(HOSTILE.values())]
    found = evaluate_ds1000([problem], gens[:4], image, EvaluateConfig(), 60, tmp_path)
    assert all(e.status == EvalStatus.SANDBOX_VIOLATION and e.detail.startswith("refused by the screen") for e in found)


def test_a_timeout_and_a_container_stopped_from_outside(image, tmp_path):
    problem = PROBLEMS["Numpy/3"]
    sandbox = Ds1000Sandbox(image, UNSCREENED)
    try:
        spin = Ds1000Job(candidate(problem.task_id, "m", "while True:\n    pass\n"), problem, tmp_path / "spin.json")
        start = time.monotonic()
        assert evaluate_one(spin, sandbox, image, UNSCREENED, 3).status == EvalStatus.TIMEOUT
        assert time.monotonic() - start < 20
        slow = Ds1000Job(candidate(problem.task_id, "m", "import time\ntime.sleep(30)\n", 1), problem, tmp_path / "slow.json")  # fmt: skip
        threading.Timer(4.0, lambda: sandbox.container.kill()).start()  # the engine, an operator: not the candidate
        lost = evaluate_one(slow, sandbox, image, UNSCREENED, 60)
        assert lost.status == EvalStatus.INFRA_ERROR, lost.detail
    finally:
        sandbox.close()
    assert not docker_client().containers.list(all=True, filters={"label": LABEL, "ancestor": image})


def test_a_rerun_reuses_the_verdicts_in_the_evidence(image, tmp_path):
    problem = PROBLEMS["Pandas/0"]
    gen = candidate(problem.task_id, "gold", problem.reference_code)
    first = evaluate_ds1000([problem], [gen], image, EvaluateConfig(), 60, tmp_path)
    assert evidence_path(tmp_path, gen).exists()
    start = time.monotonic()
    again = evaluate_ds1000([problem], [gen], image, EvaluateConfig(), 60, tmp_path)
    assert again == first and time.monotonic() - start < 2  # no container started
    changed = evaluate_ds1000([problem], [gen.model_copy(update={"code": "result = None\n"})], image, EvaluateConfig(), 60, tmp_path)  # fmt: skip
    assert changed[0].status == EvalStatus.FAIL


def test_the_image_has_the_runner_and_no_network(image):
    client = docker_client()
    out = client.containers.run(image, ["sh", "-c", "ls /opt/dlbench; id -u"], remove=True, network_mode="none")
    assert out.decode().split() == ["ds1000_runner.py", "10001"]
    assert (
        Path(ROOT / "dlbench/harness/shipped/ds1000_runner.py").read_bytes()
        == ds1000_support_files()["ds1000_runner.py"]
    )
