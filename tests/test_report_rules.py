"""report.smk under Snakemake (dry runs): every file the rules read is a declared input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A stand-in for the integrator's Snakefile + common.smk: just what report.smk relies on.
SNAKEFILE = f"""
from datetime import UTC, datetime
from dlbench.config import Config, ModelTable
from dlbench.report.manifest import RunContext
CFG = Config.model_validate({{"report": {{"paper_results": None, "k": config.get("k", [1])}}}})
RUN = RunContext(started_at=datetime.now(UTC), config=CFG, project=".")
CUTOFFS = [c.isoformat() for c in CFG.report.cutoffs]

def report_built(path, expansions=None, **kwargs):
    return path  # common.smk marks for the report what exists; nothing is marked here

def get_evaluations():
    return []

def get_generations(wildcards):
    return []

include: "{ROOT}/workflow/rules/report.smk"
"""


def dry_run(workdir: Path, target: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "-n", "-c1", target]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=120, check=False)


def test_tables_declares_the_usage_table_it_reads(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "results/benchmark").mkdir(parents=True)
    (tmp_path / "results/benchmark/dlbench.jsonl").write_text("")
    (tmp_path / "results/validation.csv").write_text("task_id,usable,reason\n")
    missing = dry_run(tmp_path, "results/tables.csv")
    assert missing.returncode != 0 and "results/usage.csv" in missing.stdout + missing.stderr
    (tmp_path / "results/usage.csv").write_text("model,technique\n")
    present = dry_run(tmp_path, "results/tables.csv")
    assert present.returncode == 0, present.stdout[-2000:] + present.stderr[-2000:]


def test_two_runs_with_different_configs_keep_two_manifests_and_both_tables(tmp_path):
    """The tables rule for real (no evaluations yet): a second run with another config
    rewrites today's paths but leaves the first run's tables and manifest in results/runs/."""
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "results/benchmark").mkdir(parents=True)
    (tmp_path / "results/benchmark/dlbench.jsonl").write_text("")
    (tmp_path / "results/validation.csv").write_text("task_id,usable,reason\n")
    (tmp_path / "results/usage.csv").write_text("model,technique\n")
    for k in ("[1]", "[1, 3]"):
        (tmp_path / "k.yaml").write_text(f"k: {k}\n")
        cmd = [sys.executable, "-m", "snakemake", "-c1", "results/tables.csv", "--configfile", "k.yaml"]
        run = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    runs = tmp_path / "results/runs"
    folders = sorted(p for p in runs.iterdir() if p.name != "latest")
    manifests = [json.loads((f / "manifest.json").read_text()) for f in folders]
    assert [m["config"]["report"]["k"] for m in manifests] == [[1], [1, 3]]
    assert manifests[0]["config_digest"] != manifests[1]["config_digest"]
    assert all((f / "tables.csv").is_file() and (f / "tables" / "run.md").is_file() for f in folders)
    assert (runs / "latest").resolve() == folders[1].resolve()
    assert json.loads((tmp_path / "results/manifest.json").read_text()) == manifests[1]
