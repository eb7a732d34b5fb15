"""Evaluate candidates: patch, run in a backend, grade, keep evidence, resume.

Entry points: ``evaluate_generations`` (the ``evaluate`` rule: one model × technique ×
repository) and ``evaluate_predictions`` (``dlbench evaluate``: a predictions file over the
benchmark). Both go through ``evaluate_repo``, which runs the candidates of one repository
in ``jobs`` warm sessions (containers, or local supervisors) and writes, per candidate,
``results/evidence/{model}/{technique}/{repo}/{task}-{hash}/{run}-{sample}/`` with the patched file,
the command, the raw output, the report events and the evaluation (with a hash of
everything that decided it: a rerun skips candidates whose evaluation is already there).
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import re
import signal
import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import TypeVar

from dlbench.config import EvaluateConfig, ImagesConfig
from dlbench.deps.testenv import runner_environment
from dlbench.harness import suites
from dlbench.harness.code import grader_files, support_files
from dlbench.harness.patch import CandidateSyntaxError, PatchError, patch_source
from dlbench.harness.run import Candidate, preload_for, resolve_backend
from dlbench.harness.screen import screen
from dlbench.harness.testset import gold_test_sets, scaled_timeouts
from dlbench.harness.verdict import RunResult, Verdict, grade
from dlbench.logs import Progress
from dlbench.parsing import Unparsable, read_source
from dlbench.records import (
    BenchmarkTask,
    CloneRecord,
    CloneStatus,
    EvalStatus,
    Evaluation,
    Generation,
    GenStatus,
    ImageRecord,
    ImageStatus,
    Prediction,
    TestOutcome,
)
from dlbench.store import iter_jsonl, read_json, read_jsonl, write_json, write_jsonl, write_text
from dlbench.subset import scored_task_ids

log = logging.getLogger(__name__)
T = TypeVar("T")

EVIDENCE_ROOT = Path("results/evidence")
REPOS_DIR = Path("results/repos")
IMAGES_DIR = Path("results/images")
REPAIRED_SUFFIX = ".repaired.json"  # the image gold's runs settled on (dlbench.harness.gold)
PREDICTIONS_TECHNIQUE = "predictions"
GOLD = "gold"
REPORT_FILE = "evaluation.json"


@dataclass(frozen=True)
class Job:
    """One candidate of one repository, before it runs."""

    gen: Generation
    task: BenchmarkTask | None
    evidence: Path

    @property
    def name(self) -> str:
        return f"{self.gen.model}/{self.gen.technique}/{self.gen.task_id}/{self.gen.run}-{self.gen.sample}"


class EvalReport(Evaluation):
    """The evidence copy of an evaluation: plus the hash that lets a rerun skip it."""

    candidate_hash: str


# ---------------------------------------------------------------- entry points


def evaluate_generations(
    generations: Path, benchmark: Path, clone: Path, image: Path | None, out: Path, backend: str, cfg: EvaluateConfig,
    evidence_root: Path = EVIDENCE_ROOT, gold: Path | None = None, null: Path | None = None,
) -> list[Evaluation]:  # fmt: skip
    """The ``evaluate`` rule: the candidates of one model × technique × repository, on the
    repository's seeded task sample; with ``gold`` (every model but gold), each task keeps
    only the tests gold's runs kept (``testset``), within the test budget with ``null``
    (every model but gold and null: ``held_to_gold``)."""
    image_record = read_json(image, ImageRecord) if image else None
    results = evaluate_candidates(
        generations, benchmark, clone, image_record, backend, cfg, evidence_root, gold, null=null
    )
    write_jsonl(out, results)
    return results


def evaluate_candidates(
    generations: Path, benchmark: Path, clone: Path, image_record: ImageRecord | None, backend: str,
    cfg: EvaluateConfig, evidence_root: Path = EVIDENCE_ROOT, gold: Path | None = None,
    only: Collection[str] | None = None, reseed: bool = False, null: Path | None = None,
) -> list[Evaluation]:  # fmt: skip
    """``evaluate_generations`` on a given image, without writing (``only``: these task ids
    of the sample; ``reseed``: gold's further runs, ``_repeats``); InfrastructureFaults when
    a candidate met one (its verdict is not kept, so a rerun runs it again)."""
    record = read_json(clone, CloneRecord)
    everything = list(iter_jsonl(benchmark, BenchmarkTask))  # a run's subset is drawn over every repository
    tasks = {t.task_id: t for t in everything if t.slug == record.slug}
    tasks, timeouts, seen_in_gold = held_to_gold(tasks, gold, cfg, null)
    sampled = scored_task_ids(everything, cfg)
    gens = [g for g in read_jsonl(generations, Generation) if g.task_id in sampled or g.task_id not in tasks]
    gens = [repeat for gen in gens if only is None or gen.task_id in only for repeat in _repeats(gen, cfg, reseed)]
    results = evaluate_repo(
        record,
        tasks,
        gens,
        image_record,
        backend,
        cfg,
        cfg.jobs,
        evidence_root,
        timeouts=timeouts,
        allowed=seen_in_gold,
    )
    refuse_infrastructure_faults(results)
    return results


def held_to_gold(
    tasks: dict[str, BenchmarkTask], gold: Path | None, cfg: EvaluateConfig, null: Path | None = None
) -> tuple[dict[str, BenchmarkTask], dict[str, float], dict[str, frozenset[str]]]:
    """What every model but gold is held to, from gold's evaluations (none given: the tasks
    whole, the config's limit, nothing allowed): the tests gold kept (``testset``), each
    task's limit scaled to gold's time, and what gold's runs were seen doing. The test
    budget needs null's evaluations (``null``: every model but gold and null), since it takes
    the tests a missing body fails first; null itself runs every kept test."""
    if gold is None:
        return tasks, {}, {}
    evaluations = read_jsonl(gold, Evaluation)
    if cfg.test_budget_s and null is None:
        log.info("evaluate.test_budget_s: no null evaluations given, so every kept test runs (null's own run)")
    budget = cfg.test_budget_s if null is not None else 0.0
    trimmed = gold_test_sets(tasks, evaluations, budget, read_jsonl(null, Evaluation) if null else ())
    return trimmed, scaled_timeouts(evaluations, cfg), observed_by_gold(evaluations)


def observed_by_gold(gold: Iterable[Evaluation]) -> dict[str, frozenset[str]]:
    """Per task, what gold's runs were seen doing: the project's own code does it, so a
    candidate doing the same is not held to account for it."""
    seen: dict[str, set[str]] = defaultdict(set)
    for evaluation in gold:
        seen[evaluation.task_id].update(evaluation.observed)
    return {task_id: frozenset(what) for task_id, what in seen.items()}


class InfrastructureFaults(RuntimeError):
    """Candidates met an infrastructure fault: no output, so the next run retries just them."""


def refuse_infrastructure_faults(results: list[Evaluation]) -> None:
    faults = [e for e in results if e.status == EvalStatus.INFRA_ERROR]
    if faults:
        raise InfrastructureFaults(
            f"{len(faults)} of {len(results)} candidates met an infrastructure fault (first: {faults[0].task_id}: "
            f"{faults[0].detail}); every other verdict is kept in the evidence folders, and a rerun runs only these"
        )


def evaluate_predictions(
    tasks: Path, predictions: Path, out: Path, backend: str, jobs: int, cfg: EvaluateConfig,
    repos_dir: Path = REPOS_DIR, evidence_root: Path = EVIDENCE_ROOT, images: ImagesConfig | None = None,
    downloads: Path | None = None, images_dir: Path = IMAGES_DIR, only: Collection[str] | None = None,
    clones: Mapping[str, CloneRecord] | None = None, image_records: Path | None = None, gold: Path | None = None,
    null: Path | None = None,
) -> list[Evaluation]:  # fmt: skip
    """``dlbench evaluate``: every prediction against its benchmark task, in file order; on
    the image the workflow's gold runs settled on (``images_dir``) where it is still there,
    else one built now with ``images`` and the download cache ``downloads``.

    ``only``: just the predictions of these tasks (and those naming no task, reported as
    such); ``clones``: checkouts made elsewhere, by slug (the others are the workflow's, in
    ``repos_dir``); the images built for those are recorded in ``image_records/{slug}.json``;
    ``gold``: gold's evaluations of these tasks, whose test sets, time limits and observed
    behaviour the other models' candidates are held to, as in the workflow (without them a
    project's own doings, seen under gold, count against every candidate); ``null``: null's
    evaluations of them, which the test budget needs (``held_to_gold``)."""
    by_id, timeouts, seen_in_gold = held_to_gold(
        {t.task_id: t for t in iter_jsonl(tasks, BenchmarkTask)}, gold, cfg, null
    )
    gens = [
        Generation(task_id=p.task_id, model=p.model, technique=PREDICTIONS_TECHNIQUE, sample=p.sample, code=p.code)
        for p in read_jsonl(predictions, Prediction)
        if only is None or p.task_id in only or p.task_id not in by_id
    ]
    backend = resolve_backend(backend, cfg.base_image)
    clones = clones or {}
    by_repo: dict[str, list[Generation]] = defaultdict(list)
    unknown = []
    for gen in gens:
        task = by_id.get(gen.task_id)
        (by_repo[task.slug] if task else unknown).append(gen)
    results: dict[int, Evaluation] = {id(g): _unknown_task(g, backend) for g in unknown}
    for slug, repo_gens in by_repo.items():
        tasks_of_repo = {t.task_id: t for t in by_id.values() if t.slug == slug}
        clone = clones.get(slug) or _clone_record(repos_dir, slug, tasks_of_repo)
        record_to = image_records / f"{slug}.json" if image_records and slug in clones else None
        image = (
            _image_for(clone, cfg, evidence_root, images, downloads, images_dir, record_to, Path(tasks).parent)
            if backend == "docker"
            else None
        )
        evaluated = evaluate_repo(
            clone, tasks_of_repo, repo_gens, image, backend, cfg, jobs, evidence_root, timeouts=timeouts,
            allowed=seen_in_gold,
        )  # fmt: skip
        results |= {id(g): e for g, e in zip(repo_gens, evaluated)}
    ordered = [results[id(g)] for g in gens]
    write_jsonl(out, ordered)
    return ordered


def _repeats(gen: Generation, cfg: EvaluateConfig, reseed: bool = False) -> list[Generation]:
    """Gold candidates run ``gold_runs`` times to expose flaky tests, and with ``reseed`` the
    ``gold_reseeds`` runs after those (run = gen.run × (gold_runs + gold_reseeds) + r)."""
    if gen.model != GOLD:
        return [gen]
    rounds = range(cfg.gold_runs, cfg.gold_slots) if reseed else range(cfg.gold_runs)
    return [gen.model_copy(update={"run": gen.run * cfg.gold_slots + r}) for r in rounds]


def _clone_record(repos_dir: Path, slug: str, tasks: dict[str, BenchmarkTask]) -> CloneRecord:
    path = repos_dir / f"{slug}.json"
    if path.is_file():
        return read_json(path, CloneRecord)
    task = next(iter(tasks.values()))
    return CloneRecord(
        full_name=task.repo, slug=slug, clone_url="", path=str(repos_dir / slug), sha=task.sha,
        status=CloneStatus.OK if (repos_dir / slug).is_dir() else CloneStatus.CLONE_ERROR,
        error=None if (repos_dir / slug).is_dir() else f"no checkout at {repos_dir / slug}",
    )  # fmt: skip


def _image_for(
    clone: CloneRecord, cfg: EvaluateConfig, evidence_root: Path, images: ImagesConfig | None, downloads: Path | None,
    images_dir: Path, record_to: Path | None = None, export: Path | None = None,
) -> ImageRecord:  # fmt: skip
    """The workflow's repaired project image if the engine still has it with this harness's
    supervisor and plugin, else one built now (or reused by content hash) and, with
    ``record_to``, recorded there: from the lock the repaired image or an exported benchmark
    records (``export/environments/{repo}/image.json``) where there is one, else resolved from
    the checkout."""
    from dlbench.images.build import build_project_image, build_recorded_image, docker_client, ships_runner
    from dlbench.images.recipe import ENVIRONMENTS_DIR, IMAGE_FILE

    repaired = _ok_record(images_dir / f"{clone.slug}{REPAIRED_SUFFIX}")
    if repaired and repaired.tag and ships_runner(docker_client(), repaired.tag, support_files()):
        return repaired
    log_path = evidence_root / "images" / f"{clone.slug}.log"
    if clone.status != CloneStatus.OK:
        return ImageRecord(repo=clone.slug, sha=clone.sha or "", base_image=cfg.base_image, tag=None,
                           status=ImageStatus.IMAGE_ERROR, error=clone.error, build_log=str(log_path))  # fmt: skip
    exported = _ok_record(export / ENVIRONMENTS_DIR / clone.slug / IMAGE_FILE) if export else None
    locked = repaired or exported  # the environment gold's runs settled on, with today's runner
    if locked and locked.environment and locked.environment.lock:
        built = build_recorded_image(locked, Path(clone.path), log_path, support_files(), images=images, downloads=downloads)  # fmt: skip
    else:
        built = build_project_image(Path(clone.path), clone.slug, clone.sha or "", cfg.base_image, log_path,
                                    support_files(), images=images, downloads=downloads)  # fmt: skip
    if record_to is not None:
        write_json(record_to, built)
    return built


def _ok_record(path: Path) -> ImageRecord | None:
    record = read_json(path, ImageRecord) if path.is_file() else None
    return record if record and record.status == ImageStatus.OK else None


# ---------------------------------------------------------------- one repository


def evaluate_repo(
    clone: CloneRecord, tasks: dict[str, BenchmarkTask], gens: list[Generation], image: ImageRecord | None,
    backend: str, cfg: EvaluateConfig, jobs: int, evidence_root: Path = EVIDENCE_ROOT, mode: str = "warm",
    timeouts: Mapping[str, float] | None = None, allowed: Mapping[str, frozenset[str]] | None = None,
) -> list[Evaluation]:  # fmt: skip
    """Evaluations of ``gens`` (same order); candidates that need a run share ``jobs`` sessions.
    ``timeouts``: a task's own limit (``testset.scaled_timeouts``), else ``cfg.timeout_s``;
    ``allowed``: per task, what gold's runs were seen doing (``observed_by_gold``).

    Candidates are patched lazily, so the first session starts while the rest are patched.
    """
    timeouts = timeouts or {}
    results: dict[int, Evaluation] = {}
    progress = Progress(len(gens), f"evaluate {clone.slug}", unit="candidate")

    def pending() -> Iterator[tuple[tuple, Candidate]]:
        for i, gen in enumerate(gens):
            job = Job(gen, tasks.get(gen.task_id), evidence_dir(evidence_root, clone.slug, gen))
            limit = timeouts.get(gen.task_id)
            done = _without_run(job, clone, image, backend, cfg, limit)
            if isinstance(done, Evaluation):
                results[i] = done
                progress.advance()
                continue
            patched, digest = done
            files, seed = {job.task.path: patched}, run_seed(job.gen, cfg)
            yield (
                (i, job, patched, digest),
                Candidate.make(
                    job.name,
                    files,
                    job.task.tests,
                    limit,
                    seed,
                    f"{job.task.path}:{job.task.qualname}",
                    suites.sessions(Path(clone.path), job.task.tests),
                ),  # fmt: skip
            )

    modules = tuple(t.path for t in tasks.values())
    factory = partial(new_session, clone, image, backend, cfg, mode, modules)
    with closing(run_pool(factory, pending(), jobs)) as runs:  # closed now, even on Ctrl-C: no container stays
        for (i, job, patched, digest), candidate, run in runs:
            seen_in_gold = None if job.gen.model == GOLD else (allowed or {}).get(job.gen.task_id, frozenset())
            screen_code = partial(_screen_foreign, job.task, Path(clone.path))
            verdict = grade(candidate.tests, candidate.nonce, run, seen_in_gold, screen_code)
            results[i] = _record(job, candidate, patched, digest, run, backend, verdict)
            progress.advance()
    return [results[i] for i in range(len(gens))]


def _without_run(
    job: Job, clone: CloneRecord, image: ImageRecord | None, backend: str, cfg: EvaluateConfig, limit: float | None
) -> Evaluation | tuple[str, str]:
    """The evaluation when no run is needed (cannot run, or already evaluated), else (patched module, hash)."""
    early = _before_run(job, clone, image, backend)
    if early is not None:
        return early
    try:
        patched = runnable_module(job.task, Path(clone.path), job.gen.code or "", cfg)
    except NotRunnable as exc:
        return _evaluation(job, exc.status, exc.detail, backend)
    digest = candidate_hash(
        job.task, patched, backend, cfg, limit, image.tag if image else None, run_seed(job.gen, cfg),
        project_test_env(clone.path),
    )  # fmt: skip
    done = _finished(job.evidence, digest)
    return (patched, digest) if done is None else done


def evidence_dir(root: Path, slug: str, gen: Generation) -> Path:
    """Readable folder name plus a short hash of the task id (``a/b_c.py`` and ``a/b/c.py`` differ)."""
    task = re.sub(r"[^A-Za-z0-9_.-]+", "_", gen.task_id.split(":", 1)[-1]).strip("_")
    digest = hashlib.sha256(gen.task_id.encode()).hexdigest()[:8]
    return root / gen.model / gen.technique / slug / f"{task}-{digest}" / f"{gen.run}-{gen.sample}"


def run_seed(gen: Generation, cfg: EvaluateConfig) -> int | None:
    """The random state a candidate's tests start from: ``evaluate.test_seed``, and for gold's
    r-th run ``test_seed + r`` (its further runs included), so a test whose verdict hangs on the
    draw passes in one gold run and fails in another (``flaky``, dropped from the task)
    instead of deciding by luck."""
    if cfg.test_seed is None:
        return None
    return cfg.test_seed + (gen.run % cfg.gold_slots if gen.model == GOLD else 0)


def candidate_hash(
    task: BenchmarkTask,
    patched: str,
    backend: str,
    cfg: EvaluateConfig,
    limit: float | None = None,
    image: str | None = None,
    seed: int | None = None,
    test_env: Mapping[str, str] | None = None,
) -> str:
    """Everything that decides a verdict: task, tests, patched module, backend, limits, the
    environment (the image's tag hashes its lock) and the code that runs (support files) and
    grades it (verdict and screen: a changed grader reruns)."""
    support = sorted((k, hashlib.sha256(v).hexdigest()) for k, v in (support_files() | grader_files()).items())
    limits = cfg.model_dump(include={"timeout_s", "memory_mb", "cpus", "pids", "output_limit_kb"})
    limits |= {"limit": limit, "seed": seed, "env": dict(test_env or {})}
    blob = json.dumps(
        [task.task_id, task.sha, task.path, task.tests, patched, backend, limits, support, image], sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _before_run(job: Job, clone: CloneRecord, image: ImageRecord | None, backend: str) -> Evaluation | None:
    """The verdict of a candidate that cannot run at all, or None."""
    if job.task is None:
        return _evaluation(job, EvalStatus.PATCH_ERROR, f"no benchmark task {job.gen.task_id!r}", backend)
    if job.gen.status == GenStatus.API_ERROR:  # the endpoint never answered: not the model's failure
        return _evaluation(job, EvalStatus.API_ERROR, job.gen.detail or "the endpoint did not answer", backend)
    if job.gen.code is None or not job.gen.code.strip():
        return _evaluation(job, EvalStatus.NO_CODE, job.gen.detail or f"generation status {job.gen.status}", backend)
    unusable = unusable_environment(clone, image, backend)
    return None if unusable is None else _evaluation(job, EvalStatus.IMAGE_ERROR, unusable, backend)


class NotRunnable(Exception):
    """A candidate that cannot run: the status it gets and why."""

    def __init__(self, status: EvalStatus, detail: str):
        super().__init__(detail)
        self.status, self.detail = status, detail


def unusable_environment(clone: CloneRecord, image: ImageRecord | None, backend: str) -> str | None:
    """Why no candidate of this repository can run (status ``image_error``), or None."""
    if clone.status != CloneStatus.OK:
        return f"no checkout: {clone.error}"
    if backend == "docker" and (image is None or image.status != ImageStatus.OK):
        error = image.error if image else "no image record"
        return f"project image unusable: {error}"[:2000]
    return None


def runnable_module(task: BenchmarkTask, checkout: Path, code: str, cfg: EvaluateConfig) -> str:
    """The task's module with ``code`` patched in, once the static screen lets it run (every
    way a candidate reaches a session goes through here); NotRunnable otherwise."""
    try:
        original = _original(task, checkout)
        patched = patch_source(original, task.qualname, code, task.path, task.start_line)
    except PatchError as exc:
        status = EvalStatus.SYNTAX_ERROR if isinstance(exc, CandidateSyntaxError) else EvalStatus.PATCH_ERROR
        raise NotRunnable(status, str(exc)) from None
    refused = screen(code, original) if cfg.screen else []
    if refused:
        raise NotRunnable(EvalStatus.SANDBOX_VIOLATION, "refused by the static screen: " + "; ".join(refused))
    return patched


def _screen_foreign(task: BenchmarkTask, checkout: Path, code: str) -> list[str]:
    """The screen over code a run compiled or loaded from a writable place, with what the
    task's module allows; the module is read only when a run reports such code."""
    return screen(code, _original(task, checkout))


def _unknown_task(gen: Generation, backend: str) -> Evaluation:
    return _evaluation(Job(gen, None, Path()), EvalStatus.PATCH_ERROR, f"no benchmark task {gen.task_id!r}", backend)


def _original(task: BenchmarkTask, checkout: Path) -> str:
    """The task's module as mining read it (its coding cookie honoured, a BOM dropped)."""
    try:
        return read_source(checkout / task.path)
    except (OSError, Unparsable) as exc:
        raise PatchError(f"cannot read {task.path} in the checkout: {getattr(exc, 'strerror', None) or exc}") from None


def _evaluation(job: Job, status: EvalStatus, detail: str | None, backend: str, **extra) -> Evaluation:
    tests = extra.pop("tests", None)
    if tests is None:
        tests = {t: TestOutcome.MISSING for t in (job.task.tests if job.task else [])}
    return Evaluation(
        task_id=job.gen.task_id, model=job.gen.model, technique=job.gen.technique, run=job.gen.run, sample=job.gen.sample,
        status=status, passed=status == EvalStatus.PASS, tests=tests, duration_s=extra.pop("duration_s", 0.0),
        detail=detail, backend=backend, **extra,
    )  # fmt: skip


def _finished(evidence: Path, digest: str) -> Evaluation | None:
    path = evidence / REPORT_FILE
    if not path.is_file():
        return None
    try:
        report = read_json(path, EvalReport)
    except (ValueError, OSError):
        return None
    if report.candidate_hash != digest or report.status == EvalStatus.INFRA_ERROR:
        return None  # an infrastructure fault is not the candidate's verdict: run it again
    return Evaluation.model_validate(report.model_dump(exclude={"candidate_hash"}))


def _record(
    job: Job, candidate: Candidate, patched: str, digest: str, run: RunResult, backend: str, verdict: Verdict
) -> Evaluation:
    evaluation = _evaluation(
        job, verdict.status, verdict.detail, backend, tests=verdict.tests, duration_s=run.wall_s,
        exception=verdict.exception, causes=verdict.causes, cases=verdict.cases, observed=verdict.observed,
        durations=verdict.durations,
    )  # fmt: skip
    job.evidence.mkdir(parents=True, exist_ok=True)
    write_text(job.evidence / "patched.py", patched)
    write_text(job.evidence / "command.txt", " ".join(run.cmd) + "\n")
    write_text(job.evidence / "output.txt", run.output)
    write_text(job.evidence / "events.jsonl", "".join(line + "\n" for line in run.events))
    meta = {
        k: getattr(run, k)
        for k in (
            "output_bytes",
            "output_exceeded",
            "timed_out",
            "exit_code",
            "violations",
            "infra",
            "wall_s",
            "phases",
        )
    }
    write_text(
        job.evidence / "run.json",
        json.dumps(meta | {"nonce": candidate.nonce, "test_seconds": verdict.test_seconds} | _sessions(run), indent=2),
    )
    write_json(job.evidence / REPORT_FILE, EvalReport(**evaluation.model_dump(), candidate_hash=digest))
    return evaluation


def _sessions(run: RunResult) -> dict:
    """The pytest sessions of a candidate run in several: each one's tests and canaries' nonce."""
    return {"sessions": [{"tests": part.tests, "nonce": part.nonce} for part in run.parts]} if run.parts else {}


# ---------------------------------------------------------------- sessions


def new_session(
    clone: CloneRecord,
    image: ImageRecord | None,
    backend: str,
    cfg: EvaluateConfig,
    mode: str = "warm",
    modules: tuple[str, ...] = (),
):
    """A session for this repository's candidates: warm (the project's imports preloaded) or
    naive. ``modules``: those its candidates rewrite (the tasks'); with ``evaluate.compile_cache``
    the project's other modules are compiled once."""
    preload = preload_for(Path(clone.path), image.environment if image else None) if cfg.preload else ()
    private = tuple(sorted(set(modules))) if cfg.compile_cache and modules else None
    test_env = project_test_env(clone.path)
    if test_env:
        log.info("%s: the project's test runs set %s", clone.slug, ", ".join(f"{k}={v}" for k, v in test_env.items()))
    if backend == "local":
        from dlbench.harness.local import LocalSession

        return LocalSession(Path(clone.path), cfg, preload, test_env, private)
    from dlbench.harness.sandbox import DockerSession, NaiveDocker

    if image is None or not image.tag:
        raise ValueError("the docker backend needs a built project image")
    if mode == "warm":
        return DockerSession(image.tag, cfg, preload=preload, test_env=test_env, private=private)
    return NaiveDocker(image.tag, cfg, test_env=test_env)


@lru_cache(maxsize=64)
def project_test_env(checkout: str) -> dict[str, str]:
    """The variables the project's own test runs set (``deps.testenv``), read once per checkout."""
    return runner_environment(Path(checkout))


def run_pool(
    factory: Callable, items: Iterable[tuple[T, Candidate]], jobs: int
) -> Iterator[tuple[T, Candidate, RunResult]]:
    """Run candidates on up to ``jobs`` sessions, created (and started) on first use;
    results in input order, each with the payload it came with."""
    sessions: queue.Queue = queue.Queue()
    created: list = []
    lock = threading.Lock()

    def work(candidate: Candidate) -> RunResult:
        with lock:
            if sessions.empty() and len(created) < jobs:
                try:
                    created.append(factory())
                except Exception as exc:  # noqa: BLE001 - no engine, no image: infrastructure, recorded per candidate
                    if not created:
                        return RunResult(infra=f"could not create a session: {exc}"[:2000])
                else:
                    sessions.put(created[-1])
        session = sessions.get()
        try:
            return session.run(candidate)
        finally:
            sessions.put(session)

    payloads: list[T] = []
    candidates: list[Candidate] = []

    def feed() -> Iterator[Candidate]:
        for payload, candidate in items:
            payloads.append(payload)
            candidates.append(candidate)
            yield candidate

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        with sigterm_exits():
            for n, result in enumerate(pool.map(work, feed())):
                yield payloads[n], candidates[n], result
    finally:
        _close_all(created)  # first: runs still in flight end with their container
        pool.shutdown(wait=True, cancel_futures=True)
        _close_all(created)  # a session a worker created meanwhile


def _close_all(sessions: list) -> None:
    for session in list(sessions):
        session.close()


@contextmanager
def sigterm_exits() -> Iterator[None]:
    """SIGTERM (Snakemake cancelling a job, ``kill``) raises ``SystemExit`` in the main thread,
    so clean-up runs as on Ctrl-C; elsewhere (a worker thread) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
