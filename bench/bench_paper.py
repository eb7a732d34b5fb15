"""The DL-Bench authors' tasks here, beside their own harness's gold run (issue: paper rebuild).

Runs the workflow on ``config/dlbench-paper.yaml`` up to ``results/authors/repos.csv`` (every
repository cloned at its pin and mined; the authors' tasks of all three published forms
resolved there), then one repository at a time: its image, gold and null on a seeded sample
of its named tasks with ``dlbench evaluate`` (the same harness and sandbox as the workflow),
with ``--mined`` the workflow's own seeded sample of its mined tasks, and prints, per task,
their gold result beside ours, with the cause of every task gold does not pass here.
Evaluations land under ``results/paper/`` (a rerun reuses them, with images, clones and
mining); each repository's outcome is kept in ``docs/data/paper/`` for ``paper_table.py``.

    python bench/bench_paper.py --mined --remove-images       # the whole comparison, one command
    python bench/bench_paper.py --repos kornia cleanlab --sample 20
    python bench/bench_paper.py --overlay config/dlbench-paper-2024.yaml --repos cleanlab pyro   # the paper's snapshot
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from dlbench.config import load_config_file
from dlbench.generate.code_mutants import null_body
from dlbench.generate.techniques import REFERENCE
from dlbench.harness.code import grader_files, support_files
from dlbench.harness.validate import validation_table
from dlbench.images.build import project_repository
from dlbench.records import AuthorsTask, BenchmarkTask, Evaluation, repo_slug, task_id_for
from dlbench.store import digest, files_digest, iter_jsonl, read_jsonl

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "dlbench-paper.yaml"
OUT = ROOT / "results" / "paper"
KEPT = ROOT / "docs" / "data" / "paper"  # what a later session's tables are built from (results/ is not kept)
OVERLAY_PREFIX = "dlbench-paper-"  # config/dlbench-paper-2024.yaml keeps its runs in docs/data/paper-2024/
HARNESS = files_digest(support_files() | grader_files())  # new harness code evaluates anew
# The evaluate section every run is graded under (its test budget decides which tests null
# is judged on, as the workflow's validation does).
EVALUATE = load_config_file(CONFIG, ROOT, check_files=False).evaluate


def snakemake(*targets: str, cores: int, overlays: list[Path]) -> None:
    command = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--keep-going", *targets,
               "--configfile", str(CONFIG), *map(str, overlays)]  # fmt: skip
    if subprocess.run(command, cwd=ROOT).returncode != 0:
        print("the workflow failed for some targets: see logs/ (the rest goes on)", file=sys.stderr)


def chosen_tasks(rows: list[AuthorsTask], records: dict[str, BenchmarkTask], repo: str, sample: int, seed: int):
    """A seeded sample of the repository's named tasks that have a benchmark record, with their rows."""
    named = [r for r in rows if r.form == "named" and r.repo == repo]
    by_id = {}
    for r in (r for r in named if r.status == "present"):
        task_id = task_id_for(repo, r.path or "", r.qualname or "")  # the id its benchmark record has
        if task_id in records:
            by_id.setdefault(task_id, r)
    ids = sorted(by_id)
    picked = sorted(random.Random(seed).sample(ids, min(sample, len(ids)))) if sample else ids
    return [(records[i], by_id[i]) for i in picked], named


def evaluate(tasks: list[BenchmarkTask], name: str, model: str, jobs: int) -> list[Evaluation]:
    """Gold (the reference) or null (its body replaced by ``raise NotImplementedError``, graded
    against gold's evaluations, so run after them) through ``dlbench evaluate``; an existing
    result file is reused (``name`` holds a digest of the tasks and their tests)."""
    out = OUT / f"{name}.{model}.jsonl"
    if out.is_file():
        return read_jsonl(out, Evaluation)
    OUT.mkdir(parents=True, exist_ok=True)
    task_file, predictions = OUT / f"{name}.tasks.jsonl", OUT / f"{name}.{model}.predictions.jsonl"
    task_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    code = (lambda t: t.ground_truth) if model == "gold" else (lambda t: null_body(t.ground_truth))
    predictions.write_text(
        "".join(json.dumps({"task_id": t.task_id, "code": code(t), "model": model}) + "\n" for t in tasks)
    )
    command = [str(Path(sys.executable).with_name("dlbench")), "evaluate", "--tasks", str(task_file), "--predictions",
               str(predictions), "--out", str(out), "--backend", "docker", "--jobs", str(jobs),
               "--config", str(CONFIG)]  # fmt: skip
    if model != "gold":  # graded as the workflow grades every model but gold: against gold's runs
        command += ["--gold", str(OUT / f"{name}.gold.jsonl")]
    subprocess.run(command, cwd=ROOT, check=False)
    return read_jsonl(out, Evaluation) if out.is_file() else []


NOT_A_FAILURE = ("skipped:", "xfail:")  # how the harness words a skipped or expected-to-fail test


def no_failure(run: Evaluation) -> bool:
    """No listed test failed or errored in the run (skipped and xfailed ones are no failure:
    the authors' harness counts "all listed tests passed" from junit, where those are neither)."""
    return run.passed or (run.status.value == "fail" and all(c.startswith(NOT_A_FAILURE) for c in run.causes.values()))


def side_by_side(pairs, gold: list[Evaluation], null: list[Evaluation]) -> pd.DataFrame:
    """Per task: their gold result beside ours, raw (no test of any run failed, as theirs counts)
    and after the harness's test set (tests dropped with a cause), and whether null fails."""
    tasks = [t for t, _ in pairs]
    ours = validation_table(tasks, gold, null, min_tests=1, cfg=EVALUATE).set_index("task_id")
    rows = []
    for task, row in pairs:
        v = ours.loc[task.task_id]
        runs = [e for e in gold if e.task_id == task.task_id]
        rows.append({
            "source_id": row.source_id, "task_id": task.task_id, "tests": "authors'" if row.authors_tests else "mined",
            "authors_gold": row.authors_gold, "gold_no_failure": bool(runs) and all(map(no_failure, runs)),
            "gold_here": v["gold_status"], "usable_here": bool(v["usable"]), "cause": v["reason"],
            "dropped": v["dropped"],
        })  # fmt: skip
    return pd.DataFrame(rows)


def median_seconds(runs: list[Evaluation]) -> float | None:
    return float(pd.Series([e.duration_s for e in runs]).median()) if runs else None


def median_test_seconds(runs: list[Evaluation]) -> float | None:
    """The tests' own time (setup, call, teardown of every node) of the median run: what a
    candidate costs beyond the harness's overhead (issue 25's projection)."""
    return float(pd.Series([sum(e.durations.values()) for e in runs]).median()) if runs else None


def timed(table: pd.DataFrame, gold: list[Evaluation], null: list[Evaluation]) -> pd.DataFrame:
    """Per task: gold's and null's median wall time, and the tests' own share of gold's."""
    ids = table.get("task_id", pd.Series(dtype=str))  # a repository without named tasks: no rows
    return table.assign(
        gold_s=[median_seconds([e for e in gold if e.task_id == t]) for t in ids],
        null_s=[median_seconds([e for e in null if e.task_id == t]) for t in ids],
        gold_tests_s=[median_test_seconds([e for e in gold if e.task_id == t]) for t in ids],
    )


def mined_sample(repo: str, cores: int, overlays: list[Path]) -> pd.DataFrame:
    """Gold validity of the workflow's own seeded sample of the repository's mined tasks
    (``evaluate.sample_tasks`` of the paper config): gold and null through the workflow's rules."""
    slug = repo_slug(repo)
    paths = [ROOT / f"results/evaluations/{model}/{REFERENCE}/{slug}.jsonl" for model in ("gold", "null")]
    snakemake(*(str(p.relative_to(ROOT)) for p in paths), cores=cores, overlays=overlays)
    gold, null = (read_jsonl(p, Evaluation) if p.is_file() else [] for p in paths)
    sampled = {e.task_id for e in gold}
    tasks = [t for t in iter_jsonl(ROOT / "results/benchmark/dlbench.jsonl", BenchmarkTask) if t.task_id in sampled]
    table = validation_table(tasks, gold, null, min_tests=1, cfg=EVALUATE)
    return timed(table[["task_id", "usable", "reason"]], gold, null)


def image_tag(repo: str) -> str | None:
    """The tag of the repository's built image (its recipe's hash): None before one is built."""
    path = ROOT / "results/images" / f"{repo_slug(repo)}.json"
    return json.loads(path.read_text()).get("tag") if path.is_file() else None


def remove_images(repo: str) -> None:
    """The repository's project images (built, repaired by gold, and those of the repair rounds
    before them: sparseml's four filled the disk) and the framework layers its records name."""
    import docker

    client = docker.from_env()
    slug = repo_slug(repo)
    paths = [ROOT / "results/images" / f"{slug}{suffix}.json" for suffix in ("", ".repaired")]
    records = [json.loads(p.read_text()) for p in paths if p.is_file()]
    rounds = {tag for image in client.images.list(name=project_repository(slug)) for tag in image.tags}
    for tag in rounds | {t for r in records for t in (r.get("tag"), r.get("framework_image")) if t}:
        try:
            client.images.remove(tag, force=True)
        except docker.errors.ImageNotFound:
            pass


def kept_folder(overlays: list[Path]) -> Path:
    """docs/data/paper/ for the side by side's own pins; an overlay's runs (another snapshot)
    beside it, named after the last overlay: dlbench-paper-2024.yaml -> docs/data/paper-2024/."""
    if not overlays:
        return KEPT
    return KEPT.with_name(f"paper-{overlays[-1].stem.removeprefix(OVERLAY_PREFIX)}")


def keep(repo: str, table: pd.DataFrame, mined: pd.DataFrame | None, seconds: float, kept: Path, reused: bool) -> None:  # fmt: skip
    """The repository's results under ``kept`` (results/ does not outlive the machine): the
    side by side per task, the mined sample's verdicts, and the image's record with the wall
    time of the run that computed them (``reused``: this one only read them back)."""
    kept.mkdir(parents=True, exist_ok=True)
    slug = repo_slug(repo)
    table.to_csv(kept / f"{slug}.csv", index=False)
    if mined is not None:
        mined.to_csv(kept / f"{slug}.mined.csv", index=False)
    image = ROOT / "results/images" / f"{slug}.json"
    record = json.loads(image.read_text()) if image.is_file() else {}
    fields = ("status", "error", "tag", "build_seconds", "size_bytes", "framework_image", "extensions")
    environment = record.get("environment") or {}
    earlier = json.loads((kept / f"{slug}.image.json").read_text()) if (kept / f"{slug}.image.json").is_file() else {}
    if reused and earlier.get("commit") == record.get("sha") and earlier.get("seconds"):
        seconds = earlier["seconds"]
    summary = {k: record.get(k) for k in fields} | {
        "seconds": round(seconds), "commit": record.get("sha"),
        "python": environment.get("python_version"), "frameworks": environment.get("frameworks"),
    }  # fmt: skip
    (kept / f"{slug}.image.json").write_text(json.dumps(summary, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", nargs="+", help="short names (kornia, cleanlab, ...; default: every repository "
                        "with a named task present)")  # fmt: skip
    parser.add_argument("--sample", type=int, default=20, help="named tasks per repository (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mined", action="store_true", help="also the workflow's seeded sample of mined tasks")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--remove-images", action="store_true",
                        help="remove each repository's images once its runs are done (a small disk: torch images are 6-8 GB)")  # fmt: skip
    parser.add_argument("--overlay", type=Path, nargs="+", default=[],
                        help="config files read on top of config/dlbench-paper.yaml (another snapshot: "
                        "config/dlbench-paper-2024.yaml; run it in a work tree of its own)")  # fmt: skip
    args = parser.parse_args()
    kept = kept_folder(args.overlay)

    start = time.monotonic()
    snakemake("results/authors/repos.csv", cores=args.cores, overlays=args.overlay)
    rows = read_jsonl(ROOT / "results/authors/tasks.jsonl", AuthorsTask)
    records = {t.task_id: t for t in read_jsonl(ROOT / "results/authors/dlbench.jsonl", BenchmarkTask)}
    full = {r.repo.rpartition("/")[2].lower(): r.repo for r in rows if r.repo}
    every = sorted({r.repo for r in rows if r.repo and r.form == "named" and r.status == "present"})
    repos = [full[name.lower()] for name in args.repos if name.lower() in full] if args.repos else every
    tables = []
    for repo in repos:
        began = time.monotonic()
        snakemake(f"results/images/{repo_slug(repo)}.json", cores=args.cores, overlays=args.overlay)
        pairs, named = chosen_tasks(rows, records, repo, args.sample, args.seed)
        tasks = [t for t, _ in pairs]
        # a new image (another recipe) evaluates anew
        key = digest([[(t.task_id, t.tests) for t in tasks], HARNESS, image_tag(repo)])[:8]
        name = f"{repo_slug(repo)}-s{args.sample}-{args.seed}-{key}"
        reused = all((OUT / f"{name}.{model}.jsonl").is_file() for model in ("gold", "null"))
        gold, null = evaluate(tasks, name, "gold", 2), evaluate(tasks, name, "null", 2)
        table = timed(side_by_side(pairs, gold, null).assign(repo=repo), gold, null)
        if len(table):  # a repository with no named task at its pin (DeepReg) has only its mined sample
            tables.append(table)
        mined = mined_sample(repo, args.cores, args.overlay) if args.mined else None
        keep(repo, table, mined, time.monotonic() - began, kept, reused)
        if mined is not None:
            print(f"mined sample: {int(mined['usable'].sum())} of {len(mined)} usable")
        if args.remove_images:
            remove_images(repo)
        print(f"\n{repo}: {len(named)} named tasks, {sum(r.status == 'present' for r in named)} present, "
              f"{len(pairs)} sampled; {time.monotonic() - began:.0f} s")  # fmt: skip
        print(table.drop(columns=["repo", "dropped"], errors="ignore").to_string(index=False, max_colwidth=90))
    if tables:
        every = pd.concat(tables)
        chosen = "+".join(repo_slug(repo) for repo in repos)
        every.to_csv(OUT / f"side_by_side-{chosen}-s{args.sample}-{args.seed}.csv", index=False)
        by_repo = every.groupby("repo").agg(
            sampled=("task_id", "size"),
            authors_pass=("authors_gold", lambda s: int((s == "pass").sum())),
            gold_no_failure=("gold_no_failure", "sum"),
            gold_passes_here=("gold_here", lambda s: int((s == "pass").sum())),
            usable_here=("usable_here", "sum"),
        )
        print("\n" + by_repo.to_string())
    print(f"\ntotal {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
