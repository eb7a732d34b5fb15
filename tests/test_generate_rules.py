"""The generation rules run under Snakemake: a tiny workflow over an inline benchmark,
with an openai model behind the local stand-in and the reference models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dlbench.records import Generation, StagePrediction, StageReport
from dlbench.standins.llm import LLMStandIn
from dlbench.store import read_json, read_jsonl, write_jsonl
from tests.test_generate_run import REPOS, make_tasks

ROOT = Path(__file__).resolve().parent.parent

# The project's own common.smk, with the repositories fixed instead of read from the
# select_repos checkpoint (this workflow has no crawl).
SNAKEFILE = f"""
configfile: "config.yaml"

include: "{ROOT}/workflow/rules/common.smk"

def get_repos():
    return {REPOS[:2]!r}

include: "{ROOT}/workflow/rules/generate.smk"

rule all:
    input:
        "results/usage.csv",
"""


@pytest.mark.slow
def test_generate_rules_run_under_snakemake(tmp_path):
    write_jsonl(tmp_path / "results/benchmark/dlbench.jsonl", make_tasks())
    (tmp_path / "topics.txt").write_text("deep-learning\n")
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    with LLMStandIn() as server:
        config = {
            "topics": "topics.txt",
            "repos_file": None,
            "crawl": {"endpoint": "https://api.github.invalid"},
            "models": {
                "gold": {"provider": "gold"},
                "null": {"provider": "null"},
                "mutant": {"provider": "mutant", "n": 2},
                "m1": {"provider": "openai", "model": "standin-model", "base_url": server.base_url},
            },
            "generate": {
                "models": ["m1", "mutant"],
                "techniques": ["zero-shot", "stage-few-shot"],
            },
            "storage": {"llm_cache": ".cache/llm"},
            # the stage classifier's network as in the paper, trained briefly (its own tests check it)
            "stages": {"epochs": 2, "learning_rate": 2e-4, "batch_size": 4, "folds": 2, "max_length": 32},
        }
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--resources", "llm_api=1", "--quiet", "rules"]
        proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        served = server.served

    results = tmp_path / "results"
    assert served == 2 * 4  # m1: two techniques × two repositories × two tasks
    for model, technique, n in [
        ("gold", "reference", 1),
        ("null", "reference", 1),
        ("mutant", "reference", 2),
        ("m1", "zero-shot", 1),
        ("m1", "stage-few-shot", 1),
    ]:
        for repo in REPOS[:2]:
            gens = read_jsonl(results / "generations" / model / technique / f"{repo}.jsonl", Generation)
            assert len(gens) == 2 * n and {g.technique for g in gens} == {technique}
    assert len(read_jsonl(results / "stages/predictions.jsonl", StagePrediction)) == 6
    assert read_json(results / "stages/report.json", StageReport).n_labelled == 6
    usage = pd.read_csv(results / "usage.csv", keep_default_na=False)  # a model may be named "null"
    assert set(usage["model"]) == {"gold", "null", "mutant", "m1"}
    assert usage.loc[usage["model"] == "m1", "requests"].tolist() == [4, 4]
    assert (tmp_path / "logs/generate/m1/zero-shot/alpha__one.log").exists()
    assert (tmp_path / "benchmarks/generate/m1/zero-shot/alpha__one.tsv").exists()
