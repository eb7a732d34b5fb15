"""A paper-scale configuration plans with few enough jobs (timing is bench/bench_dryrun.py's)."""

import pytest
import yaml

from bench.bench_dryrun import N_REPOS, TECHNIQUES, dry_run, materialise_upstream, paper_config
from tests.workflow_runs import ROOT

pytestmark = pytest.mark.slow


def test_paper_scale_plans_under_2000_jobs(tmp_path, monkeypatch):
    monkeypatch.setenv("DLBENCH_NO_DOCKER", "1")
    topics = [
        t.strip()
        for t in (ROOT / "resources/topics.txt").read_text().splitlines()
        if t.strip() and not t.startswith("#")
    ]
    materialise_upstream(tmp_path, topics)
    configfile = tmp_path / "paper.yaml"
    configfile.write_text(yaml.safe_dump(paper_config(topics)))
    _, jobs, stdout = dry_run(tmp_path, configfile)
    per_repo_pairs = 3 + 7 * len(TECHNIQUES)  # reference models + LLM x technique
    assert jobs >= 2 * per_repo_pairs * N_REPOS  # every generate and evaluate job is planned
    assert jobs <= 2000
