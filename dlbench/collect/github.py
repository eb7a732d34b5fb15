"""The one seam to GitHub: a configured PyGithub client, rate-limit waits, record conversion.

``open_github(cfg)`` yields a ``Github`` talking to ``cfg.endpoint``; for ``"standin"``
it first starts the local stand-in (``standin.py``) in-process on ``cfg.standin_data``.
Transient errors and rate limits are retried by PyGithub's own ``GithubRetry`` (a urllib3
``Retry``): 5xx, 429 and dropped connections with exponential backoff, 403 secondary
rate limits after ``Retry-After`` (else the backoff), 403 primary limits until the reset.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from github import Auth, Github, GithubRetry
from github.Repository import Repository

from dlbench.config import CrawlConfig
from dlbench.records import RepoMeta
from dlbench.standins.github import GitHubStandIn

log = logging.getLogger(__name__)

STANDIN = "standin"
GITHUB_INTERVAL_S = 0.25  # PyGithub's default pause between requests to the real API
SECONDARY_WAIT_STEPS = 60  # GitHub: after a secondary limit without Retry-After, wait at least a minute
MAX_PER_PAGE = 100  # the most GitHub serves per page: fewest requests


def make_retry(cfg: CrawlConfig) -> GithubRetry:
    """Retries of transient errors and rate limits, timed by ``max_retries``/``backoff_s``.

    A secondary limit without ``Retry-After`` waits ``SECONDARY_WAIT_STEPS × backoff_s``
    (a minute by default, as GitHub asks), growing like the backoff on further retries.
    """
    return GithubRetry(
        total=cfg.max_retries,
        backoff_factor=cfg.backoff_s,
        secondary_rate_wait=SECONDARY_WAIT_STEPS * cfg.backoff_s,
        status_forcelist=[429, *range(500, 600)],  # GithubRetry adds 403 and inspects its message
    )


def make_github(
    base_url: str,
    cfg: CrawlConfig,
    interval_s: float = GITHUB_INTERVAL_S,
    per_page: int = MAX_PER_PAGE,
    token: str | None = None,
) -> Github:
    """A lazy PyGithub client for ``base_url`` with ``cfg``'s retries."""
    return Github(
        base_url=base_url,
        auth=Auth.Token(token) if token else None,
        per_page=per_page,
        retry=make_retry(cfg),
        seconds_between_requests=interval_s,
        lazy=True,
    )


@contextmanager
def open_github(cfg: CrawlConfig) -> Iterator[Github]:
    """A client for ``cfg.endpoint``; ``"standin"`` serves ``cfg.standin_data`` locally meanwhile."""
    with ExitStack() as stack:
        if cfg.endpoint == STANDIN:
            server = stack.enter_context(GitHubStandIn(cfg.standin_data))
            log.info("GitHub stand-in for %s at %s", cfg.standin_data, server.url)
            stack.callback(lambda: log.info("GitHub stand-in answered %d requests", server.requests))
            gh = make_github(server.url, cfg, interval_s=0.0)  # no pacing, and no token, for a local server
        else:
            gh = make_github(cfg.endpoint, cfg, token=os.environ.get(cfg.token_env) or None)
        stack.callback(gh.close)
        yield gh


def wait_for_primary_reset(gh: Github) -> float:
    """Sleep until the reset when the last response left no requests; return the wait.

    Call only after a first response: PyGithub reads the figures from its headers then.
    """
    remaining, _limit = gh.rate_limiting
    if remaining > 0:
        return 0.0
    wait = max(gh.rate_limiting_resettime - time.time(), 0.0) + 1.0  # the reset second is coarse
    log.warning("primary rate limit exhausted: waiting %.0f s for the reset", wait)
    time.sleep(wait)
    return wait


def meta_from_repo(repo: Repository, found_by: list[str]) -> RepoMeta:
    """A RepoMeta from a PyGithub repository; a complete search item costs no extra request."""
    license_ = repo.license
    return RepoMeta(
        full_name=repo.full_name,
        description=repo.description,
        language=repo.language,
        topics=list(repo.topics or []),
        stars=repo.stargazers_count or 0,
        forks=repo.forks_count or 0,
        created_at=repo.created_at,
        pushed_at=repo.pushed_at,
        updated_at=repo.updated_at,
        license=license_.spdx_id if license_ is not None else None,
        archived=bool(repo.archived),
        fork=bool(repo.fork),
        default_branch=repo.default_branch or "main",
        clone_url=repo.clone_url,
        html_url=repo.html_url,
        found_by=found_by,
    )


def fetch_meta(gh: Github, full_name: str) -> RepoMeta:
    """``GET /repos/{full_name}`` as a RepoMeta (for forced includes the crawl did not find)."""
    return meta_from_repo(gh.get_repo(full_name), [])
