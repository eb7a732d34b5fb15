"""Gold-validity of mined tasks on the real repositories bundled in ../shared/realworld/.

Runs the workflow (config/realworld.yaml: no crawl, the bundles as local repositories, gold
and null only) up to results/validation.csv, then prints one table per repository: tasks,
usable, the share gold-valid, and each cause of an unusable task; and per image: size,
build time, framework layer. ``--repos`` narrows the run; ``--min-valid`` makes it a check
(exit 1 below the share), as CI uses it.

    python bench/bench_realworld.py                         # all four (torch: ~8 GB per framework layer)
    python bench/bench_realworld.py --repos cleanlab --sample 40 --min-valid 0.9
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "realworld.yaml"


def run_workflow(repos: list[str], cores: int, sample: int) -> float:
    """Run the workflow for the chosen bundles (``sample``: tasks evaluated per repository,
    seeded; 0 for all); seconds taken."""
    chosen = [r for r in yaml.safe_load(CONFIG.read_text())["local_repos"] if not repos or _short(r["name"]) in repos]
    if not chosen:
        sys.exit(f"no bundled repository matches {repos}")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as narrowed:
        yaml.safe_dump({"local_repos": chosen, "evaluate": {"sample_tasks": sample}}, narrowed)
    start = time.monotonic()
    # An evaluate job that met infrastructure faults fails (its candidates are retried): once
    # more, and the other repositories go on meanwhile.
    command = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--keep-going", "--retries", "1",
               "results/validation.csv", "--configfile", str(CONFIG), narrowed.name]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT)
    Path(narrowed.name).unlink()
    if done.returncode != 0:
        sys.exit(f"the workflow failed ({done.returncode}): see logs/")
    return time.monotonic() - start


def _short(full_name: str) -> str:
    return full_name.split("/")[-1].lower()


# What a test can need that this machine may not have: the network (Hub downloads), data
# outside the repository, or hardware (a skip naming a GPU, XLA, several nodes …).
UNAVAILABLE = re.compile(
    r"^(needs network|needs data not in the repository|needs a GPU)|^skipped: .*\b(GPU|CUDA|XLA|TPU|NCCL|MPS|multi-node|distributed)\b",
    re.IGNORECASE,
)


def unavailable_here(row: pd.Series) -> bool:
    """A task left with too few tests only because every dropped test needs what the machine lacks."""
    if not str(row["reason"]).startswith("too few tests") or not isinstance(row["dropped"], str):
        return False
    causes = [entry.split(": ", 1)[-1] for entry in row["dropped"].split("; ")]
    return all(UNAVAILABLE.search(cause) for cause in causes)


def validity_table(validation: pd.DataFrame) -> pd.DataFrame:
    """Per repository: tasks, usable, share, one column per cause of an unusable task, and the
    share over the tasks this machine can run (``unavailable``: network, data, hardware)."""
    frame = validation.assign(cause=validation["reason"].fillna("").str.split(":").str[0])
    frame = frame[frame["cause"] != "not sampled"]  # a sample's share is over the tasks evaluated
    frame = frame.assign(unavailable=frame.apply(unavailable_here, axis=1))
    summary = frame.groupby("repo").agg(
        tasks=("task_id", "size"), usable=("usable", "sum"), unavailable=("unavailable", "sum")
    )
    summary["gold_valid"] = (summary["usable"] / summary["tasks"]).round(3)
    summary["valid_runnable"] = (summary["usable"] / (summary["tasks"] - summary["unavailable"])).round(3)
    causes = frame[~frame["usable"]].pivot_table(
        index="repo", columns="cause", values="task_id", aggfunc="size", fill_value=0
    )
    return summary.join(causes).fillna(0)


def image_table(repos: list[str]) -> pd.DataFrame:
    rows = []
    for path in sorted((ROOT / "results" / "images").glob("*.json")):
        image = json.loads(path.read_text())
        if repos and not any(image["repo"].lower().endswith(r) for r in repos):
            continue
        env = image.get("environment") or {}
        rows.append({
            "repo": image["repo"], "image": "repaired by gold" if path.stem.endswith(".repaired") else "built",
            "status": image["status"], "size_gb": round((image.get("size_bytes") or 0) / 1e9, 2),
            "build_s": image["build_seconds"], "framework": " ".join(env.get("frameworks", [])) or "-",
            "packages": len(env.get("lock", [])), "dropped": len(env.get("dropped", [])), "repairs": len(env.get("repairs", [])),
        })  # fmt: skip
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", nargs="*", default=[], help="bundle names (cleanlab laplace small-text ignite)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--sample", type=int, default=0, help="evaluate a seeded sample of this many tasks per repository"
    )
    parser.add_argument(
        "--min-valid", type=float, default=None, help="fail when a repository's gold-valid share is lower"
    )
    args = parser.parse_args()
    repos = [r.lower() for r in args.repos]
    seconds = run_workflow(repos, args.cores, args.sample)
    validation = pd.read_csv(ROOT / "results" / "validation.csv", keep_default_na=False, na_values=[""])
    validation = validation[validation["repo"].map(_short).isin(repos)] if repos else validation
    table = validity_table(validation)
    print(f"workflow: {seconds:.0f} s\n\n{table.to_string()}\n\n{image_table(repos).to_string(index=False)}")
    if args.min_valid is not None and (table["gold_valid"] < args.min_valid).any():
        sys.exit(f"gold-valid share below {args.min_valid}: {table['gold_valid'].to_dict()}")


if __name__ == "__main__":
    main()
