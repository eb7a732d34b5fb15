"""Gold's evaluation repairs the image: a gold test that fails on a missing module adds its
distribution, the image is rebuilt, and gold runs again on it.

The build's own check imports what the tests import at module level and collects them; a
module imported lazily (inside a function, or by a library for an optional feature) shows
only when a test runs. Gold is the project's own code, so a gold test failing with
``missing module x`` is the environment's fault, not the task's; so is ``cannot import name
'n' from <an installed library>`` when the import guarding n's definition fails
(``envcheck.guard_script``: Transformers without Pillow), and a test failing on a name it
never got because the project's own code swallowed a module's absence (``swallowed_modules``:
small-text without setfit); a gold test failing on a shared library the system lacks
(``libgomp.so.1: cannot open shared object file``) installs the Debian package that has it
(``images/libraries.py``); and a gold test failing on a name
an installed library no longer has (``module 'numpy' has no attribute 'in1d'``) pins that
library below the release that removed it (the one the message names, else the locked
minor release), as old code meets a newer library than it was written for. At most
``images.repair_rounds`` rebuilds; each addition is a ``RepairStep`` whose reason names the
gold run that showed it. The image gold settled on (``results/images/{repo}.repaired.json``)
is the one every other model is evaluated on, so all verdicts come from one environment.

A task a test of which fails every gold run on that image, for a cause that is not the
machine's, runs ``evaluate.gold_reseeds`` more times from the seeds after gold's, to tell a
draw from a broken test: one that fails from seeds 0 and 1 and passes from 2 is flaky
(small-text's random three-class datasets), one that fails from every seed fails with the
project's own code (``testset.failing_tests``); both are dropped, with that cause.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from dlbench.config import EvaluateConfig, ImagesConfig
from dlbench.harness.code import support_files
from dlbench.harness.evaluate import EVIDENCE_ROOT, evaluate_candidates
from dlbench.harness.testset import failing_every_run
from dlbench.images.envcheck import (
    CANNOT_IMPORT,
    MISSING_LIBRARY,
    TooNew,
    guard_script,
    missing_modules,
    removed_names,
    swallowed_script,
)
from dlbench.records import CloneRecord, Evaluation, ImageRecord, ImageStatus
from dlbench.store import read_json, write_json, write_jsonl

log = logging.getLogger(__name__)
K = TypeVar("K", bound=Hashable)

MISSING_MODULE_CAUSE = re.compile(r"missing module ([\w.]+)")  # verdict.describe's words


def gold_failures(evaluations: Iterable[Evaluation]) -> Iterator[tuple[str, str]]:
    """(where: ``gold run of <task>: <test>``, cause) of every gold failure."""
    for e in evaluations:
        for node, cause in [*sorted(e.causes.items()), ("the run", e.detail or "")]:
            yield f"gold run of {e.task_id}: {node}", cause


def first_failures(evaluations: Iterable[Evaluation], pattern: re.Pattern, key: Callable[[re.Match], K]) -> dict[K, str]:  # fmt: skip
    """``key(match)`` → the first gold failure (task, test, cause) whose cause ``pattern`` matches."""
    found: dict[K, str] = {}
    for where, cause in gold_failures(evaluations):
        for match in pattern.finditer(cause):
            found.setdefault(key(match), f"{where}: {cause}"[:300])
    return found


def gold_missing_modules(evaluations: Iterable[Evaluation]) -> dict[str, str]:
    """Top-level module → the first gold failure that shows it missing (task, test, cause)."""
    return first_failures(evaluations, MISSING_MODULE_CAUSE, lambda m: m[1].split(".")[0])


def gold_missing_libraries(evaluations: Iterable[Evaluation]) -> dict[str, str]:
    """Shared library file name → the first gold failure that shows the system lacking it
    (``libgomp.so.1: cannot open shared object file``, where a test imports its library)."""
    return first_failures(evaluations, MISSING_LIBRARY, lambda m: m["soname"])


def gold_removed_names(evaluations: Iterable[Evaluation]) -> dict[str, TooNew]:
    """Top-level module → the first gold failure on a name it does not have (a newer release
    removed it: ``np.in1d`` is gone from numpy 2.4), with the release when the message names it
    (``envcheck.removed_names``)."""
    found: dict[str, TooNew] = {}
    for where, cause in gold_failures(evaluations):
        for module, release in removed_names(cause):
            found.setdefault(module, TooNew(f"{where}: {cause}"[:300], release))
    return found


def guarded_names(evaluations: Iterable[Evaluation]) -> dict[tuple[str, str], str]:
    """(library file, name) → the first gold failure on a name an installed library did not define."""
    return first_failures(evaluations, CANNOT_IMPORT, lambda m: (m["path"], m["name"]))


def missing_guards(evaluations: Iterable[Evaluation], image: ImageRecord, timeout_s: float) -> dict[str, str]:
    """Top-level module → why: the modules whose absence left a library without a name gold's
    tests import (``envcheck.guard_script``, run in the image)."""
    from dlbench.images.build import docker_client
    from dlbench.images.layers import run_check

    found: dict[str, str] = {}
    guarded = guarded_names(evaluations)
    client = docker_client() if guarded else None
    for (path, name), reason in guarded.items():
        _, output = run_check(client, image.tag, guard_script(path, name), timeout_s)
        for module, line in missing_modules(output).items():
            found.setdefault(module, f"{line}; {reason}"[:400])  # what the probe found first: a reason is long
    return found


NAME_ERROR = re.compile(r"NameError: name '\w+' is not defined")


def swallowed_modules(evaluations: Iterable[Evaluation], image: ImageRecord, timeout_s: float) -> dict[str, str]:
    """Top-level module → why: the modules the project's own code went on without while the
    test files of gold's ``NameError`` failures were collected (``envcheck.swallowed_script``,
    run in the image): an optional import swallowed leaves a name undefined, not a module named."""
    from dlbench.images.build import docker_client
    from dlbench.images.layers import run_check

    failed = {node.split("::")[0]: f"gold run of {e.task_id}: {node}: {cause}" for e in evaluations
              for node, cause in e.causes.items() if NAME_ERROR.search(cause)}  # fmt: skip
    if not failed:
        return {}
    _, output = run_check(docker_client(), image.tag, swallowed_script(failed), timeout_s)
    first = next(iter(failed.values()))
    return {module: f"{line}; {first}"[:400] for module, line in missing_modules(output).items()}


def evaluate_gold(
    generations: Path, benchmark: Path, clone: Path, image: Path, out: Path, repaired_out: Path, backend: str,
    cfg: EvaluateConfig, images: ImagesConfig, downloads: Path, repair_log: Path, evidence_root: Path = EVIDENCE_ROOT,
) -> tuple[list[Evaluation], ImageRecord]:  # fmt: skip
    """The ``evaluate_gold`` rule: gold's evaluations on the image its runs leave nothing
    missing in (or the last repair round's), and that image's record.

    After a rebuild only the tasks that failed run again, to show what is missing next;
    once the image is settled every task runs on it (the last round's runs are reused by
    their evidence hash), so all of gold's verdicts come from that image."""
    record = built = read_json(image, ImageRecord)
    checkout = Path(read_json(clone, CloneRecord).path)
    results = tried = evaluate_candidates(generations, benchmark, clone, record, backend, cfg, evidence_root)
    for round_ in range(1, images.repair_rounds + 1):
        unfound = swallowed_modules(tried, record, images.check_timeout_s)
        missing = gold_missing_modules(tried) | missing_guards(tried, record, images.check_timeout_s) | unfound
        removed, libraries = gold_removed_names(tried), gold_missing_libraries(tried)
        log_path = _round_log(repair_log, round_)
        rebuilt = (
            _rebuilt(record, checkout, missing, removed, images, downloads, log_path, set(unfound), libraries)
            if missing or removed or libraries
            else None
        )
        if rebuilt is None:
            break
        record, failing = rebuilt, {e.task_id for e in tried if not e.passed}
        tried = evaluate_candidates(generations, benchmark, clone, record, backend, cfg, evidence_root, only=failing)
    if record.tag != built.tag:
        results = evaluate_candidates(generations, benchmark, clone, record, backend, cfg, evidence_root)
    if cfg.gold_reseeds and (unsettled := failing_every_run(results)):
        log.info("%d tasks fail every gold run: %d further runs each, from new seeds", len(unsettled), cfg.gold_reseeds)
        results += evaluate_candidates(
            generations, benchmark, clone, record, backend, cfg, evidence_root, only=unsettled, reseed=True
        )
    write_jsonl(out, results)
    write_json(repaired_out, record)
    return results, record


def _rebuilt(
    record: ImageRecord, checkout: Path, missing: dict[str, str], removed: dict[str, TooNew],
    images: ImagesConfig, downloads: Path, log_path: Path, unfound: set[str], libraries: dict[str, str],
) -> ImageRecord | None:  # fmt: skip
    """The image with ``missing`` and ``removed`` repaired, or None when nothing can be done or
    the rebuild failed (gold's verdicts on the current image stand: a broken repair must not lose them).
    ``unfound``: modules no finder had, so never the project's own whatever its files are named."""
    from dlbench.images.build import repair_project_image

    log.info("gold runs miss %s: repairing %s (%s)", ", ".join(sorted({*missing, *removed, *libraries})), record.repo, log_path)  # fmt: skip
    rebuilt = repair_project_image(
        record, checkout, missing, log_path, support_files(), images, downloads, removed, unfound, libraries
    )
    if rebuilt is not None and rebuilt.status != ImageStatus.OK:
        log.warning("the repaired image of %s did not build (%s): keeping %s", record.repo, rebuilt.error, record.tag)
        return None
    return rebuilt


def _round_log(repair_log: Path, round_: int) -> Path:
    return repair_log.with_name(f"{repair_log.stem}-{round_}{repair_log.suffix}")
