"""The tasks a run scores, drawn the same way by every job that needs them.

``evaluate.sample_tasks`` is a seeded sample of each repository's tasks, the same for every
model; it is drawn when candidates are evaluated (every task is still generated). A run's
subset narrows the tasks further and narrows generation as well, so that ``dlbench run
--limit N`` pays for N tasks only. In order:

1. ``evaluate.repos``: only these repositories' tasks (``owner/name``, or its slug);
2. ``evaluate.task_ids``: only these tasks;
3. ``evaluate.sample_tasks``: each repository's seeded sample (``sample_task_ids``);
4. ``evaluate.sample_limit``: at most this many in all, stratified by pipeline stage and
   repository (``stratified_sample``).

Every draw ranks by a hash of (seed, id), so it depends on no order of the input.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from dlbench.config import EvaluateConfig
from dlbench.records import BenchmarkTask, repo_slug

SUBSET_KEYS = ("sample_limit", "task_ids", "repos")  # the evaluate keys that narrow generation too
UNLABELLED_STAGE = "unlabelled"


def rank(seed: int, key: str) -> str:
    """The seeded order of ids, strata and cells: a hash, so no input order matters."""
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def sample_task_ids(task_ids: Iterable[str], size: int, seed: int) -> set[str]:
    """A seeded sample of ``size`` task ids (all when ``size`` is 0), the same for every model:
    ids ranked by a hash of (seed, id), so it depends on no order of the input."""
    ids = sorted(set(task_ids))
    if size == 0 or size >= len(ids):
        return set(ids)
    return set(sorted(ids, key=lambda t: rank(seed, t))[:size])


# ---------------------------------------------------------------- the run's subset


def _subset_of(cfg: EvaluateConfig) -> tuple[int, list[str], list[str]]:
    # getattr: a config pickled by a workflow that started before these keys existed lacks them
    return getattr(cfg, "sample_limit", 0), list(getattr(cfg, "task_ids", [])), list(getattr(cfg, "repos", []))


def subset_active(cfg: EvaluateConfig) -> bool:
    """Whether ``repos``, ``task_ids`` or ``sample_limit`` narrow the run."""
    limit, ids, repos = _subset_of(cfg)
    return bool(limit or ids or repos)


def subset_settings(cfg: EvaluateConfig) -> dict[str, Any] | None:
    """The settings that decide the subset, as plain values (for the rules' params), or None
    when no subset is set: a configuration without one keeps its params, and so its jobs."""
    if not subset_active(cfg):
        return None
    limit, ids, repos = _subset_of(cfg)
    return {
        "sample_limit": limit,
        "task_ids": sorted(ids),
        "repos": sorted(_slug_key(r) for r in repos),
        "sample_tasks": cfg.sample_tasks,
        "sample_seed": cfg.sample_seed,
    }


def _slug_key(repo: str) -> str:
    return repo_slug(repo.strip()).lower()


def scored_task_ids(tasks: Iterable[BenchmarkTask], cfg: EvaluateConfig) -> set[str]:
    """The ids of the tasks a run evaluates: ``repos``, ``task_ids``, each repository's
    ``sample_tasks`` sample, then ``sample_limit`` stratified (the module's order)."""
    limit, ids, repos = _subset_of(cfg)
    wanted_repos, wanted_ids = {_slug_key(r) for r in repos}, set(ids)
    pool = [
        t
        for t in tasks
        if (not wanted_repos or t.slug.lower() in wanted_repos) and (not wanted_ids or t.task_id in wanted_ids)
    ]
    by_repo: dict[str, list[str]] = defaultdict(list)
    for t in pool:
        by_repo[t.slug].append(t.task_id)
    sampled = {i for repo_ids in by_repo.values() for i in sample_task_ids(repo_ids, cfg.sample_tasks, cfg.sample_seed)}
    pool = [t for t in pool if t.task_id in sampled]
    return stratified_sample(pool, limit, cfg.sample_seed) if limit else {t.task_id for t in pool}


def generated_task_ids(tasks: Iterable[BenchmarkTask], cfg: EvaluateConfig | None) -> set[str] | None:
    """The ids generation keeps to: the scored ones when a subset is set, else None (every
    task: ``sample_tasks`` alone samples at evaluation)."""
    if cfg is None or not subset_active(cfg):
        return None
    return scored_task_ids(tasks, cfg)


def scored_repos(slugs: Iterable[str], cfg: EvaluateConfig) -> list[str]:
    """The kept repositories whose candidates are generated and evaluated (and images built):
    those ``repos`` names and that hold one of ``task_ids``, or every one."""
    _, ids, repos = _subset_of(cfg)
    wanted_repos = {_slug_key(r) for r in repos}
    holding = {i.split(":", 1)[0].lower() for i in ids}
    return [
        s for s in slugs if (not wanted_repos or s.lower() in wanted_repos) and (not holding or s.lower() in holding)
    ]


def unknown_repos(slugs: Iterable[str], cfg: EvaluateConfig) -> list[str]:
    """The names in ``repos`` that are no kept repository (a typo scores nothing of it)."""
    kept = {s.lower() for s in slugs}
    return [r for r in _subset_of(cfg)[2] if _slug_key(r) not in kept]


# ---------------------------------------------------------------- stratified sample


def stage_of(task: BenchmarkTask) -> str:
    return task.stage or UNLABELLED_STAGE


def stratified_sample(tasks: Iterable[BenchmarkTask], limit: int, seed: int) -> set[str]:
    """``limit`` task ids (all when ``limit`` is 0 or at least their number), stratified by
    pipeline stage and by repository.

    Each stage gets its share of ``limit`` by size (largest remainder), at least one when
    ``limit`` is at least the number of stages, and so does each repository. The counts per
    (stage, repository) cell meet both margins as far as the cells' sizes allow (a maximum
    flow: ``_cell_counts``); a stage's share left unmet after that comes from its other
    tasks. Within a cell, and among ties, the seeded rank decides."""
    cells: dict[tuple[str, str], list[str]] = defaultdict(list)
    for t in tasks:
        cells[(stage_of(t), t.slug)].append(t.task_id)
    total = sum(len(ids) for ids in cells.values())
    if limit <= 0 or limit >= total:
        return {i for ids in cells.values() for i in ids}
    for ids in cells.values():
        ids.sort(key=lambda i: rank(seed, i))
    stage_sizes: dict[str, int] = defaultdict(int)
    repo_sizes: dict[str, int] = defaultdict(int)
    for (stage, repo), ids in cells.items():
        stage_sizes[stage] += len(ids)
        repo_sizes[repo] += len(ids)
    stages = allocate(stage_sizes, limit, seed)
    counts = _cell_counts({c: len(ids) for c, ids in cells.items()}, stages, allocate(repo_sizes, limit, seed), seed)
    for stage, quota in stages.items():
        mine = [c for c in cells if c[0] == stage]
        leftovers = sorted((rank(seed, i), c) for c in mine for i in cells[c][counts[c] :])
        for _, cell in leftovers[: quota - sum(counts[c] for c in mine)]:
            counts[cell] += 1  # the cell's next id in rank order: its rank is the lowest left there
    return {i for cell, n in counts.items() for i in cells[cell][:n]}


def allocate(sizes: Mapping[str, int], limit: int, seed: int) -> dict[str, int]:
    """``limit`` split over strata of these (positive) sizes in proportion, by largest
    remainder; every stratum gets one at least when ``limit`` allows; ties by seeded rank."""
    total = sum(sizes.values())
    if limit >= total:
        return dict(sizes)
    least = 1 if limit >= len(sizes) else 0
    ideal = {k: Fraction(limit * n, total) for k, n in sizes.items()}
    shares = {k: min(n, max(least, int(ideal[k]))) for k, n in sizes.items()}
    while sum(shares.values()) > limit:  # the floor of one took too much: give back the most over
        k = max((k for k in shares if shares[k] > least), key=lambda k: (shares[k] - ideal[k], rank(seed, k)))
        shares[k] -= 1
    while sum(shares.values()) < limit:
        k = max((k for k in shares if shares[k] < sizes[k]), key=lambda k: (ideal[k] - shares[k], rank(seed, k)))
        shares[k] += 1
    return shares


def _cell_counts(
    sizes: Mapping[tuple[str, str], int], stages: Mapping[str, int], repos: Mapping[str, int], seed: int
) -> dict[tuple[str, str], int]:
    """As many tasks per (stage, repository) cell as can be, within each cell's size and no
    more than each stage's and each repository's share: a maximum flow source → stage →
    repository → sink (Edmonds–Karp; paths searched in seeded order, so the seed decides
    among equally good counts)."""
    source, sink = ("source", ""), ("sink", "")
    capacity: dict[tuple, dict[tuple, int]] = defaultdict(dict)

    def edge(a: tuple, b: tuple, cap: int) -> None:
        capacity[a][b] = capacity[a].get(b, 0) + cap
        capacity[b].setdefault(a, 0)

    for stage in sorted(stages, key=lambda s: rank(seed, s)):
        edge(source, ("stage", stage), stages[stage])
    for stage, repo in sorted(sizes, key=lambda c: rank(seed, f"{c[0]}\0{c[1]}")):
        edge(("stage", stage), ("repo", repo), sizes[(stage, repo)])
    for repo in sorted(repos, key=lambda r: rank(seed, r)):
        edge(("repo", repo), sink, repos[repo])
    while path := _augmenting_path(capacity, source, sink):
        pushed = min(capacity[a][b] for a, b in path)
        for a, b in path:
            capacity[a][b] -= pushed
            capacity[b][a] += pushed
    return {(s, r): sizes[(s, r)] - capacity[("stage", s)][("repo", r)] for s, r in sizes}


def _augmenting_path(capacity: Mapping[tuple, Mapping[tuple, int]], source: tuple, sink: tuple) -> Sequence[tuple]:
    """The shortest path with room left on every edge, as its edges (empty: none)."""
    parent: dict[tuple, tuple] = {source: source}
    queue = deque([source])
    while queue and sink not in parent:
        node = queue.popleft()
        for nxt, room in capacity[node].items():
            if room > 0 and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    if sink not in parent:
        return []
    path, node = [], sink
    while node != source:
        path.append((parent[node], node))
        node = parent[node]
    return path[::-1]
