"""Generation jobs: one (model, technique, repository) file, resumable; and the usage table."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from dlbench.config import EvaluateConfig, ModelConfig
from dlbench.generate.journal import Journal
from dlbench.generate.models import GenerationJob, make_provider
from dlbench.llm.client import UnansweredRequests, count_errors
from dlbench.records import BenchmarkTask, Generation, GenStatus, StagePrediction
from dlbench.store import read_jsonl, write_frame, write_jsonl
from dlbench.subset import generated_task_ids

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

USAGE_COLUMNS = [
    "model", "technique", "tasks", "candidates", "requests", "api_errors",
    "input_tokens", "output_tokens", "cost_usd",
]  # fmt: skip


def journal_path(journal_dir: str | Path, model: str, technique: str, repo: str) -> Path:
    """Journal of one job under ``journal_dir`` (outside Snakemake outputs)."""
    return Path(journal_dir) / model / technique / f"{repo}.jsonl"


def generate_file(
    benchmark: str | Path,
    out: str | Path,
    model: str,
    technique: str,
    repo: str,
    model_cfg: ModelConfig,
    llm_cache: str | Path,
    journal_dir: str | Path,
    stages: str | Path | None = None,
    subset: EvaluateConfig | None = None,
) -> list[Generation]:
    """Write every candidate of ``model`` × ``technique`` for ``repo``'s tasks to ``out``
    (LLM responses cached under ``llm_cache``, candidates journalled under ``journal_dir``
    until the output is written); with ``subset``, only for the tasks of the run's subset
    (``dlbench.subset``; few-shot examples still come from every task)."""
    pool = read_jsonl(benchmark, BenchmarkTask)
    only = generated_task_ids(pool, subset)
    journal = Journal(journal_path(journal_dir, model, technique, repo))
    job = GenerationJob(
        model=model,
        technique=technique,
        repo=repo,
        tasks=[t for t in pool if t.slug == repo and (only is None or t.task_id in only)],
        pool=pool,
        journal=journal,
        predicted_stages=load_predicted_stages(stages) if stages else None,
    )
    generations = make_provider(model, model_cfg, llm_cache).generate(job) if job.tasks else []
    _log_summary(out, generations)
    check_answered(out, generations, journal.path)
    write_jsonl(out, generations)
    journal.remove()
    return generations


def check_answered(out: str | Path, generations: list[Generation], journal: Path) -> None:
    """Fail, writing nothing, while any candidate is an api_error: an infrastructure fault
    is not the model's failure, and a missing output makes the next run ask again. What
    was answered stays in the journal and the LLM cache, so that run pays only for the rest."""
    failed = [g.detail for g in generations if g.status == GenStatus.API_ERROR]
    if failed:
        raise UnansweredRequests(
            f"{out}: {len(failed)} of {len(generations)} candidates got no answer from the endpoint (api_error): "
            f"{count_errors(failed)}. Not written; the {len(generations) - len(failed)} answered are kept in "
            f"{journal} and the LLM cache: rerun to ask again for the rest."
        )


def load_predicted_stages(path: str | Path) -> dict[str, str | None]:
    """task_id → predicted stage, from the stage classifier's predictions file."""
    return {p.task_id: p.predicted for p in read_jsonl(path, StagePrediction)}


def _log_summary(out: str | Path, generations: list[Generation]) -> None:
    by_status: dict[str, int] = {}
    for g in generations:
        by_status[g.status] = by_status.get(g.status, 0) + 1
    log.info("%s: %d candidates %s", out, len(generations), by_status)


def usage_table(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Tokens and cost per (model, technique) over generation files (named by the stage map)."""
    import pandas as pd  # only this one-off job needs pandas; generation jobs start faster

    rows: dict[tuple[str, str], dict] = {}
    for path in map(Path, paths):
        model, technique = path.parent.parent.name, path.parent.name
        row = rows.setdefault(
            (model, technique),
            {c: 0 for c in USAGE_COLUMNS} | {"model": model, "technique": technique, "_tasks": set(), "_keys": set()},
        )
        for g in read_jsonl(path, Generation):
            row["_tasks"].add(g.task_id)
            row["candidates"] += 1
            row["api_errors"] += g.status == GenStatus.API_ERROR
            row["input_tokens"] += g.input_tokens
            row["output_tokens"] += g.output_tokens
            row["cost_usd"] += g.cost_usd
            if g.cache_key:
                row["_keys"].add(g.cache_key)
    for row in rows.values():
        row["tasks"], row["requests"] = len(row.pop("_tasks")), len(row.pop("_keys"))
        row["cost_usd"] = round(row["cost_usd"], 6)
    return pd.DataFrame(sorted(rows.values(), key=lambda r: (r["model"], r["technique"])), columns=USAGE_COLUMNS)


def write_usage(paths: Iterable[str | Path], out: str | Path) -> pd.DataFrame:
    frame = usage_table(paths)
    write_frame(out, frame)
    return frame
