"""Fixture worlds for the collect tests: real git repositories, bundles and GitHub metadata.

Imported by the other ``test_collect_*`` modules; it holds no tests itself.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dlbench.collect.crawl import crawl_topic_file
from dlbench.config import CrawlConfig

OWNER = "acme"
FRAMEWORKS = ["torch", "tensorflow", "jax"]

TORCHY = {
    "requirements.txt": "numpy>=1.20\ntorch==2.1  # the framework\n",
    "torchy/__init__.py": "from .layers import Dense\n",
    "torchy/layers.py": "import numpy as np\n\nclass Dense:\n    pass\n",
    "tests/test_layers.py": "from torchy import Dense\n\ndef test_dense():\n    assert Dense\n",
    "tests/test_more.py": "def test_x():\n    assert True\n",
}
KERASY = {  # framework only in an import, tests in the *_test.py style
    "setup.py": "from setuptools import setup\nsetup(name='kerasy', install_requires=['numpy>=1', 'A tensorflow library'])\n",
    "kerasy/model.py": "import os\nfrom tensorflow.keras import layers\n",
    "kerasy/model_test.py": "def test_model():\n    assert True\n",
}
NOTESTS = {
    "pyproject.toml": '[project]\nname = "notests"\ndependencies = ["jax[cpu]>=0.4"]\n',
    "notests/core.py": "import jax\n",
}
WEBBY = {
    "requirements.txt": "flask\nrequests\n",
    "webby/app.py": "import flask\n",
    "tests/test_app.py": "def test_app():\n    assert True\n",
}

# name → (content or None, overrides of the metadata)
WORLD: dict[str, tuple[dict[str, str] | None, dict[str, Any]]] = {
    "torchy": (TORCHY, {"stargazers_count": 900, "topics": ["deep-learning", "pytorch"]}),
    "kerasy": (KERASY, {"stargazers_count": 700, "topics": ["deep-learning"], "license": "apache-2.0"}),
    "notests": (NOTESTS, {"stargazers_count": 400, "topics": ["deep-learning"]}),
    "webby": (WEBBY, {"stargazers_count": 300, "topics": ["deep-learning", "web"]}),
    "oldie": (None, {"stargazers_count": 800, "archived": True}),
    "forky": (None, {"stargazers_count": 600, "fork": True}),
    "rusty": (None, {"stargazers_count": 500, "language": "Rust"}),
    "tiny": (TORCHY, {"stargazers_count": 3}),
    "stale": (None, {"stargazers_count": 200, "pushed_at": "2019-05-01T00:00:00Z"}),
    "unlicensed": (None, {"stargazers_count": 100, "license": None}),
    "pytorchonly": (None, {"stargazers_count": 650, "topics": ["pytorch"]}),
}
EXPECTED_DROPS = {
    "notests": "tests:",
    "webby": "framework:",
    "oldie": "archived:",
    "forky": "fork:",
    "rusty": "language:",
    "tiny": "stars:",
    "stale": "pushed:",
    "unlicensed": "license:",
    "pytorchonly": "content:",
}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    run_env = {**os.environ, **env} if env else None
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=run_env
    ).stdout.strip()


def make_git_repo(path: Path, files: dict[str, str], commits: int = 1, dates: list[str] | None = None) -> list[str]:
    """A git repository with ``files`` in the first commit and ``commits - 1`` more; return shas.
    ``dates`` (ISO 8601, one per commit) sets each commit's author and committer date."""
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    git(path, "config", "user.email", "t@example.org")
    git(path, "config", "user.name", "t")
    shas = []
    for i in range(commits):
        for rel, text in files.items() if i == 0 else [("CHANGES.txt", f"change {i}\n")]:
            target = path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        git(path, "add", "-A")
        when = {"GIT_AUTHOR_DATE": dates[i], "GIT_COMMITTER_DATE": dates[i]} if dates else None
        git(path, "commit", "--quiet", "-m", f"commit {i}", env=when)
        shas.append(git(path, "rev-parse", "HEAD"))
    return shas


def make_bundle(src: Path, bundle: Path) -> Path:
    bundle.parent.mkdir(parents=True, exist_ok=True)
    git(src, "bundle", "create", "--quiet", str(bundle), "--all")
    return bundle


def repo_json(name: str, i: int = 0, owner: str = OWNER, **overrides: Any) -> dict[str, Any]:
    """A GitHub-shaped repository object (the fields the sample's repos.json carries)."""
    license_key = overrides.pop("license", "mit")
    pushed = datetime(2025, 6, 1, tzinfo=UTC) - timedelta(days=i)
    obj = {
        "id": 1000 + i,
        "name": name,
        "full_name": f"{owner}/{name}",
        "owner": {"login": owner},
        "description": f"{name} library",
        "language": "Python",
        "topics": ["deep-learning"],
        "stargazers_count": 10,
        "forks_count": 1,
        "created_at": "2020-01-01T00:00:00Z",
        "updated_at": pushed.isoformat().replace("+00:00", "Z"),
        "pushed_at": pushed.isoformat().replace("+00:00", "Z"),
        "license": None
        if license_key is None
        else {"key": license_key, "spdx_id": license_key.upper(), "name": license_key},
        "archived": False,
        "fork": False,
        "default_branch": "main",
        "html_url": f"https://github.com/{owner}/{name}",
        "size": 10,
        "bundle": None,
        "head_sha": None,
    }
    obj.update(overrides)
    return obj


def make_world(root: Path, world: dict[str, tuple[dict[str, str] | None, dict[str, Any]]] | None = None) -> Path:
    """A fixture world (default ``WORLD``): ``root/github/repos.json`` and ``root/bundles/*.bundle``;
    return the data dir. An override ``commit_dates`` (ISO 8601 days) makes one dated commit each."""
    repos = []
    for i, (name, (files, overrides)) in enumerate((world or WORLD).items()):
        fields = dict(overrides)
        dates = fields.pop("commit_dates", None)
        obj = repo_json(name, i, **fields)
        if files is not None:
            shas = make_git_repo(root / "src" / name, files, commits=len(dates or [0]), dates=dates)
            make_bundle(root / "src" / name, root / "bundles" / f"{name}.bundle")
            obj.update(bundle=f"{name}.bundle", head_sha=shas[-1])
        repos.append(obj)
    data = root / "github"
    data.mkdir(parents=True)
    (data / "repos.json").write_text(json.dumps(repos, indent=1))
    return data


def make_big_topic(root: Path, n: int, topic: str = "big") -> Path:
    """``n`` repositories of one topic; stars fall in pairs so star windows meet at ties."""
    repos = [repo_json(f"r{i:05d}", i, stargazers_count=10 * n - (i // 2) * 3, topics=[topic]) for i in range(n)]
    data = root / "big"
    data.mkdir(parents=True)
    (data / "repos.json").write_text(json.dumps(repos))
    return data


def crawl_cfg(data: Path, **overrides: Any) -> CrawlConfig:
    """A crawl config for tests: quick backoff (a secondary limit without Retry-After waits 0.6 s)."""
    return CrawlConfig(**{"standin_data": str(data), "backoff_s": 0.01, "max_retries": 4, **overrides})


def crawl_topics(topics: list[str], out_dir: Path, cfg: CrawlConfig) -> list[Path]:
    """Every topic's file, as the ``crawl_topic`` rule writes them."""
    paths = [out_dir / "topic" / f"{topic}.jsonl" for topic in topics]
    for topic, path in zip(topics, paths, strict=True):
        crawl_topic_file(topic, path, cfg)
    return paths
