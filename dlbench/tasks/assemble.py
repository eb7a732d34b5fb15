"""Assemble the benchmark: merged labels + functions + clones → dlbench.jsonl/.parquet + repos.csv.

Post-mining repository criteria of ``SelectConfig`` (``min_tests_per_function``,
``min_docstring_coverage``) are applied here, because only mining knows them; every
repository gets a row with its figures and reasons in ``repos.csv``. Output is sorted by
task id and carries no timestamps, so assembling the same inputs twice gives identical
files. The dataset card is written later, from these files and the report tables
(``dlbench.report.card``).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dlbench.config import SelectConfig
from dlbench.records import BenchmarkTask, CloneRecord, CloneStatus, FunctionRecord, MergedLabel, repo_slug
from dlbench.store import atomic_path, read_json, read_jsonl, write_jsonl, write_text
from dlbench.tasks.repos import RepoRow, repos_csv

log = logging.getLogger(__name__)


def repo_verdict(clone: CloneRecord, functions: Sequence[FunctionRecord], tasks: int, cfg: SelectConfig) -> RepoRow:
    """Keep or drop one repository by the post-mining criteria, with every reason."""
    n = len(functions)
    avg_tests = sum(len(f.tests) for f in functions) / n if n else 0.0
    coverage = sum(bool((f.docstring or "").strip()) for f in functions) / n if n else 0.0
    reasons = []
    if clone.status != CloneStatus.OK:
        reasons.append(f"clone failed: {clone.error or clone.status}")
    elif not n:
        reasons.append("no functions under test")
    else:
        if avg_tests < cfg.min_tests_per_function:
            reasons.append(
                f"{avg_tests:.2f} tests per function < min_tests_per_function {cfg.min_tests_per_function:g}"
            )
        if coverage < cfg.min_docstring_coverage:
            reasons.append(f"docstring coverage {coverage:.2f} < min_docstring_coverage {cfg.min_docstring_coverage:g}")
    keep = not reasons
    return RepoRow(
        repo=clone.full_name,
        slug=clone.slug,
        sha=clone.sha,
        license=clone.license,
        clone_status=str(clone.status),
        functions=n,
        avg_tests_per_function=round(avg_tests, 4),
        docstring_coverage=round(coverage, 4),
        tasks=tasks if keep else 0,
        keep=keep,
        reasons="; ".join(reasons),
    )


# Fields a task copies unchanged from its function record.
_FROM_FUNCTION = (set(FunctionRecord.model_fields) & set(BenchmarkTask.model_fields)) - {
    "schema_version",
    "sha",
    "tests",
}


def benchmark_task(fn: FunctionRecord, label: MergedLabel, clone: CloneRecord | None) -> BenchmarkTask:
    return task_from_function(
        fn,
        sha=(clone.sha if clone else None) or fn.sha,  # the pinned checkout the harness builds
        license=clone.license if clone else None,
        prompt=label.prompt,
        prompt_source=label.prompt_source,
        stage=label.stage,
        task=label.task,
        data=label.data,
    )


def task_from_function(fn: FunctionRecord, *, sha: str | None, **given: object) -> BenchmarkTask:
    """A task from its function record and what the record does not hold (prompt, labels, ...)."""
    return BenchmarkTask(
        **fn.model_dump(include=_FROM_FUNCTION),
        sha=sha,
        ground_truth=fn.source,
        tests=sorted(fn.tests),
        slug=repo_slug(fn.repo),
        **given,
    )


@dataclass
class Assembly:
    tasks: list[BenchmarkTask]
    repos: list[RepoRow]
    unlabelled: list[str]  # functions with no merged label (listed, not benchmarked)


def assemble(
    labels: Sequence[MergedLabel], functions: Sequence[FunctionRecord], clones: Sequence[CloneRecord], cfg: SelectConfig
) -> Assembly:
    """The kept tasks of the kept repositories, sorted by task id, and every repository's verdict."""
    by_label = {label.task_id: label for label in labels}
    by_repo: dict[str, list[FunctionRecord]] = defaultdict(list)
    for fn in functions:
        by_repo[repo_slug(fn.repo)].append(fn)
    clone_of = {c.slug: c for c in clones}
    unknown = sorted(set(by_repo) - set(clone_of))
    if unknown:
        raise ValueError(f"functions of repositories without a clone record: {', '.join(unknown)}")
    tasks, repos, unlabelled = [], [], []
    for slug in sorted(clone_of):
        fns = sorted(by_repo.get(slug, []), key=lambda f: f.task_id)
        unlabelled += [f.task_id for f in fns if f.task_id not in by_label]
        kept = [
            benchmark_task(f, by_label[f.task_id], clone_of[slug])
            for f in fns
            if f.task_id in by_label and by_label[f.task_id].keep
        ]
        verdict = repo_verdict(clone_of[slug], fns, len(kept), cfg)
        repos.append(verdict)
        if verdict.keep:
            tasks += kept
    if unlabelled:
        log.warning("%d functions have no merged label and are left out, e.g. %s", len(unlabelled), unlabelled[0])
    stray = sorted(set(by_label) - {f.task_id for f in functions})
    if stray:
        log.warning("%d merged labels name no mined function, e.g. %s", len(stray), stray[0])
    return Assembly(sorted(tasks, key=lambda t: t.task_id), repos, unlabelled)


_ARROW_TYPES = {"tests": pa.list_(pa.string()), "first_added": pa.date32(), "last_modified": pa.date32()}
_ARROW_INTS = {"schema_version", "start_line", "end_line"}


def tasks_table(tasks: Sequence[BenchmarkTask]) -> pa.Table:
    """The benchmark as an Arrow table with a fixed schema (stable even when a column is all null)."""
    names = list(BenchmarkTask.model_fields)
    schema = pa.schema([(n, _ARROW_TYPES.get(n, pa.int64() if n in _ARROW_INTS else pa.string())) for n in names])
    rows = [t.model_dump(mode="python") for t in tasks]
    return pa.Table.from_pylist(rows, schema=schema)


def write_parquet(path: str | Path, table: pa.Table) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


@dataclass(frozen=True)
class BenchmarkPaths:
    jsonl: Path
    parquet: Path
    schema: Path
    repos: Path


def write_benchmark(assembly: Assembly, out: BenchmarkPaths) -> None:
    write_jsonl(out.jsonl, assembly.tasks)
    write_parquet(out.parquet, tasks_table(assembly.tasks))
    write_text(out.schema, json.dumps(BenchmarkTask.model_json_schema(), indent=2) + "\n")
    write_text(out.repos, repos_csv(assembly.repos))


def assemble_files(
    merged_path: str | Path,
    function_paths: Sequence[str | Path],
    clone_paths: Sequence[str | Path],
    out: BenchmarkPaths,
    cfg: SelectConfig,
) -> Assembly:
    """Rule entry point: ``results/labels/merged.jsonl`` + mining + clones → ``results/benchmark/``."""
    labels = read_jsonl(merged_path, MergedLabel)
    functions = [f for path in function_paths for f in read_jsonl(path, FunctionRecord)]
    clones = [read_json(path, CloneRecord) for path in clone_paths]
    assembly = assemble(labels, functions, clones, cfg)
    write_benchmark(assembly, out)
    dropped = [r.slug for r in assembly.repos if not r.keep]
    log.info(
        "benchmark: %d tasks; repositories dropped after mining: %s", len(assembly.tasks), ", ".join(dropped) or "none"
    )
    return assembly
