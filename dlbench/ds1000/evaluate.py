"""The DS-1000 candidates of one model × technique, run in the sandbox (``harness/ds1000.py``)."""

from __future__ import annotations

import logging
from pathlib import Path

from dlbench.config import EvaluateConfig
from dlbench.harness.ds1000 import evaluate_ds1000
from dlbench.records import Ds1000Problem, EvalStatus, Evaluation, Generation, ImageRecord, ImageStatus
from dlbench.store import read_json, read_jsonl, write_jsonl

log = logging.getLogger(__name__)

EVIDENCE_ROOT = Path("results/ds1000/evidence")


class InfrastructureFaults(RuntimeError):
    """Candidates the machine failed (not the model): nothing is written, a rerun runs only them."""


def evaluate_file(
    problems: str | Path,
    generations: str | Path,
    image: str | Path,
    out: str | Path,
    cfg: EvaluateConfig,
    timeout_s: float,
    evidence_root: Path = EVIDENCE_ROOT,
    jobs: int = 1,
) -> list[Evaluation]:
    """The rule ``ds1000_evaluate``: every candidate's evaluation, written to ``out``. Candidates
    whose container was stopped from outside fail the job (their evidence is not kept), so the
    next run runs just them; every other verdict stays in the evidence and is reused."""
    gens = read_jsonl(generations, Generation)
    record = read_json(image, ImageRecord)
    if record.status != ImageStatus.OK or not record.tag:
        evaluations = [_image_error(g, record) for g in gens]
    else:
        found = read_jsonl(problems, Ds1000Problem)
        evaluations = evaluate_ds1000(found, gens, record.tag, cfg, timeout_s, Path(evidence_root), jobs)
    faults = [e for e in evaluations if e.status == EvalStatus.INFRA_ERROR]
    if faults:
        raise InfrastructureFaults(
            f"{out}: {len(faults)} of {len(evaluations)} candidates failed on the machine, not the model "
            f"(first: {faults[0].task_id}: {faults[0].detail}); rerun to run just them"
        )
    write_jsonl(out, evaluations)
    counts: dict[str, int] = {}
    for e in evaluations:
        counts[str(e.status)] = counts.get(str(e.status), 0) + 1
    log.info("%s: %d candidates %s", out, len(evaluations), counts)
    return evaluations


def _image_error(gen: Generation, record: ImageRecord) -> Evaluation:
    return Evaluation(
        task_id=gen.task_id, model=gen.model, technique=gen.technique, run=gen.run, sample=gen.sample,
        status=EvalStatus.IMAGE_ERROR, passed=False, tests={}, duration_s=0.0, backend="docker",
        detail=f"the DS-1000 image could not be built: {(record.error or '').splitlines()[0] if record.error else 'no tag'}",
    )  # fmt: skip
