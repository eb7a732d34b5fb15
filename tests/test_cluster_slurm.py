"""The sample workflow through profiles/slurm on a real single-node SLURM cluster.

cluster/slurm/slurm.sh starts slurmctld + slurmd (Debian's slurm-wlm, munge) as root
without cgroups or accounting; the run must give the same results/tables.csv as a local
run, and a job that fails on the cluster must fail the run, with its log path shown,
within a time bound (not hang waiting for sacct).
"""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.workflow_runs import ROOT, project_copy, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("slurm")]
SLURM_SH = ROOT / "cluster/slurm/slurm.sh"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory) -> dict:
    if os.geteuid() != 0:
        pytest.skip("the single-node SLURM fixture starts daemons and needs root")
    state = tmp_path_factory.mktemp("slurm")
    up = subprocess.run(["bash", str(SLURM_SH), "up", str(state)], capture_output=True, text=True, timeout=600)
    assert up.returncode == 0, up.stdout + up.stderr
    yield {"SLURM_CONF": str(state / "slurm.conf")}
    subprocess.run(["bash", str(SLURM_SH), "down", str(state)], capture_output=True, timeout=60)
    # left behind, the standard config names a dead controller: every later Snakemake start
    # waits 9 s in the SLURM plugin's `scontrol show config`
    standard = Path("/etc/slurm/slurm.conf")
    assert not (standard.is_symlink() and os.readlink(standard) == str(state / "slurm.conf"))


def test_failing_job_fails_the_run_with_its_log(slurm, tmp_path):
    start = time.monotonic()
    proc = snakemake(
        tmp_path,
        "-s",
        str(ROOT / "tests/data/failing/Snakefile"),
        "--profile",
        str(ROOT / "profiles/slurm"),
        env=slurm,
        timeout=300,
    )
    elapsed = time.monotonic() - start
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Error in rule fails" in output and "slurm_logs/rule_fails/" in output, output[-4000:]
    assert (tmp_path / "out/ok.txt").exists(), output[-4000:]  # the healthy job still ran (keep-going)
    assert elapsed < 180, f"failure took {elapsed:.0f}s to surface"


def test_sample_workflow_matches_local_run(slurm, tmp_path):
    local = project_copy(tmp_path / "local")
    cluster = project_copy(tmp_path / "cluster")
    # Reference models on two repositories keep the cluster run short; both runs use the same config.
    args = ["--configfile", "tests/data/reference_only.yaml"]
    # The profile polls squeue every 10 s, as a shared controller wants; here each of the
    # DAG's layers would wait that long on an idle node, so the test polls faster, and the
    # local run goes on beside the cluster's, which mostly waits.
    polls = ["--seconds-between-status-checks", "1", "--slurm-init-seconds-before-status-checks", "1"]
    with ThreadPoolExecutor(max_workers=1) as beside:
        local_run = beside.submit(snakemake, local, "results/tables.csv", "--cores", "1", *args, timeout=1200)
        ran_cluster = snakemake(
            cluster,
            "results/tables.csv",
            "--profile",
            str(ROOT / "profiles/slurm"),
            *args,
            *polls,
            env=slurm,
            timeout=1800,
        )
        ran_local = local_run.result()
    assert ran_local.returncode == 0, ran_local.stderr[-4000:]
    assert ran_cluster.returncode == 0, ran_cluster.stdout[-4000:] + ran_cluster.stderr[-4000:]
    assert "submitted with SLURM jobid" in ran_cluster.stdout + ran_cluster.stderr
    assert (cluster / "results/tables.csv").read_text() == (local / "results/tables.csv").read_text()
