"""Other benchmarks' published files as (id, prompt, solution) records, beside DL-Bench's.

Formats read (JSON Lines; ``.gz`` is decompressed):

- ``ds1000``: DS-1000 as published on Hugging Face (``xlangai/DS-1000``, ``ds1000.jsonl``):
  ``prompt``, ``reference_code``, ``code_context`` and ``metadata`` (``problem_id``,
  ``library``, ...). The solution is ``reference_code``; the id ``<library>/<problem_id>``.
  ``load_ds1000_problems`` keeps every field (``Ds1000Problem``): the DS-1000 track runs
  the code context's tests; the comparison reads only prompt and solution.
- ``aicodereval``: AICoderEval (``vixuowis/AICoderEval``, ``v5-test-492.jsonl`` and the
  ``*-instruction-format.jsonl`` files). Its field names could not be checked offline,
  so the loader takes the prompt from the first present of ``PROMPT_FIELDS`` and the
  solution from the first of ``CODE_FIELDS`` (the instruction format's ``instruction`` /
  ``output`` among them) and stops with the fields it found when none matches.
- ``dlbench``: a DL-Bench benchmark file (``BenchmarkTask``: ``prompt``, ``ground_truth``).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dlbench.records import BenchmarkTask, Ds1000Problem
from dlbench.store import read_jsonl

PROMPT_FIELDS = ("prompt", "instruction", "problem", "description", "question")
CODE_FIELDS = ("reference_code", "canonical_solution", "solution", "code", "output", "answer")
ID_FIELDS = ("task_id", "id", "problem_id")


class ExternalFormatError(ValueError):
    """A benchmark file whose records lack the fields its format needs (names file and line)."""


@dataclass(frozen=True)
class ExternalTask:
    """One task of any benchmark: what the comparisons read."""

    benchmark: str
    task_id: str
    prompt: str
    code: str


def _json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                yield lineno, json.loads(line)


def _first(record: Mapping, fields: Sequence[str], where: str) -> str:
    for name in fields:
        if isinstance(record.get(name), str):
            return record[name]
    raise ExternalFormatError(f"{where}: none of {', '.join(fields)} (fields: {', '.join(sorted(record))})")


def load_ds1000_problems(path: str | Path, need_context: bool = True) -> list[Ds1000Problem]:
    """Every problem of a DS-1000 file in its released format (``need_context``: each must
    carry the ``code_context`` its tests live in, as the DS-1000 track needs)."""
    path = Path(path)
    try:
        return [
            _ds1000_problem(record, f"{path}:{lineno}", lineno, need_context) for lineno, record in _json_lines(path)
        ]
    except json.JSONDecodeError as exc:
        raise ExternalFormatError(f"{path}: not JSON Lines ({exc})") from None


def _ds1000_problem(record: Mapping, where: str, lineno: int, need_context: bool) -> Ds1000Problem:
    meta = record.get("metadata") or {}
    if not isinstance(meta, Mapping):
        raise ExternalFormatError(f"{where}: metadata is not an object")
    problem_id = meta.get("problem_id", lineno - 1)
    context = record.get("code_context")
    if need_context and not (isinstance(context, str) and "def test_execution" in context):
        raise ExternalFormatError(
            f"{where}: no code_context defining test_execution (fields: {', '.join(sorted(record))})"
        )
    try:
        number = int(problem_id)
    except (TypeError, ValueError):
        if need_context:
            raise ExternalFormatError(f"{where}: metadata.problem_id {problem_id!r} is not a number") from None
        number = lineno - 1  # the comparison reads text only: the id as written still names it
    library = str(meta.get("library", "unknown"))
    return Ds1000Problem(
        task_id=f"{library}/{problem_id}",
        library=library,
        problem_id=number,
        perturbation_type=meta.get("perturbation_type"),
        prompt=_first(record, ("prompt",), where),
        reference_code=_first(record, ("reference_code",), where),
        code_context=context if isinstance(context, str) else "",
        metadata=dict(meta),
    )


def load_ds1000(path: Path, name: str) -> list[ExternalTask]:
    return [
        ExternalTask(name, p.task_id, p.prompt, p.reference_code)
        for p in load_ds1000_problems(path, need_context=False)
    ]


def load_aicodereval(path: Path, name: str) -> list[ExternalTask]:
    tasks = []
    for lineno, record in _json_lines(path):
        where = f"{path}:{lineno}"
        task_id = next((str(record[f]) for f in ID_FIELDS if record.get(f) is not None), str(lineno - 1))
        tasks.append(
            ExternalTask(name, task_id, _first(record, PROMPT_FIELDS, where), _first(record, CODE_FIELDS, where))
        )
    return tasks


def load_dlbench(path: Path, name: str) -> list[ExternalTask]:
    return [ExternalTask(name, t.task_id, t.prompt, t.ground_truth) for t in read_jsonl(path, BenchmarkTask)]


LOADERS: dict[str, Callable[[Path, str], list[ExternalTask]]] = {
    "ds1000": load_ds1000,
    "aicodereval": load_aicodereval,
    "dlbench": load_dlbench,
}


def load_benchmark(path: str | Path, fmt: str, name: str) -> list[ExternalTask]:
    """Every task of one benchmark file in the given format."""
    if fmt not in LOADERS:
        raise ExternalFormatError(f"unknown benchmark format {fmt!r} (known: {', '.join(LOADERS)})")
    try:
        return LOADERS[fmt](Path(path), name)
    except json.JSONDecodeError as exc:
        raise ExternalFormatError(f"{path}: not JSON Lines ({exc})") from None
