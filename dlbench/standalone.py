"""``dlbench evaluate`` from the exported benchmark alone, in any folder.

What it needs is what SWE-bench's harness needs: the benchmark (each task names its
repository and commit) and a predictions file. Per repository of the tasks evaluated, the
checkout is

1. the workflow's own (``results/repos/{slug}``), when the command runs in the workflow's
   folder and that checkout is at the tasks' commit;
2. else a checkout at the tasks' commit in ``WORK/repos/{slug}`` (its record beside it),
   made from ``--repos-from`` when that folder holds the repository (a git bundle
   ``NAME.bundle``, ``owner+name.bundle`` or ``owner__name.bundle``; a bare mirror
   ``owner+name/repo`` or ``owner/name``, as ``local_mirrors``; a checkout ``NAME/`` or
   ``owner__name/``), else cloned from ``https://github.com/owner/name``; an existing one is
   reused (``dlbench.collect.clone``).

The image is the workflow's where it settled on one (``results/images``), else built for the
checkout by the image machinery (``dlbench.images.build``: reused by content hash when the
engine has it) and recorded in ``WORK/images/{slug}.json``. ``--limit``, ``--task-ids`` and
``--repos`` narrow the tasks the way ``dlbench run`` does (``dlbench.subset``: a seeded
sample stratified by pipeline stage and repository); a prediction for another task is left
out. The scores are the report's (``dlbench.report.tables.evaluated_table``): pass@k with
its standard error and interval over the evaluated tasks, overall and per pipeline stage.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.collect.clone import clone_repo
from dlbench.config import Config, EvaluateConfig, mirror_of
from dlbench.harness.evaluate import IMAGES_DIR, REPOS_DIR, evaluate_predictions
from dlbench.records import BenchmarkTask, CloneRecord, CloneStatus, Evaluation, Prediction, Selection
from dlbench.report.render import bootstrap_of
from dlbench.report.tables import evaluated_table
from dlbench.report.taxonomy import INFRASTRUCTURE, classify
from dlbench.store import iter_jsonl, read_json, read_jsonl, write_json
from dlbench.subset import scored_task_ids

log = logging.getLogger(__name__)

WORK_DIR = Path("dlbench-work")  # default --work, under the current folder
WORKFLOW_RESULTS = Path("results")  # present: the command runs in the workflow's folder
GITHUB = "https://github.com"
CLONE_RETRIES = 2


@dataclass(frozen=True)
class Places:
    """Where the evaluation reads and writes, besides its input files."""

    work: Path = WORK_DIR  # checkouts (repos/) and image records (images/)
    repos_from: Path | None = None  # bundles, mirrors or checkouts
    evidence: Path | None = None  # per-candidate evidence (default: evidence_default)
    workflow_repos: Path = REPOS_DIR
    workflow_images: Path = IMAGES_DIR

    def evidence_root(self) -> Path:
        """``evidence``, else the workflow's ``results/evidence`` in the workflow's folder,
        else ``WORK/evidence``."""
        if self.evidence is not None:
            return self.evidence
        return WORKFLOW_RESULTS / "evidence" if WORKFLOW_RESULTS.is_dir() else self.work / "evidence"


@dataclass(frozen=True)
class Subset:
    """Which tasks are evaluated (``dlbench.subset``); empty: every task with a prediction."""

    limit: int = 0
    task_ids: Sequence[str] = ()
    repos: Sequence[str] = ()
    seed: int = 0

    def active(self) -> bool:
        return bool(self.limit or self.task_ids or self.repos)


@dataclass(frozen=True)
class Outcome:
    evaluations: list[Evaluation]  # as written to the output, in the predictions' order
    table: pd.DataFrame  # the report's long table over the evaluated tasks (tables.csv's columns)
    chosen: int | None  # tasks the subset drew (None: no subset)
    known: list[Evaluation]  # the evaluations of benchmark tasks (not of ids the benchmark lacks)

    def notes(self, ks: Iterable[int]) -> list[str]:
        """What the tables leave out, and why."""
        missing = unreported_ks(self.known, ks, self.table) if not self.table.empty else []
        return missing + unscored_models(self.known, self.table)


def evaluate_exported(
    tasks: Path, predictions: Path, out: Path, backend: str, jobs: int, config: Config, places: Places,
    subset: Subset = Subset(), gold: Path | None = None, null: Path | None = None,
) -> Outcome:  # fmt: skip
    """Check out what the predictions need, evaluate them into ``out`` (held to ``gold``'s
    evaluations of the tasks where given, within the test budget with ``null``'s) and score them."""
    benchmark = {t.task_id: t for t in iter_jsonl(tasks, BenchmarkTask)}
    chosen = chosen_tasks(benchmark.values(), subset)
    predicted = {p.task_id for p in read_jsonl(predictions, Prediction)}
    wanted = [benchmark[i] for i in sorted(predicted & set(benchmark)) if chosen is None or i in chosen]
    if chosen is not None and (unpredicted := len(chosen - predicted)):
        log.warning("%d of the %d tasks drawn have no prediction", unpredicted, len(chosen))
    clones = {slug: checkout(repo_tasks, places) for slug, repo_tasks in by_repository(wanted).items()}
    results = evaluate_predictions(
        tasks, predictions, out, backend, jobs, config.evaluate, repos_dir=places.workflow_repos,
        evidence_root=places.evidence_root(), images=config.images, downloads=config.storage.downloads_dir(),
        images_dir=places.workflow_images, only=chosen, clones={s: c for s, c in clones.items() if c is not None},
        image_records=places.work / "images", gold=gold, null=null,
    )  # fmt: skip
    table = evaluated_table(benchmark, results, config.report.k, bootstrap_of(config.report))
    known = [e for e in results if e.task_id in benchmark]
    return Outcome(results, table, None if chosen is None else len(chosen), known)


def chosen_tasks(tasks: Iterable[BenchmarkTask], subset: Subset) -> set[str] | None:
    """The ids ``subset`` draws (None: no subset), as ``dlbench run`` draws them; a task id
    the benchmark lacks is named in the log."""
    if not subset.active():
        return None
    tasks = list(tasks)
    unknown = sorted(set(subset.task_ids) - {t.task_id for t in tasks})
    if unknown:
        log.warning("%d task id(s) not in the benchmark: %s", len(unknown), ", ".join(unknown[:5]))
    cfg = EvaluateConfig(
        sample_limit=subset.limit, task_ids=list(subset.task_ids), repos=list(subset.repos), sample_seed=subset.seed
    )
    return scored_task_ids(tasks, cfg)


def by_repository(tasks: Iterable[BenchmarkTask]) -> dict[str, list[BenchmarkTask]]:
    grouped: dict[str, list[BenchmarkTask]] = {}
    for task in tasks:
        grouped.setdefault(task.slug, []).append(task)
    return grouped


# ---------------------------------------------------------------- checkouts


def checkout(tasks: Sequence[BenchmarkTask], places: Places) -> CloneRecord | None:
    """The checkout of the tasks' repository at their commit: None when the workflow's own is
    there (the harness reads it), else one in ``WORK/repos`` (made now or reused)."""
    first = tasks[0]
    shas = {t.sha for t in tasks}
    if len(shas) > 1:
        log.warning("%s: tasks at %d commits; all are evaluated at %s", first.repo, len(shas), first.sha)
    if _workflow_checkout(places.workflow_repos, first.slug, first.sha):
        return None
    source = source_in(places.repos_from, first.repo) if places.repos_from else None
    url = f"{GITHUB}/{first.repo}.git"
    if places.repos_from and source is None:
        log.warning("%s: not in %s; cloning %s", first.repo, places.repos_from, url)
    selection = Selection(
        full_name=first.repo, slug=first.slug, keep=True, reasons=[], clone_url=url, sha=first.sha,
        local_path=str(source) if source else None, license=first.license,
    )  # fmt: skip
    dest = places.work / "repos" / first.slug
    record = clone_repo(selection, dest, retries=CLONE_RETRIES)
    write_json(dest.with_name(f"{first.slug}.json"), record)
    return record


def _workflow_checkout(repos_dir: Path, slug: str, sha: str | None) -> bool:
    """The workflow cloned this repository at this commit (``results/repos/{slug}``)."""
    record = repos_dir / f"{slug}.json"
    if not (repos_dir / slug).is_dir() or not record.is_file():
        return False
    clone = read_json(record, CloneRecord)
    return clone.status == CloneStatus.OK and (sha is None or clone.sha == sha)


def source_in(folder: Path, repo: str) -> Path | None:
    """``owner/name``'s bundle, bare mirror or checkout in ``folder``, if there."""
    owner, _, name = repo.partition("/")
    slug = f"{owner}__{name}"
    for bundle in (f"{owner}+{name}.bundle", f"{slug}.bundle", f"{name}.bundle"):
        if (folder / bundle).is_file():
            return folder / bundle
    if mirror := mirror_of(str(folder), repo):
        return Path(mirror)
    for name_ in (slug, name):
        candidate = folder / name_
        if (candidate / ".git").exists() or (candidate / "HEAD").is_file():
            return candidate
    return None


# ---------------------------------------------------------------- what is printed


def unreported_ks(evaluations: Iterable[Evaluation], ks: Iterable[int], table: pd.DataFrame) -> list[str]:
    """The pass@k asked for that the table lacks, in one line: pass@k is reported only where
    every task has at least k samples."""
    reported = set(table["metric"]) if not table.empty else set()
    samples = Counter((e.model, e.technique, e.task_id, e.run) for e in evaluations if not _infrastructure(e))
    missing = [f"pass@{k}" for k in sorted(set(ks)) if f"pass@{k}" not in reported]
    if not missing or not samples:
        return []
    fewest = min(samples.values())
    return [f"{', '.join(missing)}: not reported: pass@k needs k samples of every task (the fewest here: {fewest})"]


def _infrastructure(evaluation: Evaluation) -> bool:
    """A fault of the machine, not the model's: never scored."""
    return not evaluation.passed and classify(str(evaluation.status), {}, None) == INFRASTRUCTURE


def unscored_models(evaluations: Iterable[Evaluation], table: pd.DataFrame) -> list[str]:
    """Why a model with candidates has no overall score, one line each: the report scores a
    group of tasks only where the model has a candidate, not an infrastructure fault, for
    every one of them."""
    overall = set(table.loc[table["dimension"] == "overall", "model"]) if not table.empty else set()
    tasks: dict[str, set[str]] = {}
    for e in evaluations:
        tasks.setdefault(e.model, set())
        if not _infrastructure(e):
            tasks[e.model].add(e.task_id)
    everything = set().union(*tasks.values())
    return [
        f"{model}: no overall score: scored candidates for {len(ids)} of the {len(everything)} tasks evaluated "
        "(pass@k is reported over every task; infrastructure faults are not scored)"
        for model, ids in sorted(tasks.items())
        if model not in overall
    ]
