"""github/repos.json: GitHub-shaped objects, sample libraries first per topic, every distractor present."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "resources" / "sample"
sys.path.insert(0, str(SAMPLE))  # the sample scripts are plain modules, not a package

import sample_world as sw  # noqa: E402

REPOS = sw.load_repos()
TOPICS = {
    line.strip()
    for line in (ROOT / "resources" / "topics.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
}
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
FIELDS = {
    "id": int,
    "name": str,
    "full_name": str,
    "owner": dict,
    "description": str,
    "language": str,
    "topics": list,
    "stargazers_count": int,
    "forks_count": int,
    "watchers_count": int,
    "open_issues_count": int,
    "created_at": str,
    "updated_at": str,
    "pushed_at": str,
    "archived": bool,
    "fork": bool,
    "default_branch": str,
    "html_url": str,
    "size": int,
}
# Metadata rules of the default config's `select` section (config/config.yaml).
MIN_STARS, PUSHED_AFTER = 50, "2023-06-01"
EXPECTED_DROPS = {
    "deepnotes/dl-snippets": "no tests",
    "webtools-dev/linkcheck": "not deep learning",
    "oldlab/archived-nets": "archived",
    "tinyml-hobby/toy-cnn": "too few stars",
    "legacy-ai/stale-rnn": "stale",
    "forker/visionkit": "fork",
    "cuda-fans/fast-conv": "not Python",
    "nolicense-dev/gan-playground": "no license",
}
LIBRARIES = {f"{sw.OWNER}/{name}" for name in sw.LIBRARIES}


def metadata_reasons(repo: dict) -> list[str]:
    """Which metadata criteria drop ``repo`` (content criteria need a clone)."""
    checks = {
        "archived": repo["archived"],
        "too few stars": repo["stargazers_count"] < MIN_STARS,
        "stale": repo["pushed_at"] < PUSHED_AFTER,
        "fork": repo["fork"],
        "not Python": repo["language"] != "Python",
        "no license": repo["license"] is None,
    }
    return [reason for reason, failed in checks.items() if failed]


@pytest.mark.parametrize("repo", REPOS, ids=lambda r: r["full_name"])
def test_repository_objects_are_well_formed(repo):
    for field, kind in FIELDS.items():
        assert isinstance(repo[field], kind), field
    assert repo["full_name"] == f"{repo['owner']['login']}/{repo['name']}"
    assert repo["html_url"] == f"https://github.com/{repo['full_name']}"
    assert repo["watchers_count"] == repo["stargazers_count"]
    assert all(ISO.fullmatch(repo[k]) for k in ("created_at", "updated_at", "pushed_at"))
    assert repo["created_at"] <= repo["pushed_at"] <= repo["updated_at"]
    assert repo["license"] is None or set(repo["license"]) == {"key", "spdx_id", "name"}
    assert set(repo["topics"]) <= TOPICS and repo["topics"] == sorted(set(repo["topics"]))
    assert repo["default_branch"] == "main"
    if repo["bundle"]:
        assert (sw.BUNDLES / repo["bundle"]).is_file()
        assert re.fullmatch(r"[0-9a-f]{40}", repo["head_sha"])
    else:
        assert repo["head_sha"] is None


def test_ids_and_names_are_unique():
    assert len({r["id"] for r in REPOS}) == len({r["full_name"] for r in REPOS}) == len(REPOS)


def test_sample_libraries():
    libs = [r for r in REPOS if r["full_name"] in LIBRARIES]
    assert len(libs) == len(LIBRARIES)
    for repo in libs:
        assert 2 <= len(repo["topics"]) <= 5
        assert 120 <= repo["stargazers_count"] <= 5000
        assert repo["bundle"] == f"{repo['name']}.bundle"
        assert metadata_reasons(repo) == []
    for shared in ("deep-learning", "machine-learning"):
        assert sum(shared in r["topics"] for r in libs) >= 2


def test_sample_libraries_rank_first_in_their_topics():
    for topic in TOPICS:
        ranked = sorted((r for r in REPOS if topic in r["topics"]), key=lambda r: -r["stargazers_count"])
        names = [r["full_name"] for r in ranked]
        n_libs = sum(name in LIBRARIES for name in names)
        assert set(names[:n_libs]) <= LIBRARIES, topic


def test_every_distractor_fails_exactly_its_reason():
    distractors = {r["full_name"]: r for r in REPOS if r["full_name"] not in LIBRARIES}
    assert set(distractors) == set(EXPECTED_DROPS)
    for name, reason in EXPECTED_DROPS.items():
        found = metadata_reasons(distractors[name])
        if reason in ("no tests", "not deep learning"):
            # content reasons: metadata is clean, the bundle shows the problem
            assert found == [] and distractors[name]["bundle"], name
        else:
            assert found == [reason], name
