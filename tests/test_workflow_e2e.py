"""The whole workflow on the embedded sample, as `make run` runs it, in a copy of the project.

One module-scoped run serves every check here (they are one xdist group so they share it):
`make run` (results/tables.csv) and the README's next step, `snakemake --report`, right
after it; then the rest of `all`. Gold scores 1.0 and null 0.0, every task is usable, every
rule logged, a second dry run has nothing to do, tables recompute from existing evaluations
without rerunning them, no Docker volume stays behind, and the exported benchmark loads with
`datasets` and rebuilds a repository's test environment with plain Docker.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pandas as pd
import pytest
from datasets import Features, load_dataset
from packaging.requirements import Requirement

from dlbench.records import BenchmarkTask, Evaluation, ImageRecord
from dlbench.store import read_jsonl
from tests.conftest import docker_answers, docker_volumes, volumes_left_since
from tests.report_check import assert_report_shows_plots
from tests.test_tasks_hub import card_metadata, instructions
from tests.workflow_runs import ROOT, project_copy, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("workflow")]


@pytest.fixture(scope="module")
def volumes_before() -> set[str]:
    """The engine's volumes before the run (none asked without an engine: the run is local)."""
    return docker_volumes() if docker_answers() else set()


@pytest.fixture(scope="module")
def made_run(tmp_path_factory, volumes_before) -> tuple[Path, subprocess.CompletedProcess]:
    """`make run` (results/tables.csv), then `snakemake --report` at once, as the README says."""
    workdir = project_copy(tmp_path_factory.mktemp("e2e") / "project")
    fewer_mutants(workdir / "config/config.yaml")
    proc = snakemake(workdir, "--cores", "2", "results/tables.csv", timeout=1200)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    return workdir, snakemake(workdir, "--report", "results/report.html", timeout=600)


@pytest.fixture(scope="module")
def finished_run(made_run) -> Path:
    """The same project after the rest of `all` (live slices, dataset card, sheets)."""
    workdir, _ = made_run
    proc = snakemake(workdir, "--cores", "2", "all", timeout=1200)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    return workdir


def fewer_mutants(config: Path) -> None:
    """Two mutants a task, not five: they were 395 of the run's 553 candidates, and nothing here
    checks their scores (tests/test_generate_mutants.py does)."""
    default = "mutant: {provider: mutant, n: 5}"
    assert default in config.read_text(), "the default config's mutant entry moved: update this test"
    config.write_text(config.read_text().replace(default, "mutant: {provider: mutant, n: 2}"))


def test_the_report_works_right_after_make_run(made_run):
    workdir, report = made_run
    assert report.returncode == 0, report.stdout[-4000:] + report.stderr[-4000:]
    html = (workdir / "results/report.html").read_text()
    assert "results/tables.csv" in html and "table1_overall.md" in html  # what make run built
    assert "results/live/" not in html  # the live slices, which it does not build, wait for `all`


def test_reference_models_score_as_expected(finished_run):
    tables = pd.read_csv(finished_run / "results/tables.csv", keep_default_na=False)
    contract = ["model", "technique", "slice", "dimension", "category", "metric", "value", "n_tasks"]
    # fixed columns first; infrastructure faults left out; the uncertainty over tasks last
    assert list(tables.columns) == [*contract, "n_excluded", "stderr", "ci_low", "ci_high"]
    pass1 = tables[tables.metric == "pass@1"]
    gold, null = pass1[pass1.model == "gold"], pass1[pass1.model == "null"]
    assert len(gold) > 0 and len(null) > 0
    assert (gold.value == 1.0).all(), gold[gold.value != 1.0]
    assert (null.value == 0.0).all(), null[null.value != 0.0]
    assert set(gold.dimension) == {"overall", "stage", "task", "data"}
    assert {"all", "after-2024-01-01"} <= set(gold.slice)


def test_every_sample_task_is_usable_and_counted(finished_run):
    tasks = read_jsonl(finished_run / "results/benchmark/dlbench.jsonl", BenchmarkTask)
    assert len(tasks) >= 55  # the sample has >= 60 functions under test; annotators discard a few
    with open(finished_run / "results/validation.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    unusable = [r for r in rows if r["usable"].lower() != "true"]
    assert not unusable, unusable
    tables = pd.read_csv(finished_run / "results/tables.csv", keep_default_na=False)
    overall = tables[
        (tables.model == "gold")
        & (tables.dimension == "overall")
        & (tables.slice == "all")
        & (tables.metric == "pass@1")
    ]
    assert overall.n_tasks.iloc[0] == len(tasks)


def test_evaluations_come_from_per_test_reports(finished_run):
    gold_files = sorted((finished_run / "results/evaluations/gold/reference").glob("*.jsonl"))
    records = [e for f in gold_files for e in read_jsonl(f, Evaluation)]
    assert records and all(e.passed and e.tests and all(o == "passed" for o in e.tests.values()) for e in records)


def test_the_exported_benchmark_loads_as_its_card_declares(finished_run, tmp_path, monkeypatch):
    folder = finished_run / "results/benchmark"
    tasks = read_jsonl(folder / "dlbench.jsonl", BenchmarkTask)
    meta = card_metadata(folder)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    split = load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))["test"]
    assert split.features == Features._from_yaml_list(meta["dataset_info"]["features"])
    assert split.num_rows == len(tasks) == meta["dataset_info"]["splits"][0]["num_examples"]
    assert list(split["task_id"]) == [t.task_id for t in tasks] and list(split["tests"]) == [t.tests for t in tasks]
    # Snakemake marks the folder, a directory output, with an empty .snakemake_timestamp
    exported = sorted(p.name for p in (folder / "environments").iterdir() if not p.name.startswith("."))
    if not list((finished_run / "results/images").glob("*.json")):  # the local backend builds no image
        assert exported == [] and "No environment is exported" in (folder / "README.md").read_text()
        return
    assert exported == sorted({t.slug for t in tasks})
    for slug in exported:
        record = ImageRecord.model_validate_json((folder / "environments" / slug / "image.json").read_text())
        lock = (folder / "environments" / slug / "lock.txt").read_text().splitlines()
        assert [str(Requirement(pin)) for pin in lock if not pin.startswith("#")] == record.environment.lock
        assert instructions((folder / "environments" / slug / "Dockerfile").read_text())[1] == ("FROM", "${BASE_IMAGE}")


@pytest.mark.docker
def test_a_sample_environment_rebuilds_with_plain_docker(require_docker, finished_run, tmp_path):
    """A consumer's rebuild of one sample repository from the exported folder and its checkout:
    `docker build` (on the run's own base: nothing can be pulled here) and a task's tests pass
    in it without network."""
    task = read_jsonl(finished_run / "results/benchmark/dlbench.jsonl", BenchmarkTask)[0]
    context = tmp_path / task.slug
    shutil.copytree(finished_run / "results/benchmark/environments" / task.slug, context)
    shutil.copytree(finished_run / "results/repos" / task.slug, context / "repo", ignore=shutil.ignore_patterns(".git"))
    base = ImageRecord.model_validate_json((context / "image.json").read_text()).base_image
    tag = f"dlbench-env-test/{task.slug.lower()}:{uuid.uuid4().hex[:12]}"
    build = ["docker", "build", "--network", "host", "--build-arg", f"BASE_IMAGE={base}", "-t", tag, "."]
    try:
        done = subprocess.run(build, cwd=context, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        pytest_run = ["python", "-m", "pytest", "-p", "no:cacheprovider", "-q", *task.tests]
        ran = subprocess.run(["docker", "run", "--rm", "--network", "none", tag, *pytest_run],
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)  # this test's own image only


@pytest.mark.docker
def test_the_run_leaves_no_docker_volume(require_docker, finished_run, volumes_before):
    """Build steps, image checks and sandboxes: every container goes with its volumes."""
    assert not volumes_left_since(volumes_before)


def test_every_rule_wrote_a_log(finished_run):
    logs = list((finished_run / "logs").rglob("*.log"))
    rules = {p.relative_to(finished_run / "logs").parts[0].removesuffix(".log") for p in logs}
    for rule in [
        "crawl_topic",
        "select_repos",
        "clone_repo",
        "find_tests",
        "call_graph",
        "extract_functions",
        "draft_prompts",
        "merge_labels",
        "assemble",
        "export_environments",
        "dataset_card",
        "generate",
        "evaluate",
        "validate_tasks",
        "tables",
    ]:
        assert any(r.startswith(rule) or rule.startswith(r) for r in rules), (rule, sorted(rules))


def test_second_dry_run_has_nothing_to_do(finished_run):
    proc = snakemake(finished_run, "-n", "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]


def test_tables_recompute_without_evaluating_again(finished_run):
    evaluations = sorted((finished_run / "results/evaluations").rglob("*.jsonl"))
    before = {p: p.stat().st_mtime_ns for p in evaluations}
    expected = (finished_run / "results/tables.csv").read_bytes()
    os.unlink(finished_run / "results/tables.csv")
    proc = snakemake(finished_run, "--cores", "2", "results/tables.csv")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (finished_run / "results/tables.csv").read_bytes() == expected
    assert {p: p.stat().st_mtime_ns for p in evaluations} == before
    assert "rule evaluate" not in proc.stdout + proc.stderr and "rule generate" not in proc.stdout + proc.stderr


def test_lint_is_clean():
    proc = snakemake(ROOT, "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Lints for" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_html_report_shows_the_plots(finished_run):
    assert_report_shows_plots(finished_run)
    html = (finished_run / "report.html").read_text()
    assert "results/live/2024-01-01/tables.csv" in html  # built by `all`: now in the report
