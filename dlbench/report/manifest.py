"""A record of what each run was made from, and every run's tables kept apart.

The ``tables`` rule writes ``results/manifest.json`` (``RunManifest``: dlbench version and
commit, the resolved config, each model's settings, the benchmark's and evaluations' digests,
the images, start and end) and then copies that run's tables, readable tables, plots and
manifest into ``results/runs/{run_id}/``. Today's paths (``results/tables.csv`` ...) always
hold the newest run, ``results/runs/latest`` points at its folder, and an earlier run's
folder is never written again: a run with another config leaves its own folder beside.
The archive is not a declared output on purpose: Snakemake deletes a declared output before
it reruns a job, and the archive must outlive the rerun.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from dlbench.config import Config
from dlbench.records import BenchmarkTask, ImageRecord, ManifestImage, RunManifest
from dlbench.store import digest, iter_jsonl, read_json, write_json

LATEST = "latest"


class RunContext(BaseModel):
    """What a run's tables cannot see in their inputs: when the workflow began, its config,
    and where the project is (a rule param: a model, so Snakemake never reruns on it)."""

    started_at: datetime
    config: Config
    project: str  # the workflow's folder (its git HEAD is the dlbench commit)
    images: str = "results/images"


def file_sha256(path: str | Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def project_commit(folder: str | Path) -> tuple[str | None, bool | None]:
    """The git HEAD of ``folder`` and whether tracked files changed; (None, None) outside git."""

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=False)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return None, None
        status = git("status", "--porcelain", "--untracked-files=no")
    except OSError:  # no git on this machine
        return None, None
    return head.stdout.strip(), bool(status.stdout.strip()) if status.returncode == 0 else None


def run_images(folder: str | Path, repos: Iterable[str]) -> dict[str, ManifestImage]:
    """The image record of each repository that has one (a local-backend run has none)."""
    images = {}
    for slug in sorted(set(repos)):
        path = Path(folder) / f"{slug}.json"
        if path.is_file():
            record = read_json(path, ImageRecord)
            python = record.environment.python_version if record.environment else None
            images[slug] = ManifestImage(
                tag=record.tag, image_id=record.image_id, base_image=record.base_image, python=python
            )
    return images


def build_manifest(
    context: RunContext,
    benchmark: str | Path,
    evaluations: Iterable[str | Path],
    finished_at: datetime | None = None,
) -> RunManifest:
    """The manifest of the tables just written from ``benchmark`` and ``evaluations``."""
    finished = finished_at or datetime.now(UTC)
    config = context.config.model_dump(mode="json")
    config_digest = digest(config)
    commit, dirty = project_commit(context.project)
    repos = [task.repo for task in iter_jsonl(benchmark, BenchmarkTask)]
    generated = set(context.config.generate.models)
    return RunManifest(
        run_id=f"{finished.strftime('%Y%m%dT%H%M%SZ')}-{config_digest[:8]}",
        dlbench_version=importlib.metadata.version("dlbench"),
        dlbench_commit=commit,
        dlbench_dirty=dirty,
        started_at=context.started_at,
        finished_at=finished,
        config_digest=config_digest,
        config=config,
        models={name: settings for name, settings in config["models"].items() if name in generated},
        dataset=str(benchmark),
        dataset_sha256=file_sha256(benchmark),
        n_tasks=len(repos),
        evaluations={str(p): file_sha256(p) for p in sorted(map(str, evaluations))},
        images=run_images(context.images, repos),
        python=sys.version.split()[0],
        platform=platform.platform(),
    )


def manifest_text(m: RunManifest) -> str:
    """``tables/run.md``: the manifest in a few lines, for a reader of the readable tables."""
    commit = m.dlbench_commit[:12] if m.dlbench_commit else "not a git checkout"
    lines = [
        f"## Run {m.run_id}",
        "",
        f"- dlbench {m.dlbench_version}, commit {commit}" + (" (with uncommitted changes)" if m.dlbench_dirty else ""),
        f"- started {m.started_at.isoformat(timespec='seconds')}, tables written {m.finished_at.isoformat(timespec='seconds')}",
        f"- benchmark `{m.dataset}`: {m.n_tasks} tasks, sha256 {m.dataset_sha256[:16]}",
        f"- config sha256 {m.config_digest[:16]} (whole, resolved: `manifest.json`)",
        f"- images: {len(m.images)} ({', '.join(sorted({i.python or '?' for i in m.images.values()})) or 'none'} Python)",
        "- models: " + "; ".join(_model_line(name, s) for name, s in sorted(m.models.items())),
    ]
    return "\n".join(lines) + "\n"


def _model_line(name: str, settings: Mapping) -> str:
    shown = [
        f"{key} {settings[key]}"
        for key in ("provider", "model", "temperature", "n", "runs")
        if settings.get(key) is not None
    ]
    return f"{name} ({', '.join(shown)})"


def archive_run(
    manifest: RunManifest, manifest_path: str | Path, outputs: Iterable[str | Path], runs: str | Path
) -> Path:
    """Write the manifest, copy the run's outputs (files or folders) into ``runs/{run_id}/``
    and point ``runs/latest`` at it; return that folder."""
    write_json(manifest_path, manifest)
    folder = Path(runs) / manifest.run_id
    if folder.exists():  # same second, same config: the same run written again
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for item in [*map(Path, outputs), Path(manifest_path)]:
        if item.is_dir():
            shutil.copytree(item, folder / item.name)
        elif item.is_file():
            shutil.copy2(item, folder / item.name)
    _point_latest(Path(runs), manifest.run_id)
    return folder


def _point_latest(runs: Path, run_id: str) -> None:
    link = runs / LATEST
    tmp = runs / f".{LATEST}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_id)
    os.replace(tmp, link)  # atomic: a reader never finds no latest
