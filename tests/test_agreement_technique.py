"""The mutation_agreement technique end to end on a small repository: the real openai client
against the local stand-in, candidates and model tests run by the harness's local backend."""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dlbench.config import Config
from dlbench.generate import code_mutants
from dlbench.generate.mutation_agreement.modeltests import TEST_FILE
from dlbench.generate.mutation_agreement.technique import TECHNIQUE, agreement_file
from dlbench.generate.mutation_agreement.variants import Prompt
from dlbench.llm.client import UnansweredRequests
from dlbench.records import AgreementRecord, BenchmarkTask, CloneRecord, CloneStatus, Generation, GenStatus
from dlbench.standins.llm import LLMStandIn
from dlbench.store import read_jsonl, write_json, write_jsonl

# ---------------------------------------------------------------- a plausible stand-in model

HARD, FIXABLE = 0, 1  # task kinds by hash: always wrong / wrong only from the original prompt


def kind(task: BenchmarkTask) -> int:
    return int(hashlib.sha256(task.task_id.encode()).hexdigest(), 16) % 4


class BenchmarkResponder:
    """Answers code requests with the ground truth or a mutant of it, test requests with
    assertions taken from the repository's own tests (plus lines the parser must drop).

    - HARD tasks: every answer is the same mutant;
    - FIXABLE tasks: the original prompt gets a mutant, every mutated prompt the ground truth;
    - other tasks: choice 0 is the ground truth, choice 1 a mutant.
    """

    def __init__(self, benchmark: Path, checkouts: Path, kinds: dict[str, int] | None = None):
        self.benchmark, self.checkouts, self.kinds = benchmark, checkouts, kinds or {}
        self._tasks: list[BenchmarkTask] | None = None

    def tasks(self) -> list[BenchmarkTask]:
        if self._tasks is None:  # the benchmark exists once the workflow reaches generation
            self._tasks = read_jsonl(self.benchmark, BenchmarkTask)
        return self._tasks

    def kind(self, task: BenchmarkTask) -> int:
        return self.kinds.get(task.task_id, kind(task))

    def __call__(self, body: dict[str, Any], index: int) -> str:
        prompt = body["messages"][-1]["content"]
        if body["messages"][0]["content"].startswith("You rewrite"):  # a paraphrase of the prose
            return f"{prompt.replace('Implement', 'Please write', 1)}\n\nParaphrase {index}."
        task = self.find(prompt)
        if task is None:
            return "I do not know which function you mean."
        if "Do not implement" in prompt:
            return self.tests_answer(task)
        own = self.kind(task)
        original = task.prompt.rstrip() in prompt
        wrong = own == HARD or (original if own == FIXABLE else index == 1)
        return f"```python\n{mutant(task) if wrong else task.ground_truth}```\n"

    def find(self, prompt: str) -> BenchmarkTask | None:
        """The task asked about: by its protected tail (kept verbatim by every variant), else
        by the function and path named in backticks."""
        for task in self.tasks():
            tail = "\n".join(Prompt.split(task.prompt).tail)
            if (tail and tail in prompt) or task.prompt.rstrip() in prompt:
                return task
        named = [t for t in self.tasks() if f"`{t.function}`" in prompt and f"`{t.path}`" in prompt]
        return named[0] if len(named) == 1 else None

    def tests_answer(self, task: BenchmarkTask) -> str:
        lines = ["import numpy as np", "print('not a test')", "assert True", *repo_tests(task, self.checkouts)]
        return "Here are the tests:\n```python\n" + "\n".join(lines) + "\n```\n"


def mutant(task: BenchmarkTask) -> str:
    found = code_mutants.mutants(task.ground_truth, 1, seed=task.task_id)
    return found[0].code if found else code_mutants.null_body(task.ground_truth)


def repo_tests(task: BenchmarkTask, checkouts: Path) -> list[str]:
    """The module imports and the fixture-free test functions (methods turned into plain
    functions when they never use ``self``) of the files holding the task's tests."""
    out: list[str] = []
    for path in sorted({n.split("::")[0] for n in task.tests}):
        tree = ast.parse((checkouts / task.slug / path).read_text())
        out += [ast.unparse(s) for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom)]
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test") and _no_fixtures(node):
                plain = ast.FunctionDef(name=node.name, args=ast.arguments([], [], None, [], [], None, []), body=node.body,
                                        decorator_list=[], returns=None, type_params=[])  # fmt: skip
                out.append(ast.unparse(ast.fix_missing_locations(plain)))
    return out


def _no_fixtures(node: ast.FunctionDef) -> bool:
    args = [a.arg for a in node.args.args]
    uses_self = any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(node))
    return args in ([], ["self"]) and not uses_self and not node.decorator_list


# ---------------------------------------------------------------- a small repository

MODULE = '''"""Tiny ops."""
import numpy as np


def relu(x):
    """Rectified linear unit: compute ``max(x, 0)`` elementwise.

    Args:
        x: input array.
    """
    return np.maximum(np.asarray(x, dtype=float), 0.0)


def scale(values, factor=2.0):
    """Multiply every value by ``factor``. Return the scaled array."""
    return np.asarray(values, dtype=float) * factor


def clip_norm(values, max_norm):
    """Rescale ``values`` so that its L2 norm is at most ``max_norm``."""
    values = np.asarray(values, dtype=float)
    norm = float(np.sqrt((values ** 2).sum()))
    if norm <= max_norm or norm == 0.0:
        return values
    return values * (max_norm / norm)
'''
TESTS = """import numpy as np

from tinyops.ops import clip_norm, relu, scale


def test_relu():
    assert np.array_equal(relu([-1.0, 0.0, 2.0]), [0.0, 0.0, 2.0])


def test_relu_keeps_positive():
    assert relu([3.0])[0] == 3.0


def test_relu_negative():
    assert relu([-5.0])[0] == 0.0


def test_scale():
    assert np.allclose(scale([1.0, 2.0]), [2.0, 4.0])


def test_scale_factor():
    assert np.allclose(scale([1.0], factor=3.0), [3.0])


def test_scale_zero():
    assert np.allclose(scale([0.0, 5.0], 0.0), [0.0, 0.0])


def test_clip_norm_short():
    assert np.allclose(clip_norm([3.0, 4.0], 10.0), [3.0, 4.0])


def test_clip_norm_long():
    assert np.allclose(clip_norm([3.0, 4.0], 1.0), [0.6, 0.8])


def test_clip_norm_zero():
    assert np.allclose(clip_norm([0.0, 0.0], 1.0), [0.0, 0.0])
"""
SLUG = "tiny__ops"


def write_repo(root: Path) -> Path:
    repo = root / SLUG
    (repo / "tinyops").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "tinyops/__init__.py").write_text("")
    (repo / "tinyops/ops.py").write_text(MODULE)
    (repo / "tests/test_ops.py").write_text(TESTS)
    (repo / "requirements.txt").write_text("numpy\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tiny ops"], check=True)
    return repo


def head(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def make_tasks() -> list[BenchmarkTask]:
    tree = ast.parse(MODULE)
    tasks = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        source = ast.get_source_segment(MODULE, node) or ""
        signature = source.splitlines()[0]
        doc = ast.get_docstring(node) or ""
        prompt = (
            f"Implement the function `{node.name}` in `tinyops/ops.py`.\n\n{doc}\n\n"
            f"Required signature (keep it exactly):\n```python\n{signature}\n```\n\n"
            f"Return only the complete definition of `{node.name}`."
        )
        tests = [
            f"tests/test_ops.py::{t.name}"
            for t in ast.parse(TESTS).body
            if isinstance(t, ast.FunctionDef) and node.name in t.name
        ]
        tasks.append(
            BenchmarkTask(
                task_id=f"{SLUG}:tinyops/ops.py:{node.name}", repo="tiny/ops", sha=None, path="tinyops/ops.py",
                function=node.name, class_name=None, signature=signature, prompt=prompt, ground_truth=source + "\n",
                tests=tests, stage="training", task="t", data="d", first_added=None, last_modified=None,
                qualname=node.name, slug=SLUG, start_line=node.lineno, end_line=node.end_lineno or node.lineno,
            )
        )  # fmt: skip
    return tasks


KINDS = {
    f"{SLUG}:tinyops/ops.py:relu": FIXABLE,
    f"{SLUG}:tinyops/ops.py:scale": HARD,
    f"{SLUG}:tinyops/ops.py:clip_norm": 2,
}


@pytest.fixture()
def world(tmp_path: Path):
    checkouts = tmp_path / "repos"
    repo = write_repo(checkouts)
    clone = CloneRecord(full_name="tiny/ops", slug=SLUG, clone_url="", path=str(repo), sha=None, status=CloneStatus.OK)
    write_json(tmp_path / "clone.json", clone)
    bench = tmp_path / "dlbench.jsonl"
    write_jsonl(bench, make_tasks())
    return tmp_path, bench, checkouts


def config(base_url: str, storage: Path, **agreement) -> Config:
    return Config.model_validate(
        {
            "models": {
                "gold": {"provider": "gold"},
                "null": {"provider": "null"},
                "m1": {"provider": "openai", "model": "standin-model", "base_url": base_url, "max_retries": 1},
            },
            "generate": {"models": ["m1"], "techniques": [TECHNIQUE],
                         "mutation_agreement": {"variants": 3, "samples_per_variant": 2, "tests_per_task": 6} | agreement},
            "evaluate": {"backend": "local", "jobs": 2, "timeout_s": 30},
            "storage": {"llm_cache": str(storage / "llm"), "agreement_runs": str(storage / "agreement-runs")},
        }
    )  # fmt: skip


def run_job(tmp: Path, bench: Path, cfg: Config) -> tuple[list[Generation], list[AgreementRecord]]:
    out, evidence = tmp / "gens.jsonl", tmp / "agreement.jsonl"
    agreement_file(
        bench,
        tmp / "clone.json",
        None,
        out,
        evidence,
        "m1",
        SLUG,
        cfg.models["m1"],
        cfg.generate,
        cfg.evaluate,
        "local",
        cfg.storage.llm_cache,
        cfg.storage.agreement_runs,
    )
    return read_jsonl(out, Generation), read_jsonl(evidence, AgreementRecord)


def test_agreement_job_chooses_by_model_tests_and_resumes(world):
    tmp, bench, checkouts = world
    responder = BenchmarkResponder(bench, checkouts, KINDS)
    with LLMStandIn(responder) as server:
        cfg = config(server.base_url, tmp / "cache")
        gens, records = run_job(tmp, bench, cfg)
        served = server.served
        again_gens, again_records = run_job(tmp, bench, cfg)
        assert server.served == served and not server.repeated()  # the rerun paid for nothing
    assert list((tmp / "cache" / "agreement-runs").rglob("*.json"))  # model-test results kept for reruns too
    assert served == 3 * (4 + 1)  # per task: four prompts (original + 3 variants) and one test request
    assert [g.model_dump() for g in again_gens] == [g.model_dump() for g in gens]
    assert [r.model_dump() for r in again_records] == [r.model_dump() for r in records]

    by_task = {r.task_id.rsplit(":", 1)[1]: r for r in records}
    gen_by_task = {g.task_id.rsplit(":", 1)[1]: g for g in gens}
    assert all(g.technique == TECHNIQUE and g.sample == 0 and g.model == "m1" for g in gens)
    tasks = {t.function: t for t in make_tasks()}
    for name, record in by_task.items():
        assert [v.index for v in record.variants] == [0, 1, 2, 3]
        assert record.variants[0].transformations == [] and all(v.transformations for v in record.variants[1:])
        assert all(v.prompt.endswith(f"Return only the complete definition of `{name}`.") for v in record.variants)
        assert len(record.candidates) == 8 and all(len(c.passed) == len(record.tests) for c in record.candidates)
        assert record.tests and all(t.node_id.startswith(f"{TEST_FILE}::") for t in record.tests)
        assert all("print" not in t.assertion and t.assertion != "assert True" for t in record.tests)
        truth = [c.code == tasks[name].ground_truth for c in record.candidates]
        for candidate, is_truth in zip(record.candidates, truth):  # the pass matrix comes from real runs
            assert candidate.run_status in ("pass", "fail")
            if is_truth:
                assert all(candidate.passed)
        gen = gen_by_task[name]
        assert gen.input_tokens > 0 and gen.cost_usd == 0.0  # the whole technique's usage, unpriced

    relu = by_task["relu"]  # the original prompt's answers are wrong; six variant answers agree
    assert relu.rule == "dual_agreement" and gen_by_task["relu"].code == tasks["relu"].ground_truth
    assert [relu.candidates[i].variant for i in relu.groups[0].members] == [1, 1, 2, 2, 3, 3]
    assert not all(relu.candidates[0].passed)
    scale = by_task["scale"]  # every answer is the same mutant: chosen, and wrong
    assert len(scale.groups) == 1 and gen_by_task["scale"].code != tasks["scale"].ground_truth
    clip = by_task["clip_norm"]  # half right, half mutants: the group passing more tests wins
    assert gen_by_task["clip_norm"].code == tasks["clip_norm"].ground_truth
    assert clip.groups[0].tests_passed == len(clip.tests) > clip.groups[1].tests_passed


def test_llm_rewriter_variants(world):
    tmp, bench, checkouts = world
    with LLMStandIn(BenchmarkResponder(bench, checkouts, KINDS)) as server:
        gens, records = run_job(tmp, bench, config(server.base_url, tmp / "cache", rewriter="llm", variants=2))
        assert server.served == 3 * (1 + 3 + 1)  # per task: one rewrite request (two choices), three prompts, tests
    for record in records:
        assert [v.source for v in record.variants] == ["original", "llm", "llm"]
        assert all(v.prompt.startswith("Please write") for v in record.variants[1:])
    relu = next(g for g in gens if g.task_id.endswith(":relu"))
    assert relu.code == next(t for t in make_tasks() if t.function == "relu").ground_truth


def test_no_model_tests_falls_back_to_code_agreement(world):
    tmp, bench, checkouts = world
    with LLMStandIn(BenchmarkResponder(bench, checkouts, KINDS)) as server:
        gens, records = run_job(tmp, bench, config(server.base_url, tmp / "cache", tests_per_task=0))
        assert server.served == 3 * 4  # no test requests
    for record in records:
        assert record.tests == [] and record.tests_detail == "tests_per_task is 0"
        assert record.rule == "code_agreement (no model tests)"
    relu = next(g for g in gens if g.task_id.endswith(":relu"))
    assert relu.code == next(t for t in make_tasks() if t.function == "relu").ground_truth  # six equal answers of eight


def test_api_errors_fail_the_job_and_write_nothing(world):
    """An unanswered candidate is an infrastructure fault, not the model's failure: nothing is
    written (the output never looks complete), and the next run asks again."""
    tmp, bench, _ = world
    with LLMStandIn(lambda body, index: (_ for _ in ()).throw(RuntimeError("down"))) as server:
        with pytest.raises(UnansweredRequests, match=r"24 of 24 sampled candidates got no answer"):
            run_job(tmp, bench, config(server.base_url, tmp / "cache"))
        assert server.served == 0
    assert not (tmp / "gens.jsonl").exists() and not (tmp / "agreement.jsonl").exists()


def test_a_reference_model_gets_a_clear_status(world):
    tmp, bench, _ = world
    cfg = config("http://127.0.0.1:9/v1", tmp / "cache")
    agreement_file(
        bench,
        tmp / "clone.json",
        None,
        tmp / "g.jsonl",
        tmp / "a.jsonl",
        "gold",
        SLUG,
        cfg.models["gold"],
        cfg.generate,
        cfg.evaluate,
        "local",
        cfg.storage.llm_cache,
        cfg.storage.agreement_runs,
    )
    gens = read_jsonl(tmp / "g.jsonl", Generation)
    assert len(gens) == 3 and {g.status for g in gens} == {GenStatus.NO_CODE}
    assert "needs an OpenAI-compatible model" in (gens[0].detail or "")
    assert read_jsonl(tmp / "a.jsonl", AgreementRecord) == []
    assert json.loads(cfg.model_dump_json())["generate"]["mutation_agreement"]["tests_per_task"] == 6
