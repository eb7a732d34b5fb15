"""One model × technique over the DS-1000 problems, through the providers DL-Bench's tasks use
(``generate/models.py``: cache, journal, resume), asked and answered in DS-1000's form
(``generate/ds1000.py``)."""

from __future__ import annotations

import logging
from pathlib import Path

from dlbench.config import ModelConfig
from dlbench.generate.ds1000 import BENCHMARK, Ds1000Prompting
from dlbench.generate.jobs import check_answered, load_predicted_stages
from dlbench.generate.journal import Journal
from dlbench.generate.models import GenerationJob, make_provider
from dlbench.records import BenchmarkTask, Generation, StagePrediction
from dlbench.store import read_jsonl, write_jsonl

log = logging.getLogger(__name__)

JOB = "ds1000"  # the job's name in the journal folder


def generate_file(
    benchmark: str | Path,
    out: str | Path,
    model: str,
    technique: str,
    model_cfg: ModelConfig,
    llm_cache: str | Path,
    journal_dir: str | Path,
    stages: str | Path | None = None,
) -> list[Generation]:
    """The rule ``ds1000_generate``: every candidate of ``model`` × ``technique`` for the problems
    of ``benchmark`` (their benchmark-record view), written to ``out``."""
    tasks = read_jsonl(benchmark, BenchmarkTask)
    journal = Journal(Path(journal_dir) / JOB / model / f"{technique}.jsonl")
    job = GenerationJob(
        model=model, technique=technique, repo=JOB, tasks=tasks, pool=tasks, journal=journal,
        predicted_stages=load_predicted_stages(stages) if stages else None, prompting=Ds1000Prompting(),
    )  # fmt: skip
    generations = make_provider(model, model_cfg, llm_cache).generate(job) if tasks else []
    check_answered(out, generations, journal.path)
    write_jsonl(out, generations)
    journal.remove()
    log.info("%s/%s on %s: %d candidates", model, technique, BENCHMARK, len(generations))
    return generations


def predict_stages(model_dir: str | Path, benchmark: str | Path, out: str | Path, threads: int = 1) -> list[StagePrediction]:  # fmt: skip
    """The rule ``ds1000_stages``: the stage classifier's stage of each problem's prompt (stage-few-shot)."""
    from dlbench.generate.classifier import classify_prompts  # torch and transformers: only this rule

    tasks = read_jsonl(benchmark, BenchmarkTask)
    return classify_prompts(model_dir, [(BENCHMARK, t.task_id, t.prompt) for t in tasks], out, threads)
