"""Two torch projects in a row: does the second download the framework again?

Builds the images of two bundled repositories (default Laplace, then cleanlab) from a fresh
download cache and a base image of their own (so no framework layer from earlier runs
counts), and reports for each build the bytes added to the download cache (what was
fetched), the build time, the image size and its framework layer. With ``--naive`` the
second project is built once more the way a per-project image without a shared cache
and layer would be (fresh cache, no framework reuse): the baseline of the ratio.

    python bench/bench_images.py [--repos Laplace cleanlab] [--naive] [--no-reuse]
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from dlbench.config import ImagesConfig
from dlbench.harness.code import support_files
from dlbench.images.build import build_project_image, docker_client

ROOT = Path(__file__).resolve().parents[1]
BASE = "dlbench/base:bookworm"


def bench_base(client) -> str:
    """A base of the bench's own (same content, another id): framework layers start afresh."""
    tag = "dlbench/bench-base:images"
    dockerfile = f"FROM {BASE}\nLABEL dlbench.bench=images\n"
    client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    return tag


def checkout(name: str, sha: str, into: Path) -> Path:
    bundle = ROOT.parent / "shared" / "realworld" / f"{name}.bundle"
    path = into / name
    subprocess.run(["git", "clone", "-q", str(bundle), str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", sha], check=True)
    return path


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def build(repo: Path, slug: str, sha: str, base: str, cache: Path, reuse: bool, logs: Path) -> dict:
    before, start = folder_bytes(cache) if cache.exists() else 0, time.monotonic()
    cfg = ImagesConfig(reuse_frameworks=reuse)
    record = build_project_image(
        repo, slug, sha, base, logs / f"{slug}.log", support_files(), images=cfg, downloads=cache
    )
    if record.error:
        sys.exit(f"{slug}: {record.error}")
    return {
        "project": slug, "downloaded_gb": round((folder_bytes(cache) - before) / 1e9, 3),
        "build_s": round(time.monotonic() - start, 1), "image_gb": round((record.size_bytes or 0) / 1e9, 2),
        "framework": " ".join(record.environment.frameworks), "framework_layer": record.framework_image,
        "preferred": record.environment.framework_preferred, "tag": record.tag,
    }  # fmt: skip


def remove_bench_images(client, rows: list[dict]) -> None:
    """The bench's layers are its own (its own base): free their disk (a framework is ~7 GB)."""
    for tag in {r["framework_layer"] for r in rows if r["framework_layer"]} | {r["tag"] for r in rows}:
        client.images.remove(tag, force=True)
    client.images.remove("dlbench/bench-base:images", force=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", nargs=2, default=["Laplace", "cleanlab"])
    parser.add_argument(
        "--naive", action="store_true", help="also build the second project with no shared cache or layer"
    )
    parser.add_argument(
        "--no-reuse", action="store_true", help="resolve each project freely (images.reuse_frameworks: false)"
    )
    args = parser.parse_args()
    known = {
        r["path"].split("/")[-1].removesuffix(".bundle"): r["sha"]
        for r in yaml.safe_load((ROOT / "config/realworld.yaml").read_text())["local_repos"]
    }  # noqa: E501
    client = docker_client()
    base = bench_base(client)
    with tempfile.TemporaryDirectory(prefix="dlbench-bench-images-") as tmp:
        tmp_path = Path(tmp)
        rows = []
        shared = tmp_path / "cache-shared"
        for name in args.repos:
            repo = checkout(name, known[name], tmp_path)
            rows.append(build(repo, f"bench__{name.lower()}", known[name], base, shared, not args.no_reuse, tmp_path))
        if args.naive:
            name = args.repos[1]
            naive = build(
                tmp_path / name,
                f"bench__{name.lower()}_naive",
                known[name],
                base,
                tmp_path / "cache-naive",
                False,
                tmp_path,
            )
            rows.append(naive | {"project": f"{naive['project']} (naive)"})
        shutil.rmtree(shared, ignore_errors=True)
    remove_bench_images(client, rows)
    print(json.dumps(rows, indent=1))
    first, second = rows[0], rows[1]
    print(f"second project downloaded {second['downloaded_gb']} GB vs {first['downloaded_gb']} GB for the first "
          f"({second['downloaded_gb'] / max(first['downloaded_gb'], 1e-9):.3f}x); build {second['build_s']} s vs {first['build_s']} s")  # fmt: skip


if __name__ == "__main__":
    main()
