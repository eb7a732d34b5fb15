"""Crawl GitHub's repository search per topic and merge the topics into one list.

Per topic the search asks for ``topic:T [language:L] [pushed:>D] fork:true`` sorted by
stars, and keeps the top ``per_topic``. GitHub serves only the first 1,000 results of any
search, so a larger ``per_topic`` walks down in star windows: after a full window the next
query asks for ``stars:<=S`` where S is the fewest stars seen, and duplicates at the
boundary are dropped by name. Forks are asked for on purpose: selection drops them with a
reason instead of the crawl hiding them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import requests
from github import Github, GithubException

from dlbench.collect.github import meta_from_repo, open_github, wait_for_primary_reset
from dlbench.config import CrawlConfig
from dlbench.logs import Progress
from dlbench.records import RepoMeta
from dlbench.store import read_jsonl, write_jsonl

log = logging.getLogger(__name__)

SEARCH_CAP = 1000


def read_topics(path: str | Path) -> list[str]:
    """Topics, one a line; blank lines and ``#`` comments ignored, duplicates dropped."""
    lines = (line.split("#", 1)[0].strip() for line in Path(path).read_text(encoding="utf-8").splitlines())
    return list(dict.fromkeys(t for t in lines if t))


def topic_query(topic: str, cfg: CrawlConfig, max_stars: int | None = None) -> str:
    """The search ``q`` for one topic, optionally capped at ``max_stars``."""
    parts = [f"topic:{topic}"]
    if cfg.language:
        parts.append(f"language:{cfg.language}")
    if cfg.pushed_after:
        parts.append(f"pushed:>{cfg.pushed_after.isoformat()}")
    if max_stars is not None:
        parts.append(f"stars:<={max_stars}")
    parts.append("fork:true")
    return " ".join(parts)


class CrawlError(RuntimeError):
    """A search that kept failing after every retry."""


def crawl_topic(gh: Github, topic: str, cfg: CrawlConfig) -> list[RepoMeta]:
    """The top ``cfg.per_topic`` repositories of ``topic`` by stars (descending)."""
    try:
        return _crawl_topic(gh, topic, cfg)
    except (GithubException, requests.RequestException) as exc:
        raise CrawlError(f"topic {topic}: search failed after {cfg.max_retries} retries: {exc}") from exc


def _crawl_topic(gh: Github, topic: str, cfg: CrawlConfig) -> list[RepoMeta]:
    found: dict[str, RepoMeta] = {}
    max_stars: int | None = None
    progress = Progress(cfg.per_topic, f"crawl {topic}", unit="repo")
    while len(found) < cfg.per_topic:
        fetched, fewest = _crawl_window(gh, topic_query(topic, cfg, max_stars), topic, cfg.per_topic, found, progress)
        if fetched < SEARCH_CAP or fewest is None:
            break  # this window held every remaining result
        if fewest == max_stars:
            # a whole window of repositories with the same stars: star ranges cannot split it
            log.warning(
                "topic %s: over %d repositories with %d stars; some are out of reach", topic, SEARCH_CAP, fewest
            )
            fewest -= 1
        if fewest < 0:
            break
        max_stars = fewest
    return sorted(found.values(), key=lambda m: (-m.stars, m.full_name))


def _crawl_window(
    gh: Github, query: str, topic: str, want: int, found: dict[str, RepoMeta], progress: Progress
) -> tuple[int, int | None]:
    """Read one search (≤ 1,000 results) into ``found``; return (results read, fewest stars)."""
    log.info("search: %s", query)
    fetched, fewest = 0, None
    for repo in gh.search_repositories(query, sort="stars", order="desc"):
        fetched += 1
        meta = meta_from_repo(repo, [topic])
        fewest = meta.stars if fewest is None else min(fewest, meta.stars)
        if meta.full_name not in found:
            found[meta.full_name] = meta
            progress.advance()
        if len(found) >= want or fetched >= SEARCH_CAP:
            break
        if fetched % gh.per_page == 0:
            wait_for_primary_reset(gh)  # a page has arrived; its headers say what is left
    return fetched, fewest


def crawl_topic_file(
    topic: str, out: str | Path, cfg: CrawlConfig, gh: Github | None = None, force: bool = False
) -> bool:
    """Write ``out`` (RepoMeta JSONL) for one topic; skip without a request if it exists.

    Returns whether the topic was crawled.
    """
    if Path(out).exists() and not force:
        log.info("topic %s: %s exists, not crawled again", topic, out)
        return False
    if gh is None:
        with open_github(cfg) as client:
            metas = crawl_topic(client, topic, cfg)
    else:
        metas = crawl_topic(gh, topic, cfg)
    write_jsonl(out, metas)
    log.info("topic %s: %d repositories → %s", topic, len(metas), out)
    return True


def merge_crawl(paths: Iterable[str | Path], out: str | Path) -> list[RepoMeta]:
    """Merge topic files into ``out``: one record per repository, ``found_by`` the union."""
    merged: dict[str, RepoMeta] = {}
    for path in paths:
        for meta in read_jsonl(path, RepoMeta):
            key = meta.full_name.lower()
            if key in merged:
                known = merged[key]
                known.found_by = sorted(set(known.found_by) | set(meta.found_by))
            else:
                merged[key] = meta.model_copy(update={"found_by": sorted(set(meta.found_by))})
    metas = sorted(merged.values(), key=lambda m: (-m.stars, m.full_name))
    write_jsonl(out, metas)
    return metas
