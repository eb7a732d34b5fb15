"""Benchmark: warm containers (forking supervisor) vs one ``docker run`` per candidate.

Candidates: gold and null for every task of one sample library (``resources/sample``), run
one at a time in both modes against the same project image. Prints the verdicts' agreement,
candidates per minute in each mode and their ratio (target: warm ≥ 10× naive), and the
warm mode's per-candidate overhead: host wall time per candidate minus the time the
tests themselves report (target: ≤ 0.3 s).

    python bench/bench_harness.py [--library textkit] [--limit 16] [--samples 2]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import shutil
import tempfile
import time
from pathlib import Path

from dlbench.config import EvaluateConfig
from dlbench.harness.evaluate import evaluate_repo, evidence_dir
from dlbench.harness.sandbox import DockerSession, support_files
from dlbench.images.build import build_project_image
from dlbench.records import (
    BenchmarkTask,
    CloneRecord,
    CloneStatus,
    Evaluation,
    Generation,
    ImageStatus,
    repo_slug,
    task_id_for,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "resources" / "sample"


def definition(source: str, qualname: str) -> ast.FunctionDef:
    scope: list[ast.stmt] = ast.parse(source).body
    *classes, name = qualname.split(".")
    for cls in classes:
        scope = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls).body
    return next(n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name)


def gold_and_null(source: str, qualname: str) -> tuple[str, str]:
    node = definition(source, qualname)
    lines = source.splitlines()
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    gold = "\n".join(line[node.col_offset :] for line in lines[start - 1 : node.end_lineno]) + "\n"
    null = ast.fix_missing_locations(node)
    null.body = [ast.parse("raise NotImplementedError").body[0]]
    return gold, ast.unparse(null) + "\n"


def sample_tasks(
    library: str, checkout: Path, sha: str, limit: int, samples: int
) -> tuple[list[BenchmarkTask], list[Generation]]:
    full = f"dlbench-sample/{library}"
    rows = [json.loads(line) for line in (SAMPLE / "truth.jsonl").read_text().splitlines() if line.strip()]
    tasks, gens = [], []
    for row in [r for r in rows if r["repo"] == full][:limit]:
        gold, null = gold_and_null((checkout / row["path"]).read_text(), row["qualname"])
        task = BenchmarkTask(
            task_id=task_id_for(full, row["path"], row["qualname"]), repo=full, sha=sha, path=row["path"],
            function=row["function"], class_name=row["class_name"], signature="", prompt="", ground_truth=gold,
            tests=row["tests"], stage=None, task=None, data=None, first_added=None, last_modified=None,
            qualname=row["qualname"], slug=repo_slug(full), start_line=1, end_line=1,
        )  # fmt: skip
        tasks.append(task)
        for model, code in (("gold", gold), ("null", null)):
            gens += [
                Generation(task_id=task.task_id, model=model, technique="reference", sample=k, code=code)
                for k in range(samples)
            ]
    return tasks, gens


def timed_run(mode: str, clone, tasks, gens, image, cfg, evidence: Path) -> tuple[float, list[Evaluation]]:
    start = time.monotonic()
    results = evaluate_repo(clone, {t.task_id: t for t in tasks}, gens, image, "docker", cfg, 1, evidence, mode=mode)
    return time.monotonic() - start, results


def session_start_seconds(tag: str, cfg: EvaluateConfig) -> float:
    """Container start plus supervisor warm-up (paid once per worker in warm mode)."""
    start = time.monotonic()
    with DockerSession(tag, cfg) as session:
        session.start()
        return time.monotonic() - start


def run_seconds(evidence: Path, slug: str, gens: list[Generation], key: str) -> float:
    """Sum of one ``run.json`` figure (``test_seconds``, ``wall_s``) over the candidates."""
    return sum(json.loads((evidence_dir(evidence, slug, g) / "run.json").read_text())[key] for g in gens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", default="textkit", choices=["textkit", "visionkit", "nnkit", "tskit", "recokit"])
    parser.add_argument("--limit", type=int, default=16, help="tasks (each gives gold and null candidates)")
    parser.add_argument("--samples", type=int, default=2, help="candidates per task and reference model")
    args = parser.parse_args()
    cfg = EvaluateConfig(timeout_s=60)
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        checkout = Path(tmp) / args.library
        shutil.copytree(SAMPLE / "src" / args.library, checkout)
        digest = hashlib.sha1(b"".join(p.read_bytes() for p in sorted(checkout.rglob("*")) if p.is_file())).hexdigest()
        slug = repo_slug(f"dlbench-sample/{args.library}")
        clone = CloneRecord(
            full_name=f"dlbench-sample/{args.library}",
            slug=slug,
            clone_url="",
            path=str(checkout),
            sha=digest,
            status=CloneStatus.OK,
        )
        image = build_project_image(checkout, slug, digest, cfg.base_image, Path(tmp) / "build.log", support_files())
        if image.status != ImageStatus.OK:
            raise SystemExit(f"image build failed: {image.error}")
        tasks, gens = sample_tasks(args.library, checkout, digest, args.limit, args.samples)
        start_s = session_start_seconds(image.tag, cfg)
        print(f"{args.library}: {len(tasks)} tasks, {len(gens)} candidates (gold + null), image {image.tag}")
        warm_s, warm = timed_run("warm", clone, tasks, gens, image, cfg, Path(tmp) / "warm")
        naive_s, naive = timed_run("naive", clone, tasks, gens, image, cfg, Path(tmp) / "naive")
        n = len(gens)
        same = [w.status for w in warm] == [v.status for v in naive]
        tests_s = run_seconds(Path(tmp) / "warm", slug, gens, "test_seconds") / n
        inside_s = run_seconds(Path(tmp) / "warm", slug, gens, "wall_s") / n
        print(f"verdicts identical in both modes: {same}  (warm: {sorted({e.status.value for e in warm})})")
        passing = {m: sum(e.passed for e, g in zip(warm, gens) if g.model == m) for m in ("gold", "null")}
        print(f"passing in warm mode: gold {passing['gold']}/{n // 2}, null {passing['null']}/{n // 2}")
        print(f"warm : {warm_s:7.2f} s  {60 * n / warm_s:7.1f} candidates/min  (incl. container start)")
        print(f"naive: {naive_s:7.2f} s  {60 * n / naive_s:7.1f} candidates/min")
        print(f"throughput ratio warm/naive: {naive_s / warm_s:.1f}x (target >= 10x)")
        print(f"  warm session start {start_s:.2f} s; steady state without it: {naive_s / (warm_s - start_s):.1f}x")
        print(
            f"warm per-candidate: {warm_s / n:.3f} s wall, {tests_s:.3f} s in tests -> overhead {warm_s / n - tests_s:.3f} s (target <= 0.3 s)"
        )
        print(f"warm per-candidate inside the container (copy, fork, pytest, checks, clean-up): {inside_s:.3f} s")
        if not same:
            for g, w, v in zip(gens, warm, naive):
                if w.status != v.status:
                    print(
                        f"  differs: {g.model} {g.task_id}: warm {w.status.value} ({w.detail}) vs naive {v.status.value} ({v.detail})"
                    )


if __name__ == "__main__":
    main()
