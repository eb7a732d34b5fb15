"""Which DS-1000 problems the track runs, in two forms: as released, and as benchmark records.

The file is DS-1000's released format (``xlangai/DS-1000``'s ``data/ds1000.jsonl.gz``, read
by the comparison's loader, ``report/external.py``). ``ds1000.sample_size`` draws a seeded
sample spread over the libraries in proportion to their size (largest remainders), so a
small run still covers every library the file has.
"""

from __future__ import annotations

import logging
import math
import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from dlbench.config import Ds1000Config
from dlbench.generate.ds1000 import as_task
from dlbench.records import Ds1000Problem
from dlbench.report.external import load_ds1000_problems
from dlbench.store import write_jsonl

log = logging.getLogger(__name__)


def sample_problems(problems: Sequence[Ds1000Problem], size: int, seed: int) -> list[Ds1000Problem]:
    """``size`` problems (0 or more than there are: all), each library's share by its size, in file order."""
    if size <= 0 or size >= len(problems):
        return list(problems)
    by_library: dict[str, list[Ds1000Problem]] = defaultdict(list)
    for problem in problems:
        by_library[problem.library].append(problem)
    exact = {lib: size * len(members) / len(problems) for lib, members in by_library.items()}
    counts = {lib: math.floor(share) for lib, share in exact.items()}
    for lib in sorted(exact, key=lambda lib: (counts[lib] - exact[lib], lib))[: size - sum(counts.values())]:
        counts[lib] += 1
    chosen = {
        p.task_id
        for lib, members in sorted(by_library.items())
        for p in random.Random(f"{seed}:{lib}").sample(members, counts[lib])
    }
    return [p for p in problems if p.task_id in chosen]


def write_problems(cfg: Ds1000Config, out_problems: str | Path, out_benchmark: str | Path) -> list[Ds1000Problem]:
    """The rule ``ds1000_problems``: the chosen problems as released (``problems.jsonl``) and as
    benchmark records (``benchmark.jsonl``, what generation and the tables read)."""
    every = load_ds1000_problems(cfg.path)
    chosen = sample_problems(every, cfg.sample_size, cfg.seed)
    duplicates = len(chosen) - len({p.task_id for p in chosen})
    if duplicates:
        raise ValueError(f"{cfg.path}: {duplicates} problems share a library and problem_id")
    write_jsonl(out_problems, chosen)
    write_jsonl(out_benchmark, [as_task(p) for p in chosen])
    libraries = sorted({p.library for p in chosen})
    log.info("%s: %d of %d problems (%s)", cfg.path, len(chosen), len(every), ", ".join(libraries))
    return chosen
