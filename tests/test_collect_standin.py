"""The GitHub REST stand-in over real HTTP: search, repositories, trees, contents, commits, limits, faults."""

from __future__ import annotations

import base64
import subprocess
import sys
import time
from datetime import UTC, datetime

import pytest
import requests

from dlbench.collect.github import make_github
from dlbench.standins.github import SEARCH_CAP, GitHubStandIn, dropped_connection, secondary_rate_limit, server_error
from tests.test_collect_support import crawl_cfg, git, make_big_topic, make_world


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return make_world(tmp_path_factory.mktemp("world"))


@pytest.fixture
def server(world):
    with GitHubStandIn(world) as s:
        yield s


def search(server, q, **params):
    return requests.get(f"{server.url}/search/repositories", params={"q": q, **params}, timeout=10)


def names(response):
    return [item["full_name"] for item in response.json()["items"]]


def test_search_filters_sorts_and_hides_forks_by_default(server):
    r = search(server, "topic:deep-learning language:Python", sort="stars", order="desc")
    assert r.status_code == 200
    body = r.json()
    assert body["incomplete_results"] is False
    stars = [i["stargazers_count"] for i in body["items"]]
    assert stars == sorted(stars, reverse=True)
    assert "acme/forky" not in names(r) and "acme/rusty" not in names(r)
    assert body["total_count"] == len(body["items"]) == 8
    with_forks = search(server, "topic:deep-learning language:Python fork:true")
    assert "acme/forky" in names(with_forks)


def test_search_star_and_date_ranges(server):
    assert names(search(server, "topic:deep-learning stars:<=3")) == ["acme/tiny"]
    assert set(names(search(server, "topic:deep-learning stars:300..500"))) == {
        "acme/notests",
        "acme/webby",
        "acme/rusty",
    }
    assert names(search(server, "topic:deep-learning pushed:<2020-01-01")) == ["acme/stale"]
    assert "acme/stale" not in names(search(server, "topic:deep-learning pushed:>2024-01-01"))
    assert search(server, "topic:x bogus:1").status_code == 422


def test_search_items_carry_clone_url_of_the_bundle_and_api_url(server, world):
    item = next(i for i in search(server, "topic:pytorch language:Python").json()["items"] if i["name"] == "torchy")
    assert item["clone_url"] == str((world.parent / "bundles" / "torchy.bundle").resolve())
    assert item["url"] == f"{server.url}/repos/acme/torchy"
    assert "bundle" not in item and "head_sha" not in item


def test_pagination_links_and_the_1000_result_cap(tmp_path):
    data = make_big_topic(tmp_path, 1100)
    with GitHubStandIn(data) as s:
        first = search(s, "topic:big", per_page=100)
        assert first.json()["total_count"] == 1100
        links = first.headers["Link"]
        assert 'rel="next"' in links and "page=2" in links and 'page=10>; rel="last"' in links
        last = search(s, "topic:big", per_page=100, page=10)
        assert len(last.json()["items"]) == 100 and 'rel="next"' not in last.headers["Link"]
        beyond = search(s, "topic:big", per_page=100, page=SEARCH_CAP // 100 + 1)
        assert beyond.status_code == 422
        assert "first 1000 results" in beyond.json()["message"]
        straddling = search(s, "topic:big", per_page=30, page=34)  # results 991..1020: only 991..1000 served
        assert len(straddling.json()["items"]) == 10


def test_repo_topics_tree_and_contents(server, world):
    repo = requests.get(f"{server.url}/repos/acme/torchy", timeout=10).json()
    assert repo["full_name"] == "acme/torchy" and repo["license"]["spdx_id"] == "MIT"
    assert requests.get(f"{server.url}/repos/acme/torchy/topics", timeout=10).json() == {
        "names": ["deep-learning", "pytorch"]
    }
    tree = requests.get(f"{server.url}/repos/acme/torchy/git/trees/main", params={"recursive": 1}, timeout=10).json()
    blobs = {e["path"] for e in tree["tree"] if e["type"] == "blob"}
    assert blobs == {
        "requirements.txt",
        "tests/test_layers.py",
        "tests/test_more.py",
        "torchy/__init__.py",
        "torchy/layers.py",
    }
    top = requests.get(f"{server.url}/repos/acme/torchy/git/trees/main", timeout=10).json()
    assert {e["path"] for e in top["tree"]} == {"requirements.txt", "tests", "torchy"}
    content = requests.get(
        f"{server.url}/repos/acme/torchy/contents/tests/test_more.py", params={"ref": "main"}, timeout=10
    ).json()
    assert content["encoding"] == "base64"
    assert base64.b64decode(content["content"]) == (world.parent / "src/torchy/tests/test_more.py").read_bytes()
    listing = requests.get(f"{server.url}/repos/acme/torchy/contents/tests", timeout=10).json()
    assert {e["path"] for e in listing} == {"tests/test_layers.py", "tests/test_more.py"}


def test_commit_with_its_dates_as_pygithub_reads_it(server, world):
    src = world.parent / "src" / "torchy"
    sha = git(src, "rev-parse", "HEAD")
    committed = datetime.fromtimestamp(int(git(src, "show", "-s", "--format=%ct", sha)), UTC)
    body = requests.get(f"{server.url}/repos/acme/torchy/commits/main", timeout=10).json()
    assert body["sha"] == sha and body["commit"]["tree"]["sha"] == git(src, "rev-parse", "HEAD^{tree}")
    assert body["commit"]["committer"]["date"] == committed.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert body["commit"]["message"] == "commit 0" and body["parents"] == []
    gh = make_github(server.url, crawl_cfg(world), interval_s=0.0)
    commit = gh.get_repo("acme/torchy").get_commit(sha).commit
    assert commit.committer.date == committed and commit.author.name == "t"


@pytest.mark.parametrize(
    "path, status",
    [
        ("/repos/acme/nope", 404),
        ("/repos/acme/torchy/contents/missing.py", 404),
        ("/repos/acme/torchy/git/trees/nobranch", 404),
        ("/repos/acme/oldie/git/trees/main", 409),
        ("/repos/acme/torchy/commits/nobranch", 422),  # GitHub: "No commit found for SHA: nobranch"
        ("/repos/acme/torchy/commits/--output=x", 422),
        ("/repos/acme/oldie/commits/main", 409),
        ("/nothing", 404),
    ],
)
def test_errors_look_like_github(server, path, status):
    r = requests.get(server.url + path, timeout=10)
    assert r.status_code == status and "message" in r.json()


def test_rate_limit_headers_on_every_response_and_a_request_counter(server):
    r1 = requests.get(f"{server.url}/repos/acme/torchy", timeout=10)
    r2 = requests.get(f"{server.url}/repos/acme/nope", timeout=10)
    r3 = search(server, "topic:pytorch")
    for r in (r1, r2, r3):
        assert {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Used"} <= set(r.headers)
    assert r2.headers["X-RateLimit-Resource"] == "core" and r3.headers["X-RateLimit-Resource"] == "search"
    assert int(r2.headers["X-RateLimit-Remaining"]) == int(r1.headers["X-RateLimit-Remaining"]) - 1
    assert server.requests == 3
    limits = requests.get(f"{server.url}/rate_limit", timeout=10).json()
    assert limits["resources"]["search"]["used"] == 1


def test_primary_limit_answers_403_until_the_reset(world):
    with GitHubStandIn(world, search_limit=2, window_s=0.5) as s:
        assert [search(s, "topic:pytorch").status_code for _ in range(3)] == [200, 200, 403]
        blocked = search(s, "topic:pytorch")
        assert blocked.json()["message"].startswith("API rate limit exceeded")
        assert blocked.headers["X-RateLimit-Remaining"] == "0"
        time.sleep(max(int(blocked.headers["X-RateLimit-Reset"]) - time.time(), 0) + 0.05)
        assert search(s, "topic:pytorch").status_code == 200


def test_fault_schedule_by_request_number(world):
    faults = {1: secondary_rate_limit(1), 2: server_error(502), 3: dropped_connection()}
    with GitHubStandIn(world, faults=faults) as s:
        first = requests.get(f"{s.url}/repos/acme/torchy", timeout=10)
        assert first.status_code == 403 and first.headers["Retry-After"] == "1"
        assert first.json()["message"].startswith("You have exceeded a secondary rate limit")
        assert requests.get(f"{s.url}/repos/acme/torchy", timeout=10).status_code == 502
        with pytest.raises(requests.ConnectionError):
            requests.get(f"{s.url}/repos/acme/torchy", timeout=10)
        assert requests.get(f"{s.url}/repos/acme/torchy", timeout=10).status_code == 200
        assert [status for _, _, status in s.log] == [403, 502, 0, 200]


def test_runs_as_a_module(world):
    proc = subprocess.Popen(
        [sys.executable, "-m", "dlbench.standins.github", "--data", str(world), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]
        assert url.startswith("http://127.0.0.1:")
        assert requests.get(f"{url}/repos/acme/kerasy", timeout=10).json()["name"] == "kerasy"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
