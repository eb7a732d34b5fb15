"""What a traced run needs from the checkout: which files are test code, which test files
run (all, or a seeded sample), which functions are candidates, and the pytest command.

Test code and candidates are decided by mining's own rules (``mine.tests.is_test_support``
and the symbol table), so the dynamic truth names functions exactly as the static call
graph does and the two can be compared key by key.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from dlbench.config import TraceConfig
from dlbench.mine.cache import LoadedRepo
from dlbench.mine.tests import is_test_support
from dlbench.records import TestCase

PLUGIN_MODULE = "dlbench_tracer"  # the name the plugin file is shipped under (``-p`` loads it)


@dataclass(frozen=True, slots=True)
class TracePlan:
    support: list[str]  # test-code files (relative): calls from them are direct
    files: list[str]  # test files to run
    candidates: frozenset[str]  # ``path:qualname`` of every function mining could list
    sampled: bool  # ``files`` is a sample of the test files


def plan_trace(repo: LoadedRepo, tests: list[TestCase], cfg: TraceConfig) -> TracePlan:
    summaries = repo.table.summaries
    support = sorted(p for p, s in summaries.items() if is_test_support(p, s, repo.layout))
    files = sorted({case.file for case in tests})
    chosen = sample_files(files, cfg.max_files, cfg.seed)
    return TracePlan(support, chosen, candidate_keys(repo, set(support)), len(chosen) < len(files))


def sample_files(files: list[str], limit: int, seed: int) -> list[str]:
    """``limit`` files chosen by a seeded hash of their paths (stable as files come and go)."""
    if limit == 0 or len(files) <= limit:
        return files
    ranked = sorted(files, key=lambda f: hashlib.sha256(f"{seed}:{f}".encode()).hexdigest())
    return sorted(ranked[:limit])


def candidate_keys(repo: LoadedRepo, support: set[str]) -> frozenset[str]:
    """Top-level functions and methods of top-level classes outside test code."""
    keys: set[str] = set()
    for path, summary in repo.table.summaries.items():
        if path in support:
            continue
        keys.update(f"{path}:{name}" for name in summary.functions)
        for cls in summary.classes.values():
            keys.update(f"{path}:{cls.name}.{method}" for method in cls.methods)
    return frozenset(keys)


def tracer_argv(
    python: str,
    plan: TracePlan,
    root: str,
    out: str,
    support_json: str,
    cfg: TraceConfig,
) -> list[str]:
    """The command of a traced pytest run of the plan's test files (the plugin on ``sys.path``)."""
    return [
        python, "-m", "pytest", "-p", PLUGIN_MODULE, "-p", "no:cacheprovider", "-q", "-rN",
        f"--trace-out={out}", f"--trace-support={support_json}", f"--trace-root={root}",
        f"--trace-timeout={cfg.timeout_s}", f"--trace-budget={cfg.budget_s}", *plan.files,
    ]  # fmt: skip
