# Shared helpers of all rule files (typed config, input functions) — no rules here.
#
# Settings reach a job by one route: its rule's params. A rule passes the config sections
# its script uses as typed objects (the script uses them as given, nothing is reloaded);
# Snakemake compares only params of builtin types between runs, so these never rerun a job
# by themselves. Beside them the rule lists, as plain values, the settings that shape its
# output: a change to one reruns that rule and what depends on it, a change to how fast a
# job runs (its threads, LLM concurrency, retries) or where caches live reruns nothing.
# Scripts that declare threads take their parallelism from snakemake.threads.
import os
import re
from datetime import UTC, datetime

from dlbench.collect.crawl import read_topics
from dlbench.config import ConfigError, ModelTable, REFERENCE_PROVIDERS, load_config
from dlbench.generate.techniques import REFERENCE
from dlbench.report.manifest import RunContext
from dlbench.subset import SUBSET_KEYS, scored_repos, subset_active, subset_settings, unknown_repos


try:
    CFG = load_config(config, root=".")
except ConfigError as exc:
    raise WorkflowError(f"invalid configuration: {exc}") from None

RUN = RunContext(started_at=datetime.now(UTC), config=CFG, project=workflow.basedir)  # the run's manifest
SNAPSHOT = CFG.crawl.snapshot
TOPICS = read_topics(CFG.topics)


def model_techniques():
    """(model, technique) pairs to generate and evaluate; reference models use REFERENCE."""
    pairs = []
    for name in CFG.model_names():
        if CFG.models[name].provider in REFERENCE_PROVIDERS:
            pairs.append((name, REFERENCE))
        else:
            pairs.extend((name, t) for t in CFG.generate.techniques)
    return pairs


def get_backend():
    """Evaluation backend: docker where an engine and the base image answer, else local."""
    from dlbench.harness.run import resolve_backend

    return resolve_backend(CFG.evaluate.backend, CFG.evaluate.base_image)


BACKEND = get_backend()
# The run's task subset as a plain param of the rules it narrows (generate, evaluate, validate),
# present only when one is set: a change reruns them, a configuration without one keeps its params.
SUBSET_PARAMS = {"subset": subset_settings(CFG.evaluate)} if subset_active(CFG.evaluate) else {}
CUTOFFS = [c.isoformat() for c in CFG.report.cutoffs]


def get_repos():
    """Slugs of the kept repositories (resolved after the select_repos checkpoint)."""
    from dlbench.collect.select import kept_slugs

    return kept_slugs(checkpoints.select_repos.get().output.jsonl)


def get_scored_repos():
    """The kept repositories whose candidates are generated and evaluated: every one, or those
    the run's subset names (evaluate.repos, evaluate.task_ids; dlbench.subset)."""
    kept = get_repos()
    if unknown := unknown_repos(kept, CFG.evaluate):
        raise WorkflowError(f"evaluate.repos: no kept repository is {', '.join(unknown)} (kept: {', '.join(kept)})")
    scored = scored_repos(kept, CFG.evaluate)
    if not scored and subset_active(CFG.evaluate):
        raise WorkflowError(f"evaluate.task_ids: no task of a kept repository (kept: {', '.join(kept) or 'none'})")
    return scored


def get_all(pattern):
    """Input function expanding a per-repository pattern over all kept repositories."""

    def _inputs(wildcards):
        return expand(pattern, repo=get_repos())

    return _inputs


def get_image_records(wildcards):
    """Each kept repository's image record for the exported benchmark: the one gold's runs settled
    on where gold runs (the scored repositories), else the built one; none on the local backend."""
    if BACKEND != "docker":
        return []
    scored = set(get_scored_repos())
    return [f"results/images/{r}.repaired.json" if r in scored else f"results/images/{r}.json" for r in get_repos()]


def get_evaluations(models=None):
    """Input function: evaluation files of the given (default: all) models, all repos."""

    def _inputs(wildcards):
        return [
            f"results/evaluations/{m}/{t}/{r}.jsonl"
            for m, t in model_techniques()
            if models is None or m in models
            for r in get_scored_repos()
        ]

    return _inputs


def get_live_tables(wildcards):
    return expand("results/live/{cutoff}/tables.csv", cutoff=CUTOFFS)


def report_built(path, expansions=None, **kwargs):
    """``report(path, **kwargs)`` once ``path`` exists (every file of a list, every expansion
    of its wildcards by ``expansions``), else ``path`` unmarked. Every output for people is
    marked this way: `snakemake --report` lists what has been built, so it works right after
    `make run` (results/tables.csv: not the live slices, the dataset card or the analyses run
    only when configured, which `all` builds) instead of failing on a marked file that is not
    there; once built, they join the report. The mark only matters to --report: a run is the
    same either way."""
    paths = [path] if isinstance(path, str) else list(path)
    files = expand(paths, **expansions) if expansions else paths
    return report(path, **kwargs) if all(os.path.exists(f) for f in files) else path


def get_generate_inputs(wildcards):
    """The benchmark; a predictions file or the predicted stages when the job needs them."""
    model = CFG.models[wildcards.model]
    inputs = {"benchmark": "results/benchmark/dlbench.jsonl"}
    if model.provider == "predictions":
        inputs["predictions"] = model.predictions
    if wildcards.technique == "stage-few-shot":
        inputs["stages"] = "results/stages/predictions.jsonl"
    return inputs


def get_generations(wildcards):
    return [
        f"results/generations/{m}/{t}/{r}.jsonl"
        for m, t in model_techniques()
        for r in get_scored_repos()
    ]


def get_evaluate_inputs(wildcards):
    """Generations, benchmark, clone; for the docker backend the record of the image gold's
    runs settled on (gold itself runs in rule evaluate_gold)."""
    inputs = {
        "generations": f"results/generations/{wildcards.model}/{wildcards.technique}/{wildcards.repo}.jsonl",
        "benchmark": "results/benchmark/dlbench.jsonl",
        "clone": f"results/repos/{wildcards.repo}.json",
    }
    if BACKEND == "docker":
        inputs["image"] = f"results/images/{wildcards.repo}.repaired.json"
    return inputs


def ds1000_model_techniques():
    """(model, technique) pairs of the DS-1000 track (gold and null use REFERENCE); none unless enabled."""
    if not CFG.ds1000.enabled:
        return []
    pairs = []
    for name in CFG.ds1000_models():
        if CFG.models[name].provider in REFERENCE_PROVIDERS:
            pairs.append((name, REFERENCE))
        else:
            pairs.extend((name, t) for t in CFG.ds1000_techniques())
    return pairs


def get_ds1000_generate_inputs(wildcards):
    """The problems' benchmark records; their predicted stages for stage-few-shot."""
    inputs = {"benchmark": "results/ds1000/benchmark.jsonl"}
    if wildcards.technique == "stage-few-shot":
        inputs["stages"] = "results/ds1000/stages.jsonl"
    return inputs


def get_ds1000_evaluations(wildcards):
    return [f"results/ds1000/evaluations/{m}/{t}.jsonl" for m, t in ds1000_model_techniques()]


def get_optional_targets(wildcards):
    """Analyses run only when configured: the benchmark comparison (and the sheet checking the stages
    predicted for the other benchmarks, scored once filled), the published and the authors' tasks' imports,
    the DS-1000 track."""
    targets = []
    if CFG.compare.benchmarks:
        targets += ["results/compare/summary.md", "results/stages/check_sheet.xlsx"]
    if CFG.stages.check.sheet:
        targets.append("results/stages/check.jsonl")
    if CFG.published.tasks:
        targets.append("results/published/dlbench.jsonl")
    if CFG.authors.source:
        targets.append("results/authors/repos.csv")
    if CFG.ds1000.enabled:
        targets.append("results/ds1000/tables.csv")
    return targets
