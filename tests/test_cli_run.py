"""`dlbench run`: the task subset it draws (dlbench/subset.py), the config overlay it writes
(dlbench/run.py), its errors, and one real run on the embedded sample in a copy of the
project, against the stand-in LLM, on a stratified sample of four tasks."""

from __future__ import annotations

import csv
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dlbench.cli import main
from dlbench.config import EvaluateConfig, load_config, load_config_file
from dlbench.records import BenchmarkTask, Generation
from dlbench.run import ModelRequest, RunError, TaskRequest, merge, model_entry, plan_run, write_overlay
from dlbench.store import read_jsonl
from dlbench.subset import (
    allocate,
    generated_task_ids,
    sample_task_ids,
    scored_repos,
    scored_task_ids,
    stratified_sample,
    subset_settings,
    unknown_repos,
)
from tests.workflow_runs import ROOT, project_copy

STAGES = {"Pre/Post Processing": 20, "Training": 8, "Evaluation & Metrics": 6, "Model Construction": 4, "Inference": 2}
REPOS = ["a/one", "b/two", "c/three", "d/four"]


def task(task_id: str, repo: str, stage: str | None) -> BenchmarkTask:
    slug = repo.replace("/", "__")
    return BenchmarkTask(
        task_id=f"{slug}:m.py:{task_id}", repo=repo, sha="s", path="m.py", function=task_id, class_name=None,
        signature="", prompt="", ground_truth="", tests=["t.py::test"], stage=stage, task=None, data=None,
        first_added=None, last_modified=None, qualname=task_id, slug=slug, start_line=1, end_line=2,
    )  # fmt: skip


def world() -> list[BenchmarkTask]:
    """40 tasks: five stages of uneven size spread over four repositories."""
    tasks, i = [], 0
    for stage, size in STAGES.items():
        for _ in range(size):
            tasks.append(task(f"f{i}", REPOS[i % len(REPOS)], stage))
            i += 1
    return tasks


def drawn(tasks: list[BenchmarkTask], ids: set[str]) -> list[BenchmarkTask]:
    return [t for t in tasks if t.task_id in ids]


# ---------------------------------------------------------------- the stratified subset


def test_allocation_is_proportional_and_gives_every_stratum_one_when_it_can():
    sizes = dict(STAGES)
    for limit in range(1, 41):
        shares = allocate(sizes, limit, seed=0)
        assert sum(shares.values()) == limit and all(shares[k] <= sizes[k] for k in sizes)
        if limit >= len(sizes):
            assert min(shares.values()) >= 1
    shares = allocate(sizes, 20, seed=0)  # half of each, exactly
    assert shares == {k: n // 2 for k, n in sizes.items()}
    assert allocate(sizes, 3, seed=0) == {"Pre/Post Processing": 2, "Training": 1, "Evaluation & Metrics": 0,
                                          "Model Construction": 0, "Inference": 0}  # fmt: skip
    assert allocate(sizes, 99, seed=0) == sizes


def test_sample_is_seeded_deterministic_and_of_the_size_asked():
    tasks = world()
    first = stratified_sample(tasks, 10, seed=3)
    shuffled = tasks[:]
    random.Random(1).shuffle(shuffled)
    assert len(first) == 10 and stratified_sample(shuffled, 10, seed=3) == first  # no input order matters
    assert len({frozenset(stratified_sample(tasks, 10, seed)) for seed in range(6)}) > 1  # the seed does
    assert stratified_sample(tasks, 0, seed=3) == stratified_sample(tasks, 40, seed=3) == {t.task_id for t in tasks}


@pytest.mark.parametrize("limit", [5, 8, 10, 17, 30])
def test_sample_is_proportional_by_stage_and_covers_every_stage_and_repository(limit):
    tasks = world()
    for seed in range(5):
        chosen = drawn(tasks, stratified_sample(tasks, limit, seed))
        stages = Counter(t.stage for t in chosen)
        assert stages == Counter(allocate(STAGES, limit, seed))  # each stage's share, exactly
        if limit >= 8:  # below, one of each of the five stages comes first
            assert all(abs(stages[s] - limit * n / 40) < 1 for s, n in STAGES.items())
        repos = Counter(t.repo for t in chosen)
        assert set(repos) == set(REPOS)  # limit >= 4 repositories: every one drawn
        assert max(repos.values()) - min(repos.values()) <= 1 + limit // 8  # and evenly (they are equal in size)


def test_sample_covers_repositories_a_greedy_draw_would_miss():
    """One repository holds only tasks of a small stage: the maximum flow gives it that
    stage's one place instead of handing it to a repository that has other stages too."""
    tasks = [task(f"p{i}", "big/one", "Pre/Post Processing") for i in range(12)]
    tasks += [task(f"t{i}", "big/one", "Training") for i in range(4)]
    tasks += [task("i0", "big/one", "Inference"), task("i1", "small/two", "Inference")]
    for seed in range(20):
        chosen = drawn(tasks, stratified_sample(tasks, 3, seed))
        assert Counter(t.stage for t in chosen) == {"Pre/Post Processing": 1, "Training": 1, "Inference": 1}
        assert {t.repo for t in chosen} == {"big/one", "small/two"}


def test_unlabelled_tasks_form_a_stratum():
    tasks = [task(f"u{i}", "a/one", None) for i in range(6)] + [task(f"l{i}", "a/one", "Training") for i in range(6)]
    assert Counter(t.stage for t in drawn(tasks, stratified_sample(tasks, 4, 0))) == {None: 2, "Training": 2}


def test_subset_composes_repos_ids_the_per_repository_sample_and_the_limit():
    tasks = world()
    everything = {t.task_id for t in tasks}
    assert scored_task_ids(tasks, EvaluateConfig()) == everything
    # without a subset: each repository's seeded sample, as evaluate.sample_tasks always drew it
    per_repo = {i for r in REPOS for i in sample_task_ids([t.task_id for t in tasks if t.repo == r], 3, 5)}
    assert scored_task_ids(tasks, EvaluateConfig(sample_tasks=3, sample_seed=5)) == per_repo
    only_two = scored_task_ids(tasks, EvaluateConfig(repos=["a/one", "B__TWO"]))  # owner/name or slug, any case
    assert {t.repo for t in drawn(tasks, only_two)} == {"a/one", "b/two"} and len(only_two) == 20
    ids = sorted(everything)[:7]
    assert scored_task_ids(tasks, EvaluateConfig(task_ids=ids)) == set(ids)
    limited = scored_task_ids(tasks, EvaluateConfig(sample_tasks=6, sample_limit=8, sample_seed=2))
    assert len(limited) == 8 and limited <= scored_task_ids(tasks, EvaluateConfig(sample_tasks=6, sample_seed=2))
    assert limited == stratified_sample(drawn(tasks, scored_task_ids(tasks, EvaluateConfig(sample_tasks=6, sample_seed=2))), 8, 2)  # fmt: skip


def test_generation_keeps_to_a_subset_only_and_rules_see_it_only_when_set():
    tasks = world()
    assert generated_task_ids(tasks, None) is None
    assert generated_task_ids(tasks, EvaluateConfig(sample_tasks=3)) is None  # sample_tasks samples at evaluation
    assert subset_settings(EvaluateConfig(sample_tasks=3)) is None  # so a config without a subset keeps its params
    cfg = EvaluateConfig(sample_limit=5, sample_seed=1)
    assert generated_task_ids(tasks, cfg) == scored_task_ids(tasks, cfg) and len(scored_task_ids(tasks, cfg)) == 5
    assert subset_settings(cfg) == {
        "sample_limit": 5, "task_ids": [], "repos": [], "sample_tasks": 0, "sample_seed": 1,
    }  # fmt: skip
    slugs = [r.replace("/", "__") for r in REPOS]
    assert scored_repos(slugs, EvaluateConfig()) == slugs
    assert scored_repos(slugs, EvaluateConfig(repos=["c/three"])) == ["c__three"]
    assert scored_repos(slugs, EvaluateConfig(task_ids=["d__four:m.py:f3", "a__one:m.py:f0"])) == ["a__one", "d__four"]
    assert unknown_repos(slugs, EvaluateConfig(repos=["C/Three", "c/tree"])) == ["c/tree"]


def test_a_config_pickled_before_the_subset_keys_existed_reads_as_no_subset():
    """A workflow started before these keys hands its jobs configs without them."""
    old = EvaluateConfig(sample_tasks=2)
    for key in ("sample_limit", "task_ids", "repos"):
        del old.__dict__[key]
    assert subset_settings(old) is None and generated_task_ids(world(), old) is None
    assert len(scored_task_ids(world(), old)) == 8


# ---------------------------------------------------------------- the overlay


def test_overlay_is_the_resolved_config_with_one_model_entry(tmp_path):
    request = ModelRequest("Qwen/Qwen2.5-Coder", base_url="http://127.0.0.1:8000/v1", api_key_env="LOCAL_KEY", n=3)
    tasks = TaskRequest(limit=6, repos=["dlbench-sample/nnkit"], seed=4)
    plan = plan_run(ROOT, Path("config/config.yaml"), request, tasks, ["zero-shot", "few-shot"])
    assert plan.key == "Qwen-Qwen2.5-Coder"
    assert plan.settings == {
        "models": {
            "Qwen-Qwen2.5-Coder": {
                "provider": "openai", "model": "Qwen/Qwen2.5-Coder", "base_url": "http://127.0.0.1:8000/v1",
                "api_key_env": "LOCAL_KEY", "n": 3,
            }
        },
        "generate": {"models": ["Qwen-Qwen2.5-Coder"], "techniques": ["zero-shot", "few-shot"]},
        "evaluate": {"sample_limit": 6, "repos": ["dlbench-sample/nnkit"], "sample_seed": 4},
    }  # fmt: skip
    default = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    assert plan.resolved == merge(default, plan.settings)
    path = write_overlay(plan, tmp_path / "configs", ["dlbench", "run", "--model", "Qwen/Qwen2.5-Coder"], ROOT)
    assert (
        path.parent == tmp_path / "configs"
        and path.name.startswith("run-")
        and path.name.endswith("-Qwen-Qwen2.5-Coder.yaml")
    )
    text = path.read_text()
    assert "# command: dlbench run --model Qwen/Qwen2.5-Coder" in text and f"--configfile {path}" in text
    assert yaml.safe_load(text) == plan.resolved  # the file alone is the run's config
    cfg = load_config_file(path, root=ROOT)
    assert cfg.model_names() == ["gold", "null", "Qwen-Qwen2.5-Coder"]  # mutant is not run
    assert cfg.models["Qwen-Qwen2.5-Coder"].n == 3 and cfg.models["mutant"].n == 5  # the base's entries stay
    assert (cfg.evaluate.sample_limit, cfg.evaluate.repos, cfg.evaluate.sample_seed) == (6, ["dlbench-sample/nnkit"], 4)
    assert cfg.evaluate.timeout_s == 60  # the rest is the base's
    second = write_overlay(plan, tmp_path / "configs", ["dlbench", "run"], ROOT)
    assert second != path and path.read_text() == text  # a run never overwrites another's


def test_a_base_config_is_merged_as_snakemake_merges_it(tmp_path):
    base = tmp_path / "mine.yaml"
    base.write_text(
        yaml.safe_dump(
            {
                "models": {"gpt-4o": {"provider": "openai", "model": "gpt-4o", "temperature": 0.3, "batch": True}},
                "generate": {"models": ["gpt-4o", "mutant"], "techniques": ["few-shot"]},
                "evaluate": {"sample_tasks": 5},
            }
        )
    )
    plan = plan_run(ROOT, base, ModelRequest("gpt-4o", n=5), TaskRequest(task_ids=["x:y.py:z"]))
    resolved = load_config(plan.resolved, root=ROOT)
    gpt = resolved.models["gpt-4o"]  # a key the base has: its settings, and the options given
    assert (gpt.temperature, gpt.batch, gpt.n) == (0.3, True, 5)
    assert resolved.generate.models == ["gpt-4o"] and resolved.generate.techniques == ["few-shot"]
    assert (resolved.evaluate.sample_tasks, resolved.evaluate.task_ids) == (5, ["x:y.py:z"])


def test_model_entries_for_ids_keys_and_reference_models():
    models = {"gold": {"provider": "gold"}, "mutant": {"provider": "mutant", "n": 5}, "m-1": {"provider": "openai"}}
    assert model_entry(ModelRequest("mutant", n=2), models) == ("mutant", {"n": 2})
    assert model_entry(ModelRequest("null"), models) == ("null", {"provider": "null"})
    assert model_entry(ModelRequest("gpt-4o", name="mine", temperature=0.2), models) == (
        "mine", {"provider": "openai", "model": "gpt-4o", "temperature": 0.2},
    )  # fmt: skip
    with pytest.raises(RunError, match="reference model"):
        model_entry(ModelRequest("gold", base_url="http://x/v1"), models)
    with pytest.raises(RunError, match="--name"):
        model_entry(ModelRequest("m 1"), models)  # its key would be m-1, which the config holds
    with pytest.raises(RunError, match="letters, digits"):
        model_entry(ModelRequest("gpt-4o", name="a/b"), models)


# ---------------------------------------------------------------- errors: a message and an exit code


def test_a_missing_base_config_is_a_message(tmp_path, capsys):
    code = main(["run", "--model", "m", "--config", str(tmp_path / "none.yaml"), "--workdir", str(ROOT)])
    assert code == 2 and "base config not found" in capsys.readouterr().err


def test_a_bad_setting_is_named_before_anything_runs(tmp_path, capsys):
    code = main(["run", "--model", "m", "--temperature", "7", "--workdir", str(ROOT), "--overlay-dir", str(tmp_path)])
    assert code == 2 and "models.m.temperature" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # no overlay written


def test_an_unknown_technique_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--model", "m", "--techniques", "zero-shot", "chain-of-thought"])
    assert exit_.value.code == 2 and "invalid choice: 'chain-of-thought'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--model", "m", "--limit", "3", "--task-ids", "a"])  # one or the other


def test_a_failing_workflow_is_a_message_and_its_exit_code(tmp_path, capsys):
    """A tiny project whose tables rule fails: snakemake's exit code, and a line saying so.
    Options after '--' go to snakemake."""
    (tmp_path / "config").mkdir()
    (tmp_path / "topics.txt").write_text("deep-learning\n")
    config = {"topics": "topics.txt", "repos_file": None, "crawl": {"endpoint": "https://api.github.invalid"},
              "labels": {"sheets": []}, "report": {"paper_results": None},
              "models": {"gold": {"provider": "gold"}, "null": {"provider": "null"}}}  # fmt: skip
    (tmp_path / "config/config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "Snakefile").write_text(
        'configfile: "config/config.yaml"\n\nrule tables:\n    output:\n        "results/tables.csv",\n'
        '    params:\n        limit=config["evaluate"]["sample_limit"],\n'
        '    shell:\n        "echo {params.limit} > limit.txt; exit 3"\n'
    )
    code = main(["run", "--model", "m", "--limit", "2", "--workdir", str(tmp_path), "--cores", "1", "--", "--quiet"])
    assert code != 0 and "the workflow failed (snakemake exit code" in capsys.readouterr().err
    assert (tmp_path / "limit.txt").read_text().strip() == "2"  # the overlay reached the workflow
    assert len(list((tmp_path / "results/configs").glob("run-*-m.yaml"))) == 1


# ---------------------------------------------------------------- one real run


SAMPLED_REPOS = ["dlbench-sample/nnkit", "dlbench-sample/tskit"]
LIMIT = 4


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, int, float]:
    from dlbench.standins.llm import LLMStandIn

    workdir = project_copy(tmp_path_factory.mktemp("cli-run") / "project")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    cmd = [
        sys.executable, "-m", "dlbench.cli", "run", "--model", "standin-model", "--limit", str(LIMIT),
        "--repos", *SAMPLED_REPOS, "--cores", "2",
    ]  # fmt: skip
    with LLMStandIn() as server:
        started = time.monotonic()
        proc = subprocess.run(
            [*cmd, "--base-url", server.base_url], cwd=workdir, capture_output=True, text=True, timeout=1800, env=env
        )
        elapsed = time.monotonic() - started
        served = server.served
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    print(f"dlbench run on the sample, {LIMIT} tasks of 2 repositories: {elapsed:.0f} s")
    return workdir, proc, served, elapsed


def drawn_ids(workdir: Path) -> set[str]:
    with open(workdir / "results/validation.csv", newline="") as fh:
        return {r["task_id"] for r in csv.DictReader(fh) if not r["reason"].startswith("not sampled")}


@pytest.mark.slow
@pytest.mark.xdist_group("cli-run")
def test_run_scores_only_the_stratified_sample(finished):
    workdir, proc, served, _ = finished
    tasks = read_jsonl(workdir / "results/benchmark/dlbench.jsonl", BenchmarkTask)
    expected = scored_task_ids(tasks, EvaluateConfig(sample_limit=LIMIT, repos=SAMPLED_REPOS))
    assert len(expected) == LIMIT and {t.repo for t in tasks if t.task_id in expected} == set(SAMPLED_REPOS)
    assert drawn_ids(workdir) == expected  # validation drew the same tasks
    # generation kept to them: one request per task (zero-shot, n = 1), no other repository generated
    gens = [
        g for p in (workdir / "results/generations/standin-model").rglob("*.jsonl") for g in read_jsonl(p, Generation)
    ]
    assert served == LIMIT and {g.task_id for g in gens} == expected
    assert sorted(p.stem for p in (workdir / "results/evaluations/gold/reference").glob("*.jsonl")) == sorted(
        r.replace("/", "__") for r in SAMPLED_REPOS
    )  # and only their images were built and evaluated
    assert sorted(p.name for p in (workdir / "results/images").glob("*.repaired.json")) == sorted(
        f"{r.replace('/', '__')}.repaired.json" for r in SAMPLED_REPOS
    )
    tables = pd.read_csv(workdir / "results/tables.csv", keep_default_na=False)
    assert set(tables["model"]) == {"gold", "null", "standin-model"}
    assert (tables["n_tasks"] <= LIMIT).all()
    overall = tables[(tables.dimension == "overall") & (tables.slice == "all") & (tables.metric == "pass@1")]
    assert set(overall["n_tasks"]) == {LIMIT}  # the sample's tasks are all usable
    scores = overall.set_index("model")["value"]
    assert (scores["gold"], scores["null"]) == (1.0, 0.0) and 0 <= scores["standin-model"] <= 1
    # every score with its uncertainty over the tasks: none for a model that never varies
    spread = overall.set_index("model")[["stderr", "ci_low", "ci_high"]].astype(float)
    assert spread.loc["gold"].tolist() == [0.0, 1.0, 1.0] and spread.loc["null"].tolist() == [0.0, 0.0, 0.0]
    ours = spread.loc["standin-model"]
    assert ours["ci_low"] <= scores["standin-model"] <= ours["ci_high"] and ours["stderr"] >= 0


@pytest.mark.slow
@pytest.mark.xdist_group("cli-run")
def test_run_records_its_config_and_prints_the_tables(finished):
    workdir, proc, _, _ = finished
    overlays = list((workdir / "results/configs").glob("run-*-standin-model.yaml"))
    assert len(overlays) == 1
    cfg = load_config_file(overlays[0], root=workdir)
    assert cfg.generate.models == ["standin-model"] and cfg.models["standin-model"].model == "standin-model"
    assert (cfg.evaluate.sample_limit, cfg.evaluate.repos) == (LIMIT, SAMPLED_REPOS)
    out = proc.stdout
    assert "## pass@1 per model" in out and "## pass@k per pipeline stage" in out  # as dlbench evaluate prints
    assert "| standin-model | zero-shot |" in out and "| gold | reference | 100.0 ± 0.0 | [100.0, 100.0] |" in out
    assert "| model | technique | pass@1 (%) | 95% interval |" in out  # standard error and interval printed
    stages = out.split("## pass@k per pipeline stage", 1)[1]
    assert "| stage |" in stages and "| task |" not in stages  # the stage rows only
    assert f"{LIMIT} task(s) drawn, {LIMIT} usable" in out and str(overlays[0]) in out
