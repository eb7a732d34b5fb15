"""The rules under Snakemake (issue 15). Config values that change a rule's results are
its params (item 6): after a real run of harness.smk and report.smk (the project's rule
files and scripts, unchanged, over an empty repository), or of tasks.smk, changing a
setting reruns exactly the rules it affects. An unanswered endpoint fails the run (item 1)."""

from __future__ import annotations

import re

import pytest
import yaml

from dlbench.records import CloneRecord, CloneStatus
from dlbench.store import write_json, write_jsonl
from tests.test_faults_llm import closed_port_url
from tests.test_generate_rules import (
    SNAKEFILE as GENERATE_SNAKEFILE,  # common.smk + generate.smk
)
from tests.test_generate_run import REPOS, make_tasks
from tests.test_tasks_workflow import prepare
from tests.test_tasks_workflow import snakemake as run_tasks_rules
from tests.workflow_runs import ROOT, snakemake

REPO = "acme__lib"
# What reruns after the evaluations change: the validation, the failure sheet and its merge, the tables.
AFTER_EVALUATE = {"evaluate": 2, "validate_tasks": 1, "export_failures": 1, "merge_failures": 1, "tables": 1}
# The project's common.smk with the repositories fixed (no select_repos checkpoint here).
SNAKEFILE = f"""
configfile: "config.yaml"

include: "{ROOT}/workflow/rules/common.smk"

def get_repos():
    return [{REPO!r}]

include: "{ROOT}/workflow/rules/harness.smk"
include: "{ROOT}/workflow/rules/report.smk"
"""
CONFIG = {
    "topics": "topics.txt",
    "repos_file": None,
    "crawl": {"endpoint": "https://api.github.invalid"},
    "evaluate": {"backend": "local", "timeout_s": 30, "jobs": 1},
    "report": {"k": [1], "paper_results": None},
    "models": {"gold": {"provider": "gold"}, "null": {"provider": "null"}},
}


def write_config(workdir, **sections) -> None:
    config = {
        key: CONFIG[key] | sections.get(key, {}) if isinstance(CONFIG[key], dict) else CONFIG[key] for key in CONFIG
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))


def planned_jobs(workdir) -> dict[str, int]:
    """Rule → jobs of a dry run towards the tables."""
    return job_stats(snakemake(workdir, "-n", "-c1", "results/tables.csv", timeout=300))


def job_stats(proc) -> dict[str, int]:
    """Rule → jobs from a dry run's job stats (nothing to do: empty)."""
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    stats = proc.stdout.split("Job stats:", 1)[1] if "Job stats:" in proc.stdout else ""
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", stats, re.MULTILINE) if m[1] != "total"}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The evaluate, validate_tasks and tables jobs, run for real once."""
    workdir = tmp_path_factory.mktemp("rerun")
    (workdir / "Snakefile").write_text(SNAKEFILE)
    (workdir / "topics.txt").write_text("deep-learning\n")
    write_config(workdir)
    (workdir / "results/benchmark").mkdir(parents=True)
    (workdir / "results/benchmark/dlbench.jsonl").write_text("")
    (workdir / "results/usage.csv").write_text("model,technique\n")
    clone = CloneRecord(
        full_name="acme/lib", slug=REPO, clone_url="file:///nowhere", path=str(workdir / "nowhere"), sha=None,
        status=CloneStatus.CLONE_ERROR, error="not cloned in this test",
    )  # fmt: skip
    write_json(workdir / f"results/repos/{REPO}.json", clone)
    for model in ("gold", "null"):
        generations = workdir / f"results/generations/{model}/reference/{REPO}.jsonl"
        generations.parent.mkdir(parents=True)
        generations.write_text("")
    proc = snakemake(workdir, "-c1", "results/tables.csv", timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert planned_jobs(workdir) == {}
    return workdir


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sections", "expected"),
    [
        ({"evaluate": {"timeout_s": 45}}, AFTER_EVALUATE),
        ({"evaluate": {"screen": False}}, AFTER_EVALUATE),
        ({"evaluate": {"gold_runs": 3}}, AFTER_EVALUATE),
        ({"report": {"k": [1, 3]}}, {"tables": 1}),
        ({"evaluate": {"jobs": 2}}, {}),  # how fast, not what: nothing reruns
        ({"models": {"gold": {"provider": "gold", "paper_name": "Gold"}}}, {"tables": 1}),  # the tables' labels
        ({"models": {"gold": {"provider": "gold", "concurrency": 2}}}, {}),  # how a model is called
    ],
    ids=["timeout_s", "screen", "gold_runs", "report.k", "jobs", "paper_name", "concurrency"],
)
def test_a_changed_setting_reruns_exactly_what_it_affects(finished, sections, expected):
    write_config(finished, **sections)
    try:
        assert planned_jobs(finished) == expected
    finally:
        write_config(finished)


@pytest.mark.slow
def test_an_unreachable_endpoint_fails_the_run_and_leaves_no_output(tmp_path):
    write_jsonl(tmp_path / "results/benchmark/dlbench.jsonl", make_tasks(n_repos=1))
    (tmp_path / "Snakefile").write_text(GENERATE_SNAKEFILE)
    (tmp_path / "topics.txt").write_text("deep-learning\n")
    model = {"provider": "openai", "model": "m", "base_url": closed_port_url(), "max_retries": 0}
    config = CONFIG | {"models": {"gold": {"provider": "gold"}, "null": {"provider": "null"}, "m1": model}}
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump(config | {"generate": {"models": ["m1"]}, "storage": {"llm_cache": ".cache/llm"}})
    )
    target = f"results/generations/m1/zero-shot/{REPOS[0]}.jsonl"
    proc = snakemake(tmp_path, "-c1", target, timeout=300)
    assert proc.returncode != 0 and not (tmp_path / target).exists()
    log = (tmp_path / f"logs/generate/m1/zero-shot/{REPOS[0]}.log").read_text()
    assert f"{target}: 2 of 2 candidates got no answer from the endpoint (api_error)" in log


@pytest.mark.slow
def test_labels_and_prompt_settings_rerun_the_tasks_rules(tmp_path):
    prepare(tmp_path)
    targets = ("results/benchmark/dlbench.jsonl", "results/labels/sheet.xlsx")
    assert run_tasks_rules(tmp_path, *targets).returncode == 0
    config = yaml.safe_load((tmp_path / "config.yaml").read_text())
    downstream = {"merge_labels": 1, "assemble": 1}
    for change, expected in [
        ({"labels": config["labels"] | {"require_labels": True}}, downstream),
        (
            {"prompts": {"llm": {"base_url": closed_port_url(), "model": "m"}}},
            {"draft_prompts": 2, "export_annotation": 1, **downstream},
        ),
        ({"storage": {"llm_cache": ".cache/elsewhere"}}, {}),  # where answers are kept changes no prompt
    ]:
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config | change))
        assert job_stats(run_tasks_rules(tmp_path, "-n", *targets)) == expected, change
