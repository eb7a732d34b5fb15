"""Generation end to end: two configured models × three techniques against the local
stand-in through the real openai client, reference models, predictions, usage table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlbench.config import Config
from dlbench.generate.jobs import generate_file, journal_path, usage_table, write_usage
from dlbench.records import BenchmarkTask, Generation, GenStatus, StagePrediction
from dlbench.standins.llm import LLMStandIn, ScriptedResponder
from dlbench.store import read_jsonl, write_jsonl

SOURCES = {
    "relu": ("pre-processing", None, "def relu(x):\n    return [v if v > 0 else 0 for v in x]\n"),
    "scale": ("pre-processing", None, "def scale(x, k=2):\n    y = x * k\n    return y + 1\n"),
    "step": ("training", "Optimizer", "def step(self, grad):\n    self.t += 1\n    return self.lr * grad / self.t\n"),
    "loss": ("training", None, "def loss(a, b):\n    d = a - b\n    return d * d\n"),
    "accuracy": (
        "evaluation",
        None,
        "def accuracy(hits, total):\n    if total == 0:\n        return 0.0\n    return hits / total\n",
    ),
    "recall": ("evaluation", None, "def recall(tp, fn):\n    return tp / max(tp + fn, 1)\n"),
}
REPOS = ["alpha__one", "beta__two", "gamma__three"]


def make_tasks(n_repos: int = 3, per_repo: int = 2) -> list[BenchmarkTask]:
    """Small inline benchmark: each repository gets tasks from SOURCES in turn."""
    names = list(SOURCES)
    tasks = []
    for r, slug in enumerate(REPOS[:n_repos]):
        for j in range(per_repo):
            name = names[(r * per_repo + j) % len(names)]
            stage, class_name, source = SOURCES[name]
            qualname = f"{class_name}.{name}" if class_name else name
            signature = source.splitlines()[0]
            tasks.append(
                BenchmarkTask(
                    task_id=f"{slug}:pkg/mod{j}.py:{qualname}", repo=slug.replace("__", "/"), sha="0" * 40,
                    path=f"pkg/mod{j}.py", function=name, class_name=class_name, signature=signature,
                    prompt=f"Implement `{name}` in pkg/mod{j}.py for {slug}.\n\n{signature}\n    '''Does {name}.'''\n",
                    ground_truth=source, tests=[f"tests/test_mod{j}.py::test_{name}"], stage=stage, task="t",
                    data="d", first_added=None, last_modified=None, qualname=qualname, slug=slug, start_line=1,
                    end_line=4,
                )
            )  # fmt: skip
    return tasks


def make_config(base_url: str | None, storage: Path, **model_extra) -> Config:
    llm = {"provider": "openai", "base_url": base_url, "concurrency": 4, "max_retries": 2} | model_extra
    return Config.model_validate(
        {
            "models": {
                "gold": {"provider": "gold"},
                "null": {"provider": "null"},
                "mutant": {"provider": "mutant", "n": 3},
                "m1": llm | {"model": "model-one", "price_in_per_mtok": 1.0, "price_out_per_mtok": 2.0},
                "m2": llm | {"model": "model-two", "n": 2, "temperature": 0.8},
            },
            "generate": {
                "models": ["m1", "m2", "mutant"],
                "techniques": ["zero-shot", "few-shot", "stage-few-shot"],
            },
            "storage": {"llm_cache": str(storage / "llm"), "journal": str(storage / "journal")},
        }
    )


def run_job(cfg: Config, bench: Path, out: Path, model: str, technique: str, repo: str, **kw) -> list[Generation]:
    """``generate_file`` with the model's settings and the storage locations of ``cfg``."""
    return generate_file(
        bench, out, model, technique, repo, cfg.models[model], cfg.storage.llm_cache, cfg.storage.journal, **kw
    )


@pytest.fixture()
def world(tmp_path):
    tasks = make_tasks()
    bench = tmp_path / "dlbench.jsonl"
    write_jsonl(bench, tasks)
    stages = tmp_path / "stages.jsonl"  # the classifier's output format (tested on its own)
    write_jsonl(
        stages, [StagePrediction(task_id=t.task_id, repo=t.slug, stage=t.stage, predicted=t.stage) for t in tasks]
    )
    return tasks, bench, stages


def test_two_models_three_techniques_end_to_end(world, tmp_path):
    tasks, bench, stages = world
    with LLMStandIn() as server:
        cfg = make_config(server.base_url, tmp_path / "cache")
        outputs = []
        for model in ("m1", "m2"):
            for technique in ("zero-shot", "few-shot", "stage-few-shot"):
                for repo in REPOS:
                    out = tmp_path / "generations" / model / technique / f"{repo}.jsonl"
                    run_job(cfg, bench, out, model, technique, repo, stages=stages)
                    outputs.append(out)
        served = server.served
        bodies = [r.body for r in server.log]
    # one request per task, model and technique (n samples ride in one request)
    assert served == 2 * 3 * len(tasks) and not server.repeated()
    gens = [g for out in outputs for g in read_jsonl(out, Generation)]
    assert len(gens) == (1 + 2) * 3 * len(tasks)
    assert all(g.status == GenStatus.OK for g in gens), {g.status for g in gens}
    assert all(f"def {g.task_id.rsplit('.', 1)[-1].rsplit(':', 1)[-1]}(" in g.code for g in gens)
    assert all(g.raw and "```python" in g.raw for g in gens)
    m2 = [g for g in gens if g.model == "m2" and g.technique == "zero-shot"]
    assert sorted({g.sample for g in m2}) == [0, 1] and m2[0].code != m2[1].code
    # few-shot prompts carry three solved examples from other repositories only
    few = [b for b in bodies if len(b["messages"]) == 7]
    assert len(few) == 2 * 2 * len(tasks)
    for body in few:
        asked = body["messages"][-1]["content"]
        own_repo = next(r for r in REPOS if f"for {r}." in asked)
        assert all(own_repo not in m["content"] for m in body["messages"][:-1])
    # tokens and cost recorded once per request; m1 is priced
    m1 = [g for g in gens if g.model == "m1"]
    assert all(g.input_tokens > 0 and g.cost_usd > 0 for g in m1)
    m2_extra = [g for g in gens if g.model == "m2" and g.sample == 1]
    assert all(g.input_tokens == 0 and g.cost_usd == 0 for g in m2_extra)
    # the journal is gone once the output is written
    assert not journal_path(cfg.storage.journal, "m1", "few-shot", REPOS[0]).exists()

    usage = usage_table(outputs).set_index(["model", "technique"])
    assert usage.loc[("m1", "zero-shot"), "requests"] == len(tasks)
    assert usage.loc[("m2", "zero-shot"), "candidates"] == 2 * len(tasks)
    assert usage.loc[("m1", "few-shot"), "cost_usd"] > usage.loc[("m1", "zero-shot"), "cost_usd"]
    assert usage.loc[("m2", "zero-shot"), "cost_usd"] == 0
    write_usage(outputs, tmp_path / "usage.csv")
    assert (tmp_path / "usage.csv").read_text().startswith("model,technique,tasks,candidates,requests")


def test_rerun_is_served_from_the_cache(world, tmp_path):
    _, bench, _ = world
    with LLMStandIn() as server:
        cfg = make_config(server.base_url, tmp_path / "cache")
        first = run_job(cfg, bench, tmp_path / "a.jsonl", "m1", "zero-shot", REPOS[0])
        before = server.served
        again = run_job(cfg, bench, tmp_path / "b.jsonl", "m1", "zero-shot", REPOS[0])
        assert server.served == before == 2
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert [g.code for g in first] == [g.code for g in again]


def test_extraction_statuses_reach_the_records(world, tmp_path):
    _, bench, _ = world
    script = ScriptedResponder(
        {"Implement `relu`": "Sorry, no.", "Implement `scale`": "```python\ndef scale(x, k=2)\n    return x\n```"}
    )
    with LLMStandIn(responder=script) as server:
        cfg = make_config(server.base_url, tmp_path / "cache")
        gens = run_job(cfg, bench, tmp_path / "a.jsonl", "m1", "zero-shot", REPOS[0])
    assert [(g.status, g.code is None) for g in gens] == [(GenStatus.NO_CODE, True), (GenStatus.SYNTAX_ERROR, False)]
    assert gens[0].raw == "Sorry, no."


def test_stage_few_shot_without_stages_fails_clearly(world, tmp_path):
    _, bench, _ = world
    with LLMStandIn() as server:
        cfg = make_config(server.base_url, tmp_path / "cache")
        with pytest.raises(ValueError, match="predicted stages"):
            run_job(cfg, bench, tmp_path / "a.jsonl", "m1", "stage-few-shot", REPOS[0])


def test_reference_models(world, tmp_path):
    tasks, bench, _ = world
    cfg = make_config(None, tmp_path / "cache")
    repo = REPOS[1]
    mine = [t for t in tasks if t.slug == repo]
    gold = run_job(cfg, bench, tmp_path / "gold.jsonl", "gold", "reference", repo)
    assert [g.code for g in gold] == [t.ground_truth for t in mine]
    null = run_job(cfg, bench, tmp_path / "null.jsonl", "null", "reference", repo)
    assert all(g.code.rstrip().endswith("raise NotImplementedError") for g in null)
    mutant = run_job(cfg, bench, tmp_path / "mutant.jsonl", "mutant", "reference", repo)
    for task in mine:
        ms = [g for g in mutant if g.task_id == task.task_id]
        assert len(ms) == 3 and len({g.code for g in ms}) == 3 and all(g.detail for g in ms)
        assert [g.sample for g in ms] == [0, 1, 2]
    assert not any(p.name.startswith("m") for p in (tmp_path / "cache").glob("*"))  # no LLM involved


def test_predictions_provider(world, tmp_path):
    tasks, bench, _ = world
    preds = tmp_path / "preds.jsonl"
    first, second = [t for t in tasks if t.slug == REPOS[0]]
    lines = [
        {"task_id": first.task_id, "code": first.ground_truth, "sample": 1, "model": "ext"},
        {"task_id": first.task_id, "code": "def relu(:\n", "model": "ext"},
        {"task_id": second.task_id, "code": "x = 1", "model": "other"},
    ]
    preds.write_text("".join(json.dumps(line) + "\n" for line in lines))
    cfg = make_config(None, tmp_path / "cache")
    cfg.models["ext"] = cfg.models["gold"].model_copy(
        update={"provider": "predictions", "predictions": str(preds), "model": "ext"}
    )
    gens = run_job(cfg, bench, tmp_path / "p.jsonl", "ext", "zero-shot", REPOS[0])
    assert [(g.task_id, g.sample, g.status) for g in gens] == [
        (first.task_id, 0, GenStatus.SYNTAX_ERROR),
        (first.task_id, 1, GenStatus.OK),
        (second.task_id, 0, GenStatus.NO_CODE),
    ]


def test_repository_without_tasks_writes_an_empty_file(world, tmp_path):
    _, bench, _ = world
    cfg = make_config(None, tmp_path / "cache")
    assert run_job(cfg, bench, tmp_path / "e.jsonl", "gold", "reference", "nobody__here") == []
    assert (tmp_path / "e.jsonl").read_text() == ""


def test_tasks_sharing_a_prompt_share_one_request_but_keep_their_records(world, tmp_path):
    tasks, _, _ = world
    twin = tasks[0].model_copy(update={"task_id": tasks[0].task_id + "_twin", "path": "pkg/twin.py"})
    bench = tmp_path / "twins.jsonl"
    write_jsonl(bench, [tasks[0], twin])
    with LLMStandIn() as server:
        cfg = make_config(server.base_url, tmp_path / "cache")
        gens = run_job(cfg, bench, tmp_path / "a.jsonl", "m1", "zero-shot", REPOS[0])
        assert server.served == 1
    assert [g.task_id for g in gens] == [tasks[0].task_id, twin.task_id]
    assert gens[0].code == gens[1].code and gens[0].cache_key == gens[1].cache_key
    assert gens[0].input_tokens > 0 and gens[1].input_tokens == 0  # the request is paid once


def test_batch_mode_gives_the_same_candidates_in_one_batch(world, tmp_path):
    _, bench, _ = world
    with LLMStandIn() as server:
        cfg = make_config(server.base_url, tmp_path / "cache")
        cfg.models["m1b"] = cfg.models["m1"].model_copy(update={"batch": True})
        direct = run_job(cfg, bench, tmp_path / "a.jsonl", "m1", "few-shot", REPOS[2])
        batched = run_job(cfg, bench, tmp_path / "b.jsonl", "m1b", "few-shot", REPOS[2])
        assert len(server.batches.jobs) == 0  # everything was in the cache already
        cfg.storage.llm_cache = str(tmp_path / "fresh" / "llm")
        fresh = run_job(cfg, bench, tmp_path / "c.jsonl", "m1b", "few-shot", REPOS[2])
        assert len(server.batches.jobs) == 1
    assert [g.code for g in direct] == [g.code for g in batched] == [g.code for g in fresh]
    assert all(g.status == GenStatus.OK and g.input_tokens > 0 for g in fresh)
