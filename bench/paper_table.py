"""docs/PAPER.md's table: the DL-Bench rebuild per repository, from what the runs left in results/.

Reads the clone records (pinned commit, files the mirror lacks), image records (built or its
cause, build time, size beyond the framework layer), mining (tests, tasks), the authors'
tasks at the pins (``results/authors/repos.csv``) and every side-by-side run of
``bench/bench_paper.py`` (``results/paper/side_by_side-*.csv``: their gold beside ours), and
prints one Markdown table plus the totals. Nothing is run; a repository without a record
shows "-".

    python bench/paper_table.py > /tmp/table.md
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


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
    records = [_json(p) for p in sorted((RESULTS / "images").glob("*.json")) if not p.name.endswith(".repaired.json")]
    built = [r for r in records if r.get("status") == "ok"]
    frameworks = {r.get("framework_image") for r in built if r.get("framework_image")}
    disk = sum(r.get("size_bytes") or 0 for r in built)
    seconds = sum(r.get("build_seconds", 0) for r in records)
    return (f"{len(built)} images built ({len(records) - len(built)} failed) in {seconds / 60:.0f} min of build "
            f"time; {len(frameworks)} distinct framework layers; {disk / 1e9:.1f} GB together, framework layers "
            "counted with each image")  # fmt: skip


def side_by_side() -> pd.DataFrame:
    frames = [pd.read_csv(p) for p in sorted((RESULTS / "paper").glob("side_by_side-*.csv"))]
    if not frames:
        return pd.DataFrame(columns=["repo", "task_id", "authors_gold", "gold_here", "usable_here"])
    return pd.concat(frames).drop_duplicates(["repo", "source_id"], keep="last")


def median_seconds(slug: str, model: str) -> str:
    """Median wall time of one run of a task (gold or null) in the side-by-side runs."""
    runs = [json.loads(line) for p in (RESULTS / "paper").glob(f"{slug}-*.{model}.jsonl") for line in p.open()]
    return f"{pd.Series([r['duration_s'] for r in runs]).median():.1f}" if runs else "-"


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
            "commit": (clone.get("sha") or "")[:7] or clone.get("error", "-"),
            "environment": image_cell(_json(RESULTS / "images" / f"{slug}.json"), sizes),
            "tests": _lines(mine / "tests.jsonl"),
            "mined tasks": _lines(mine / "functions.jsonl"),
            "authors' named (present)": f"{int(a['named'])} ({int(a['named_present'])})" if a is not None else "-",
            "authors' functions found by mining": (
                f"{int(a['found_by_mining'])}/{int(a['functions_present'])}" if a is not None else "-"
            ),
            "sampled here": len(ran) or "-",
            "gold / null s (median)": f"{median_seconds(slug, 'gold')} / {median_seconds(slug, 'null')}",
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
