"""The DL-Bench side by side at two snapshots: what changes between the paper's pin and ours.

Reads what ``bench_paper.py`` kept for the side by side's own pins (``docs/data/paper/``,
2025-06-04) and for another snapshot's run (``--other``, default ``docs/data/paper-2024/``:
``bench_paper.py --overlay config/dlbench-paper-2024.yaml``), and prints per repository run
at both: the two commits, the other snapshot's image, how many sampled named tasks gold
passes here at each, and every task whose verdict differs, with its cause. Nothing is run.

    python bench/paper_snapshots.py > /tmp/snapshots.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
KEPT = ROOT / "docs" / "data" / "paper"


def _kept(folder: Path, slug: str) -> tuple[pd.DataFrame, dict]:
    table = pd.read_csv(folder / f"{slug}.csv")
    image = folder / f"{slug}.image.json"
    return table, json.loads(image.read_text()) if image.is_file() else {}


def image_cell(record: dict) -> str:
    """Built or why not: build time, size with its framework layer, Python and framework pins."""
    if record.get("status") != "ok":
        return f"no: {(record.get('error') or '-')[:80]}"
    pins = ", ".join(record.get("frameworks") or []) or "no framework layer"
    python = f"Python {record['python']}, " if record.get("python") else ""
    return f"{record.get('build_seconds', 0):.0f} s, {(record.get('size_bytes') or 0) / 1e9:.1f} GB; {python}{pins}"


def passes(table: pd.DataFrame) -> str:
    return f"{int((table['gold_here'] == 'pass').sum())} of {len(table)}"


def differences(ours: pd.DataFrame, other: pd.DataFrame) -> list[str]:
    """Tasks sampled at both pins whose gold verdict or usability here differs, or sampled at one only."""
    both = ours.merge(other, on="task_id", how="outer", suffixes=("_ours", "_other"), indicator=True)
    lines = []
    for _, row in both.iterrows():
        function = row["task_id"].split(":", 1)[1]
        if row["_merge"] != "both":
            lines.append(f"`{function}`: sampled at the {'2025' if row['_merge'] == 'left_only' else 'other'} pin only")
        elif row["gold_here_ours"] != row["gold_here_other"]:
            cause = row["cause_other"] if row["gold_here_other"] != "pass" else row["cause_ours"]
            lines.append(
                f"`{function}`: gold {row['gold_here_other']} at the other pin, {row['gold_here_ours']} at 2025"
                + (f" ({str(cause)[:160]})" if isinstance(cause, str) else "")
            )
        elif row["usable_here_ours"] != row["usable_here_other"]:
            cause = row["cause_ours"] if not row["usable_here_ours"] else row["cause_other"]
            where = "2025" if not row["usable_here_ours"] else "the other pin"
            lines.append(f"`{function}`: gold passes at both, usable only at one; at {where}: {str(cause)[:160]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--other", type=Path, default=KEPT.with_name("paper-2024"), help="the other snapshot's kept runs"
    )
    args = parser.parse_args()
    print("| repository | commit, other pin | commit 2025-06-04 | image at the other pin | named sampled, other / 2025 "
          "| gold passes here, other pin | gold passes here, 2025 | their harness (2025 code) |")  # fmt: skip
    print("|---|---|---|---|---:|---:|---:|---:|")
    notes = []
    for path in sorted(args.other.glob("*.image.json")):
        slug = path.name.removesuffix(".image.json")
        if not (KEPT / f"{slug}.csv").is_file() or not (args.other / f"{slug}.csv").is_file():
            continue
        other, other_image = _kept(args.other, slug)
        ours, our_image = _kept(KEPT, slug)
        theirs = int((ours["authors_gold"] == "pass").sum())
        print(f"| {slug.replace('__', '/')} | {str(other_image.get('commit'))[:7]} | {str(our_image.get('commit'))[:7]} "
              f"| {image_cell(other_image)} | {len(other)} / {len(ours)} | {passes(other)} | {passes(ours)} "
              f"| {theirs} of {len(ours)} |")  # fmt: skip
        notes += [f"- {slug.replace('__', '/')}: {line}" for line in differences(ours, other)]
    print("\n" + ("\n".join(notes) if notes else "No sampled task's verdict differs between the pins."))


if __name__ == "__main__":
    main()
