"""Benchmark: warm start on a torch project, with and without preloading its heavy imports.

A tiny torch library (four functions, three tests each) is built into a project image
(``torch`` from PyPI); gold and null candidates of every task run one at a time in warm
containers, once with ``evaluate.preload`` (the supervisor imports torch once before
forking) and once without (every candidate's pytest imports torch itself). Prints, per
mode, the session start (container + supervisor warm-up), the steady-state wall time per
candidate, the time the tests themselves report, and the per-candidate overhead: wall
time beyond the tests' own (target with preloading: <= 0.5 s), and whether both modes gave
the same verdicts.

With ``--tasks`` the same two modes run gold on a real repository's tasks instead (a task
file ``bench_paper.py`` wrote, its clone and image records from the workflow's
``results/``, the paper config's limits): GPflow's TensorFlow is the case. ``--lever
compile_cache`` compares the project's modules compiled once by the warm parent with each
child compiling them (``evaluate.compile_cache``), preloading on in both; each mode also
reports the median of the runs' pytest start-up and collection (``run.json`` ``phases``).

    python bench/bench_preload.py [--samples 3]
    python bench/bench_preload.py --tasks results/paper/GPflow__GPflow-s20-0-<key>.tasks.jsonl
    python bench/bench_preload.py --lever compile_cache --tasks results/paper/<slug>-s20-0-<key>.tasks.jsonl
    python bench/bench_preload.py --lever harness --base HEAD --tasks results/paper/<slug>-s20-0-<key>.tasks.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

from dlbench.config import EvaluateConfig, load_config_file
from dlbench.harness.code import PROTOCOL, SHIPPED_PROTOCOL, SUPPORT_FILES
from dlbench.harness.evaluate import evaluate_repo, evidence_dir
from dlbench.harness.run import preload_for
from dlbench.harness.sandbox import DockerSession, support_files
from dlbench.images.build import build_project_image, docker_client
from dlbench.images.layers import SUPPORT_DIR
from dlbench.records import BenchmarkTask, CloneRecord, CloneStatus, Generation, ImageRecord, ImageStatus
from dlbench.store import files_digest, read_jsonl

ROOT = Path(__file__).resolve().parents[1]

SLUG = "bench__tinytorch"
FUNCTIONS = {
    "softmax": """\
        def softmax(x, dim=-1):
            shifted = x - x.max(dim=dim, keepdim=True).values
            e = shifted.exp()
            return e / e.sum(dim=dim, keepdim=True)
        """,
    "normalize": """\
        def normalize(x, eps=1e-6):
            return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + eps)
        """,
    "gelu": """\
        def gelu(x):
            return 0.5 * x * (1 + torch.erf(x / 2 ** 0.5))
        """,
    "mse": """\
        def mse(a, b):
            return ((a - b) ** 2).mean()
        """,
}
TESTS = {
    "softmax": ["assert torch.allclose(softmax(X).sum(-1), torch.ones(4))",
                "assert torch.allclose(softmax(X), torch.softmax(X, -1))",
                "assert torch.isfinite(softmax(torch.tensor([1000.0, 1000.0]))).all()"],
    "normalize": ["assert torch.allclose(normalize(X).mean(-1), torch.zeros(4), atol=1e-5)",
                  "assert normalize(X).shape == X.shape",
                  "assert torch.allclose(normalize(X).std(-1), torch.ones(4), atol=1e-3)"],
    "gelu": ["assert torch.allclose(gelu(X), torch.nn.functional.gelu(X), atol=1e-6)",
             "assert gelu(torch.zeros(1)).item() == 0",
             "assert gelu(torch.tensor([10.0])).item() > 9.99"],
    "mse": ["assert mse(X, X).item() == 0",
            "assert torch.allclose(mse(X, X + 1), torch.tensor(1.0))",
            "assert torch.allclose(mse(X, torch.zeros_like(X)), torch.nn.functional.mse_loss(X, torch.zeros_like(X)))"],
}  # fmt: skip


def project_files() -> dict[str, str]:
    ops = "import torch\n\n\n" + "\n\n".join(textwrap.dedent(src) for src in FUNCTIONS.values())
    files = {"requirements.txt": "torch\n", "tinytorch/__init__.py": "", "tinytorch/ops.py": ops}
    for name, checks in TESTS.items():
        body = "".join(f"\n\ndef test_{name}_{i}():\n    {check}\n" for i, check in enumerate(checks))
        files[f"tests/test_{name}.py"] = (
            f"import torch\n\nfrom tinytorch.ops import {name}\n\nX = torch.randn(4, 6)\n{body}"
        )
    return files


def tasks_and_candidates(sha: str, samples: int) -> tuple[list[BenchmarkTask], list[Generation]]:
    tasks, gens = [], []
    for name, source in FUNCTIONS.items():
        gold = textwrap.dedent(source)
        tests = [f"tests/test_{name}.py::test_{name}_{i}" for i in range(len(TESTS[name]))]
        task = BenchmarkTask(
            task_id=f"{SLUG}:tinytorch/ops.py:{name}", repo="bench/tinytorch", sha=sha, path="tinytorch/ops.py",
            function=name, class_name=None, signature="", prompt="", ground_truth=gold, tests=tests, stage=None,
            task=None, data=None, first_added=None, last_modified=None, qualname=name, slug=SLUG, start_line=1, end_line=1,
        )  # fmt: skip
        tasks.append(task)
        null = gold.split("\n")[0] + "\n    raise NotImplementedError\n"
        for model, code in (("gold", gold), ("null", null)):
            gens += [
                Generation(task_id=task.task_id, model=model, technique="reference", sample=k, code=code)
                for k in range(samples)
            ]
    return tasks, gens


def session_start_seconds(tag: str, cfg: EvaluateConfig, checkout: Path) -> tuple[float, list[str]]:
    """Container start plus supervisor warm-up, and the modules it preloaded."""
    start = time.monotonic()
    with DockerSession(tag, cfg, preload=preload_for(checkout) if cfg.preload else ()) as session:
        ready = session.start()
        return time.monotonic() - start, ready["preloaded"]


def measure(mode: str, cfg: EvaluateConfig, clone: CloneRecord, tasks, gens, image, evidence: Path) -> dict:
    start_s, preloaded = session_start_seconds(image.tag, cfg, Path(clone.path))
    began = time.monotonic()
    results = evaluate_repo(clone, {t.task_id: t for t in tasks}, gens, image, "docker", cfg, 1, evidence)
    total = time.monotonic() - began
    n = len(gens)
    runs = [evidence_dir(evidence, clone.slug, g) / "run.json" for g in gens]
    done = [json.loads(r.read_text()) for r in runs if r.is_file()]
    tests = sum(d["test_seconds"] for d in done) / n
    collect = [d["phases"]["collect"] for d in done if "collect" in (d.get("phases") or {})]
    per_candidate = (total - start_s) / n
    return {
        "mode": mode, "preloaded": preloaded, "start_s": start_s, "per_candidate_s": per_candidate,
        "tests_s": tests, "overhead_s": per_candidate - tests, "results": results,
        "collect_s": statistics.median(collect) if collect else float("nan"),
    }  # fmt: skip


def report(row: dict) -> None:
    print(
        f"{row['mode']:>10}: session start {row['start_s']:6.2f} s | per candidate {row['per_candidate_s']:.3f} s wall, "
        f"{row['tests_s']:.3f} s in tests -> overhead {row['overhead_s']:.3f} s, pytest start-up + collection "
        f"{row['collect_s']:.3f} s (median)   (preloaded: {', '.join(row['preloaded'])})"
    )


def compare(cfg: EvaluateConfig, clone: CloneRecord, tasks, gens, image, work: Path, lever: str = "preload") -> None:
    """Both modes of ``lever`` (an ``evaluate`` switch) on the same candidates, their figures,
    and whether the verdicts agree."""
    rows = [
        measure(mode, cfg.model_copy(update={lever: on}), clone, tasks, gens, image, work / mode.replace(" ", "-"))
        for mode, on in ((lever, True), (f"no {lever}", False))
    ]
    for row in rows:
        report(row)
    warm, cold = rows
    print(f"overhead saved by {lever}: {cold['overhead_s'] - warm['overhead_s']:.3f} s per candidate "
          f"({cold['overhead_s'] / warm['overhead_s']:.1f}x less); start-up + collection "
          f"{cold['collect_s'] / warm['collect_s']:.2f}x shorter; target overhead <= 0.5 s")  # fmt: skip
    statuses = [[e.status for e in row["results"]] for row in rows]
    passing = {m: sum(e.passed for e, g in zip(warm["results"], gens) if g.model == m) for m in ("gold", "null")}
    print(f"verdicts identical in both modes: {statuses[0] == statuses[1]}; gold passes {passing['gold']}, "
          f"null {passing['null']} of {sum(g.model == 'gold' for g in gens)} gold candidates")  # fmt: skip


def workflow_records(slug: str) -> tuple[CloneRecord, ImageRecord]:
    """The repository's clone and image records as the workflow left them in ``results/``."""
    clone = CloneRecord.model_validate_json((ROOT / "results/repos" / f"{slug}.json").read_text())
    return clone, ImageRecord.model_validate_json((ROOT / "results/images" / f"{slug}.json").read_text())


def with_support_files(image: ImageRecord, files: dict[str, bytes], work: Path) -> ImageRecord:
    """``image`` with ``files`` as its trusted support folder (a thin layer on top of it)."""
    context = work / f"support-{files_digest(files)[:12]}"
    for name, data in files.items():
        (context / name).parent.mkdir(parents=True, exist_ok=True)
        (context / name).write_bytes(data)
    (context / "Dockerfile").write_text(f"FROM {image.tag}\nCOPY . {SUPPORT_DIR}/\n")  # root's, as built
    tag = f"dlbench/bench-harness:{files_digest(files)[:12]}"
    built, _ = docker_client().images.build(path=str(context), tag=tag, rm=True)
    return image.model_copy(update={"tag": tag, "image_id": built.id})


def harness_at(revision: str) -> dict[str, bytes]:
    """The support files as they were at a git revision (the names ``support_files`` ships)."""

    def show(rel: str) -> bytes:
        return subprocess.run(["git", "show", f"{revision}:{rel}"], cwd=ROOT, capture_output=True, check=True).stdout

    files = {name: show(f"dlbench/harness/shipped/{name}") for name in SUPPORT_FILES}
    return files | {SHIPPED_PROTOCOL: show(f"dlbench/harness/{PROTOCOL}")}


def compare_harness(cfg: EvaluateConfig, clone: CloneRecord, tasks, gens, image, work: Path, base: str) -> None:
    """The harness's support files at ``base`` and as they are now, in the same project image
    (the host's code is today's for both), run in the order A B B A so that a drift in the
    machine's load weighs on both alike: their mean figures, and whether the verdicts agree."""
    images = {f"harness at {base}": with_support_files(image, harness_at(base), work)}
    images["harness now"] = with_support_files(image, support_files(), work)
    order = [*images, *reversed(images)]
    runs = [measure(mode, cfg, clone, tasks, gens, images[mode], work / f"ev{i}") for i, mode in enumerate(order)]
    rows = [mean_row([r for r in runs if r["mode"] == mode]) for mode in images]
    for row in rows:
        report(row)
    before, now = rows
    print(f"overhead beyond the tests: {before['overhead_s']:.3f} -> {now['overhead_s']:.3f} s per candidate; "
          f"wall {before['per_candidate_s']:.3f} -> {now['per_candidate_s']:.3f} s "
          f"({before['per_candidate_s'] / now['per_candidate_s']:.2f}x); start-up + collection "
          f"{before['collect_s']:.3f} -> {now['collect_s']:.3f} s (median)")  # fmt: skip
    verdicts = {tuple((e.status, e.passed) for e in r["results"]) for r in runs}
    print(f"verdicts identical in all {len(runs)} runs: {len(verdicts) == 1}")


def mean_row(runs: list[dict]) -> dict:
    """One mode's runs as one row: the mean of each figure."""
    figures = ("start_s", "per_candidate_s", "tests_s", "overhead_s", "collect_s")
    return runs[0] | {key: statistics.mean(r[key] for r in runs) for key in figures}


def real_repository(task_file: Path, samples: int, lever: str, base: str | None = None) -> None:
    """Gold of a real repository's tasks, both modes of ``lever``, in its workflow image."""
    tasks = read_jsonl(task_file, BenchmarkTask)
    slug = tasks[0].slug
    clone, image = workflow_records(slug)
    cfg = load_config_file(ROOT / "config/dlbench-paper.yaml", ROOT).evaluate
    gens = [
        Generation(task_id=t.task_id, model="gold", technique="reference", sample=k, code=t.ground_truth)
        for t in tasks
        for k in range(samples)
    ]
    print(f"{slug}: {len(tasks)} tasks, {len(gens)} gold candidates per mode, image {image.tag}")
    with tempfile.TemporaryDirectory(prefix="bench-preload-") as tmp:
        if lever == "harness":
            return compare_harness(cfg, clone, tasks, gens, image, Path(tmp), base or "HEAD")
        compare(cfg, clone, tasks, gens, image, Path(tmp), lever)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3, help="candidates per task and reference model")
    parser.add_argument("--tasks", type=Path, help="a real repository's task file (JSON Lines of BenchmarkTask)")
    parser.add_argument("--lever", choices=["preload", "compile_cache", "harness"], default="preload")
    parser.add_argument("--base", default="HEAD", help="--lever harness: the git revision compared with the files now")
    args = parser.parse_args()
    if args.tasks:
        return real_repository(args.tasks, args.samples, args.lever, args.base)
    if args.lever == "harness":
        parser.error("--lever harness needs --tasks")
    with tempfile.TemporaryDirectory(prefix="bench-preload-") as tmp:
        checkout = Path(tmp) / "tinytorch"
        for rel, text in project_files().items():
            (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
            (checkout / rel).write_text(text)
        sha = hashlib.sha1(json.dumps(project_files(), sort_keys=True).encode()).hexdigest()
        clone = CloneRecord(
            full_name="bench/tinytorch", slug=SLUG, clone_url="", path=str(checkout), sha=sha, status=CloneStatus.OK
        )
        cfg = EvaluateConfig(timeout_s=120, memory_mb=2048)
        image = build_project_image(checkout, SLUG, sha, cfg.base_image, Path(tmp) / "build.log", support_files())
        if image.status != ImageStatus.OK:
            raise SystemExit(f"image build failed: {image.error}")
        tasks, gens = tasks_and_candidates(sha, args.samples)
        print(f"tinytorch: {len(tasks)} tasks, {len(gens)} candidates (gold + null) per mode, image {image.tag}")
        compare(cfg, clone, tasks, gens, image, Path(tmp), args.lever)


if __name__ == "__main__":
    main()
