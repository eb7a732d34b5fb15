"""The dataset card (``results/benchmark/README.md``): the Hugging Face metadata
(``report/hub.py``), sources, licenses, how the prompts were drafted, statistics, agreement,
test adequacy, what mining left out, drops, and how to rebuild each repository's test
environment from ``environments/`` (``images/recipe.py``).

Written after the report tables (rule ``dataset_card``), because the mutant kill rates come
from evaluating the benchmark. Rendered from files only, with no timestamps, so rebuilding
the same inputs gives the same card byte for byte.
"""

from __future__ import annotations

import csv
import logging
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dlbench.images.recipe import CHECKOUT_DIR, DOCKERFILE, ENVIRONMENTS_DIR, EXTENSIONS_SCRIPT, IMAGE_FILE, LOCK_FILE
from dlbench.records import (
    BenchmarkTask,
    ImageRecord,
    MergedLabel,
    PromptRecord,
    PromptSource,
    SkipKind,
    SkippedRecord,
)
from dlbench.report.hub import PRETTY_NAME, front_matter, repo_licenses
from dlbench.report.tables import ADEQUACY_FILE
from dlbench.store import read_json, read_jsonl, write_text
from dlbench.tasks.repos import RepoRow, csv_flag, read_repos_csv
from dlbench.tasks.vocab import DATA, STAGES, TASKS

log = logging.getLogger(__name__)

UNLABELLED = "(unlabelled)"


def read_agreement(path: str | Path | None) -> list[dict[str, str]]:
    if path is None or not Path(path).exists():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@dataclass(frozen=True)
class Adequacy:
    """One task's mutant kill rate (a row of ``results/tables/adequacy.csv``)."""

    task_id: str
    mutants: int
    kill_rate: float | None  # None: no mutant was evaluated on the task
    flagged: bool  # kill rate below ``report.mutant_kill_threshold``


def read_adequacy(path: str | Path) -> list[Adequacy]:
    """Per-task kill rates; an absent or empty file (no tables, no tasks) gives none."""
    if not Path(path).exists():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        try:
            return [
                Adequacy(
                    row["task_id"],
                    int(row["mutants"]),
                    float(row["kill_rate"]) if row["kill_rate"] else None,
                    csv_flag(row["flagged"]),
                )
                for row in reader
            ]
        except (KeyError, ValueError) as err:
            raise ValueError(f"{path}:{reader.line_num}: unreadable adequacy row ({err})") from err


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _cell(value: object) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")


def _counts(tasks: Sequence[BenchmarkTask], dimension: str, vocabulary: Sequence[str]) -> list[tuple[str, int, str]]:
    counts = Counter(getattr(t, dimension) or UNLABELLED for t in tasks)
    order = [*vocabulary, *sorted(set(counts) - set(vocabulary))]
    total = max(len(tasks), 1)
    return [
        (name, counts[name], f"{100 * counts[name] / total:.1f}%")
        for name in order
        if counts[name] or name in vocabulary
    ]


def departures(prompts: Sequence[PromptRecord]) -> list[str]:
    """How the drafts depart from the paper's protocol (an LLM sent the paper's template,
    its answer taken as it is), one phrase per departure with its count."""
    counts = Counter[str]()
    for p in prompts:
        if p.source == PromptSource.TEMPLATE:
            counts["template prompts (no drafting LLM answer)"] += 1
        elif p.protocol != "paper":
            counts["drafted with this project's instructions (`prompts.protocol: project`)"] += 1
        counts.update(f"`{a}` block appended (`prompts.append_{a}`)" for a in p.additions)
    return [f"{what}: {n}" for what, n in sorted(counts.items())]


def _drafting_section(prompts: Sequence[PromptRecord], edited: int) -> list[str]:
    out = [
        "## Prompts",
        "",
        'The paper drafted every prompt by sending GPT-4o one request: "Create a prompt using the provided '
        "code and its docstring, incorporating the function or class name, inputs, and outputs. 1. Code: "
        '[CODE] 2. Docstring: [DOCSTRING]" (`prompts.protocol: paper`, the default).',
        "",
    ]
    if not prompts:
        return [*out, "No drafted prompts were recorded for these tasks.", ""]
    off = departures(prompts)
    verdict = ["These drafts follow the paper's protocol."] if not off else [
        "These drafts depart from the paper's protocol:", "", *(f"- {d}" for d in off)
    ]  # fmt: skip
    groups = Counter(
        (p.source.value, p.model or "-", p.protocol or "-", ", ".join(p.additions) or "none", p.status) for p in prompts
    )
    rows = [(*key, n) for key, n in sorted(groups.items())]
    return [
        *out, *verdict, "",
        *_table(("source", "model", "protocol", "additions", "status", "tasks"), rows), "",
        f"{edited} of these drafts were replaced by annotators' edits.", "",
    ]  # fmt: skip


def render_card(
    tasks: Sequence[BenchmarkTask],
    repos: Sequence[RepoRow],
    labels: Sequence[MergedLabel],
    agreement: Sequence[dict[str, str]],
    adequacy: Sequence[Adequacy],
    threshold: float,
    prompts: Sequence[PromptRecord] = (),
    skipped: Sequence[SkippedRecord] = (),
    environments: Sequence[ImageRecord] | None = None,
) -> str:
    """Markdown dataset card under its Hugging Face metadata; ``prompts`` are the drafts of
    ``tasks`` (how they were written), ``skipped`` what mining left out, ``environments`` the
    image records exported beside the tasks (None: no environments exported)."""
    discarded = [label for label in labels if not label.keep]
    edited = sum(t.prompt_source == "edited" for t in tasks)
    out = [
        front_matter(tasks),
        f"# {PRETTY_NAME}",
        "",
        "Function-level deep-learning code-generation tasks mined from open-source repositories: each "
        "task is a function or method under test, its prompt, its ground-truth source and the pytest "
        "node ids that check it. Files: `dlbench.parquet` (the default config's `test` split: "
        "`datasets.load_dataset` on this folder), `dlbench.jsonl` (the same rows, one task a line), "
        "`dlbench.schema.json` (JSON schema of a line), `repos.csv` (every repository, its license and "
        "why it was kept or dropped)"
        + (
            f", `{ENVIRONMENTS_DIR}/` (each repository's test environment: Test environments below)."
            if environments is not None
            else "."
        ),
        "",
        f"**{len(tasks)} tasks** from {sum(r.keep and r.tasks > 0 for r in repos)} repositories; "
        f"{edited} prompts edited by annotators, {len(tasks) - edited} drafts.",
        "",
        "## Sources",
        "",
        *_table(
            ("repository", "commit", "license", "tasks", "kept", "reasons"),
            [
                (
                    r.repo,
                    f"`{r.sha}`" if r.sha else "-",
                    r.license or "-",
                    r.tasks,
                    "yes" if r.keep else "no",
                    r.reasons or "-",
                )
                for r in repos
            ],
        ),
        "",
        *_license_section(tasks),
        *_drafting_section(prompts, edited),
        "## Statistics",
        "",
    ]
    for title, dimension, vocabulary in (
        ("Stage", "stage", STAGES),
        ("Task", "task", TASKS),
        ("Data type", "data", DATA),
    ):
        out += [
            f"### {title}",
            "",
            *_table((title.lower(), "tasks", "share"), _counts(tasks, dimension, vocabulary)),
            "",
        ]
    out += [
        "## Annotator agreement",
        "",
        "Krippendorff's alpha (nominal) over units with at least two votes; "
        "`overall` is the mean of the stage, task and data alphas.",
        "",
    ]
    if agreement:
        columns = list(agreement[0])
        out += [*_table(columns, [[row[c] or "-" for c in columns] for row in agreement]), ""]
    else:
        out += ["No annotator sheets were merged.", ""]
    out += [
        "Majority vote per dimension; ties are not broken (the label stays null and the task is "
        "listed in `labels/disagreements.csv`). An edited prompt replaces the draft when a majority of "
        "the annotators who edited agree on it, or when only one annotator edited.",
        "",
        *_adequacy_section(adequacy, threshold),
        *_skipped_section(skipped),
        "## Discarded tasks",
        "",
        f"{len(discarded)} tasks discarded by annotators; "
        f"{sum(r.functions for r in repos if not r.keep)} functions dropped with their repository (see Sources).",
        "",
    ]
    if discarded:
        out += _table(("task", "reason"), [(label.task_id, label.discard_reason or "-") for label in discarded])
        out.append("")
    if environments is not None:
        out += _environments_section(environments, len(repo_licenses(tasks)))
    return "\n".join(out)


def _license_section(tasks: Sequence[BenchmarkTask]) -> list[str]:
    counts = Counter(spdx or "none recognised" for spdx in repo_licenses(tasks).values())
    listed = ", ".join(f"{name} {n}" for name, n in sorted(counts.items())) or "none"
    return [
        "## License",
        "",
        "Every task is code taken from an open-source repository and keeps that repository's license: "
        "the `license` column holds its SPDX id (empty where GitHub recognises none), and the Sources "
        "table and `repos.csv` list each repository's. The collection has no license of its own: the "
        "card's `license` metadata lists the repositories' licenses by the Hub's ids (`unknown` where "
        "GitHub recognises none, `other` where the Hub has no id for one). Check a repository's "
        "license before reusing its tasks.",
        "",
        f"Repositories with tasks by license: {listed}.",
        "",
    ]


def _environments_section(records: Sequence[ImageRecord], repos_with_tasks: int) -> list[str]:
    """How to rebuild each repository's test environment from ``environments/``."""
    out = [
        "## Test environments",
        "",
        f"A task's tests ran in its repository's image. `{ENVIRONMENTS_DIR}/{{slug}}/` (the `slug` column) "
        "holds what rebuilds it without this workflow: "
        f"`{LOCK_FILE}` (every package installed, `name==version`, resolved as of the commit's date), "
        f"`{DOCKERFILE}` (the image's steps: a `python:X.Y-slim` base of the resolved Python, a build "
        f"argument; the lock installed with `--no-deps`; the checkout from `{CHECKOUT_DIR}/`; its extension "
        f"modules built in place by `{EXTENSIONS_SCRIPT}` where it has any; the sandbox's user and "
        f"settings) and `{IMAGE_FILE}` (the workflow's image record: the requirements found and where, "
        "what was dropped or repaired and why, the lock). To run a task's tests:",
        "",
        "```sh",
        f"cd {ENVIRONMENTS_DIR}/<slug>",
        f"git clone https://github.com/<repo> {CHECKOUT_DIR} && git -C {CHECKOUT_DIR} checkout <sha>",
        "docker build -t dlbench-env/<slug> .",
        'docker run --rm --network none dlbench-env/<slug> python -m pytest -p no:cacheprovider "<node id>" ...',
        "```",
        "",
        "The benchmark's own runs add a read-only root, a tmpfs `/tmp`, memory, CPU and process limits, "
        "and a fresh copy of the checkout per candidate, where the candidate replaces the task's function.",
        "",
    ]
    if not records:
        return [
            *out,
            "No environment is exported: no image was built for these tasks (their tests ran on the "
            "`local` backend, in the workflow's own environment).",
            "",
        ]
    rows = [
        (r.repo, r.environment.python_version, r.environment.platform,
         r.environment.exclude_newer.date().isoformat() if r.environment.exclude_newer else "-",
         len(r.environment.lock), len(r.environment.repairs), r.extensions or "-")
        if r.environment else (r.repo, "-", "-", "-", 0, 0, f"no image: {(r.error or str(r.status)).splitlines()[0]}")
        for r in sorted(records, key=lambda r: r.repo)
    ]  # fmt: skip
    built = sum(r.environment is not None for r in records)
    return [
        *out,
        f"{built} of {repos_with_tasks} repositories with tasks have a rebuildable environment.",
        "",
        *_table(("slug", "Python", "platform", "resolved as of", "packages", "repairs", "extensions"), rows),
        "",
    ]


def read_environments(folder: str | Path) -> list[ImageRecord]:
    """The image records exported in ``folder`` (``environments/{slug}/image.json``)."""
    return [read_json(path, ImageRecord) for path in sorted(Path(folder).glob(f"*/{IMAGE_FILE}"))]


def _skipped_section(skipped: Sequence[SkippedRecord]) -> list[str]:
    """Per repository, how many files and functions mining left out, by kind."""
    out = [
        "## Left out by mining",
        "",
        "Files mining could not read, decode or parse (`file`), test code libcst could not follow "
        "(`test_code`: its tests call nothing known) and functions under test it could not extract "
        "(`function`, e.g. code nested too deeply for libcst); each with its reason in "
        "`mine/{repo}/skipped.jsonl`.",
        "",
    ]
    if not skipped:
        return [*out, "Mining left nothing out.", ""]
    counts = Counter((s.repo, s.kind) for s in skipped)
    kinds = list(SkipKind)
    rows = [(repo, *(counts[repo, kind] for kind in kinds)) for repo in sorted({s.repo for s in skipped})]
    by_kind = Counter(s.kind for s in skipped)
    totals = ", ".join(f"{by_kind[kind]} {kind}" for kind in kinds)
    return [*out, f"In all: {totals}.", "", *_table(("repository", *kinds), rows), ""]


def _adequacy_section(adequacy: Sequence[Adequacy], threshold: float) -> list[str]:
    out = [
        "## Test adequacy",
        "",
        "The reference model `mutant` seeds single-point mutations into each task's ground truth; a "
        "mutant is killed when the task's tests fail on it. Tasks whose tests kill fewer than "
        f"{threshold:g} of their mutants are flagged: their tests may pass wrong code.",
        "",
    ]
    rates = [a.kill_rate for a in adequacy if a.kill_rate is not None]
    if not rates:
        return [*out, "No mutant model was evaluated, so the strength of the tests is not measured.", ""]
    flagged = [a for a in adequacy if a.flagged]
    out += [
        f"{len(rates)} of {len(adequacy)} tasks have mutants; mean kill rate "
        f"{statistics.fmean(rates):.2f}; {len(flagged)} tasks flagged "
        f"(kill rate < {threshold:g}).",
        "",
    ]
    if flagged:
        out += [
            *_table(
                ("task", "kill rate", "mutants"), [(a.task_id, f"{a.kill_rate or 0:.2f}", a.mutants) for a in flagged]
            ),
            "",
        ]
    return out


def card_file(
    benchmark: str | Path,
    repos: str | Path,
    merged: str | Path,
    agreement: str | Path | None,
    tables_dir: str | Path,
    out: str | Path,
    threshold: float,
    prompts: Sequence[str | Path] = (),
    skipped: Sequence[str | Path] = (),
    environments: str | Path | None = None,
) -> str:
    """Rule entry point: benchmark + repository verdicts + labels + drafts + adequacy table +
    what mining left out + the exported environments (a folder) → the card."""
    tasks = read_jsonl(benchmark, BenchmarkTask)
    adequacy = read_adequacy(Path(tables_dir) / ADEQUACY_FILE)
    ids = {t.task_id for t in tasks}
    drafts = [p for path in prompts for p in read_jsonl(path, PromptRecord) if p.task_id in ids]
    labels = read_jsonl(merged, MergedLabel)
    left_out = [s for path in skipped for s in read_jsonl(path, SkippedRecord)]
    exported = read_environments(environments) if environments is not None else None
    card = render_card(
        tasks, read_repos_csv(repos), labels, read_agreement(agreement), adequacy, threshold, drafts, left_out, exported
    )
    write_text(out, card)
    log.info("dataset card: %d tasks, %d flagged by mutant kill rate", len(tasks), sum(a.flagged for a in adequacy))
    return card
