"""Rule ``trace_tests``: clone, image and tests → ``trace.jsonl`` (one ``TraceRecord`` a test)."""

from __future__ import annotations

import logging
from pathlib import Path

from dlbench.config import MineConfig
from dlbench.mine.cache import load_clone
from dlbench.records import ImageRecord, ImageStatus, TestCase, TraceRecord
from dlbench.store import read_json, read_jsonl, write_jsonl
from dlbench.trace.container import trace_in_image
from dlbench.trace.plan import plan_trace
from dlbench.trace.truth import trace_records

log = logging.getLogger(__name__)


def trace_tests_file(
    clone_json: str | Path,
    image_json: str | Path,
    tests_jsonl: str | Path,
    out: str | Path,
    run_log: Path,
    cfg: MineConfig,
    parse_cache: str | Path,
) -> int:
    """Trace the repository's tests in its image; an empty artifact when there is no clone
    or no image (the dynamic check then keeps every task: nothing contradicts them)."""
    clone, repo = load_clone(clone_json, cfg, parse_cache)
    image = read_json(image_json, ImageRecord)
    records: list[TraceRecord] = []
    if repo is None or image.status != ImageStatus.OK or image.tag is None:
        log.warning(
            "%s: no checkout or no image (%s), writing an empty trace",
            clone.full_name,
            image.status,
        )
    else:
        plan = plan_trace(repo, read_jsonl(tests_jsonl, TestCase), cfg.trace)
        sample = f" (a sample of {len(plan.files)} test files)" if plan.sampled else ""
        log.info(
            "%s: tracing %d test files%s in %s",
            clone.full_name,
            len(plan.files),
            sample,
            image.tag,
        )
        lines = trace_in_image(image.tag, plan, cfg.trace, run_log)
        records = trace_records(lines, clone.full_name, plan.candidates)
    return write_jsonl(out, records)
