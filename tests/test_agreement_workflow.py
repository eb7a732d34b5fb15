"""mutation_agreement in the real workflow: two sample repositories, an openai model behind
the local stand-in, generate → agree_mutations → evaluate (local backend) → tables.

The tables' mutation_agreement row must equal what the evaluation files say, and beat
zero-shot where the stand-in answers the original prompt wrongly but its variants rightly.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dlbench.records import AgreementRecord, Evaluation, Generation
from dlbench.store import read_jsonl
from tests.test_agreement_technique import BenchmarkResponder
from tests.workflow_runs import project_copy, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("agreement-workflow")]


def configure(workdir: Path, base_url: str) -> None:
    path = workdir / "config/config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["select"]["max_repos"] = 2
    cfg["models"]["m1"] = {"provider": "openai", "model": "standin-model", "base_url": base_url, "max_retries": 1}
    cfg["generate"] |= {
        "models": ["gold", "null", "m1"],
        "techniques": ["zero-shot", "mutation_agreement"],
        "mutation_agreement": {"variants": 2, "samples_per_variant": 2, "tests_per_task": 5},
    }
    cfg["evaluate"]["backend"] = "local"
    path.write_text(yaml.safe_dump(cfg))


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    from dlbench.standins.llm import LLMStandIn

    workdir = project_copy(tmp_path_factory.mktemp("agreement") / "project")
    responder = BenchmarkResponder(workdir / "results/benchmark/dlbench.jsonl", workdir / "results/repos")
    with LLMStandIn(responder) as server:
        configure(workdir, server.base_url)
        proc = snakemake(workdir, "--cores", "2", "results/tables.csv", timeout=900)
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
        assert not server.repeated()
    return workdir


def repos(workdir: Path) -> list[str]:
    return sorted(p.stem for p in (workdir / "results/agreement/m1").glob("*.jsonl"))


def test_variants_tests_and_choices_are_written(finished):
    slugs = repos(finished)
    assert len(slugs) == 2
    records = [r for s in slugs for r in read_jsonl(finished / f"results/agreement/m1/{s}.jsonl", AgreementRecord)]
    gens = [
        g
        for s in slugs
        for g in read_jsonl(finished / f"results/generations/m1/mutation_agreement/{s}.jsonl", Generation)
    ]
    assert records and len(records) == len(gens)
    # a variant equal to an earlier one is dropped (a one-sentence prompt offers few changes)
    assert all(1 <= len(r.variants) <= 3 and r.variants[0].source == "original" for r in records)
    assert sum(len(r.variants) == 3 for r in records) >= 0.9 * len(records)
    assert all(len(r.candidates) == 2 * len(r.variants) and r.chosen is not None for r in records)
    assert all(len(r.tests) <= 5 for r in records) and any(r.tests for r in records)
    assert {"dual_agreement", "code_agreement (no model tests)"} <= {r.rule for r in records}
    for record, gen in zip(records, gens):
        assert gen.task_id == record.task_id and gen.code == record.candidates[record.chosen].code
        if record.rule == "dual_agreement":  # consistent evidence: the chosen one leads the top group
            top = record.groups[0]
            assert (
                record.chosen == top.members[0] and sum(record.candidates[record.chosen].passed) == top.tests_passed > 0
            )
            assert top.score == len(top.members) * top.tests_passed == max(g.score for g in record.groups)


def test_table_row_comes_from_the_evaluations(finished):
    with open(finished / "results/validation.csv", newline="") as fh:
        usable = {r["task_id"] for r in csv.DictReader(fh) if r["usable"] == "True"}
    tables = pd.read_csv(finished / "results/tables.csv", keep_default_na=False)
    overall = tables[
        (tables.slice == "all") & (tables.dimension == "overall") & (tables.metric == "pass@1") & (tables.model == "m1")
    ]
    values = {}
    for technique in ("zero-shot", "mutation_agreement"):
        evaluations = [
            e for s in repos(finished)
            for e in read_jsonl(finished / f"results/evaluations/m1/{technique}/{s}.jsonl", Evaluation)
            if e.task_id in usable
        ]  # fmt: skip
        assert evaluations and {e.technique for e in evaluations} == {technique}
        assert all(e.tests for e in evaluations)  # verdicts from per-test reports on the repository's tests
        expected = sum(e.passed for e in evaluations) / len(evaluations)  # one candidate per task
        row = overall[overall.technique == technique]
        assert len(row) == 1, overall
        assert row.value.iloc[0] == pytest.approx(expected) and row.n_tasks.iloc[0] == len(evaluations)
        values[technique] = expected
    assert values["mutation_agreement"] > values["zero-shot"]
