"""The DS-1000 track end to end under Snakemake, on the shipped sample (config/ds1000-sample.yaml)
in a throw-away copy of the project: problems, the shared image, generation (gold, null and an
LLM behind the local stand-in, zero-shot and few-shot), the sandbox, validation and the
tables. Gold scores 1.0 and null 0.0 on every problem, and the DS-1000 rows of Tables 1 and 5
are written; the tables rule then sets them beside DL-Bench's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dlbench.records import Ds1000Problem, Evaluation, Generation
from dlbench.report.beside import read_long_table
from dlbench.report.external import load_ds1000_problems
from dlbench.standins.llm import LLMStandIn
from dlbench.store import read_jsonl
from tests.test_report_rules import SNAKEFILE as REPORT_SNAKEFILE
from tests.workflow_runs import ROOT, project_copy, snakemake

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("ds1000")]

RIGHT = ("Pandas/0", "Numpy/3", "Scipy/5")  # the stand-in LLM answers these correctly, the others wrongly


def problems() -> list[Ds1000Problem]:
    return load_ds1000_problems(ROOT / "resources/ds1000/sample.jsonl")


def responder():
    """Answers a DS-1000 question (the last user turn) as a chat model does: prose and a block."""
    known = [(p.prompt.rstrip(), p) for p in problems()]

    def answer(body: dict, index: int) -> str:
        question = body["messages"][-1]["content"]
        problem = next(p for text, p in known if question.startswith(text))
        code = problem.reference_code if problem.task_id in RIGHT else "result = None\n"
        return f"Here is the solution:\n\n```python\n{code}```\n"

    return answer


@pytest.fixture(scope="module")
def track(require_docker, tmp_path_factory) -> Path:
    workdir = project_copy(tmp_path_factory.mktemp("ds1000") / "project")
    with LLMStandIn(responder()) as server:
        overlay = {
            "models": {
                "standin": {
                    "provider": "openai",
                    "model": "standin-model",
                    "base_url": server.base_url,
                    "api_key_env": "DLBENCH_NO_KEY",
                    "temperature": 0,
                }
            },  # fmt: skip
            "generate": {"models": ["gold", "null", "standin"]},
            "ds1000": {"techniques": ["zero-shot", "few-shot"]},
        }
        (workdir / "test.yaml").write_text(yaml.safe_dump(overlay))
        configs = ["config/config.yaml", "config/ds1000-sample.yaml", "test.yaml"]
        proc = snakemake(workdir, "--cores", "2", "results/ds1000/tables.csv", "--configfile", *configs,
                         env={"DLBENCH_NO_KEY": "none"}, timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
        assert server.served == 2 * len(problems())  # one request per problem and technique
    return workdir


def test_gold_scores_one_and_null_zero_on_every_sample_problem(track):
    table = read_long_table(track / "results/ds1000/tables.csv")
    pass1 = table[table["metric"] == "pass@1"].set_index(["model", "technique"])["value"]
    assert pass1[("gold", "reference")] == 1.0 and pass1[("null", "reference")] == 0.0
    assert pass1[("standin", "zero-shot")] == pass1[("standin", "few-shot")] == len(RIGHT) / len(problems())
    assert set(table["n_tasks"]) == {len(problems())}  # every problem usable
    validation = pd.read_csv(track / "results/ds1000/validation.csv")
    assert validation["usable"].all() and len(validation) == 8


def test_candidates_ran_in_the_sandbox_from_their_generations(track):
    gold = read_jsonl(track / "results/ds1000/evaluations/gold/reference.jsonl", Evaluation)
    assert all(e.passed and e.backend == "docker" and e.tests["test_execution"] == "passed" for e in gold)
    asked = read_jsonl(track / "results/ds1000/generations/standin/few-shot.jsonl", Generation)
    assert all(g.raw.startswith("Here is the solution") and not g.code.startswith("Here") for g in asked)
    assert (track / "logs/ds1000_image.build.log").read_text().count("# lock") == 1
    assert (track / "benchmarks/ds1000_evaluate/standin/zero-shot.tsv").exists()


def test_the_ds1000_rows_of_tables_1_and_5(track):
    table1 = (track / "results/ds1000/tables/table1_overall.md").read_text()
    assert "| DS-1000 | gold | reference | 100.0 ± 0.0 |" in table1
    assert "| DS-1000 | null | reference | 0.0 ± 0.0 |" in table1
    assert "| DS-1000 | standin | zero-shot | 37.5 ± 18.3 |" in table1 and "| DS-1000 | average | few-shot | 37.5 |" in table1  # fmt: skip
    table5 = (track / "results/ds1000/tables/table5_techniques.md").read_text()
    assert "| benchmark | model | zero-shot (%) | three-shot (%) |" in table5
    assert "| DS-1000 | standin | 37.5 ± 18.3 | 37.5 ± 18.3 |" in table5
    assert "| library | Pandas | 33.3 | 3 |" in (track / "results/ds1000/tables/libraries.md").read_text()


def test_the_tables_rule_sets_them_beside_dlbench(track, tmp_path):
    """report.smk alone (no DL-Bench run here): with ds1000 enabled, rule tables reads the track's
    table and writes Tables 1 and 5 with a benchmark column, and the separability statistics."""
    snakefile = REPORT_SNAKEFILE.replace(
        'CFG = Config.model_validate({"report"', 'CFG = Config.model_validate({"ds1000": {"enabled": True}, "report"'
    )
    assert snakefile != REPORT_SNAKEFILE
    (tmp_path / "Snakefile").write_text(snakefile)
    for name, text in [("benchmark/dlbench.jsonl", ""), ("validation.csv", "task_id,usable,reason\n"), ("usage.csv", "model,technique\n")]:  # fmt: skip
        (tmp_path / "results" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "results" / name).write_text(text)
    (tmp_path / "results/ds1000").mkdir()
    shutil.copy(track / "results/ds1000/tables.csv", tmp_path / "results/ds1000/tables.csv")
    proc = snakemake(tmp_path, "-c1", "results/tables.csv")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    table1 = (tmp_path / "results/tables/table1_overall.md").read_text()
    assert (
        table1.startswith("## Table 1: pass@1 per model and benchmark")
        and "| DS-1000 | standin | zero-shot |" in table1
    )
    assert "| DS-1000 | standin |" in (tmp_path / "results/tables/table5_techniques.md").read_text()
    assert (tmp_path / "results/tables/separability.md").exists()
