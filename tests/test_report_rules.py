"""report.smk under Snakemake (dry runs): every file the rules read is a declared input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A stand-in for the integrator's Snakefile + common.smk: just what report.smk relies on.
SNAKEFILE = f"""
from dlbench.config import Config, ModelTable
CFG = Config.model_validate({{"report": {{"paper_results": None}}}})

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
