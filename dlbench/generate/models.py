"""Candidate providers behind one abstract class, made by ``make_provider``.

``openai`` asks any OpenAI-compatible endpoint (cached, journalled, resumable);
``gold``, ``null`` and ``mutant`` are reference models built from the ground truth with
no network; ``predictions`` reads candidates produced outside the workflow.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dlbench.config import ModelConfig
from dlbench.generate import code_mutants as mutate
from dlbench.generate.journal import Journal
from dlbench.generate.sanitize import Extraction, check_code, extract_code
from dlbench.generate.techniques import Messages, messages_for
from dlbench.llm.client import ChatRequest, LLMClient, LLMResult
from dlbench.logs import Progress
from dlbench.records import BenchmarkTask, Generation, GenStatus, Prediction
from dlbench.store import read_jsonl

log = logging.getLogger(__name__)


class Prompting:
    """How a benchmark's tasks are asked and answered: DL-Bench's functions (this class), or
    another benchmark's form (``generate/ds1000.py``: a snippet completing a program)."""

    def messages(self, task: BenchmarkTask, technique: str, pool, predicted_stages, seed: int, run: int) -> Messages:  # noqa: ANN001
        return messages_for(task, technique, pool, predicted_stages, seed=seed, run=run)

    def extract(self, task: BenchmarkTask, raw: str | None, finish_reason: str | None) -> Extraction:
        """The candidate's code in a raw answer, with its status."""
        return extract_code(raw, task.function, finish_reason)

    def null(self, task: BenchmarkTask) -> str:
        """The null model's candidate: the task's signature with a body that raises NotImplementedError."""
        return mutate.null_body(task.ground_truth)


@dataclass
class GenerationJob:
    """One (model, technique, repository) job."""

    model: str  # key in the config's models
    technique: str
    repo: str  # slug
    tasks: list[BenchmarkTask]  # this repository's tasks, in benchmark order
    pool: list[BenchmarkTask]  # every benchmark task (few-shot examples)
    journal: Journal
    predicted_stages: Mapping[str, str | None] | None = None
    prompting: Prompting = field(default_factory=Prompting)

    def record(self, task: BenchmarkTask, **fields) -> Generation:
        return Generation(task_id=task.task_id, model=self.model, technique=self.technique, **fields)


class Provider(ABC):
    """Produces every candidate of one job."""

    def __init__(self, name: str, cfg: ModelConfig):
        self.name, self.cfg = name, cfg

    @abstractmethod
    def generate(self, job: GenerationJob) -> list[Generation]:
        """Candidates for every task of ``job`` (runs × samples each), in task order."""

    def runs(self) -> range:
        return range(self.cfg.runs)


# ------------------------------------------------------------------ reference models


class GoldProvider(Provider):
    """The ground truth itself: every usable task must pass."""

    def generate(self, job: GenerationJob) -> list[Generation]:
        return [
            job.record(t, run=r, sample=s, code=t.ground_truth, detail="ground truth")
            for t in job.tasks
            for r in self.runs()
            for s in range(self.cfg.n)
        ]


class NullProvider(Provider):
    """Same signature and docstring, body ``raise NotImplementedError``: every task must fail."""

    def generate(self, job: GenerationJob) -> list[Generation]:
        out = []
        for task in job.tasks:
            try:
                fields = {"code": job.prompting.null(task), "detail": "raise NotImplementedError"}
            except mutate.MutationError as exc:
                fields = {"code": None, "status": GenStatus.NO_CODE, "detail": str(exc)}
            out += [job.record(task, run=r, sample=s, **fields) for r in self.runs() for s in range(self.cfg.n)]
        return out


class MutantProvider(Provider):
    """``n`` distinct seeded single-point mutants per task; ``detail`` names the mutation."""

    def generate(self, job: GenerationJob) -> list[Generation]:
        out = []
        for task in job.tasks:
            for run in self.runs():
                try:
                    found = mutate.mutants(task.ground_truth, self.cfg.n, seed=f"{self.cfg.seed}:{run}:{task.task_id}")
                except mutate.MutationError as exc:
                    log.warning("%s: no mutants: %s", task.task_id, exc)
                    continue
                if len(found) < self.cfg.n:
                    log.warning("%s: only %d distinct mutants of %d asked", task.task_id, len(found), self.cfg.n)
                out += [
                    job.record(task, run=run, sample=s, code=m.code, detail=m.mutation) for s, m in enumerate(found)
                ]
        return out


# ------------------------------------------------------------------ predictions file


class PredictionsProvider(Provider):
    """Candidates from a predictions file; a task without one gets a ``no_code`` record."""

    def generate(self, job: GenerationJob) -> list[Generation]:
        wanted = {t.task_id for t in job.tasks}
        found: dict[str, list[Prediction]] = {}
        for p in read_jsonl(self.cfg.predictions or "", Prediction):
            if p.task_id in wanted and (self.cfg.model is None or p.model == self.cfg.model):
                found.setdefault(p.task_id, []).append(p)
        out = []
        for task in job.tasks:
            predictions = sorted(found.get(task.task_id, []), key=lambda p: p.sample)
            if not predictions:
                out.append(job.record(task, code=None, status=GenStatus.NO_CODE, detail="no prediction for this task"))
            for p in predictions:
                checked = check_code(p.code, task.function)
                out.append(
                    job.record(
                        task,
                        sample=p.sample,
                        code=checked.code,
                        raw=p.code,
                        status=checked.status,
                        detail=checked.detail,
                    )
                )
        return out


# ------------------------------------------------------------------ OpenAI-compatible endpoints


@dataclass(frozen=True)
class _Item:
    task: BenchmarkTask
    run: int
    request: ChatRequest
    key: str  # journal key: task, run and the request's cache key (tasks may share a prompt)


class OpenAIProvider(Provider):
    """Any OpenAI-compatible endpoint, through the cached LLM client."""

    def __init__(self, name: str, cfg: ModelConfig, cache_dir: str | Path):
        super().__init__(name, cfg)
        self.client = LLMClient.from_endpoint(cfg, cache_dir)

    def generate(self, job: GenerationJob) -> list[Generation]:
        items = list(self._items(job))
        finished = {i.key: job.journal.get(i.key) for i in items}
        todo = [i for i in items if finished[i.key] is None]
        log.info(
            "%s/%s/%s: %d requests, %d already finished",
            job.model,
            job.technique,
            job.repo,
            len(items),
            len(items) - len(todo),
        )
        progress = Progress(len(todo), f"generate {job.model}/{job.technique}/{job.repo}", unit="task")

        def keep(index: int, result: LLMResult) -> None:
            item = todo[index]
            finished[item.key] = self._generations(job, item, result)
            if result.status == "ok":  # errors are retried by the next run, not journalled
                job.journal.record(item.key, finished[item.key])
            progress.advance()

        send = self.client.batch_many if self.cfg.batch else self.client.complete_many
        send([i.request for i in todo], on_result=keep)
        return _book_usage_once([g for i in items for g in finished[i.key] or []])

    def _items(self, job: GenerationJob) -> Iterator[_Item]:
        for task in job.tasks:
            for run in self.runs():  # few-shot examples are drawn afresh for every run
                messages = job.prompting.messages(
                    task, job.technique, job.pool, job.predicted_stages, seed=self.cfg.seed, run=run
                )
                params = {"n": self.cfg.n, "seed": self.cfg.seed + run}
                key = f"{task.task_id}#{run}#{self.client.key(messages, **params)}"
                yield _Item(task, run, ChatRequest(messages, params), key)

    def _generations(self, job: GenerationJob, item: _Item, result: LLMResult) -> list[Generation]:
        usage = {
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
            "cost_usd": result.cost_usd,
        }
        out = []
        for sample in range(self.cfg.n):
            fields = _sample_fields(job.prompting, item.task, result, sample)
            # the request's usage is booked on sample 0 so sums over records are exact
            out.append(
                job.record(
                    item.task,
                    run=item.run,
                    sample=sample,
                    cache_key=result.cache_key,
                    **fields,
                    **(usage if sample == 0 else {}),
                )
            )
        return out


def _sample_fields(prompting: Prompting, task: BenchmarkTask, result: LLMResult, sample: int) -> dict:
    if result.status != "ok":
        return {"code": None, "status": GenStatus.API_ERROR, "detail": result.error}
    if sample >= len(result.texts):
        return {"code": None, "status": GenStatus.API_ERROR, "detail": f"endpoint returned {len(result.texts)} choices"}
    finish = result.finish_reasons[sample] if sample < len(result.finish_reasons) else None
    extraction = prompting.extract(task, result.texts[sample], finish)
    return {
        "code": extraction.code,
        "raw": result.texts[sample],
        "status": extraction.status,
        "detail": extraction.detail,
    }


def _book_usage_once(generations: list[Generation]) -> list[Generation]:
    """Tasks sharing a prompt share one request: only its first record carries the usage."""
    seen: set[str] = set()
    out = []
    for g in generations:
        if g.cache_key in seen and g.sample == 0:
            g = g.model_copy(update={"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0})
        out.append(g)
        if g.cache_key:
            seen.add(g.cache_key)
    return out


# ------------------------------------------------------------------ factory

PROVIDERS: dict[str, type[Provider]] = {
    "gold": GoldProvider,
    "null": NullProvider,
    "mutant": MutantProvider,
    "predictions": PredictionsProvider,
}


def make_provider(name: str, cfg: ModelConfig, cache_dir: str | Path = ".cache/dlbench/llm") -> Provider:
    """The provider of model ``name`` configured by ``cfg``."""
    if cfg.provider == "openai":
        return OpenAIProvider(name, cfg, cache_dir)
    return PROVIDERS[cfg.provider](name, cfg)
