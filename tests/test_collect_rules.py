"""The collect rules run by Snakemake on the sample world: crawl → merge → select → clone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dlbench.collect.select import kept_slugs
from dlbench.records import CloneRecord, CloneStatus, RepoMeta
from dlbench.store import read_json, read_jsonl

ROOT = Path(__file__).resolve().parent.parent

# A stand-in for the integrator's Snakefile + common.smk: just what collect.smk relies on.
SNAKEFILE = f"""
from dlbench.config import load_config
configfile: "config.yaml"
CFG = load_config(config)
SNAPSHOT = CFG.crawl.snapshot
TOPICS = [t.strip() for t in open(CFG.topics) if t.strip()]

def report_built(path, expansions=None, **kwargs):
    return path  # common.smk marks for the report what exists; nothing is marked here

def get_repos():
    from dlbench.collect.select import kept_slugs
    return kept_slugs(checkpoints.select_repos.get().output.jsonl)

rule all:
    input: lambda wildcards: expand("results/repos/{{repo}}.json", repo=get_repos())

include: "{ROOT}/workflow/rules/collect.smk"
"""


def snakemake(workdir: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-c2", *args], cwd=workdir, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_collect_rules_on_the_sample(tmp_path):
    (tmp_path / "topics.txt").write_text("deep-learning\nmachine-learning\n")
    config = {
        "topics": "topics.txt",
        "repos_file": str(ROOT / "config" / "repos.yaml"),
        "crawl": {"standin_data": str(ROOT / "resources" / "sample" / "github"), "snapshot": "s1"},
        "select": {
            "min_stars": 50,
            "pushed_after": "2023-06-01",
            "frameworks": ["torch", "numpy"],
            "require_docs": False,  # the sample's libraries have a README only (config/config.yaml)
            "require_contributing": False,
            "max_repos": 2,
        },
        "labels": {"sheets": []},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    snakemake(tmp_path)

    merged = read_jsonl(tmp_path / "results/crawl/s1/repos.jsonl", RepoMeta)
    nnkit = next(m for m in merged if m.full_name == "dlbench-sample/nnkit")
    assert nnkit.found_by == ["deep-learning", "machine-learning"]
    slugs = kept_slugs(tmp_path / "results/select/repos.jsonl")
    assert slugs == ["dlbench-sample__visionkit", "dlbench-sample__nnkit"]  # the top two by stars
    for slug in slugs:
        record = read_json(tmp_path / f"results/repos/{slug}.json", CloneRecord)
        assert record.status == CloneStatus.OK and (tmp_path / record.path / "pyproject.toml").exists()
        assert (tmp_path / f"logs/clone_repo/{slug}.log").exists() and (
            tmp_path / f"benchmarks/clone_repo/{slug}.tsv"
        ).exists()
    assert (tmp_path / "benchmarks/select_repos.tsv").exists()
    assert "Nothing to be done" in snakemake(tmp_path, "-n")
