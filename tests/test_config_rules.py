"""Settings reach each job through its rule's params (issue 17): the mining rules (the
project's rule file and scripts, unchanged), run for real once on a small git repository,
rerun exactly where a changed setting shapes their output, and never for how fast they
run or where their cache lives."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from dlbench.records import CloneRecord, CloneStatus, FunctionRecord
from dlbench.store import read_jsonl, write_json
from tests.test_faults_rules import job_stats
from tests.test_mine_api import library
from tests.test_mine_callgraph import write_tree
from tests.workflow_runs import ROOT, snakemake

REPO = "acme__lib"
TARGET = f"results/mine/{REPO}/functions.jsonl"
# The project's common.smk with the repositories fixed (no select_repos checkpoint here).
SNAKEFILE = f"""
configfile: "config.yaml"

include: "{ROOT}/workflow/rules/common.smk"

def get_repos():
    return [{REPO!r}]

include: "{ROOT}/workflow/rules/mine.smk"
"""
CONFIG = {
    "topics": "topics.txt",
    "repos_file": None,
    "crawl": {"endpoint": "https://api.github.invalid"},
    "evaluate": {"backend": "local"},
    "mine": {"workers": 1, "tested_by": "focused"},
    "storage": {"parse_cache": ".cache/parse"},
}


def write_config(workdir, mine: dict | None = None, storage: dict | None = None) -> None:
    """CONFIG with ``mine`` and ``storage`` keys changed."""
    changed = {"mine": CONFIG["mine"] | (mine or {}), "storage": CONFIG["storage"] | (storage or {})}
    (workdir / "config.yaml").write_text(yaml.safe_dump(CONFIG | changed))


def planned_jobs(workdir) -> dict[str, int]:
    return job_stats(snakemake(workdir, "-n", "-c1", TARGET, timeout=300))


def git_checkout(root):
    """A committed library: two modules, each reached by three tests."""
    write_tree(root, library(2))
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lib"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def mined(tmp_path_factory):
    """find_tests, call_graph and extract_functions, run for real once."""
    workdir = tmp_path_factory.mktemp("mine-rerun")
    (workdir / "Snakefile").write_text(SNAKEFILE)
    (workdir / "topics.txt").write_text("deep-learning\n")
    write_config(workdir)
    checkout = workdir / "checkout"
    sha = git_checkout(checkout)
    clone = CloneRecord(
        full_name="acme/lib", slug=REPO, clone_url="file:///nowhere", path=str(checkout), sha=sha, status=CloneStatus.OK
    )
    write_json(workdir / f"results/repos/{REPO}.json", clone)
    proc = snakemake(workdir, "-c1", TARGET, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert {f.function for f in read_jsonl(workdir / TARGET, FunctionRecord)} == {"f0", "f1"}
    assert planned_jobs(workdir) == {}
    return workdir


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"mine": {"min_tests": 2}}, {"extract_functions": 1}),
        ({"mine": {"tested_by": "reached"}}, {"call_graph": 1, "extract_functions": 1}),
        ({"mine": {"reach": "transitive"}}, {"call_graph": 1, "extract_functions": 1}),
        ({"mine": {"workers": 2}}, {}),  # how fast (the rules' threads), not what: nothing reruns
        ({"storage": {"parse_cache": ".cache/elsewhere"}}, {}),  # where parses are kept changes no artifact
    ],
    ids=["min_tests", "tested_by", "reach", "workers", "parse_cache"],
)
def test_a_changed_mining_setting_reruns_exactly_what_it_affects(mined, change, expected):
    write_config(mined, **change)
    try:
        assert planned_jobs(mined) == expected
    finally:
        write_config(mined)
