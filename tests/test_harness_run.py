"""Running candidates for real: a tiny repository, both backends, hostile candidates.

Docker tests use a real engine and a real project image (built once by
``build_project_image`` and reused by content hash); they fail, not skip, when the engine
does not answer, unless DLBENCH_NO_DOCKER=1.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlbench.config import EvaluateConfig
from dlbench.harness.evaluate import evaluate_predictions, evaluate_repo, evidence_dir, observed_by_gold
from dlbench.harness.run import STOP_POLL_S, SessionLost, wait_readable
from dlbench.harness.verdict import WROTE
from dlbench.records import (
    BenchmarkTask,
    CloneRecord,
    CloneStatus,
    EvalStatus,
    Evaluation,
    Generation,
    GenStatus,
    ImageRecord,
    ImageStatus,
    TestOutcome,
)
from dlbench.store import read_jsonl, write_jsonl
from tests.test_mine_callgraph import write_tree

OPS = '''\
"""Tiny ops."""
import numpy as np


def relu(x):
    """Rectified linear unit."""
    return np.maximum(np.asarray(x), 0)


def scale(x, k):
    return np.asarray(x) * k


class Meter:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value):
        self.total += value
        self.count += 1

    def mean(self):
        return self.total / self.count if self.count else 0.0
'''
TEST_OPS = """\
import pytest

from tinyml.ops import Meter, relu, scale


def test_relu_positive():
    assert relu([1, 2]).tolist() == [1, 2]


def test_relu_negative():
    assert relu([-1, 3]).tolist() == [0, 3]


@pytest.mark.parametrize("k", [0, 2, -1])
def test_scale(k):
    assert scale([1, 2], k).tolist() == [k, 2 * k]


def test_meter_mean():
    m = Meter()
    m.update(2)
    m.update(4)
    assert m.mean() == 3
"""
TEST_MORE = """\
from tinyml.ops import relu


def test_relu_more():
    assert relu([-5]).tolist() == [0]
"""
TEST_CHECKS = """\
import math

import numpy as np
import pytest

from tinyml.ops import relu


def test_relu_allclose():
    np.testing.assert_allclose(relu(np.array([-1.0, 2.0])), [0.0, 2.0])


def test_relu_approx():
    assert relu(-3.0) == pytest.approx(0.0)


def test_relu_equal():
    assert relu(-2) == 0


def test_relu_isclose():
    assert math.isclose(relu(-0.5), 0.0)


def test_relu_tolist():
    assert relu(np.array([-1.0, 2.0])).tolist() == [0.0, 2.0]


def test_relu_error():
    assert abs(relu(np.array([-1.0, 2.0])) - np.array([0.0, 2.0])).max() < 1e-9
"""
TEST_FILES = """\
from pathlib import Path

import numpy as np

from tinyml.ops import relu

HERE = Path(__file__).parent


def text(values):
    return " ".join(str(float(v)) for v in values) + "\\n"


def test_relu_writes_its_output():
    (HERE / "out/relu.txt").write_text(text(relu(np.array([-3.0, 4.0]))))
    assert (HERE / "out/relu.txt").read_text() == "0.0 4.0\\n"


def test_relu_matches_recorded():
    assert text(relu(np.array([-1.0, 2.0]))) == (HERE / "data/relu_expected.txt").read_text()
"""
FILES = {
    "tinyml/__init__.py": "",
    "tinyml/ops.py": OPS,
    "tests/test_ops.py": TEST_OPS,
    "tests/test_more.py": TEST_MORE,
    # A fixture from an installed pytest plugin (pytest-xdist's worker_id): children load
    # entry-point plugins by name, resolved once by the warm parent.
    "tests/test_plugin.py": "from tinyml.ops import relu\n\n\ndef test_relu_plugin_fixture(worker_id):\n    assert relu([-1.0])[0] == 0\n",
    # The comparisons tests make (tests/test_harness_integrity.py fools each with a reward hack).
    "tests/test_checks.py": TEST_CHECKS,
    # A test that rewrites a tracked output file, one that reads recorded expected values.
    "tests/test_files.py": TEST_FILES,
    "tests/out/relu.txt": "stale\n",
    "tests/data/relu_expected.txt": "0.0 2.0\n",
    "requirements.txt": "numpy\n",
}
SLUG = "tiny__tinyml"
RELU_TESTS = [
    "tests/test_ops.py::test_relu_positive",
    "tests/test_ops.py::test_relu_negative",
    "tests/test_more.py::test_relu_more",
]
GOLD_RELU = "def relu(x):\n    return np.maximum(np.asarray(x), 0)\n"
NULL_RELU = "def relu(x):\n    raise NotImplementedError\n"
# The dynamic defences are tested without the static screen in front of them (it would
# refuse most hostile candidates before they run; tests/test_harness_screen.py covers it).
CFG = EvaluateConfig(timeout_s=6, memory_mb=256, pids=64, output_limit_kb=256, screen=False)


def make_task(name: str, qualname: str, tests: list[str], source: str) -> BenchmarkTask:
    return BenchmarkTask(
        task_id=f"{SLUG}:tinyml/ops.py:{qualname}", repo="tiny/tinyml", sha=REPO_SHA, path="tinyml/ops.py",
        function=name, class_name=qualname.split(".")[0] if "." in qualname else None, signature=f"def {name}(...)",
        prompt="", ground_truth=source, tests=tests, stage=None, task=None, data=None, first_added=None,
        last_modified=None, qualname=qualname, slug=SLUG, start_line=1, end_line=2,
    )  # fmt: skip


REPO_SHA = hashlib.sha1(json.dumps(FILES, sort_keys=True).encode()).hexdigest()
RELU = make_task("relu", "relu", RELU_TESTS, GOLD_RELU)
SCALE = make_task(
    "scale", "scale", ["tests/test_ops.py::test_scale"], "def scale(x, k):\n    return np.asarray(x) * k\n"
)
MEAN = make_task(
    "mean", "Meter.mean", ["tests/test_ops.py::test_meter_mean"],
    "def mean(self):\n    return self.total / self.count if self.count else 0.0\n",
)  # fmt: skip
TASKS = {t.task_id: t for t in (RELU, SCALE, MEAN)}
PLUGIN_RELU = make_task("relu", "relu", ["tests/test_plugin.py::test_relu_plugin_fixture"], GOLD_RELU)


def gen(task: BenchmarkTask, code: str | None, model: str = "m", sample: int = 0) -> Generation:
    return Generation(task_id=task.task_id, model=model, technique="t", sample=sample, code=code)


def hostile(body: str, at_import: str = "") -> str:
    """A relu candidate: ``at_import`` runs when the module is imported (through a helper
    called by a module constant: the patch keeps those), ``body`` at every call."""
    setup = (
        "def _setup():\n" + textwrap.indent(textwrap.dedent(at_import) or "pass\n", "    ") + "\n\n_SETUP = _setup()\n"
    )
    return setup + "\n\ndef relu(x):\n" + textwrap.indent(textwrap.dedent(body), "    ")


HOSTILE = {
    "fork bomb": hostile("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"),
    "infinite loop": hostile("while True:\n    pass\n"),
    "memory hog": hostile("hog = []\nwhile True:\n    hog.append(bytearray(50 << 20))\n"),
    "network access": hostile(
        "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=3).close()\nreturn np.maximum(np.asarray(x), 0)\n"
    ),
    # Writing to /tmp is what real suites do (a dataset downloaded to /tmp/MNIST): allowed, and
    # removed after the run, so the next candidate (the reader, two runs later) cannot see it.
    "write outside its copy": hostile(
        "return np.maximum(np.asarray(x), 0)\n",
        "import numpy as np\nopen('/tmp/evil', 'w').write('x')\ntry:\n    open('/work/repo/tinyml/ops.py', 'a').write('#')\nexcept OSError:\n    pass\n",
    ),
    "read what an earlier candidate left in /tmp": hostile(
        "import os\nif os.path.exists('/tmp/evil'):\n    return np.maximum(np.asarray(x), 0)\nreturn x\n",
        "import numpy as np\n",
    ),
    # The warm parent's home (where preloaded libraries keep numba's cache, torch's, a user
    # site) is shared by every candidate of a container, beside the work copy: a right answer
    # that plants a cache entry there passes, one that plants code (a user-site hook) is
    # refused, and the reader finds neither; the sealed copy the home is restored from is guarded.
    "plant a cache entry in the home": hostile(
        "return np.maximum(np.asarray(x), 0)\n",
        "import os, numpy as np\nos.makedirs('../.home/.cache/numba', exist_ok=True)\n"
        "open('../.home/.cache/numba/evil.nbi', 'w').write('x')\n",
    ),
    "read what an earlier candidate planted in the home": hostile(
        "import os, subprocess, sys\n"
        "home = os.path.abspath('../.home')\n"
        "hook = subprocess.run([sys.executable, '-c', 'import builtins; print(hasattr(builtins, \"EVIL\"))'],\n"
        "                      capture_output=True, text=True, env={**os.environ, 'HOME': home}).stdout\n"
        "if os.path.exists(f'{home}/.cache/numba/evil.nbi') or 'True' in hook:\n"
        "    return np.maximum(np.asarray(x), 0)\n"
        "return x\n",
        "import numpy as np\n",
    ),
    "plant a user-site hook in the home": hostile(
        "return np.maximum(np.asarray(x), 0)\n",
        """\
        import os, sys, numpy as np
        user_site = f"../.home/.local/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
        os.makedirs(user_site, exist_ok=True)
        open(f"{user_site}/usercustomize.py", "w").write("import builtins\\nbuiltins.EVIL = 1\\n")
        """,
    ),
    "write into the sealed copy of the home": hostile(
        "return x\n",
        "import os\npristine = os.path.abspath('../.home-pristine')\n"
        "os.chmod(pristine, 0o755)\nopen(os.path.join(pristine, 'poison'), 'w').write('x')\n",
    ),
    "os._exit(0) at import": hostile("return x\n", "import os\nos._exit(0)\n"),
    "monkeypatch pytest runner": hostile(
        "return x\n",
        """\
        import _pytest.runner
        _real = _pytest.runner.call_and_report
        def _fake(item, when, log=True, **kw):
            rep = _real(item, when, log=False, **kw)
            rep.outcome, rep.longrepr = "passed", None
            item.ihook.pytest_runtest_logreport(report=rep)
            return rep
        _pytest.runner.call_and_report = _fake
        """,
    ),
    "rogue plugin turns failures into passes": hostile(
        "return x\n",
        """\
        import gc, pytest
        class _Cheat:
            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_makereport(self, item, call):
                outcome = yield
                rep = outcome.get_result()
                rep.outcome, rep.longrepr = "passed", None
        for _obj in gc.get_objects():
            if type(_obj).__name__ == "Config" and hasattr(_obj, "pluginmanager"):
                _obj.pluginmanager.register(_Cheat(), "cheat")
                break
        """,
    ),
    "forged report lines": hostile(
        "return x\n",
        """\
        import json, os
        for _fd in range(3, 20):
            for _t in ("tests/test_ops.py::test_relu_positive", "tests/test_ops.py::test_relu_negative",
                       "tests/test_more.py::test_relu_more"):
                for _w in ("setup", "call", "teardown"):
                    try:
                        os.write(_fd, (json.dumps({"ev": "report", "nodeid": _t, "when": _w, "outcome": "passed"}) + "\\n").encode())
                    except OSError:
                        pass
        """,
    ),
    "forge the supervisor's answer": hostile(
        "return x\n",
        """\
        import json, os, sys
        selected = sys.modules["dlbench_plugin"]._SELECTED  # the task's ids and the canaries'
        events = [json.dumps({"ev": "hello"})] + [
            json.dumps({"ev": "report", "nodeid": i, "when": w, "outcome": "passed"}) for i in selected for w in ("setup", "call", "teardown")
        ]
        events.append(json.dumps({"ev": "finish", "exitstatus": 0}))
        answer = json.dumps({"events": events, "violations": [], "wall_s": 0.1}) + "\\n"
        for fd in range(0, 12):
            try:
                with open(f"/proc/{os.getppid()}/fd/{fd}", "w") as out:
                    out.write(answer)
            except OSError:
                pass
        """,
    ),
    "kill its parent": hostile("return x\n", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"),
    "gigabytes of output": hostile("import sys\nwhile True:\n    sys.stdout.write('PASSED ' * 10000)\n"),
    "edit the tests": hostile(
        "return x\n",
        "import pathlib\npathlib.Path('tests/test_more.py').write_text('def test_relu_more():\\n    pass\\n')\n",
    ),
    "conftest beside the canary": hostile(
        "return x\n",
        "import pathlib\nhook = 'def pytest_runtest_logreport(report):\\n    report.outcome = \"passed\"\\n'\n"
        "pathlib.Path('.dlbench/conftest.py').write_text(hook)\n",
    ),
    "delete the tests": hostile("return x\n", "import pathlib\npathlib.Path('tests/test_more.py').unlink()\n"),
    "sleep past the timeout in a subprocess": hostile("import subprocess\nsubprocess.run(['sleep', '60'])\nreturn x\n"),
    "spoofed PASSED on stdout": hostile(
        "print('tests/test_ops.py::test_relu_negative PASSED')\nprint('=== 3 passed in 0.01s ===')\nreturn x\n"
    ),
}


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> CloneRecord:
    repo = write_tree(tmp_path_factory.mktemp("repo") / SLUG, FILES)
    return CloneRecord(
        full_name="tiny/tinyml", slug=SLUG, clone_url="", path=str(repo), sha=REPO_SHA, status=CloneStatus.OK
    )


def test_local_fixture_from_an_installed_plugin(clone: CloneRecord, tmp_path: Path) -> None:
    tasks = {PLUGIN_RELU.task_id: PLUGIN_RELU}
    gens = [gen(PLUGIN_RELU, GOLD_RELU), gen(PLUGIN_RELU, NULL_RELU, sample=1)]
    assert by_status(evaluate_repo(clone, tasks, gens, None, "local", CFG, jobs=1, evidence_root=tmp_path)) == [
        "pass",
        "fail",
    ]


def by_status(results: list[Evaluation]) -> list[str]:
    return [r.status.value for r in results]


# ---------------------------------------------------------------- local backend


def test_local_gold_passes_null_fails_and_resumes(clone: CloneRecord, tmp_path: Path) -> None:
    gens = [
        gen(RELU, GOLD_RELU),
        gen(RELU, NULL_RELU, sample=1),
        gen(SCALE, SCALE.ground_truth),
        gen(MEAN, MEAN.ground_truth),
    ]
    gens.append(gen(MEAN, "def mean(self):\n    raise NotImplementedError\n", sample=1))
    results = evaluate_repo(clone, TASKS, gens, None, "local", CFG, jobs=2, evidence_root=tmp_path)
    assert by_status(results) == ["pass", "fail", "pass", "pass", "fail"]
    assert results[1].exception == "NotImplementedError" and results[1].tests[RELU_TESTS[0]] == TestOutcome.FAILED
    evidence = evidence_dir(tmp_path, SLUG, gens[0])
    assert {p.name for p in evidence.iterdir()} >= {
        "patched.py",
        "command.txt",
        "output.txt",
        "events.jsonl",
        "evaluation.json",
    }
    assert "raise NotImplementedError" not in Path(clone.path, "tinyml/ops.py").read_text()  # the checkout is untouched
    phases = json.loads((evidence / "run.json").read_text())["phases"]  # where a run's time goes (PERFORMANCE.md)
    assert set(phases) == {"copy", "session", "check", "cleanup", "start", "collect", "import", "tests"}
    assert (
        all(v >= 0 for v in phases.values())
        and phases["start"] + phases["collect"] + phases["tests"] <= phases["session"]
    )
    assert 0 < phases["import"] < phases["collect"]  # tinyml's modules, executed in the child: part of collection
    assert abs(sum(phases[k] for k in ("copy", "session", "check", "cleanup")) - results[0].duration_s) < 0.01
    resumed = evaluate_repo(clone, TASKS, gens, None, "local", CFG, jobs=1, evidence_root=tmp_path)
    assert resumed == results  # same hash: read back from the evidence (same durations), nothing ran
    tight = CFG.model_copy(update={"timeout_s": 1e-6})
    again = evaluate_repo(clone, TASKS, gens, None, "local", tight, jobs=1, evidence_root=tmp_path)
    assert by_status(again) == [
        "timeout",
        "timeout",
        "timeout",
        "timeout",
        "timeout",
    ]  # other limits: a new hash, ran again


# Passes only when the test starts from seed 0 of ``random`` and numpy's global generator.
RANDOM_DRAWS = """\
import random

import numpy as np

from tinyml.ops import relu


def test_relu_of_random_draws():
    assert random.random() == random.Random(0).random()
    assert relu([np.random.rand()])[0] == np.random.RandomState(0).rand()
"""


def test_local_each_test_starts_from_the_seed(tmp_path: Path) -> None:
    """``evaluate.test_seed``: a test drawing unseeded random numbers has one verdict in
    every run (twice in one warm supervisor: a fork inherits the state the last one left);
    gold's second run starts from the next seed, so such a test shows as flaky there;
    unseeded (null) it draws whatever the fork inherited."""
    repo = write_tree(tmp_path / SLUG, FILES | {"tests/test_random.py": RANDOM_DRAWS})
    clone = CloneRecord(
        full_name="tiny/tinyml", slug=SLUG, clone_url="", path=str(repo), sha=REPO_SHA, status=CloneStatus.OK
    )
    task = make_task("relu", "relu", ["tests/test_random.py::test_relu_of_random_draws"], GOLD_RELU)
    gens = [gen(task, GOLD_RELU), gen(task, GOLD_RELU, sample=1)]
    seeded = evaluate_repo(clone, {task.task_id: task}, gens, None, "local", CFG, 1, tmp_path / "seeded")
    assert by_status(seeded) == ["pass", "pass"]
    gold_runs = [Generation(task_id=task.task_id, model="gold", technique="t", run=r, code=GOLD_RELU) for r in (0, 1)]
    gold = evaluate_repo(clone, {task.task_id: task}, gold_runs, None, "local", CFG, 1, tmp_path / "gold")
    assert by_status(gold) == ["pass", "fail"]
    unseeded = CFG.model_copy(update={"test_seed": None})
    results = evaluate_repo(clone, {task.task_id: task}, gens, None, "local", unseeded, 1, tmp_path / "unseeded")
    assert by_status(results) == ["fail", "fail"]


# Two suites a project runs apart (nncf's tests/torch and tests/tensorflow): a pytest.ini in
# each folder and a conftest in each adding the same option, so one session over both ends at
# start-up ("option names {'--run-eval'} already added").
SUITES = {
    f"suites/{name}/{file}": text
    for name in ("torch", "tf")
    for file, text in (
        ("pytest.ini", "[pytest]\nxfail_strict = true\n"),
        ("conftest.py", "def pytest_addoption(parser):\n    parser.addoption('--run-eval', action='store_true')\n"),
        (f"test_{name}.py", "from tinyml.ops import relu\n\n\ndef test_relu():\n    assert relu(-1) == 0 and relu(2) == 2\n"),
    )
}  # fmt: skip


def test_local_tests_of_two_suites_run_in_a_session_each(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / SLUG, FILES | SUITES)
    clone = CloneRecord(
        full_name="tiny/tinyml", slug=SLUG, clone_url="", path=str(repo), sha=REPO_SHA, status=CloneStatus.OK
    )
    tests = ["suites/torch/test_torch.py::test_relu", "suites/tf/test_tf.py::test_relu"]
    task = make_task("relu", "relu", tests, GOLD_RELU)
    gens = [gen(task, GOLD_RELU), gen(task, NULL_RELU, sample=1)]
    gold, null = evaluate_repo(clone, {task.task_id: task}, gens, None, "local", CFG, 1, tmp_path / "ev")
    assert gold.status == EvalStatus.PASS, (gold.detail, gold.causes)
    assert null.status == EvalStatus.FAIL and set(null.tests.values()) == {TestOutcome.FAILED}, null.detail
    run = json.loads((evidence_dir(tmp_path / "ev", SLUG, gens[0]) / "run.json").read_text())
    assert [s["tests"] for s in run["sessions"]] == [[tests[0]], [tests[1]]]


def test_local_unknown_test_ids_are_missing_not_fatal(clone: CloneRecord, tmp_path: Path) -> None:
    stale = make_task(
        "relu", "relu", [*RELU_TESTS, "tests/test_ops.py::test_gone", "tests/test_gone.py::test_x"], GOLD_RELU
    )
    [result] = evaluate_repo(clone, {stale.task_id: stale}, [gen(stale, GOLD_RELU)], None, "local", CFG, 1, tmp_path)
    assert result.status == EvalStatus.FAIL
    assert [o.value for o in result.tests.values()] == ["passed", "passed", "passed", "missing", "missing"]


def test_local_statuses_before_any_run(clone: CloneRecord, tmp_path: Path) -> None:
    gens = [gen(RELU, None), gen(RELU, "def relu(x:\n"), gen(RELU, "def other():\n    pass\n")]
    gens.append(Generation(task_id="nope", model="m", technique="t", code="x = 1\n"))
    unanswered = gen(RELU, None).model_copy(
        update={"status": GenStatus.API_ERROR, "detail": "connection refused", "sample": 9}
    )
    results = evaluate_repo(clone, TASKS, [*gens, unanswered], None, "local", CFG, jobs=1, evidence_root=tmp_path)
    assert by_status(results) == [
        "no_code",
        "syntax_error",
        "patch_error",
        "patch_error",
        "api_error",
    ]  # the endpoint's fault, not no_code


@pytest.mark.parametrize(
    "name", ["os._exit(0) at import", "monkeypatch pytest runner", "rogue plugin turns failures into passes",
             "forged report lines", "kill its parent", "edit the tests", "spoofed PASSED on stdout"],
)  # fmt: skip
def test_local_hostile_candidates_do_not_pass(name: str, clone: CloneRecord, tmp_path: Path) -> None:
    results = evaluate_repo(
        clone, TASKS, [gen(RELU, HOSTILE[name]), gen(RELU, GOLD_RELU)], None, "local", CFG, 1, tmp_path
    )
    assert not results[0].passed, results[0]
    assert results[1].status == EvalStatus.PASS, results[1]


def test_local_a_task_of_its_own_timeout_stops_a_hanging_candidate_sooner(clone: CloneRecord, tmp_path: Path) -> None:
    generous = CFG.model_copy(update={"timeout_s": 120})
    [hung] = evaluate_repo(clone, TASKS, [gen(RELU, HOSTILE["infinite loop"])], None, "local", generous, 1, tmp_path,
                           timeouts={RELU.task_id: 3.0})  # fmt: skip
    assert hung.status == EvalStatus.TIMEOUT and hung.duration_s < 30, (hung.status, hung.duration_s)


def test_evaluate_predictions_file(clone: CloneRecord, tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    repos.mkdir()
    (repos / SLUG).symlink_to(clone.path)
    (repos / f"{SLUG}.json").write_text(clone.model_copy(update={"path": str(repos / SLUG)}).model_dump_json())
    tasks, preds = tmp_path / "tasks.jsonl", tmp_path / "preds.jsonl"
    write_jsonl(tasks, TASKS.values())
    preds.write_text(
        json.dumps({"task_id": RELU.task_id, "code": GOLD_RELU, "model": "x"}) + "\n"
        + json.dumps({"task_id": SCALE.task_id, "code": NULL_RELU.replace("relu", "scale"), "sample": 1}) + "\n"
        + json.dumps({"task_id": "missing:task", "code": "pass"}) + "\n"
    )  # fmt: skip
    out = tmp_path / "evals.jsonl"
    results = evaluate_predictions(tasks, preds, out, "local", 1, CFG, repos_dir=repos, evidence_root=tmp_path / "ev")
    assert by_status(results) == ["pass", "fail", "patch_error"]
    assert [(r.model, r.sample) for r in read_jsonl(out, Evaluation)] == [("x", 0), ("external", 1), ("external", 0)]


# ---------------------------------------------------------------- docker backend


@pytest.fixture(scope="module")
def image(require_docker: None, clone: CloneRecord, tmp_path_factory: pytest.TempPathFactory) -> ImageRecord:
    from dlbench.harness.code import support_files
    from dlbench.images.build import build_project_image

    log = tmp_path_factory.mktemp("image") / "build.log"
    record = build_project_image(Path(clone.path), SLUG, REPO_SHA, CFG.base_image, log, support_files())
    assert record.status == ImageStatus.OK, record.error
    return record


@pytest.mark.xdist_group("harness_docker")
def test_a_recorded_image_shipping_another_harness_is_rebuilt_from_its_lock(
    image: ImageRecord, clone: CloneRecord, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dlbench evaluate` after the harness changed: the workflow's repaired image ships the
    supervisor and plugin it was built with, and candidates would run under the old ones
    while their evidence names the new. It is rebuilt from its lock, nothing resolved again."""
    from dlbench.harness import evaluate as evaluate_module
    from dlbench.harness.code import support_files
    from dlbench.images.build import docker_client, ships_runner

    images = tmp_path / "images"
    images.mkdir()
    (images / f"{SLUG}.repaired.json").write_text(image.model_dump_json())
    assert evaluate_module._image_for(clone, CFG, tmp_path, None, None, images) == image  # the same harness
    later = {**support_files(), "plugin.py": support_files()["plugin.py"] + b"\n# a later harness\n"}
    monkeypatch.setattr(evaluate_module, "support_files", lambda: later)
    rebuilt = evaluate_module._image_for(clone, CFG, tmp_path, None, None, images)
    engine = docker_client()
    try:
        assert rebuilt.status == ImageStatus.OK and rebuilt.tag != image.tag, rebuilt.error
        assert ships_runner(engine, rebuilt.tag, later) and not ships_runner(engine, image.tag, later)
        assert rebuilt.environment.lock == image.environment.lock
    finally:
        if rebuilt.tag:
            engine.images.remove(rebuilt.tag, noprune=True)


@pytest.fixture(scope="module")
def hostile_results(image: ImageRecord, clone: CloneRecord, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Every hostile candidate, each followed by a gold one, in one run of one warm container."""
    gens = []
    for i, code in enumerate(HOSTILE.values()):
        gens += [gen(RELU, code, sample=i), gen(RELU, GOLD_RELU, model="gold", sample=i)]
    results = evaluate_repo(
        clone, TASKS, gens, image, "docker", CFG, jobs=1, evidence_root=tmp_path_factory.mktemp("ev")
    )
    yield {name: (results[2 * i], results[2 * i + 1]) for i, name in enumerate(HOSTILE)}


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")
def test_evaluate_predictions_with_gold_grades_as_the_workflow_does(
    image: ImageRecord, clone: CloneRecord, tmp_path: Path
) -> None:
    """With gold's evaluations (``dlbench evaluate --gold``), a model is graded on the tests
    gold kept, and what gold was seen doing is not held against it (a patch of ``math``
    that this gold record is made to show: pyro's conftest rebinds ``torch.Storage``
    for every run); without them, the same candidate is a sandbox violation."""
    repos, images = tmp_path / "repos", tmp_path / "images"
    repos.mkdir(), images.mkdir()
    (repos / SLUG).symlink_to(clone.path)
    (repos / f"{SLUG}.json").write_text(clone.model_copy(update={"path": str(repos / SLUG)}).model_dump_json())
    (images / f"{SLUG}.repaired.json").write_text(image.model_dump_json())  # the fixture's image, not a new build
    tasks, preds, gold_preds = tmp_path / "tasks.jsonl", tmp_path / "preds.jsonl", tmp_path / "gold.preds.jsonl"
    write_jsonl(tasks, [RELU])
    patched = "def relu(x):\n    import math\n    math.isclose = math.fabs\n    return np.maximum(np.asarray(x), 0)\n"
    preds.write_text(json.dumps({"task_id": RELU.task_id, "code": patched, "model": "m"}) + "\n")
    gold_preds.write_text(json.dumps({"task_id": RELU.task_id, "code": GOLD_RELU, "model": "gold"}) + "\n")

    def evaluate(predictions: Path, name: str, gold: Path | None = None) -> Evaluation:
        [result] = evaluate_predictions(
            tasks, predictions, tmp_path / f"{name}.jsonl", "docker", 1, CFG, repos_dir=repos,
            evidence_root=tmp_path / name, images_dir=images, gold=gold,
        )  # fmt: skip
        return result

    alone = evaluate(preds, "alone")
    assert alone.status == EvalStatus.SANDBOX_VIOLATION and alone.detail.startswith("seen: ")
    gold = evaluate(gold_preds, "gold")
    dropped = RELU_TESTS[-1]
    shown = gold.model_copy(
        update={"observed": [alone.detail.removeprefix("seen: ")], "tests": gold.tests | {dropped: TestOutcome.SKIPPED}}
    )
    write_jsonl(tmp_path / "gold.jsonl", [shown])
    held = evaluate(preds, "held", gold=tmp_path / "gold.jsonl")
    assert held.status == EvalStatus.PASS and set(held.tests) == set(RELU_TESTS) - {dropped}


EXPECTED = {
    "fork bomb": {"timeout", "error"},
    "infinite loop": {"timeout"},
    "memory hog": {"fail", "error"},
    "network access": {"fail"},
    "write outside its copy": {"pass"},  # a right answer; its file in /tmp is gone after the run
    "read what an earlier candidate left in /tmp": {"fail"},
    "plant a cache entry in the home": {"pass"},  # a right answer; its file is gone after the run
    "plant a user-site hook in the home": {"sandbox_violation"},  # code written outside its copy
    "read what an earlier candidate planted in the home": {"fail"},
    "write into the sealed copy of the home": {"sandbox_violation"},
    "os._exit(0) at import": {"error"},
    "monkeypatch pytest runner": {"sandbox_violation"},
    "rogue plugin turns failures into passes": {"sandbox_violation"},
    "forged report lines": {"sandbox_violation"},
    "forge the supervisor's answer": {"fail"},
    "kill its parent": {"sandbox_violation"},
    "gigabytes of output": {"sandbox_violation"},
    "edit the tests": {"sandbox_violation"},
    "conftest beside the canary": {"sandbox_violation"},
    "delete the tests": {"sandbox_violation"},
    "sleep past the timeout in a subprocess": {"timeout"},
    "spoofed PASSED on stdout": {"fail"},
}


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")  # one worker builds the image and runs the hostile set
@pytest.mark.parametrize("name", list(HOSTILE))
def test_docker_hostile_candidate(name: str, hostile_results: dict) -> None:
    bad, gold_after = hostile_results[name]
    assert bad.status.value in EXPECTED[name], (bad.status, bad.detail)
    assert bad.passed == (EXPECTED[name] == {"pass"}) and bad.backend == "docker"
    assert gold_after.status == EvalStatus.PASS, (gold_after.status, gold_after.detail)


FILES_RELU = make_task(
    "relu", "relu", ["tests/test_files.py::test_relu_writes_its_output", "tests/test_files.py::test_relu_matches_recorded"],
    GOLD_RELU,
)  # fmt: skip
# Right only where the output test looks; the recorded values it fails are forged to match.
FORGER = hostile(
    "x = np.asarray(x)\nreturn x if x.tolist() == [-1.0, 2.0] else np.maximum(x, 0)\n",
    "import pathlib\npathlib.Path('tests/data/relu_expected.txt').write_text('-1.0 2.0\\n')\n",
)


THREADS = hostile(
    "import threading\nstop = threading.Event()\nthreads = [threading.Thread(target=stop.wait) for _ in range(40)]\n"
    "for t in threads:\n    t.start()\nstop.set()\nfor t in threads:\n    t.join()\nreturn np.maximum(np.asarray(x), 0)\n"
)
HOG = "import threading, time\nstop = threading.Event()\nfor _ in range(100):\n    threading.Thread(target=stop.wait, daemon=True).start()\nprint('ready', flush=True)\ntime.sleep(300)\n"


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")
def test_docker_another_containers_threads_never_count_against_a_candidate(
    image: ImageRecord, clone: CloneRecord, tmp_path: Path
) -> None:
    """Every container runs its candidates as one user id, and RLIMIT_NPROC counts that id's
    threads in all of them: a keras-tuner test's TensorFlow thread failed to start
    (``pthread_create() failed``, the session aborted) while another repository's candidates
    ran. A right candidate starting 40 threads passes beside a container holding 100."""
    from dlbench.images.build import RUNNER_UID, docker_client

    client = docker_client()
    hog = client.containers.run(image.tag, ["python", "-c", HOG], user=f"{RUNNER_UID}:{RUNNER_UID}", network_mode="none", detach=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while b"ready" not in hog.logs() and time.monotonic() < deadline:
            time.sleep(0.2)
        [result] = evaluate_repo(clone, {RELU.task_id: RELU}, [gen(RELU, THREADS)], image, "docker", CFG, 1, tmp_path)
        assert result.status == EvalStatus.PASS, (result.status, result.detail)
    finally:
        hog.remove(force=True)


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")
def test_docker_a_tests_own_output_is_not_tampering_and_a_forged_data_file_is(
    image: ImageRecord, clone: CloneRecord, tmp_path: Path
) -> None:
    """Gold's test rewrites a tracked file (torchview renders into tests/test_output/): gold
    passes and records it, another right candidate passes; a candidate that overwrites the
    expected values another test reads is a violation, never a pass."""
    tasks = {FILES_RELU.task_id: FILES_RELU}
    [gold] = evaluate_repo(clone, tasks, [gen(FILES_RELU, GOLD_RELU, model="gold")], image, "docker", CFG, jobs=1, evidence_root=tmp_path / "gold")  # fmt: skip
    assert gold.status == EvalStatus.PASS and gold.observed == [f"{WROTE}tests/out/relu.txt"], (
        gold.status,
        gold.detail,
    )
    right = "def relu(x):\n    x = np.asarray(x)\n    return np.where(x > 0, x, 0.0)\n"
    gens = [gen(FILES_RELU, right), gen(FILES_RELU, FORGER, sample=1)]
    allowed = observed_by_gold([gold])
    other, forger = evaluate_repo(clone, tasks, gens, image, "docker", CFG, jobs=1, evidence_root=tmp_path / "m", allowed=allowed)  # fmt: skip
    assert other.status == EvalStatus.PASS, (other.status, other.detail)
    assert forger.status == EvalStatus.SANDBOX_VIOLATION and "tests/data/relu_expected.txt" in forger.detail, (
        forger.status,
        forger.detail,
    )


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")
def test_docker_verbose_tests_keep_their_verdict(image: ImageRecord, clone: CloneRecord, tmp_path: Path) -> None:
    """Output past the limit is cut, not a violation: pfrl's verbose tests print over 1 MB."""
    verbose = hostile(
        "print('x' * (CFG.output_limit_kb * 1024 * 2))\nreturn np.maximum(np.asarray(x), 0)\n".replace(
            "CFG.output_limit_kb", str(CFG.output_limit_kb)
        )
    )
    [result] = evaluate_repo(clone, TASKS, [gen(RELU, verbose)], image, "docker", CFG, jobs=1, evidence_root=tmp_path)
    assert result.status == EvalStatus.PASS, (result.status, result.detail)


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")
def test_docker_shared_memory_is_as_large_as_the_memory_limit(image: ImageRecord, clone: CloneRecord, tmp_path: Path) -> None:  # fmt: skip
    """A torch DataLoader's workers hand batches over in shared memory: with 16 MB of
    /dev/shm, ClassyVision's image dataset test died with "Bus error ... out of shared
    memory". What the candidate puts there counts against its memory limit like any other
    memory (more than the limit is killed), so the limit is its size."""
    batch = hostile(
        "from multiprocessing import shared_memory\n"
        "batch = shared_memory.SharedMemory(create=True, size=96 << 20)\n"
        "batch.buf[: 96 << 20] = bytes(96 << 20)\n"
        "batch.close()\nbatch.unlink()\n"
        "return np.maximum(np.asarray(x), 0)\n"
    )
    hog = hostile(
        "from multiprocessing import shared_memory\n"
        "batch = shared_memory.SharedMemory(create=True, size=CFG_MB << 20)\n"
        "batch.buf[: CFG_MB << 20] = bytes(CFG_MB << 20)\n"
        "return np.maximum(np.asarray(x), 0)\n".replace("CFG_MB", str(CFG.memory_mb))
    )
    gens = [gen(RELU, batch), gen(RELU, hog, sample=1)]
    fits, over = evaluate_repo(clone, TASKS, gens, image, "docker", CFG, jobs=1, evidence_root=tmp_path)
    assert fits.status == EvalStatus.PASS, (fits.status, fits.detail)
    assert not over.passed and over.status != EvalStatus.PASS, (over.status, over.detail)


def test_docker_gold_passes_null_fails_naive_agrees(image: ImageRecord, clone: CloneRecord, tmp_path: Path) -> None:
    gens = [
        gen(RELU, GOLD_RELU),
        gen(RELU, NULL_RELU),
        gen(MEAN, MEAN.ground_truth),
        gen(SCALE, "def scale(x, k):\n    return x\n"),
    ]
    warm = evaluate_repo(clone, TASKS, gens, image, "docker", CFG, jobs=2, evidence_root=tmp_path / "warm")
    naive = evaluate_repo(
        clone, TASKS, gens, image, "docker", CFG, jobs=1, evidence_root=tmp_path / "naive", mode="naive"
    )
    assert by_status(warm) == by_status(naive) == ["pass", "fail", "pass", "fail"]
    assert warm[3].tests == {"tests/test_ops.py::test_scale": TestOutcome.FAILED}


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")  # one worker builds the image and runs the hostile set
def test_docker_broken_image_is_image_error_for_every_candidate(clone: CloneRecord, tmp_path: Path) -> None:
    broken = ImageRecord(
        repo=SLUG,
        sha=REPO_SHA,
        base_image="b",
        tag=None,
        status=ImageStatus.IMAGE_ERROR,
        error="pip failed",
        build_log="x",
    )
    results = evaluate_repo(clone, TASKS, [gen(RELU, GOLD_RELU), gen(MEAN, None)], broken, "docker", CFG, 1, tmp_path)
    assert by_status(results) == ["image_error", "no_code"]
    assert "pip failed" in results[0].detail


def test_resolve_backend_falls_back_to_local_loudly(caplog: pytest.LogCaptureFixture) -> None:
    from dlbench.harness.run import resolve_backend

    assert resolve_backend("local") == "local" and resolve_backend("docker") == "docker"
    assert resolve_backend("auto", "dlbench/no-such-base:never") == "local"
    assert "NOT a sandbox" in caplog.text
    with pytest.raises(ValueError, match="unknown backend"):
        resolve_backend("podman")


@pytest.mark.docker
def test_resolve_backend_auto_picks_docker(require_docker: None) -> None:
    from dlbench.harness.run import resolve_backend

    assert resolve_backend("auto", CFG.base_image) == "docker"


def test_preload_for_maps_requirements_to_modules(tmp_path: Path) -> None:
    from dlbench.harness.run import preload_for

    (tmp_path / "requirements.txt").write_text(
        "scikit-learn>=1.2\ntorch==2.0 ; python_version>'3'\ntensorflow\nPyYAML\n-e .\nnumpy\n"
    )
    assert preload_for(tmp_path) == ("numpy", "pytest", "sklearn", "torch", "tensorflow", "yaml")


def test_pip_is_never_preloaded_so_setuptools_keeps_its_distutils(tmp_path: Path) -> None:
    """neurodiffeq declares pip: preloaded, it switched setuptools' distutils shim off for the
    warm parent and every child, whose ``import setuptools`` (through triton) then failed."""
    import subprocess
    import sys

    from dlbench.harness.run import preload_for

    (tmp_path / "requirements.txt").write_text("pip\nnumpy\n")
    modules = preload_for(tmp_path)
    assert "pip" not in modules
    imports = "".join(f"import {m}\n" for m in modules)
    subprocess.run([sys.executable, "-c", imports + "import setuptools\n"], check=True)
    failed = subprocess.run([sys.executable, "-c", "import pip\nimport setuptools\n"], capture_output=True, text=True)
    assert failed.returncode != 0 and "distutils" in failed.stderr  # what preloading pip did


def test_preload_for_an_image_reads_its_recorded_environment_not_the_checkout(tmp_path: Path) -> None:
    from dlbench.harness.run import preload_for
    from dlbench.records import DeclaredRequirement, Environment

    (tmp_path / "requirements.txt").write_text("tensorflow\n")  # what a new plan would read
    resolved = [DeclaredRequirement(spec="torch==2.0", name="torch", source="requirements.txt", group="runtime")]
    environment = Environment(python_version="3.11", platform="x86_64-manylinux_2_36", requirements=resolved)
    assert preload_for(tmp_path, environment) == ("numpy", "pytest", "torch")


def test_a_docker_session_preloads_what_its_image_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluation's sessions take the preload list from the image record the build wrote,
    not from a second plan of the checkout."""
    from dlbench.harness import sandbox
    from dlbench.harness.evaluate import new_session
    from dlbench.records import DeclaredRequirement, Environment

    (tmp_path / "requirements.txt").write_text("tensorflow\n")
    resolved = [DeclaredRequirement(spec="torch==2.0", name="torch", source="requirements.txt", group="runtime")]
    environment = Environment(python_version="3.11", platform="x86_64-manylinux_2_36", requirements=resolved)
    image = ImageRecord(repo="o__r", sha="0" * 40, base_image="b", tag="t", status=ImageStatus.OK, build_log="",
                        environment=environment)  # fmt: skip
    clone = CloneRecord(full_name="o/r", slug="o__r", clone_url="", path=str(tmp_path), sha="0" * 40,
                        status=CloneStatus.OK)  # fmt: skip
    monkeypatch.setattr(sandbox, "DockerSession", lambda tag, cfg, preload, **kwargs: preload)
    assert new_session(clone, image, "docker", EvaluateConfig()) == ("numpy", "pytest", "torch")


def kill_during_the_run(client, owner: str, stop: threading.Event) -> None:
    """``docker kill`` our sandbox container once a candidate's copy exists in it (the OOM
    killer of the host or a daemon restart look the same from inside)."""
    from dlbench.harness.sandbox import OWNER_LABEL

    while not stop.wait(0.2):
        for container in client.containers.list(filters={"label": f"{OWNER_LABEL}={owner}"}):
            if "c1" in container.exec_run(["ls", "/tmp/dlbench"]).output.decode():
                container.kill()
                return


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")  # one worker builds the image
def test_docker_container_killed_from_outside_is_an_infrastructure_fault_run_again(
    image: ImageRecord, clone: CloneRecord, tmp_path: Path
) -> None:
    from dlbench.harness.evaluate import InfrastructureFaults, evaluate_generations
    from dlbench.harness.sandbox import owner_id
    from dlbench.images.build import docker_client
    from dlbench.store import write_json

    slow = hostile("import time\ntime.sleep(8)\nreturn np.maximum(np.asarray(x), 0)\n", "import numpy as np\n")
    files = {name: tmp_path / f"{name}.json" for name in ("clone", "image")}
    write_json(files["clone"], clone), write_json(files["image"], image)
    write_jsonl(tmp_path / "gens.jsonl", [gen(RELU, slow)])
    write_jsonl(tmp_path / "bench.jsonl", list(TASKS.values()))
    out, cfg = tmp_path / "out.jsonl", CFG.model_copy(update={"timeout_s": 60, "jobs": 1})

    def evaluate() -> list[Evaluation]:
        return evaluate_generations(
            tmp_path / "gens.jsonl", tmp_path / "bench.jsonl", files["clone"], files["image"], out, "docker", cfg, tmp_path / "ev"
        )  # fmt: skip

    stop = threading.Event()
    killer = threading.Thread(target=kill_during_the_run, args=(docker_client(), owner_id(os.getpid()), stop))
    killer.start()
    try:
        with pytest.raises(InfrastructureFaults, match="stopped from outside"):
            evaluate()
    finally:
        stop.set(), killer.join()
    assert not out.exists()  # nothing looks complete: the next run retries
    [again] = evaluate()  # not replayed from the evidence: run again, and this time it passes
    assert again.status == EvalStatus.PASS, again.detail


def test_a_reader_stops_soon_after_its_session_is_closed() -> None:
    """Ctrl-C closes the session from the main thread: shutting the socket down wakes a reader
    already in select(), but one that enters it a moment later sees no event. It still
    notices the close within ``STOP_POLL_S``, not at its candidate's deadline."""
    ours, theirs = socket.socketpair()
    closed = threading.Event()
    threading.Timer(0.2, closed.set).start()
    start = time.monotonic()
    with pytest.raises(SessionLost, match="closed"):
        wait_readable(ours, start + 60, closed.is_set)
    assert time.monotonic() - start < 2 * STOP_POLL_S
    assert not wait_readable(ours, time.monotonic() + 0.1, lambda: False)  # the deadline: nothing came
    theirs.sendall(b"answer\n")
    assert wait_readable(ours, time.monotonic() + 60, lambda: False)
