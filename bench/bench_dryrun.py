"""Time `snakemake -n` on a synthetic paper-scale configuration and print the job count.

Paper scale: 30 repositories, 520 tasks, 7 LLMs x 3 techniques x 5 runs, plus the three
reference models. The crawl and select stages are materialised as finished so the select
checkpoint resolves and the dry run plans everything downstream.

    python bench/bench_dryrun.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from dlbench.records import RepoMeta, Selection, repo_slug
from dlbench.store import write_jsonl

ROOT = Path(__file__).resolve().parent.parent
N_REPOS, N_MODELS, TECHNIQUES, RUNS = 30, 7, ["zero-shot", "few-shot", "stage-few-shot"], 5


def paper_config(topics: list[str]) -> dict:
    """The default config scaled to the paper: 7 LLMs, 3 techniques, 5 runs each."""
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    cfg["topics"] = str(ROOT / cfg["topics"])
    cfg["repos_file"] = None
    cfg["crawl"]["snapshot"] = "paper"
    cfg["crawl"]["standin_data"] = str(ROOT / cfg["crawl"]["standin_data"])
    cfg["labels"]["sheets"] = [str(ROOT / s) for s in cfg["labels"]["sheets"]]
    cfg["evaluate"]["backend"] = "local"
    cfg["report"]["paper_results"] = str(ROOT / cfg["report"]["paper_results"])
    for i in range(N_MODELS):
        cfg["models"][f"llm-{i}"] = {
            "provider": "openai",
            "model": f"model-{i}",
            "n": 5,
            "runs": RUNS,
            "temperature": 0.8,
        }
    cfg["generate"]["models"] = ["gold", "null", "mutant", *(f"llm-{i}" for i in range(N_MODELS))]
    cfg["generate"]["techniques"] = TECHNIQUES
    return cfg


def materialise_upstream(workdir: Path, topics: list[str]) -> None:
    """Finished crawl and selection outputs for 30 repositories (oldest first: nothing reruns)."""
    crawl = workdir / "results/crawl/paper"
    repos = [
        RepoMeta(full_name=f"org{i}/dl-lib-{i}", clone_url=f"/nonexistent/{i}.git", stars=1000 - i)
        for i in range(N_REPOS)
    ]
    for topic in topics:
        write_jsonl(crawl / "topic" / f"{topic}.jsonl", repos[:2])
    write_jsonl(crawl / "repos.jsonl", repos)
    selected = [
        Selection(
            full_name=r.full_name, slug=repo_slug(r.full_name), keep=True, reasons=["synthetic"], clone_url=r.clone_url
        )
        for r in repos
    ]
    time.sleep(0.05)
    write_jsonl(workdir / "results/select/repos.jsonl", selected)
    (workdir / "results/select/repos.csv").write_text("full_name,keep\n")


def dry_run(workdir: Path, configfile: Path) -> tuple[float, int, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--snakefile",
            str(ROOT / "Snakefile"),
            "--directory",
            str(workdir),
            "--configfile",
            str(configfile),
            "--quiet",
            "rules",
            "--",
            "results/tables.csv",
        ],
        capture_output=True,
        text=True,
        cwd=workdir,
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"dry run failed:\n{proc.stdout}\n{proc.stderr}")
    match = re.search(r"^total\s+(\d+)", proc.stdout + proc.stderr, re.M)
    return seconds, int(match.group(1)) if match else -1, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="keep the synthetic workdir here")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="dlbench-dryrun-")) if not args.keep else args.keep
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DLBENCH_NO_DOCKER", "1")
    topics = [
        t.strip()
        for t in (ROOT / "resources/topics.txt").read_text().splitlines()
        if t.strip() and not t.startswith("#")
    ]
    materialise_upstream(workdir, topics)
    configfile = workdir / "paper.yaml"
    configfile.write_text(yaml.safe_dump(paper_config(topics)))
    seconds, jobs, _ = dry_run(workdir, configfile)
    tasks_note = (
        f"{N_REPOS} repositories, {N_MODELS} LLMs x {len(TECHNIQUES)} techniques x {RUNS} runs + 3 reference models"
    )
    print("| configuration | jobs planned | `snakemake -n` seconds |")
    print("|---|---|---|")
    print(f"| paper scale ({tasks_note}) | {jobs} | {seconds:.1f} |")
    print(
        f"targets: <= 2000 jobs ({'met' if 0 < jobs <= 2000 else 'MISSED'}), <= 10 s ({'met' if seconds <= 10 else 'MISSED'})"
    )
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
