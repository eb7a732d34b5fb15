"""The ``mutation_agreement`` technique for one (model, repository) job.

Per task: prompt variants (the original and ``variants`` mutations), ``samples_per_variant``
candidates from each (the zero-shot message format), ``tests_per_task`` model-written
assertions asked from the original prompt, every candidate run against every assertion in
the harness's sandbox (pass matrix), and the candidate chosen by dual execution agreement.
The choice is written as an ordinary ``Generation`` (technique ``mutation_agreement``,
sample 0 of each run) for the normal evaluate rule to score on the repository's real
tests; the variants, tests, pass matrix, groups and rule go to the evidence file as
``AgreementRecord``s. Every request goes through the cached LLM client (a rerun pays for
nothing twice); the whole technique's tokens and cost are booked on the chosen record.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dlbench.config import EvaluateConfig, GenerateConfig, ModelConfig, MutationAgreementConfig
from dlbench.generate.mutation_agreement.dual_execution import choose
from dlbench.generate.mutation_agreement.modeltests import (
    HarnessRunner,
    TestJob,
    TestRun,
    TestRunner,
    model_tests_request,
    parse_tests,
)
from dlbench.generate.mutation_agreement.variants import llm_variants, rewrite_request, rule_variants
from dlbench.generate.sanitize import extract_code
from dlbench.generate.techniques import user_turn
from dlbench.llm.client import ChatRequest, LLMClient, LLMResult, UnansweredRequests, count_errors
from dlbench.records import (
    AgreementCandidate,
    AgreementGroup,
    AgreementRecord,
    BenchmarkTask,
    CloneRecord,
    Generation,
    GenStatus,
    ImageRecord,
    ModelTestCase,
    PromptVariant,
)
from dlbench.store import read_json, read_jsonl, write_jsonl
from dlbench.subset import generated_task_ids

log = logging.getLogger(__name__)

TECHNIQUE = "mutation_agreement"
USAGE_FIELDS = ("input_tokens", "output_tokens", "cost_usd")


@dataclass
class TaskState:
    """What one task gathered: variants, model tests, and usage per run (before choosing)."""

    task: BenchmarkTask
    variants: list[PromptVariant]
    tests: list[ModelTestCase] = field(default_factory=list)
    tests_detail: str | None = None
    usage: dict[int, dict[str, float]] = field(default_factory=dict)  # run → tokens and cost

    def book(self, run: int, result: LLMResult | None) -> None:
        total = self.usage.setdefault(run, dict.fromkeys(USAGE_FIELDS, 0))
        for key in USAGE_FIELDS:
            total[key] += getattr(result, key, 0) if result is not None else 0


@dataclass(frozen=True)
class Sampled:
    variant: int
    sample: int
    code: str | None
    raw: str | None
    status: GenStatus
    detail: str | None
    cache_key: str | None


# ------------------------------------------------------------------ requests


def code_request(task: BenchmarkTask, variant: PromptVariant, samples: int, seed: int) -> ChatRequest:
    """The zero-shot message of ``task`` with the variant's prompt."""
    return ChatRequest([user_turn(task.model_copy(update={"prompt": variant.prompt}))], {"n": samples, "seed": seed})


def prompt_variants(tasks: Sequence[BenchmarkTask], cfg: MutationAgreementConfig, client: LLMClient) -> list[TaskState]:
    """Every task's prompt variants (rules, or one paraphrasing request per task, booked on run 0)."""
    if cfg.rewriter == "rules" or cfg.variants == 0:
        return [
            TaskState(t, rule_variants(t, cfg.variants, seed=cfg.seed, include_original=cfg.include_original))
            for t in tasks
        ]
    results = client.complete_many([rewrite_request(t, cfg.variants, cfg.seed) for t in tasks])
    states = []
    for task, result in zip(tasks, results):
        state = TaskState(task, llm_variants(task, result if result.status == "ok" else None, cfg.include_original))
        state.book(0, result)
        states.append(state)
    return states


def sampled(result: LLMResult, task: BenchmarkTask, variant: int, sample: int) -> Sampled:
    """Choice ``sample`` of one variant's answer, with the extracted code and its status."""
    if result.status != "ok" or sample >= len(result.texts):
        error = result.error or f"endpoint returned {len(result.texts)} choices"
        return Sampled(variant, sample, None, None, GenStatus.API_ERROR, error, result.cache_key)
    finish = result.finish_reasons[sample] if sample < len(result.finish_reasons) else None
    extraction = extract_code(result.texts[sample], task.function, finish)
    return Sampled(
        variant, sample, extraction.code, result.texts[sample], extraction.status, extraction.detail, result.cache_key
    )


# ------------------------------------------------------------------ the technique


def run_agreement(
    tasks: Sequence[BenchmarkTask], model: str, client: LLMClient, runner: TestRunner, cfg: MutationAgreementConfig,
    runs: int = 1, seed: int = 0,
) -> tuple[list[Generation], list[AgreementRecord]]:  # fmt: skip
    """The chosen candidate of every task and run, and the evidence of each choice."""
    states = prompt_variants(tasks, cfg, client)
    _ask_tests(states, client, cfg)
    items = [(s, run, v) for s in states for run in range(runs) for v in s.variants]
    results = client.complete_many(
        [code_request(s.task, v, cfg.samples_per_variant, seed + run) for s, run, v in items]
    )
    pools: dict[tuple[int, int], list[Sampled]] = {}
    for (state, run, variant), result in zip(items, results):
        state.book(run, result)
        pool = pools.setdefault((id(state), run), [])
        pool += [sampled(result, state.task, variant.index, k) for k in range(cfg.samples_per_variant)]
    jobs = [
        TestJob(s.task, c.code if c.status == GenStatus.OK else None, tuple(s.tests))
        for s in states for run in range(runs) for c in pools[(id(s), run)]
    ]  # fmt: skip
    outcomes = iter(runner.run(jobs))
    generations, records = [], []
    for state in states:
        for run in range(runs):
            pool = pools[(id(state), run)]
            rows = [next(outcomes) for _ in pool]
            record = _decide(state, model, run, pool, rows)
            records.append(record)
            generations.append(_generation(state, model, run, pool, record))
    return generations, records


def _ask_tests(states: list[TaskState], client: LLMClient, cfg: MutationAgreementConfig) -> None:
    if cfg.tests_per_task == 0:
        for state in states:
            state.tests_detail = "tests_per_task is 0"
        return
    results = client.complete_many([ChatRequest(model_tests_request(s.task, cfg.tests_per_task)) for s in states])
    for state, result in zip(states, results):
        state.book(0, result)
        if result.status != "ok":
            state.tests_detail = f"test request failed: {result.error}"
            continue
        state.tests = parse_tests(result.text, state.task, cfg.tests_per_task)
        if not state.tests:
            state.tests_detail = "the answer held no assertion calling the target"


def _decide(state: TaskState, model: str, run: int, pool: list[Sampled], rows: list[TestRun]) -> AgreementRecord:
    matrix = [list(r.passed) if r.passed else [False] * len(state.tests) for r in rows]
    codes = [c.code if c.status == GenStatus.OK else None for c in pool]
    choice = choose(matrix, codes)
    candidates = [
        AgreementCandidate(variant=c.variant, sample=c.sample, status=c.status, code=c.code, detail=c.detail,
                           passed=m, run_status=r.status)
        for c, m, r in zip(pool, matrix, rows)
    ]  # fmt: skip
    groups = [
        AgreementGroup(members=list(g.members), tests_passed=g.tests_passed, score=g.score) for g in choice.groups
    ]
    return AgreementRecord(
        task_id=state.task.task_id, model=model, run=run, variants=state.variants, tests=state.tests,
        tests_detail=state.tests_detail, candidates=candidates, groups=groups, chosen=choice.chosen, rule=choice.rule,
    )  # fmt: skip


def _generation(state: TaskState, model: str, run: int, pool: list[Sampled], record: AgreementRecord) -> Generation:
    usage = state.usage.get(run, {})
    base = dict(task_id=state.task.task_id, model=model, technique=TECHNIQUE, run=run, sample=0, **usage)
    if record.chosen is None:
        errors = [c for c in pool if c.status == GenStatus.API_ERROR]
        status = GenStatus.API_ERROR if pool and len(errors) == len(pool) else GenStatus.NO_CODE
        details = sorted({f"{c.status}: {c.detail}" for c in pool})
        return Generation(
            **base, code=None, status=status, detail="no candidate with code: " + "; ".join(details)[:1000]
        )
    chosen = pool[record.chosen]
    group = record.groups[0]
    detail = (
        f"variant {chosen.variant} sample {chosen.sample}; {record.rule}: group of {len(group.members)} "
        f"of {len(pool)} candidates passing {group.tests_passed}/{len(state.tests)} model tests"
    )
    return Generation(
        **base, code=chosen.code, raw=chosen.raw, status=chosen.status, detail=detail, cache_key=chosen.cache_key
    )


# ------------------------------------------------------------------ the workflow job


def check_answered(out: str | Path, records: list[AgreementRecord]) -> None:
    """Fail, writing nothing, while the endpoint left any sampled candidate unanswered: the
    choice among candidates is the model's only when every one was asked (as ``generate``
    does). The answered ones are in the LLM cache, so the rerun pays only for the rest."""
    candidates = [c for r in records for c in r.candidates]
    failed = [c.detail for c in candidates if c.status == GenStatus.API_ERROR]
    if failed:
        raise UnansweredRequests(
            f"{out}: {len(failed)} of {len(candidates)} sampled candidates got no answer from the endpoint (api_error): "
            f"{count_errors(failed)}. Not written; what was answered is in the LLM cache: rerun to ask again for the rest."
        )


def agreement_file(
    benchmark: str | Path, clone: str | Path, image: str | Path | None, out: str | Path, evidence: str | Path,
    model: str, repo: str, model_cfg: ModelConfig, cfg: GenerateConfig, evaluate: EvaluateConfig, backend: str,
    llm_cache: str | Path, runs_dir: str | Path,
) -> list[Generation]:  # fmt: skip
    """The ``agree_mutations`` rule: ``out`` (generations) and ``evidence`` for one repository.
    LLM responses are cached under ``llm_cache``, the results of runs against model-written
    tests under ``runs_dir`` (both outside Snakemake outputs, which a failed job loses)."""
    pool = read_jsonl(benchmark, BenchmarkTask)
    only = generated_task_ids(pool, evaluate)  # the run's subset (dlbench.subset), if one is set
    tasks = [t for t in pool if t.slug == repo and (only is None or t.task_id in only)]
    if model_cfg.provider != "openai":
        detail = f"{TECHNIQUE} needs an OpenAI-compatible model (provider openai); {model!r} has provider {model_cfg.provider!r}"
        log.error(detail)
        gens = [
            Generation(
                task_id=t.task_id, model=model, technique=TECHNIQUE, code=None, status=GenStatus.NO_CODE, detail=detail
            )
            for t in tasks
        ]
        write_jsonl(evidence, [])
        write_jsonl(out, gens)
        return gens
    records: list[AgreementRecord] = []
    gens = []
    if tasks:
        client = LLMClient.from_endpoint(model_cfg, llm_cache)
        clone_record = read_json(clone, CloneRecord)
        image_record = read_json(image, ImageRecord) if image else None
        runner = HarnessRunner(clone_record, image_record, backend, evaluate, runs_dir)
        gens, records = run_agreement(
            tasks, model, client, runner, cfg.mutation_agreement, model_cfg.runs, model_cfg.seed
        )
        log.info("%s/%s: %d tasks; rules %s", model, repo, len(tasks), dict(Counter(r.rule for r in records)))
        check_answered(out, records)
    write_jsonl(evidence, records)
    write_jsonl(out, gens)
    return gens
