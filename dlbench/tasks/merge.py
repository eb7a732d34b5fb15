"""Merge annotators' sheets: normalised labels, majority votes, agreement, disagreements.

Decisions (repeated in the dataset card written by ``dlbench.report.card``):

* **Labels** (stage, task, data): the label with the most votes wins. A tie between the top
  labels is never broken: the label stays null and the task is listed in
  ``disagreements.csv`` with reason ``tie``. Blank cells and unknown spellings are missing
  votes (reasons ``missing_votes``, ``unknown_label``).
* **Keep**: a task is discarded when more annotators vote "no" than "yes". A blank keep
  cell in a row with a label or an edit counts as "yes" (people fill only the columns
  they care about); a row with only a note (e.g. "skipped") is no vote. A keep tie keeps
  the task and is listed (``keep_tie``). A discarded task leaves with ``keep: false`` and
  a ``discard_reason`` quoting the discarding annotators' notes.
* **Prompt**: edits identical to the draft (up to white space) are not edits. One edit
  wins when it was made by more annotators than any other edit and either by at least two
  annotators or by the only annotator who edited. Anything else (different single edits,
  tied edits) keeps the draft and is listed with reason ``conflicting_edits``.
* **Unlabelled tasks** (no label vote at all) keep the draft and null labels, unless
  ``labels.require_labels`` discards them.
* **Agreement**: Krippendorff's alpha (nominal) per dimension over the units with at least
  two votes; ``overall`` is the mean of the stage, task and data alphas.
"""

from __future__ import annotations

import csv
import io
import logging
import math
import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dlbench.config import LabelsConfig
from dlbench.records import MergedLabel, PromptRecord
from dlbench.store import read_jsonl, write_jsonl, write_text
from dlbench.tasks.sheets import SheetError, SheetRow, read_sheet
from dlbench.tasks.vocab import LABEL_DIMENSIONS, canonical_label

log = logging.getLogger(__name__)

VOTE_DIMENSIONS = (*LABEL_DIMENSIONS, "keep")

TIE = "tie"
MISSING_VOTES = "missing_votes"
UNKNOWN_LABEL = "unknown_label"
NO_VOTES = "no_votes"
KEEP_TIE = "keep_tie"
CONFLICTING_EDITS = "conflicting_edits"
UNKNOWN_TASK = "unknown_task"
DUPLICATE_ROW = "duplicate_row"

DISAGREEMENT_COLUMNS = ("task_id", "dimension", "reason", "votes", "detail")
AGREEMENT_COLUMNS = ("dimension", "alpha", "units", "annotators", "values", "observed_agreement")


@dataclass(frozen=True)
class Disagreement:
    task_id: str
    dimension: str
    reason: str
    votes: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Agreement:
    dimension: str
    alpha: float | None
    units: int  # units with at least two votes (the ones alpha uses)
    annotators: int  # annotators who cast at least one vote in this dimension
    values: int  # pairable votes
    observed_agreement: float | None  # share of agreeing vote pairs


@dataclass
class MergeResult:
    labels: list[MergedLabel]
    agreement: list[Agreement]
    disagreements: list[Disagreement] = field(default_factory=list)


# ---------------------------------------------------------------- Krippendorff's alpha


def coincidences(units: Sequence[Sequence[Hashable | None]]) -> Counter:
    """Coincidence matrix o[c, k] of nominal reliability data (one sequence of votes per unit)."""
    matrix: Counter = Counter()
    for unit in units:
        counts = Counter(v for v in unit if v is not None)
        m = sum(counts.values())
        if m < 2:
            continue
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                matrix[c, k] += n_c * (n_k - (c == k)) / (m - 1)
    return matrix


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Nominal Krippendorff's alpha; None when undefined (no pairable votes or one value only)."""
    matrix = coincidences(units)
    marginals: Counter = Counter()
    for (c, _), weight in matrix.items():
        marginals[c] += weight
    n = sum(marginals.values())
    expected_pairs = n * n - sum(v * v for v in marginals.values())  # Σ_{c≠k} n_c·n_k
    if n <= 1 or expected_pairs <= 1e-12:
        return None
    observed = sum(w for (c, k), w in matrix.items() if c != k)
    return 1.0 - (n - 1) * observed / expected_pairs


def agreement_for(dimension: str, units: Sequence[Sequence[Hashable | None]]) -> Agreement:
    matrix = coincidences(units)
    total = sum(matrix.values())
    agreeing = sum(w for (c, k), w in matrix.items() if c == k)
    voters = {i for unit in units for i, v in enumerate(unit) if v is not None}
    return Agreement(
        dimension=dimension,
        alpha=krippendorff_alpha(units),
        units=sum(sum(v is not None for v in unit) >= 2 for unit in units),
        annotators=len(voters),
        values=round(total),
        observed_agreement=agreeing / total if total else None,
    )


def overall_agreement(per_dimension: Sequence[Agreement], units: int) -> Agreement:
    """Mean of the label dimensions' alphas (undefined ones left out)."""
    rows = [a for a in per_dimension if a.dimension in LABEL_DIMENSIONS]
    alphas = [a.alpha for a in rows if a.alpha is not None]
    observed = [a.observed_agreement for a in rows if a.observed_agreement is not None]
    return Agreement(
        dimension="overall",
        alpha=sum(alphas) / len(alphas) if alphas else None,
        units=units,
        annotators=max((a.annotators for a in rows), default=0),
        values=sum(a.values for a in rows),
        observed_agreement=sum(observed) / len(observed) if observed else None,
    )


# ---------------------------------------------------------------- votes


@dataclass
class _TaskVotes:
    """Every annotator's normalised votes for one task (None: no vote)."""

    draft: PromptRecord
    rows: dict[str, SheetRow] = field(default_factory=dict)
    votes: dict[str, dict[str, str | None]] = field(default_factory=dict)  # dimension → annotator → vote


def _index_rows(
    prompts: Sequence[PromptRecord], rows: Sequence[SheetRow], out: list[Disagreement]
) -> dict[str, _TaskVotes]:
    tasks = {p.task_id: _TaskVotes(p) for p in prompts}
    for row in rows:
        entry = tasks.get(row.task_id)
        if entry is None:
            out.append(
                Disagreement(
                    row.task_id, "all", UNKNOWN_TASK, detail=f"{row.annotator} line {row.line}: not a drafted task"
                )
            )
            continue
        if row.annotator in entry.rows:
            out.append(
                Disagreement(
                    row.task_id, "all", DUPLICATE_ROW, detail=f"{row.annotator} line {row.line} replaces an earlier row"
                )
            )
        entry.rows[row.annotator] = row
    return tasks


def _normalise_votes(entry: _TaskVotes, annotators: Sequence[str], out: list[Disagreement]) -> None:
    for dimension in VOTE_DIMENSIONS:
        column: dict[str, str | None] = {}
        for name in annotators:
            row = entry.rows.get(name)
            cell = canonical_label(dimension, getattr(row, dimension) if row else None)
            if cell.unknown:
                out.append(Disagreement(entry.draft.task_id, dimension, UNKNOWN_LABEL, detail=f"{name}: {cell.raw!r}"))
            vote = cell.value
            if dimension == "keep" and vote is None and not cell.unknown and row is not None and _has_content(row):
                vote = "yes"
            column[name] = vote
        entry.votes[dimension] = column


def _has_content(row: SheetRow) -> bool:
    """Whether the annotator worked on the task (a note alone, e.g. "skipped", is no work)."""
    return any((row.stage, row.task, row.data, row.edited_prompt))


def majority(votes: Sequence[str | None]) -> tuple[str | None, bool]:
    """The most frequent vote and whether the top was tied (then the winner is None)."""
    counts = Counter(v for v in votes if v is not None).most_common()
    if not counts:
        return None, False
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None, True
    return counts[0][0], False


def _format_votes(column: dict[str, str | None]) -> str:
    return "; ".join(f"{name}={vote if vote is not None else ''}" for name, vote in column.items())


def _label_decisions(entry: _TaskVotes, out: list[Disagreement]) -> dict[str, str | None]:
    task_id, labels = entry.draft.task_id, {}
    for dimension in LABEL_DIMENSIONS:
        column = entry.votes[dimension]
        winner, tied = majority(list(column.values()))
        labels[dimension] = winner
        cast = [v for v in column.values() if v is not None]
        if tied:
            out.append(Disagreement(task_id, dimension, TIE, _format_votes(column), "tied votes: label left null"))
        elif cast and len(cast) < len(column):
            missing = ", ".join(name for name, vote in column.items() if vote is None)
            out.append(
                Disagreement(task_id, dimension, MISSING_VOTES, _format_votes(column), f"no vote from {missing}")
            )
    return labels


def _keep_decision(entry: _TaskVotes, out: list[Disagreement]) -> tuple[bool, str | None]:
    column = entry.votes["keep"]
    yes = sum(v == "yes" for v in column.values())
    no = sum(v == "no" for v in column.values())
    if yes == no and no:
        out.append(
            Disagreement(entry.draft.task_id, "keep", KEEP_TIE, _format_votes(column), "keep/discard tie: task kept")
        )
    if no <= yes:
        return True, None
    notes = [
        f"{name}: {entry.rows[name].notes}" for name, vote in column.items() if vote == "no" and entry.rows[name].notes
    ]
    reason = f"discarded by {no} of {yes + no} annotators"
    return False, reason + (": " + "; ".join(notes) if notes else "")


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _prompt_decision(entry: _TaskVotes, out: list[Disagreement]) -> tuple[str, str]:
    """(prompt, source): a winning edit (see module docstring) or the draft."""
    draft = entry.draft.prompt
    edits = {
        name: row.edited_prompt.strip()
        for name, row in sorted(entry.rows.items())
        if row.edited_prompt.strip() and _squash(row.edited_prompt) != _squash(draft)
    }
    if not edits:
        return draft, "draft"
    groups = Counter(_squash(text) for text in edits.values()).most_common()
    top, count = groups[0]
    unique_top = len(groups) == 1 or groups[1][1] < count
    if unique_top and (count >= 2 or len(edits) == 1):
        return next(text for text in edits.values() if _squash(text) == top), "edited"
    detail = f"{len(edits)} annotators edited ({', '.join(edits)}) with no majority edit: draft kept"
    out.append(Disagreement(entry.draft.task_id, "prompt", CONFLICTING_EDITS, detail=detail))
    return draft, "draft"


def _merge_task(
    entry: _TaskVotes, annotators: Sequence[str], require_labels: bool, out: list[Disagreement]
) -> MergedLabel:
    _normalise_votes(entry, annotators, out)
    labels = _label_decisions(entry, out)
    keep, reason = _keep_decision(entry, out)
    prompt, source = _prompt_decision(entry, out)
    if not any(v is not None for d in LABEL_DIMENSIONS for v in entry.votes[d].values()):
        out.append(Disagreement(entry.draft.task_id, "all", NO_VOTES, detail="no annotator labelled this task"))
        if require_labels and keep:
            keep, reason = False, "no annotator labelled this task (labels.require_labels)"
    return MergedLabel(
        task_id=entry.draft.task_id,
        keep=keep,
        discard_reason=reason,
        prompt=prompt,
        prompt_source=source,
        votes={d: [entry.votes[d][name] for name in annotators] for d in VOTE_DIMENSIONS},
        annotators=len(entry.rows),
        annotator_ids=list(annotators),
        **labels,
    )


def merge_labels(
    prompts: Sequence[PromptRecord], rows: Sequence[SheetRow], require_labels: bool = False
) -> MergeResult:
    """Merge every annotator's rows into one MergedLabel per drafted prompt (sorted by task id)."""
    disagreements: list[Disagreement] = []
    annotators = sorted({row.annotator for row in rows})
    tasks = _index_rows(prompts, rows, disagreements)
    labels = [_merge_task(tasks[tid], annotators, require_labels, disagreements) for tid in sorted(tasks)]
    per_dimension = [agreement_for(d, [label.votes[d] for label in labels]) for d in VOTE_DIMENSIONS]
    pairable = sum(any(sum(v is not None for v in label.votes[d]) >= 2 for d in LABEL_DIMENSIONS) for label in labels)
    agreement = [*per_dimension, overall_agreement(per_dimension, pairable)]
    disagreements.sort(key=lambda d: (d.task_id, d.dimension, d.reason, d.detail))
    return MergeResult(labels, agreement, disagreements)


# ---------------------------------------------------------------- files


def read_sheets(paths: Sequence[str | Path]) -> list[SheetRow]:
    """All annotators' rows; two files may not claim the same annotator name."""
    rows: list[SheetRow] = []
    owner: dict[str, str] = {}
    for path in paths:
        sheet = read_sheet(path)
        for name in sorted({r.annotator for r in sheet}):
            if owner.setdefault(name, str(path)) != str(path):
                raise SheetError(f"{path}: annotator {name!r} already read from {owner[name]} (rename one sheet)")
        rows += sheet
        log.info("%s: %d rows", path, len(sheet))
    return rows


def _csv_text(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def _fmt(value: float | None) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.4f}"


def agreement_csv(rows: Sequence[Agreement]) -> str:
    return _csv_text(
        AGREEMENT_COLUMNS,
        [(a.dimension, _fmt(a.alpha), a.units, a.annotators, a.values, _fmt(a.observed_agreement)) for a in rows],
    )


def disagreements_csv(rows: Sequence[Disagreement]) -> str:
    return _csv_text(DISAGREEMENT_COLUMNS, [(d.task_id, d.dimension, d.reason, d.votes, d.detail) for d in rows])


@dataclass(frozen=True)
class MergePaths:
    merged: Path
    agreement: Path
    disagreements: Path


def merge_labels_files(
    prompt_paths: Sequence[str | Path], sheet_paths: Sequence[str | Path], out: MergePaths, cfg: LabelsConfig
) -> MergeResult:
    """Rule entry point: drafted prompts + annotators' sheets → merged labels and reports."""
    prompts = [p for path in prompt_paths for p in read_jsonl(path, PromptRecord)]
    result = merge_labels(prompts, read_sheets(sheet_paths), cfg.require_labels)
    write_jsonl(out.merged, result.labels)
    write_text(out.agreement, agreement_csv(result.agreement))
    write_text(out.disagreements, disagreements_csv(result.disagreements))
    counts = Counter(d.reason for d in result.disagreements)
    unknown = [d.detail for d in result.disagreements if d.reason == UNKNOWN_LABEL]
    if unknown:
        log.warning("%d unknown labels counted as missing votes: %s", len(unknown), "; ".join(unknown[:10]))
    log.info(
        "merged %d tasks from %d sheets; disagreements: %s",
        len(result.labels),
        len(sheet_paths),
        dict(sorted(counts.items())),
    )
    return result
