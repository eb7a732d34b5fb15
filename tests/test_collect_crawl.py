"""The crawl with PyGithub against the stand-in: results, request counts, faults, the 1,000 cap."""

from __future__ import annotations

import math
import time

import pytest
import requests

from dlbench.collect.crawl import CrawlError, crawl_topic, crawl_topic_file, merge_crawl, read_topics, topic_query
from dlbench.collect.github import make_github, open_github
from dlbench.records import RepoMeta
from dlbench.standins.github import GitHubStandIn, dropped_connection, secondary_rate_limit, server_error
from dlbench.store import read_jsonl
from tests.test_collect_support import crawl_cfg, crawl_topics, make_big_topic, make_world

DL_PYTHON = [
    "acme/torchy",
    "acme/oldie",
    "acme/kerasy",
    "acme/forky",
    "acme/notests",
    "acme/webby",
    "acme/stale",
    "acme/unlicensed",
    "acme/tiny",
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return make_world(tmp_path_factory.mktemp("world"))


def crawl_with(server: GitHubStandIn, topic: str, cfg, per_page: int = 5) -> list[RepoMeta]:
    return crawl_topic(make_github(server.url, cfg, interval_s=0.0, per_page=per_page), topic, cfg)


def test_query_has_the_qualifiers():
    cfg = crawl_cfg("x", pushed_after="2024-01-31")
    assert topic_query("nlp", cfg) == "topic:nlp language:Python pushed:>2024-01-31 fork:true"
    assert topic_query("nlp", crawl_cfg("x", language=None), max_stars=7) == "topic:nlp stars:<=7 fork:true"


def test_crawl_returns_the_topic_by_stars_with_one_request_per_page(world):
    cfg = crawl_cfg(world)
    with GitHubStandIn(world) as server:
        metas = crawl_with(server, "deep-learning", cfg, per_page=2)
        assert [m.full_name for m in metas] == DL_PYTHON  # Rust left out by language:Python, forks asked for
        assert server.requests == math.ceil(len(DL_PYTHON) / 2)  # no per-repository completion requests
    torchy = metas[0]
    assert torchy.stars == 900 and torchy.license == "MIT" and torchy.found_by == ["deep-learning"]
    assert torchy.clone_url.endswith("bundles/torchy.bundle") and torchy.topics == ["deep-learning", "pytorch"]
    assert torchy.pushed_at.year == 2025 and not torchy.archived
    assert next(m for m in metas if m.full_name == "acme/unlicensed").license is None


def test_per_topic_and_pushed_after_limit_the_crawl(world):
    with GitHubStandIn(world) as server:
        top3 = crawl_with(server, "deep-learning", crawl_cfg(world, per_topic=3), per_page=2)
        assert [m.full_name for m in top3] == DL_PYTHON[:3]
        assert server.requests == 2  # stops after the page holding the third result
        recent = crawl_with(server, "deep-learning", crawl_cfg(world, pushed_after="2024-01-01"))
        assert "acme/stale" not in {m.full_name for m in recent} and len(recent) == len(DL_PYTHON) - 1


def test_crawl_survives_rate_limits_server_errors_and_dropped_connections(world):
    cfg = crawl_cfg(world)
    with GitHubStandIn(world) as clean:
        expected = crawl_with(clean, "deep-learning", cfg, per_page=2)
        clean_requests = clean.requests
    faults = {
        2: secondary_rate_limit(retry_after=1),
        3: server_error(502),
        5: secondary_rate_limit(retry_after=None),
        6: dropped_connection(),
        7: server_error(503),
    }
    with GitHubStandIn(world, faults=faults) as faulty:
        start = time.monotonic()
        got = crawl_with(faulty, "deep-learning", cfg, per_page=2)
        elapsed = time.monotonic() - start
        statuses = [status for _, _, status in faulty.log]
    assert got == expected
    assert faulty.requests == clean_requests + len(faults)  # every fault was met, and retried
    assert statuses[1:7] == [403, 502, 200, 403, 0, 503]
    assert 1.6 <= elapsed < 10  # Retry-After: 1 honoured, then 60 × backoff_s (0.6 s) without it


def test_crawl_gives_up_after_max_retries(world):
    cfg = crawl_cfg(world, max_retries=2)
    with GitHubStandIn(world, faults={n: server_error(502) for n in range(1, 10)}) as server:
        with pytest.raises(CrawlError, match="topic deep-learning: search failed after 2 retries.*502"):
            crawl_with(server, "deep-learning", cfg)
        assert server.requests == 3  # the first try and two retries


def test_primary_limit_waits_for_the_reset_instead_of_failing(world):
    cfg = crawl_cfg(world)
    with GitHubStandIn(world, search_limit=2, window_s=0.5) as server:
        metas = crawl_with(server, "deep-learning", cfg, per_page=3)
        statuses = [status for _, _, status in server.log]
    assert [m.full_name for m in metas] == DL_PYTHON
    assert statuses == [200, 200, 200]  # waited when the headers said 0 left: no 403 at all


def test_more_than_1000_per_topic_walks_down_star_windows(tmp_path):
    data = make_big_topic(tmp_path, 2500)
    cfg = crawl_cfg(data, per_topic=3000)
    with GitHubStandIn(data) as server:
        metas = crawl_with(server, "big", cfg, per_page=50)
        statuses = {status for _, _, status in server.log}
        requests = server.requests
    assert len(metas) == 2500 and len({m.full_name for m in metas}) == 2500  # past the cap, no duplicates
    assert [m.stars for m in metas] == sorted((m.stars for m in metas), reverse=True)
    assert statuses == {200}  # never asked past the cap (no 422)
    assert requests <= 2500 // 50 + 3 * 2  # each window re-reads at most one boundary page


def test_per_topic_below_the_total_stops_early(tmp_path):
    data = make_big_topic(tmp_path, 1500)
    with GitHubStandIn(data) as server:
        metas = crawl_with(server, "big", crawl_cfg(data, per_topic=1200), per_page=100)
        assert server.requests == 10 + 3  # a full window, then 3 pages of the next
    assert len(metas) == 1200 and metas[-1].full_name == "acme/r01199"


def test_topic_file_is_skipped_when_present_unless_forced(world, tmp_path):
    cfg = crawl_cfg(world)
    out = tmp_path / "topic" / "pytorch.jsonl"
    with GitHubStandIn(world) as server:
        gh = make_github(server.url, cfg, interval_s=0.0)
        assert crawl_topic_file("pytorch", out, cfg, gh=gh) is True
        used = server.requests
        assert crawl_topic_file("pytorch", out, cfg, gh=gh) is False
        assert server.requests == used  # no request for an existing topic file
        assert crawl_topic_file("pytorch", out, cfg, gh=gh, force=True) is True
        assert server.requests > used
    assert [m.full_name for m in read_jsonl(out, RepoMeta)] == ["acme/torchy", "acme/pytorchonly"]


def test_snapshot_and_merge_dedupe_with_found_by(world, tmp_path):
    topics = tmp_path / "topics.txt"
    topics.write_text("# topics\ndeep-learning\npytorch  # vision too\n\npytorch\n")
    assert read_topics(topics) == ["deep-learning", "pytorch"]
    cfg = crawl_cfg(world, endpoint="standin")
    paths = crawl_topics(read_topics(topics), tmp_path / "snap", cfg)
    assert [p.name for p in paths] == ["deep-learning.jsonl", "pytorch.jsonl"]
    merged = merge_crawl(paths, tmp_path / "snap" / "repos.jsonl")
    by_name = {m.full_name: m for m in merged}
    assert len(by_name) == len(merged) == len(DL_PYTHON) + 1
    assert by_name["acme/torchy"].found_by == ["deep-learning", "pytorch"]
    assert by_name["acme/pytorchonly"].found_by == ["pytorch"]
    assert read_jsonl(tmp_path / "snap" / "repos.jsonl", RepoMeta) == merged
    stamps = [p.stat().st_mtime_ns for p in paths]
    crawl_topics(read_topics(topics), tmp_path / "snap", cfg)  # a rerun of the snapshot: nothing crawled
    assert [p.stat().st_mtime_ns for p in paths] == stamps


def test_open_github_starts_and_stops_the_standin(world):
    cfg = crawl_cfg(world)
    with open_github(cfg) as gh:
        assert gh.get_repo("acme/kerasy").stargazers_count == 700
        url = gh._Github__requester.base_url
    with pytest.raises(requests.ConnectionError):
        make_github(url, crawl_cfg(world, max_retries=0), interval_s=0.0).get_repo("acme/kerasy").stargazers_count  # noqa: B018 (the attribute access is the request)
