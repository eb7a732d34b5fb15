"""Selection: a reason for every keep and drop, content read through PyGithub, overrides."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dlbench.collect.crawl import crawl_topic, merge_crawl, read_topics
from dlbench.collect.github import make_github
from dlbench.collect.select import (
    ReposFile,
    contributing_file,
    declared_names,
    documentation_source,
    imported_names,
    inspect_tree,
    is_requirement_file,
    kept_slugs,
    load_overrides,
    match_frameworks,
    readme_file,
    select_file,
    select_repos,
)
from dlbench.config import Config, LocalRepo, ReportConfig, SelectConfig
from dlbench.records import Selection
from dlbench.standins.github import GitHubStandIn
from dlbench.store import read_jsonl
from dlbench.testfiles import is_test_file
from tests.test_collect_support import EXPECTED_DROPS, FRAMEWORKS, crawl_cfg, crawl_topics, git, make_world

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DATA = ROOT / "resources" / "sample" / "github"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return make_world(tmp_path_factory.mktemp("world"))


@pytest.fixture
def standin(world):
    """(server, client, crawled RepoMeta of both fixture topics, every language)."""
    cfg = crawl_cfg(world, language=None)
    with GitHubStandIn(world) as server:
        gh = make_github(server.url, cfg, interval_s=0.0)
        crawled = {m.full_name: m for t in ("deep-learning", "pytorch") for m in crawl_topic(gh, t, cfg)}
        yield server, gh, list(crawled.values())


def config(world, **select) -> Config:
    """The fixture world's config: its repositories have no documentation or contribution
    guidelines (the paper's criteria have a world of their own below)."""
    fields = {
        "min_stars": 50,
        "pushed_after": date(2024, 1, 1),
        "frameworks": FRAMEWORKS,
        "require_docs": False,
        "require_contributing": False,
        **select,
    }
    return Config(crawl=crawl_cfg(world, language=None), select=SelectConfig(**fields))


def by_name(selections: list[Selection]) -> dict[str, Selection]:
    return {s.full_name.split("/")[1]: s for s in selections}


def test_every_drop_has_its_reason_and_keeps_list_their_evidence(world, standin):
    server, gh, crawled = standin
    before = server.requests
    sel = by_name(select_repos(crawled, config(world).select, [], ReposFile(), gh))
    assert {n for n, s in sel.items() if s.keep} == {"torchy", "kerasy"}
    for name, check in EXPECTED_DROPS.items():
        assert not sel[name].keep and sel[name].reasons[0].startswith(check), (name, sel[name].reasons)
    assert sel["torchy"].reasons == [
        "language: Python",
        "archived: no",
        "fork: no",
        "stars: 900 >= 50",
        "pushed: 2025-06-01 after 2024-01-01",
        "license: MIT",
        "framework: torch (in requirements.txt)",
        "tests: 2 test files",
    ]
    assert sel["kerasy"].reasons[-2:] == ["framework: tensorflow (in kerasy/model.py)", "tests: 1 test files"]
    # content requests: a tree each for the 5 repositories passing the metadata checks, then
    # torchy 1 file, kerasy 2, notests 1, webby 3 (requirements, then .py files), pytorchonly none
    assert server.requests - before == 5 + 1 + 2 + 1 + 3


def test_all_failing_reasons_are_listed(world, standin):
    _, gh, crawled = standin
    strict = config(world, min_stars=1000, licenses=["GPL-3.0"], pushed_after=date(2026, 1, 1))
    oldie = by_name(select_repos(crawled, strict.select, [], ReposFile(), gh))["oldie"]
    checks = [r.split(":")[0] for r in oldie.reasons]
    assert checks == ["archived", "stars", "pushed", "license", "content"]


def test_allow_archived_and_forks_and_license_policy(world, standin):
    _, gh, crawled = standin
    lenient = config(world, allow_archived=True, allow_forks=True, require_license=False)
    sel = by_name(select_repos(crawled, lenient.select, [], ReposFile(), gh))
    for name in ("oldie", "forky", "unlicensed"):  # now they fail only the content checks (no bundle)
        assert [r.split(":")[0] for r in sel[name].reasons] == ["content"]


def test_repos_yaml_include_exclude_and_pin(world, standin, tmp_path):
    server, gh, crawled = standin
    repos_yaml = tmp_path / "repos.yaml"
    repos_yaml.write_text(
        yaml.safe_dump(
            {
                "include": [
                    {"repo": "acme/tiny", "reason": "small but well tested"},
                    {"repo": "acme/rusty", "sha": "abc1234"},
                    {"repo": "acme/ghost"},
                ],
                "exclude": [{"repo": "acme/kerasy", "reason": "vendored copy"}],
                "pin": {"acme/torchy": "deadbeef" * 5},
            }
        )
    )
    crawled_without_rusty = [m for m in crawled if m.full_name != "acme/rusty"]
    before = server.requests
    sel = by_name(select_repos(crawled_without_rusty, config(world).select, [], load_overrides(repos_yaml), gh))
    assert sel["tiny"].keep and sel["tiny"].forced == "include"
    assert sel["tiny"].reasons == ["forced: include (small but well tested)", "stars: 3 < min_stars 50 (overridden)"]
    assert sel["rusty"].keep and sel["rusty"].sha == "abc1234" and sel["rusty"].stars == 500  # looked up: not crawled
    assert "not found by the crawl" in sel["rusty"].reasons[0]
    assert not sel["ghost"].keep and "not found (404" in sel["ghost"].reasons[0]
    assert (
        not sel["kerasy"].keep
        and sel["kerasy"].forced == "exclude"
        and sel["kerasy"].reasons == ["forced: exclude (vendored copy)"]
    )
    assert sel["torchy"].sha == "deadbeef" * 5
    # recency is the pinned commit's, and a pin GitHub does not know is no commit to mine
    assert not sel["torchy"].keep
    assert (
        sel["torchy"].reasons[0]
        == "pushed: pinned commit deadbeefdead cannot read it: 422 No commit found for SHA: " + "deadbeef" * 5
    )
    assert sel["torchy"].reasons[-1] == "content: not checked (metadata checks failed)"
    paths = [p for _, p, _ in server.log[before:]]
    assert "/repos/acme/kerasy/git/trees/main" not in paths  # no content requests for an excluded repository
    assert "/repos/acme/rusty" in paths and "/repos/acme/ghost" in paths


def test_max_repos_keeps_the_top_by_stars_after_forced_and_local(world, standin, tmp_path):
    _, gh, crawled = standin
    cfg = config(world, max_repos=2).model_copy(
        update={"local_repos": [LocalRepo(name="me/local", path=str(tmp_path))]}
    )
    overrides = ReposFile.model_validate({"include": [{"repo": "acme/tiny"}]})
    sels = select_repos(crawled, cfg.select, cfg.local_repos, overrides, gh)
    kept = [s.full_name for s in sels if s.keep]
    assert kept == ["acme/tiny", "me/local"]
    torchy = by_name(sels)["torchy"]
    assert torchy.reasons[-1] == "max_repos: rank 3 by stars, beyond max_repos 2"
    local = by_name(sels)["local"]
    assert (
        local.local_path == str(tmp_path.resolve())
        and local.slug == "me__local"
        and local.reasons[0].startswith("local:")
    )


def test_select_file_writes_jsonl_csv_and_kept_slugs(world, tmp_path):
    cfg = config(world)
    crawl_files = crawl_topics(["deep-learning", "pytorch"], tmp_path / "crawl", cfg.crawl)
    merged = tmp_path / "crawl" / "repos.jsonl"
    merge_crawl(crawl_files, merged)
    out, csv = tmp_path / "select" / "repos.jsonl", tmp_path / "select" / "repos.csv"
    sels = select_file(merged, None, out, csv, cfg.crawl, cfg.select, cfg.local_repos)
    assert read_jsonl(out, Selection) == sels and len(sels) == 11
    assert kept_slugs(out) == ["acme__torchy", "acme__kerasy"]
    table = pd.read_csv(csv)
    assert list(table.columns) == [
        "full_name",
        "keep",
        "forced",
        "stars",
        "license",
        "sha",
        "local_path",
        "clone_url",
        "reasons",
    ]
    assert table.set_index("full_name").loc["acme/tiny", "reasons"].startswith("stars: 3 < min_stars 50; content:")


@pytest.mark.parametrize(
    "text, problem",
    [
        ("include: [{repo: nope}]", "include.0.repo"),
        ("pin: [1]", "pin"),
        ("exclude: [{repo: a/b, why: x}]", "exclude.0.why"),
    ],
)
def test_bad_repos_yaml_names_the_key(tmp_path, text, problem):
    path = tmp_path / "repos.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"key '{problem}"):
        load_overrides(path)


def test_default_repos_yaml_is_empty_and_valid():
    assert load_overrides(ROOT / "config" / "repos.yaml") == ReposFile()


# ---------------------------------------------------------------- parsers (pure)


def test_declared_names_from_every_declaration_format():
    # the same reader the image builder uses (dlbench.deps): selection and image never disagree
    assert declared_names({"requirements-dev.txt": "-r base.txt\nTorch>=2 ; python_version>'3'\n# jax\nnumpy\n"}) == {
        "torch",
        "numpy",
    }
    pyproject = '[project]\ndependencies = ["tensorflow-gpu==2.1"]\n[project.optional-dependencies]\nx = ["jax[cpu]"]\n[tool.poetry.dependencies]\nkeras = "^3"\n'
    assert declared_names({"pyproject.toml": pyproject}) == {"tensorflow-gpu", "jax", "keras"}
    setup = "DEPS = ['scikit_learn>=1.0']\nsetup(install_requires=DEPS + ['torch'], description='not a requirement')\n"
    assert declared_names({"setup.py": setup}) == {"scikit-learn", "torch"}
    cfg = "[options]\ninstall_requires =\n    torch>=1\n    numpy\n[options.extras_require]\ngpu = jax\n"
    assert declared_names({"setup.cfg": cfg}) == {"torch", "numpy", "jax"}
    assert (
        declared_names({"docs/requirements.txt": "tensorflow\n"}) == set()
    )  # documentation builds are not the project's


def test_imports_and_framework_matching():
    assert imported_names("import os, torch.nn as nn\nfrom tensorflow.keras import layers\nfrom . import x\n") == {
        "os",
        "torch",
        "tensorflow",
    }
    assert imported_names("import jax\nthis is not python (\n") == {"jax"}
    assert match_frameworks({"tensorflow-gpu", "torchvision", "numpy"}, ["torch", "tensorflow"]) == ["tensorflow"]
    assert match_frameworks({"scikit-learn"}, ["scikit_learn"]) == ["scikit_learn"]


@pytest.mark.parametrize(
    "path, is_test",
    [
        ("tests/test_a.py", True),
        ("pkg/a_test.py", True),
        ("test/testing_utils.py", True),
        ("test_top.py", True),
        ("tests/conftest.py", False),
        ("tests/__init__.py", False),
        ("pkg/testing.py", False),
        ("tests/data.json", False),
    ],
)
def test_test_file_patterns(path, is_test):
    assert is_test_file(path) is is_test


def test_dependency_files_are_the_ones_the_image_builder_reads():
    assert is_requirement_file("requirements.txt") and is_requirement_file("requirements/gpu.txt")
    assert is_requirement_file("pyproject.toml") and is_requirement_file("requirements-test.txt")
    assert not is_requirement_file("pkg/sub/deep/requirements.txt") and not is_requirement_file("README.md")


# ---------------------------------------------------------------- the sample world


def test_sample_world_keeps_the_five_libraries_and_drops_every_distractor(tmp_path):
    raw = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    crawl = crawl_cfg(SAMPLE_DATA, language=None)  # every language: selection must drop C++
    cfg = Config(crawl=crawl, select=SelectConfig(**raw["select"]))
    paths = crawl_topics(read_topics(ROOT / "resources" / "topics.txt"), tmp_path / "crawl", crawl)
    merge_crawl(paths, tmp_path / "repos.jsonl")
    sels = select_file(
        tmp_path / "repos.jsonl",
        ROOT / "config" / "repos.yaml",
        tmp_path / "s.jsonl",
        tmp_path / "s.csv",
        crawl,
        cfg.select,
        [],
    )
    kept = {s.full_name for s in sels if s.keep}
    assert kept == {f"dlbench-sample/{n}" for n in ("visionkit", "nnkit", "textkit", "recokit", "tskit")}
    drops = {s.full_name: s.reasons[0].split(":")[0] for s in sels if not s.keep}
    assert drops == {
        "deepnotes/dl-snippets": "tests",
        "webtools-dev/linkcheck": "framework",
        "oldlab/archived-nets": "archived",
        "tinyml-hobby/toy-cnn": "stars",
        "legacy-ai/stale-rnn": "pushed",
        "forker/visionkit": "fork",
        "cuda-fans/fast-conv": "language",
        "nolicense-dev/gan-playground": "license",
    }


def test_imports_of_pathological_code_fall_back_to_the_line_scan():
    deep = "import jax\nx = " + "-" * 200_000 + "1\n"
    assert imported_names(deep) == {"jax"}


# ---------------------------------------------------------------- the paper's four criteria (defaults)

README = {"README.md": "# lib\n"}
DOCS = {"docs/index.md": "# lib\n"}
CONTRIBUTING = {"CONTRIBUTING.md": "Open a pull request.\n"}
TORCH = {
    "requirements.txt": "torch>=2\n",
    "lib/__init__.py": "",
    "lib/core.py": "import torch\n",
    "tests/test_core.py": "def test_core():\n    assert True\n",
}
SKLEARN = {
    "requirements.txt": "scikit-learn>=1\nnumpy\n",
    "lib/__init__.py": "",
    "lib/core.py": "import sklearn\nimport numpy\n",
    "tests/test_core.py": "def test_core():\n    assert True\n",
}
DL = ["deep-learning"]
PAPER_WORLD: dict[str, tuple[dict[str, str] | None, dict]] = {
    "documented": ({**TORCH, **README, **DOCS, **CONTRIBUTING}, {"stargazers_count": 900, "topics": DL}),
    "sklearnonly": ({**SKLEARN, **README, **DOCS, **CONTRIBUTING}, {"stargazers_count": 800, "topics": DL}),
    "readmeonly": (
        {**TORCH, **README, **CONTRIBUTING, "dockerfiles/Dockerfile": "FROM x\n"},
        {"stargazers_count": 700, "topics": DL},
    ),
    "pkgconf": ({**TORCH, **README, **CONTRIBUTING, "lib/conf.py": "X = 1\n"}, {"stargazers_count": 650, "topics": DL}),
    "sphinxy": (
        {**TORCH, "README.rst": "lib\n", "site/conf.py": "project = 'lib'\n", ".github/CONTRIBUTING.md": "PRs\n"},
        {"stargazers_count": 600, "topics": DL},
    ),
    "mkdocsy": (
        {**TORCH, **README, "mkdocs/mkdocs.yml": "site_name: lib\n", "docs/CONTRIBUTING.md": "PRs\n"},
        {"stargazers_count": 550, "topics": DL},
    ),
    "nocontrib": ({**TORCH, **README, **DOCS, "lib/contributing.py": "\n"}, {"stargazers_count": 500, "topics": DL}),
    "stale": (None, {"stargazers_count": 400, "topics": DL, "pushed_at": "2023-09-30T23:00:00Z"}),
    "pinned": (
        {**TORCH, **README, **DOCS, **CONTRIBUTING},
        {"stargazers_count": 300, "topics": DL, "commit_dates": ["2023-05-01T12:00:00Z", "2025-02-01T12:00:00Z"]},
    ),
}


@pytest.fixture(scope="module")
def paper_world(tmp_path_factory):
    """(stand-in client, crawled RepoMeta, bundle sources) of the paper-criteria world."""
    root = tmp_path_factory.mktemp("paper")
    data = make_world(root, PAPER_WORLD)
    cfg = crawl_cfg(data, language=None)
    with GitHubStandIn(data) as server:
        gh = make_github(server.url, cfg, interval_s=0.0)
        yield gh, crawl_topic(gh, "deep-learning", cfg), root / "src"


def test_default_selection_encodes_the_papers_four_criteria(paper_world):
    gh, crawled, _ = paper_world
    sel = by_name(select_repos(crawled, SelectConfig(), [], ReposFile(), gh))
    assert {n for n, s in sel.items() if s.keep} == {"documented", "sphinxy", "mkdocsy", "pinned"}
    assert sel["documented"].reasons == [
        "language: Python",
        "archived: no",
        "fork: no",
        "stars: 900 >= 50",
        "pushed: 2025-06-01 after 2023-10-01",
        "license: MIT",
        "framework: torch (in requirements.txt)",
        "tests: 1 test files",
        "docs: README.md and docs/ (1 files)",
        "contributing: CONTRIBUTING.md",
    ]
    assert sel["sphinxy"].reasons[-2:] == ["docs: README.rst and site/conf.py", "contributing: .github/CONTRIBUTING.md"]
    assert sel["mkdocsy"].reasons[-2:] == [
        "docs: README.md and docs/ (1 files)",  # docs/CONTRIBUTING.md makes docs/ a documentation folder
        "contributing: docs/CONTRIBUTING.md",
    ]
    # scikit-learn alone is machine learning, not deep learning
    assert sel["sklearnonly"].reasons == [
        "framework: none of ['torch', 'tensorflow', 'keras', 'jax'] in requirements or imports (4 files read)"
    ]
    no_source = "no documentation source (docs/ or doc/ folder, mkdocs.yml, Sphinx conf.py, .readthedocs.yml)"
    assert sel["readmeonly"].reasons == [f"docs: README.md and {no_source}"]  # dockerfiles/ is no docs/
    assert sel["pkgconf"].reasons == [f"docs: README.md and {no_source}"]  # a package's conf.py is not Sphinx's
    assert sel["nocontrib"].reasons == ["contributing: no CONTRIBUTING file at the root, in .github/ or in docs/"]
    assert sel["stale"].reasons[0] == "pushed: last push 2023-09-30 not after 2023-10-01"


def test_each_criterion_is_a_key_that_can_be_turned_off(paper_world):
    gh, crawled, _ = paper_world
    off = SelectConfig(pushed_after=None, require_docs=False, require_contributing=False)
    sel = by_name(select_repos(crawled, off, [], ReposFile(), gh))
    assert {n for n, s in sel.items() if not s.keep} == {"sklearnonly", "stale"}  # stale: no bundle to read
    assert not any(r.startswith(("docs:", "contributing:", "pushed:")) for r in sel["documented"].reasons)
    ml = SelectConfig(frameworks=["torch", "scikit-learn"])  # a researcher who counts machine learning
    assert by_name(select_repos(crawled, ml, [], ReposFile(), gh))["sklearnonly"].keep


def test_recency_of_a_pinned_repository_is_its_pinned_commits_date(paper_world):
    gh, crawled, src = paper_world
    old, new = git(src / "pinned", "rev-list", "--reverse", "main").split()
    pinned = [m for m in crawled if m.full_name == "acme/pinned"]
    assert pinned[0].pushed_at.year == 2025  # GitHub's last push is recent; the pinned code may not be
    for sha, keep, reason in [
        (old, False, f"pushed: pinned commit {old[:12]} of 2023-05-01 not after 2023-10-01"),
        (new, True, f"pushed: pinned commit {new[:12]} of 2025-02-01 after 2023-10-01"),
    ]:
        overrides = ReposFile.model_validate({"pin": {"acme/pinned": sha}})
        sel = select_repos(pinned, SelectConfig(), [], overrides, gh)[0]
        assert (sel.keep, sel.sha) == (keep, sha) and reason in sel.reasons


@pytest.mark.parametrize(
    "paths, readme, source, contributing",
    [
        (["README.md", "docs/conf.py", "docs/index.rst"], "README.md", "docs/ (2 files)", None),
        (
            ["readme.rst", "doc/a.rst", "Documentation/b.md", "Documentation/c.md"],
            "readme.rst",
            "Documentation/ (2 files)",
            None,
        ),
        (["docs-source/source/conf.py", "x/README.md"], None, "docs-source/ (1 files)", None),
        ([".readthedocs.yaml", "dockerfiles/Dockerfile", "docker/run.sh"], None, ".readthedocs.yaml", None),
        (["site/conf.py", "pkg/__init__.py", "pkg/conf.py"], None, "site/conf.py", None),
        (["pkg/__init__.py", "pkg/conf.py", "a/b/c/mkdocs.yml"], None, None, None),
        (["CONTRIBUTING.rst", ".github/CONTRIBUTING.md"], None, None, "CONTRIBUTING.rst"),
        ([".github/contributing.md", "docs/CONTRIBUTING.md"], None, "docs/ (1 files)", ".github/contributing.md"),
        (["doc/CONTRIBUTING.md", "pkg/CONTRIBUTING.md", "CONTRIBUTORS.md"], None, "doc/ (1 files)", None),
    ],
)
def test_documentation_and_contributing_evidence_from_tree_paths(paths, readme, source, contributing):
    assert (readme_file(paths), documentation_source(paths), contributing_file(paths)) == (readme, source, contributing)


def test_framework_search_reads_modules_named_after_a_framework_first_and_examples_last():
    files = {
        "setup.py": "from setuptools import setup\nsetup(install_requires=['numpy'])\n",
        "examples/demo.py": "import torch\n",
        "lib/__init__.py": "",
        "lib/core.py": "import numpy\n",
        "lib/backends/tensorflow/__init__.py": "import tensorflow as tf\n",
        "tests/test_core.py": "import lib\n",
    }
    read: list[str] = []
    found = inspect_tree(sorted(files), lambda p: read.append(p) or files[p], ["torch", "tensorflow"])
    assert (found.frameworks, found.framework_source) == (["tensorflow"], "lib/backends/tensorflow/__init__.py")
    assert read == ["setup.py", "lib/backends/tensorflow/__init__.py"]
    del files["lib/backends/tensorflow/__init__.py"]
    read.clear()
    found = inspect_tree(sorted(files), lambda p: read.append(p) or files[p], ["torch", "tensorflow"])
    assert read == ["setup.py", "lib/__init__.py", "lib/core.py", "tests/test_core.py", "examples/demo.py"]
    assert found.framework_source == "examples/demo.py"


def test_default_cutoff_is_gpt4os_and_the_first_live_slice():
    assert SelectConfig().pushed_after == min(ReportConfig().cutoffs) == date(2023, 10, 1)
    assert not {"sklearn", "scikit-learn"} & set(SelectConfig().frameworks)
