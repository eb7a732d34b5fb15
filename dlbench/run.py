"""``dlbench run``: score one model on the benchmark with one command.

It merges the workflow's default config, a base config and the command line's settings the
way Snakemake merges config files (the model becomes one ``models:`` entry, the task subset
``evaluate.sample_limit``/``task_ids``/``repos``: ``dlbench.subset``), validates the result
and writes it to one YAML file, ``results/configs/run-<time>-<model>.yaml``: the resolved
config of the run, which ``snakemake --configfile FILE`` repeats. Then it runs the workflow
itself (``snakemake results/tables.csv --configfile BASE FILE``: the same pipeline, not a
second one) and prints the overall and per-stage scores from ``results/tables.csv`` with the
report's own renderers (``dlbench.report.render``).
"""

from __future__ import annotations

import copy
import csv
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from dlbench.config import REFERENCE_PROVIDERS, ConfigError, load_config
from dlbench.records import BenchmarkTask
from dlbench.store import iter_jsonl, write_text

WORKFLOW_CONFIG = Path("config/config.yaml")  # the Snakefile's configfile: Snakemake loads it first
TARGET = "results/tables.csv"
OVERLAY_DIR = Path("results/configs")
VALIDATION = Path("results/validation.csv")
BENCHMARK = Path("results/benchmark/dlbench.jsonl")
MODEL_KEY = re.compile(r"^[A-Za-z0-9_.\-]+$")  # a models: key is a folder name in results/ and a wildcard
MODEL_SETTINGS = ("base_url", "api_key_env", "temperature", "n", "runs")  # ModelConfig fields the options set


class RunError(Exception):
    """A problem the user can fix: reported as a message, not a traceback."""


@dataclass(frozen=True)
class ModelRequest:
    """The model options: ``model`` is a key of the config's ``models:`` or a model id at an
    OpenAI-compatible endpoint; the settings left None keep the config's (or the default)."""

    model: str
    name: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    n: int | None = None
    runs: int | None = None


@dataclass(frozen=True)
class TaskRequest:
    """Which tasks the run generates and evaluates (``dlbench.subset``); None keeps the config's."""

    limit: int | None = None
    task_ids: Sequence[str] = ()
    repos: Sequence[str] = ()
    seed: int | None = None


@dataclass(frozen=True)
class RunPlan:
    key: str  # the model's key under models:
    settings: dict[str, Any]  # what the command line sets, as a config overlay
    resolved: dict[str, Any] = field(repr=False)  # workflow default + base + settings


# ---------------------------------------------------------------- the run's config


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RunError(f"config file {path}: cannot be read: {' '.join(str(exc).split())}") from None
    if raw is not None and not isinstance(raw, dict):
        raise RunError(f"config file {path}: top level must be a mapping")
    return raw or {}


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on ``base`` as Snakemake merges config files: mappings key by key, anything
    else (lists too) replaced. Neither input is changed."""
    merged = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def model_key(model: str) -> str:
    """A ``models:`` key for a model id: ``Qwen/Qwen2.5-Coder`` → ``Qwen-Qwen2.5-Coder``."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "-", model).strip("-.") or "model"


def model_entry(request: ModelRequest, models: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The key and the ``models:`` settings of the requested model. A key the config already
    has (``--model gpt-4o`` with ``models: {gpt-4o: ...}``, or ``--name``) keeps its settings
    and takes the options given; any other model id becomes an ``openai`` entry."""
    given = {k: getattr(request, k) for k in MODEL_SETTINGS if getattr(request, k) is not None}
    key = request.name or request.model
    if request.name is not None and not MODEL_KEY.match(request.name):
        raise RunError(f"--name {request.name!r}: use letters, digits, '_', '.' and '-' only (it names folders)")
    existing = models.get(key)
    if isinstance(existing, Mapping):
        provider = existing.get("provider")
        if provider in REFERENCE_PROVIDERS and {"base_url", "api_key_env", "temperature"} & given.keys():
            raise RunError(f"{key} is a reference model (provider {provider}): it takes no endpoint or temperature")
        if request.name is not None and request.model != request.name:
            given["model"] = request.model
        return key, given
    if key in REFERENCE_PROVIDERS:
        return key, {"provider": key, **given}
    if request.name is None:
        key = model_key(request.model)
        if key in models:
            raise RunError(
                f"model id {request.model!r} would be models.{key}, which the config already holds with other "
                "settings: name this one with --name"
            )
    return key, {"provider": "openai", "model": request.model, **given}


def run_settings(
    request: ModelRequest, tasks: TaskRequest, techniques: Sequence[str] | None, models: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The model's key and the config overlay the command line makes."""
    key, entry = model_entry(request, models)
    generate: dict[str, Any] = {"models": [key]}
    if techniques:
        generate["techniques"] = list(dict.fromkeys(techniques))
    evaluate: dict[str, Any] = {}
    if tasks.limit is not None:
        evaluate["sample_limit"] = tasks.limit
    if tasks.task_ids:
        evaluate["task_ids"] = list(dict.fromkeys(tasks.task_ids))
    if tasks.repos:
        evaluate["repos"] = list(dict.fromkeys(tasks.repos))
    if tasks.seed is not None:
        evaluate["sample_seed"] = tasks.seed
    settings: dict[str, Any] = {"models": {key: entry}, "generate": generate}
    return key, settings | ({"evaluate": evaluate} if evaluate else {})


def plan_run(
    workdir: Path, base: Path, request: ModelRequest, tasks: TaskRequest, techniques: Sequence[str] | None = None
) -> RunPlan:
    """The run's resolved config: the workflow's default (``config/config.yaml``, which the
    Snakefile loads before any ``--configfile``), the base config and the command line's
    settings, merged and validated (a bad value fails here, naming its key)."""
    if not (workdir / "Snakefile").is_file():
        raise RunError(f"no Snakefile in {workdir}: run dlbench run in the project folder (or pass --workdir)")
    default = workdir / WORKFLOW_CONFIG
    raw = read_yaml(default) if default.is_file() else {}
    base_path = base if base.is_absolute() else workdir / base
    if not base_path.is_file():
        raise RunError(f"base config not found: {base_path}")
    if base_path.resolve() != default.resolve():
        raw = merge(raw, read_yaml(base_path))
    key, settings = run_settings(request, tasks, techniques, raw.get("models") or {})
    resolved = merge(raw, settings)
    try:
        load_config(resolved, root=workdir)
    except ConfigError as exc:
        raise RunError(f"the run's config is not valid: {exc}") from None
    return RunPlan(key, settings, resolved)


def write_overlay(plan: RunPlan, directory: Path, command: Sequence[str], base: Path) -> Path:
    """The resolved config as ``run-<UTC time>-<model>.yaml`` in ``directory``, with how it was made."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = directory / f"run-{stamp}-{plan.key}.yaml"
    serial = 1
    while path.exists():
        serial += 1
        path = directory / f"run-{stamp}-{plan.key}-{serial}.yaml"
    header = [
        "# The resolved config of one `dlbench run`: the workflow's config/config.yaml, the base config",
        f"# ({base}) and the command line's settings, merged as Snakemake merges config files.",
        f"# command: {shlex.join(command)}",
        f"# repeat:  snakemake --cores N {TARGET} --configfile {path}",
        "# The command line's settings:",
        *(f"#   {line}" for line in yaml.safe_dump(plan.settings, sort_keys=False).splitlines()),
    ]
    write_text(path, "\n".join(header) + "\n" + yaml.safe_dump(plan.resolved, sort_keys=False, allow_unicode=True))
    return path


# ---------------------------------------------------------------- running the workflow


def snakemake_command(
    base: Path, overlay: Path, cores: int, dry_run: bool = False, extra: Sequence[str] = ()
) -> list[str]:
    """``python -m snakemake`` on the run's target with the base config and the overlay, then
    ``extra`` (config files first: ``--configfile`` takes every name that follows it; the
    target before ``extra``, which may end in an option that takes several values)."""
    cmd = [sys.executable, "-m", "snakemake", "--configfile", str(base), str(overlay), "--cores", str(cores)]
    return [*cmd, *(["--dry-run"] if dry_run else []), TARGET, *extra]


def run_workflow(cmd: Sequence[str], workdir: Path) -> int:
    """Run Snakemake in ``workdir`` with its output on the terminal; its exit code (130 on Ctrl-C)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this environment's tools
    try:
        return subprocess.run(cmd, cwd=workdir, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        raise RunError(f"cannot start snakemake: {exc}") from None


# ---------------------------------------------------------------- the tables at the end


def read_tables(path: Path) -> pd.DataFrame:
    """``results/tables.csv`` as the report wrote it (a model may be named "null")."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def summary(table: pd.DataFrame) -> str:
    """What ``dlbench evaluate`` prints too (``render.scores_summary``), or why there is nothing."""
    from dlbench.report.render import scores_summary

    if table.empty:
        return "results/tables.csv has no rows: no task was usable (results/validation.csv says why)\n"
    return scores_summary(table)


def coverage_note(workdir: Path, tasks: TaskRequest) -> list[str]:
    """How many tasks the run drew and how many were usable; task ids the benchmark lacks."""
    notes = []
    validation = workdir / VALIDATION
    if validation.is_file():
        with open(validation, newline="", encoding="utf-8") as fh:
            rows = [r for r in csv.DictReader(fh) if not (r.get("reason") or "").startswith("not sampled")]
        usable = sum((r.get("usable") or "").lower() == "true" for r in rows)
        notes.append(
            f"{len(rows)} task(s) drawn, {usable} usable (the others' reasons: {VALIDATION}); "
            "the tables count usable tasks only"
        )
    benchmark = workdir / BENCHMARK
    if tasks.task_ids and benchmark.is_file():
        known = {t.task_id for t in iter_jsonl(benchmark, BenchmarkTask)}
        unknown = [i for i in tasks.task_ids if i not in known]
        if unknown:
            notes.append(f"warning: {len(unknown)} of the --task-ids are no benchmark task: {', '.join(unknown)}")
    return notes


# ---------------------------------------------------------------- the command


def run(
    workdir: Path, base: Path, request: ModelRequest, tasks: TaskRequest, techniques: Sequence[str] | None,
    cores: int, overlay_dir: Path | None = None, dry_run: bool = False, extra: Sequence[str] = (),
    command: Sequence[str] = (),
) -> int:  # fmt: skip
    """``dlbench run``: plan, write the overlay, run the workflow, print the tables."""
    workdir = workdir.resolve()
    plan = plan_run(workdir, base, request, tasks, techniques)
    base_path = (base if base.is_absolute() else workdir / base).resolve()
    directory = overlay_dir if overlay_dir is not None else OVERLAY_DIR
    directory = directory if directory.is_absolute() else workdir / directory
    overlay = write_overlay(plan, directory, command or ["dlbench", "run"], base_path)
    print(f"dlbench run: model {plan.key!r}; the run's config: {overlay}", flush=True)
    cmd = snakemake_command(base_path, overlay, cores, dry_run, extra)
    code = run_workflow(cmd, workdir)
    if code != 0:
        print(
            f"dlbench: the workflow failed (snakemake exit code {code}); Snakemake's messages above name the "
            f"failed job and its log under {workdir / 'logs'}. Run again once it is fixed: finished jobs are kept.",
            file=sys.stderr,
        )
        return code
    if dry_run:
        print(f"dry run: nothing was run; the run's config is {overlay}")
        return 0
    tables = workdir / TARGET
    print()
    print(summary(read_tables(tables)))
    for note in coverage_note(workdir, tasks):
        print(note)
    print(f"tables: {tables} and {workdir / 'results/tables'}/ (Markdown, LaTeX); config: {overlay}")
    return 0
