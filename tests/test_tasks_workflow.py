"""The tasks rules and their scripts, run by Snakemake on prepared upstream artifacts.

A small Snakefile stands in for ``common.smk`` (typed config, ``get_all`` and
``get_image_records`` over two fixed repositories, ``report_built`` marking nothing) and includes ``workflow/rules/tasks.smk`` unchanged, so the rules,
their ``scripts/`` adapters and the package run exactly as in the full workflow.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import date

import pytest
import yaml

from dlbench.records import (
    BenchmarkTask,
    CloneRecord,
    CloneStatus,
    MergedLabel,
    PromptRecord,
    SkipKind,
    SkippedRecord,
    repo_slug,
)
from dlbench.store import read_jsonl, write_json, write_jsonl
from tests.conftest import ROOT
from tests.test_tasks_hub import image_record
from tests.test_tasks_prompts import make_function

REPOS = ("owner/alpha", "owner/beta")

SNAKEFILE = f"""
from dlbench.config import load_config

configfile: "config.yaml"
CFG = load_config(config)
REPOS = {[repo_slug(r) for r in REPOS]!r}


def get_all(pattern):
    return lambda wildcards: expand(pattern, repo=REPOS)


def report_built(path, expansions=None, **kwargs):
    return path


def get_image_records(wildcards):
    return expand("results/images/{{repo}}.repaired.json", repo=REPOS)


include: {str(ROOT / "workflow/rules/tasks.smk")!r}
"""


def prepare(tmp_path) -> list[str]:
    ids = []
    for name in REPOS:
        slug = repo_slug(name)
        fns = [
            make_function(name, qualname=q, last_modified=date(2024, 9, 1)) for q in ("Dense.forward", "Dense.backward")
        ]
        ids += [f.task_id for f in fns]
        write_jsonl(tmp_path / "results/mine" / slug / "functions.jsonl", fns)
        skipped = [SkippedRecord(repo=name, path="pkg/nul.py", kind=SkipKind.FILE, reason="null bytes")]
        write_jsonl(tmp_path / "results/mine" / slug / "skipped.jsonl", skipped if name == REPOS[0] else [])
        clone = CloneRecord(
            full_name=name,
            slug=slug,
            clone_url="file:///x",
            path="x",
            sha="b" * 40,
            status=CloneStatus.OK,
            license="Apache-2.0",
        )
        write_json(tmp_path / "results/repos" / f"{slug}.json", clone)
        write_json(tmp_path / "results/images" / f"{slug}.repaired.json", image_record(slug))
    (tmp_path / "x").mkdir()  # the checkout the clone records name
    ids.sort()
    sheet = "task_id,stage,task,data,keep,notes\n" + f"{ids[0]},training,general,text,,\n{ids[1]},,,,no,broken tests\n"
    (tmp_path / "ann.csv").write_text(sheet)
    adequacy = (
        "task_id,repo,stage,task,data,usable,mutants,killed,kill_rate,flagged\n"
        + f"{ids[0]},owner/alpha,Training,,,True,4,1,0.25,True\n"
    )
    (tmp_path / "results/tables").mkdir(parents=True)  # the report's output, made by hand here
    (tmp_path / "results/tables/adequacy.csv").write_text(adequacy)
    (tmp_path / "topics.txt").write_text("deep-learning\n")
    config = {
        "topics": "topics.txt",
        "repos_file": None,
        "crawl": {"endpoint": "https://api.github.com"},
        "labels": {"sheets": ["ann.csv"]},
        "select": {"min_tests_per_function": 3},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    return ids


def snakemake(tmp_path, *targets: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        "1",
        "--directory",
        str(tmp_path),
        "-s",
        str(tmp_path / "Snakefile"),
        *targets,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)


@pytest.mark.slow
def test_rules_build_sheets_labels_and_benchmark(tmp_path):
    ids = prepare(tmp_path)
    run = snakemake(tmp_path, "results/benchmark/README.md", "results/labels/sheet.xlsx")
    assert run.returncode == 0, run.stderr[-3000:]
    prompts = [
        p for name in REPOS for p in read_jsonl(tmp_path / f"results/prompts/{repo_slug(name)}.jsonl", PromptRecord)
    ]
    assert sorted(p.task_id for p in prompts) == ids
    merged = read_jsonl(tmp_path / "results/labels/merged.jsonl", MergedLabel)
    assert [(m.task_id, m.stage, m.keep) for m in merged[:2]] == [(ids[0], "Training", True), (ids[1], None, False)]
    tasks = read_jsonl(tmp_path / "results/benchmark/dlbench.jsonl", BenchmarkTask)
    assert [t.task_id for t in tasks] == [ids[0], *ids[2:]]
    for name in ("sheet.csv", "labelstudio.json", "labelstudio_config.xml", "agreement.csv", "disagreements.csv"):
        assert (tmp_path / "results/labels" / name).stat().st_size > 0
    for name in ("dlbench.parquet", "dlbench.schema.json", "repos.csv"):
        assert (tmp_path / "results/benchmark" / name).stat().st_size > 0
    card = (tmp_path / "results/benchmark/README.md").read_text()
    assert f"**{len(tasks)} tasks**" in card and f"| {ids[0]} | 0.25 | 4 |" in card
    assert f"- template prompts (no drafting LLM answer): {len(tasks)}" in card  # no drafting LLM configured
    assert f"| {REPOS[0]} | 1 | 0 | 0 |" in card  # what mining left out
    for slug in (repo_slug(r) for r in REPOS):  # both have tasks
        assert (tmp_path / f"results/benchmark/environments/{slug}/Dockerfile").read_text().startswith("# The test")
    assert "2 of 2 repositories with tasks have a rebuildable environment." in card
    for log in ("assemble", "export_environments", "dataset_card"):
        assert (tmp_path / f"logs/{log}.log").exists()
    assert (tmp_path / "benchmarks/draft_prompts/owner__alpha.tsv").exists()
    again = snakemake(tmp_path, "results/benchmark/README.md", "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
