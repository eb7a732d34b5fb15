"""Reviewer findings: a hand-written event stream, an always-equal result, leaked secrets,
evidence folder collisions, stale verdicts after a grader change (local backend, real runs)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dlbench.harness.evaluate import candidate_hash, evaluate_repo, evidence_dir
from dlbench.harness.local import candidate_env
from dlbench.records import CloneRecord, EvalStatus, Generation
from dlbench.store import files_digest
from tests.test_harness_run import CFG, GOLD_RELU, OPS, RELU, TASKS, clone, gen, hostile  # noqa: F401 (clone: fixture)

SCREENED = CFG.model_copy(update={"screen": True})

# The reviewer's bypass: reach the plugin through importlib and an alias of os, write a
# complete stream (canaries and finish included) to the report descriptor, leave at once.
FORGE = """\
import ast, json, importlib
import os as o
plug = importlib.import_module("dlbench" + "_plugin")
ids = ["tests/test_ops.py::test_relu_positive", "tests/test_ops.py::test_relu_negative", "tests/test_more.py::test_relu_more"]
canaries = [s for s in plug._SELECTED if s not in ids]  # drawn per run: the forger reads the module to tell them apart
tree = ast.parse(open(canaries[0].split("::")[0]).read())
expected = {{
    f.name: ast.literal_eval(s.value)
    for f in tree.body if isinstance(f, ast.FunctionDef)
    for s in f.body if isinstance(s, ast.Assign) and s.targets[0].id == "expected"
}}
failing = [c for c in canaries if expected[c.split("::")[1]] != sorted(expected[c.split("::")[1]])][0]
names = ids + canaries
f = open(plug._FD, "w", closefd=False)  # the report pipe's descriptor, wherever the child put it
def ev(d):
    f.write(json.dumps(d) + "\\n")
{collected}
for t in names:
    for w in ("setup", "call", "teardown"):
        bad = t == failing and w == "call"
        ev({{"ev": "report", "nodeid": t, "when": w, "outcome": "failed" if bad else "passed"{duration}}})
ev({{"ev": "finish", "exitstatus": {status}}})
f.flush()
o._exit({status})
"""
BYPASS = hostile("return x\n", FORGE.format(collected="", duration="", status=0))
# The same forgery written to satisfy every cross-check of the grader.
FULL_FORGERY = hostile(
    "return x\n",
    FORGE.format(collected='ev({"ev": "collected", "ids": names})', duration=', "duration": 0.001', status=1),
)
ALWAYS_EQUAL = """\
class _Same:
    def tolist(self):
        return self

    def __eq__(self, other):
        return True


def relu(x):
    return _Same()
"""
PATCHED_ASSERT = (
    "import numpy as np\n\n\ndef relu(x):\n    np.testing.assert_allclose = lambda *a, **k: None\n    return x\n"
)


def test_bypass_is_refused_by_the_screen(clone: CloneRecord, tmp_path: Path) -> None:
    for code in (BYPASS, FULL_FORGERY):
        [result] = evaluate_repo(clone, TASKS, [gen(RELU, code)], None, "local", SCREENED, 1, tmp_path)
        assert result.status == EvalStatus.SANDBOX_VIOLATION and not result.passed
        for what in ("import importlib", "closefd", "open(<file descriptor>)", "os._exit"):
            assert what in result.detail, what


def test_bypass_without_the_screen_is_caught_by_the_graders_cross_checks(clone: CloneRecord, tmp_path: Path) -> None:
    """No ``collected`` event, no durations, exit code 0: the grader refuses the stream. A
    forger who also fakes those is seen opening the report pipe (the audit hook)."""
    bypass, full = evaluate_repo(
        clone, TASKS, [gen(RELU, BYPASS), gen(RELU, FULL_FORGERY, sample=1)], None, "local", CFG, 1, tmp_path
    )
    assert bypass.status == EvalStatus.SANDBOX_VIOLATION and not bypass.passed, bypass
    assert "outside the session" in bypass.detail
    assert full.status == EvalStatus.SANDBOX_VIOLATION and not full.passed, full
    assert "seen: candidate code opened the report pipe (file descriptor" in full.detail, full.detail


def test_always_equal_result_is_refused(clone: CloneRecord, tmp_path: Path) -> None:
    gens = [gen(RELU, ALWAYS_EQUAL), gen(RELU, PATCHED_ASSERT, sample=1), gen(RELU, GOLD_RELU, model="gold")]
    always, patched, gold = evaluate_repo(clone, TASKS, gens, None, "local", SCREENED, 1, tmp_path)
    assert always.status == EvalStatus.SANDBOX_VIOLATION and "_Same.__eq__ returns a constant" in always.detail
    assert patched.status == EvalStatus.SANDBOX_VIOLATION and "np.testing.assert_allclose" in patched.detail
    assert gold.status == EvalStatus.PASS  # the screen allows what the original module does


def test_candidate_code_does_not_see_host_secrets(clone: CloneRecord, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DLBENCH_FAKE_API_KEY", "sk-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    code = textwrap.dedent(
        """\
        import os

        def relu(x):
            leaked = [k for k in ("DLBENCH_FAKE_API_KEY", "GITHUB_TOKEN") if k in os.environ]
            assert not leaked, leaked
            return np.maximum(np.asarray(x), 0)
        """
    )
    [result] = evaluate_repo(clone, TASKS, [gen(RELU, code)], None, "local", CFG, 1, tmp_path)
    assert result.status == EvalStatus.PASS, (result.detail, result.exception)


def test_candidate_env_is_an_allow_list() -> None:
    host = {"PATH": "/bin", "LC_ALL": "C", "OPENAI_API_KEY": "sk", "AWS_SECRET_ACCESS_KEY": "x", "HOME": "/root"}
    env = candidate_env(host, "/tmp/w")
    assert env["PATH"] == "/bin" and env["LC_ALL"] == "C" and env["HOME"] == "/tmp/w" and env["OMP_NUM_THREADS"] == "1"
    assert "OPENAI_API_KEY" not in env and "AWS_SECRET_ACCESS_KEY" not in env


def test_evidence_folders_of_similar_task_ids_differ(tmp_path: Path) -> None:
    a = Generation(task_id="o__r:pkg/nn_utils.py:relu", model="m", technique="t", code="x")
    b = a.model_copy(update={"task_id": "o__r:pkg/nn/utils.py:relu"})
    assert evidence_dir(tmp_path, "o__r", a) != evidence_dir(tmp_path, "o__r", b)
    assert evidence_dir(tmp_path, "o__r", a) == evidence_dir(tmp_path, "o__r", a.model_copy())


def test_changed_grader_changes_the_candidate_hash_and_the_rule_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dlbench.harness import code

    before, rule_before = candidate_hash(RELU, OPS, "local", CFG), files_digest(code.grader_files())
    for name in code.GRADER_FILES:  # the support files stay where they are (code.SHIPPED)
        (tmp_path / name).write_bytes((code.HERE / name).read_bytes())
    monkeypatch.setattr(code, "HERE", tmp_path)
    assert candidate_hash(RELU, OPS, "local", CFG) == before and files_digest(code.grader_files()) == rule_before
    for name in code.GRADER_FILES:
        original = (tmp_path / name).read_bytes()
        (tmp_path / name).write_bytes(original + b"\n# changed\n")
        assert candidate_hash(RELU, OPS, "local", CFG) != before, name
        assert files_digest(code.grader_files()) != rule_before, name
        (tmp_path / name).write_bytes(original)


def test_cli_bad_input_is_a_message_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from dlbench.cli import main

    tasks, preds = tmp_path / "tasks.jsonl", tmp_path / "preds.jsonl"
    tasks.write_text("{not json\n")
    preds.write_text("")
    out = str(tmp_path / "out.jsonl")
    assert (
        main(["evaluate", "--tasks", str(tasks), "--predictions", str(preds), "--out", out, "--backend", "local"]) == 2
    )
    assert "not JSON" in capsys.readouterr().err
    missing = str(tmp_path / "nope.jsonl")
    assert main(["evaluate", "--tasks", missing, "--predictions", str(preds), "--out", out, "--backend", "local"]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def test_supervisor_that_cannot_start_is_an_infra_error(
    clone: CloneRecord, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dlbench.harness import local

    broken = tmp_path / "supervisor.py"
    broken.write_text("raise SystemExit(3)\n")
    monkeypatch.setattr(local, "SUPERVISOR", broken)
    gens = [gen(RELU, GOLD_RELU), gen(RELU, GOLD_RELU, sample=1)]
    results = evaluate_repo(clone, TASKS, gens, None, "local", CFG, 1, tmp_path / "ev")
    assert [r.status for r in results] == [EvalStatus.INFRA_ERROR, EvalStatus.INFRA_ERROR]
    assert "could not start" in results[0].detail and not results[0].passed


def test_session_that_cannot_be_created_is_an_infra_error_per_candidate() -> None:
    from dlbench.harness.evaluate import run_pool
    from dlbench.harness.run import Candidate

    def no_engine():
        raise ConnectionError("engine not answering")

    items = [(n, Candidate.make(str(n), {}, ["t.py::test"])) for n in range(3)]
    results = [run for _, _, run in run_pool(no_engine, items, 2)]
    assert [r.infra for r in results] == ["could not create a session: engine not answering"] * 3


@pytest.mark.docker
def test_naive_docker_engine_error_is_an_infra_error(require_docker: None) -> None:
    from dlbench.harness.run import Candidate
    from dlbench.harness.sandbox import run_naive

    result = run_naive("dlbench/no-such-image:never", Candidate.make("k", {}, ["t.py::test"]), CFG)
    assert result.infra and "could not start the container" in result.infra
