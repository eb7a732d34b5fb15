"""docs/PAPER.md's table: the DL-Bench rebuild per repository, from what the runs left in results/.

Reads the clone records (pinned commit, files the mirror lacks), image records (built or its
cause, build time, size beyond the framework layer), mining (tests, tasks), the authors'
tasks at the pins (``results/authors/repos.csv``) and what every side-by-side run of
``bench/bench_paper.py`` kept in ``docs/data/paper/`` (their gold beside ours per task, the
mined sample's verdicts, the image's record: they outlive the machine), and prints one
Markdown table plus the totals. Nothing is run; a repository without a record
shows "-".

    python bench/paper_table.py > /tmp/table.md
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
KEPT = ROOT / "docs" / "data" / "paper"


def _json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def _lines(path: Path) -> int | None:
    return sum(1 for line in path.open() if line.strip()) if path.is_file() else None


def image_sizes() -> dict[str, int]:
    """Bytes of every local image by tag (empty without a Docker engine)."""
    try:
        import docker

        return {tag: image.attrs["Size"] for image in docker.from_env().images.list() for tag in image.tags}
    except Exception:  # noqa: BLE001 - the table is still useful without sizes
        return {}


def image_cell(record: dict, sizes: dict[str, int]) -> str:
    """Build time, and the image's size beyond its framework layer (shared by projects on the same versions)."""
    if not record:
        return "-"
    if record.get("status") != "ok":
        return f"no: {(record.get('error') or '')[:80]}"
    own, framework = sizes.get(record.get("tag") or ""), sizes.get(record.get("framework_image") or "")
    if own and framework:
        return f"{record.get('build_seconds', 0):.0f} s, +{(own - framework) / 1e9:.2f} GB beyond its framework layer"
    whole = record.get("size_bytes")  # the images were removed since: the size recorded when built
    return f"{record.get('build_seconds', 0):.0f} s" + (
        f", {whole / 1e9:.1f} GB with its framework layer" if whole else ""
    )


def cost() -> str:
    """Build time and size of every image record together (sizes as recorded when built, each
    with its framework layer: a repository pinned by date resolves its own framework versions)."""
    records = [_json(p) for p in sorted(KEPT.glob("*.image.json"))]
    built = [r for r in records if r.get("status") == "ok"]
    frameworks = {r.get("framework_image") for r in built if r.get("framework_image")}
    disk = sum(r.get("size_bytes") or 0 for r in built)
    seconds = sum(r.get("build_seconds", 0) for r in records)
    return (f"{len(built)} images built ({len(records) - len(built)} failed) in {seconds / 60:.0f} min of build "
            f"time; {len(frameworks)} distinct framework layers; {disk / 1e9:.1f} GB together, framework layers "
            "counted with each image")  # fmt: skip


def side_by_side() -> pd.DataFrame:
    frames = [pd.read_csv(p) for p in sorted(KEPT.glob("*.csv")) if not p.name.endswith(".mined.csv")]
    if not frames:
        return pd.DataFrame(columns=["repo", "task_id", "authors_gold", "gold_here", "usable_here", "gold_s", "null_s"])
    return pd.concat(frames).drop_duplicates(["repo", "source_id"], keep="last")


def median_seconds(ran: pd.DataFrame) -> str:
    """Median over the sampled tasks of each task's median gold and null run, in seconds."""
    return " / ".join(f"{ran[c].median():.1f}" if ran[c].notna().any() else "-" for c in ("gold_s", "null_s"))


# A task whose gold passes but whose null passes too is gold-valid, though not usable.
GOLD_VALID_UNUSABLE = ("null passes", "no null")


def mined_cell(slug: str) -> str:
    """Gold-valid and usable of the workflow's seeded sample of mined tasks."""
    path = KEPT / f"{slug}.mined.csv"
    if not path.is_file():
        return "-"
    mined = pd.read_csv(path)
    valid = mined["usable"] | mined["reason"].astype("string").fillna("").str.startswith(GOLD_VALID_UNUSABLE)
    return f"{int(valid.sum())} / {int(mined['usable'].sum())} of {len(mined)}"


def table() -> pd.DataFrame:
    authors = pd.read_csv(RESULTS / "authors" / "repos.csv").set_index("repo")
    runs = side_by_side()
    sizes = image_sizes()
    rows = []
    for clone_path in sorted((RESULTS / "repos").glob("*.json")):
        clone = _json(clone_path)
        slug, repo = clone["slug"], clone["full_name"]
        a = authors.loc[repo] if repo in authors.index else None
        mine = RESULTS / "mine" / slug
        ran = runs[runs["repo"] == repo]
        rows.append({
            "repository": repo,
            "commit": (clone.get("sha") or "")[:7] or ("not cloned" if clone.get("error") else "-"),
            "environment": image_cell(_json(KEPT / f"{slug}.image.json"), sizes),
            "tests": _lines(mine / "tests.jsonl"),
            "mined tasks": _lines(mine / "functions.jsonl"),
            "authors' named (present)": f"{int(a['named'])} ({int(a['named_present'])})" if a is not None else "-",
            "authors' functions found by mining": (
                f"{int(a['found_by_mining'])}/{int(a['functions_present'])}" if a is not None else "-"
            ),
            "sampled here": len(ran) or "-",
            "mined sample: gold-valid / usable": mined_cell(slug),
            "gold / null s (median)": median_seconds(ran) if len(ran) else "- / -",
            "gold passes: theirs / here (no test failing) / usable here": (
                f"{int((ran['authors_gold'] == 'pass').sum())} / {int(ran['gold_no_failure'].sum())}"
                f" / {int(ran['usable_here'].sum())}" if len(ran) else "-"
            ),
        })  # fmt: skip
    return pd.DataFrame(rows)


def forms() -> pd.DataFrame:
    """The authors' tasks by published form: present at the pins, not there (each cause), not reachable."""
    rows = pd.read_json(RESULTS / "authors" / "tasks.jsonl", lines=True)
    rows["cause"] = rows["reason"].str.split(" (", regex=False).str[0]
    rows.loc[rows["status"] == "present", "cause"] = "present at the pin"
    rows.loc[rows["status"] == "unreachable", "cause"] = "repository not reachable here"
    return rows.pivot_table(index="cause", columns="form", values="source_id", aggfunc="count", fill_value=0)


def main() -> None:
    frame = table()
    print(frame.to_markdown(index=False))
    print("\n" + forms().to_markdown())
    print("\n" + cost())
    runs = side_by_side()
    if len(runs):
        print(f"\nSide by side over {len(runs)} sampled named tasks: their harness passes gold on "
              f"{int((runs['authors_gold'] == 'pass').sum())}, this one on {int((runs['gold_here'] == 'pass').sum())}.")  # fmt: skip


if __name__ == "__main__":
    main()
