"""Select the repositories to mine, with a reason for every keep and every drop.

Each reason reads ``check: detail`` (checks: language, archived, fork, stars, pushed,
license, framework, tests, docs, contributing, content, forced, max_repos, local), so people
read it and tests match on the check; a kept repository's reasons are its evidence. The
defaults of ``SelectConfig`` are the paper's four criteria (docs/SELECTION.md): updated after
GPT-4o's training cutoff, documentation, contribution guidelines, a deep-learning framework.

Metadata checks are free, but for a pinned repository recency is the pinned commit's date
(one ``GET /repos/{owner}/{repo}/commits/{sha}``): its code is what is mined, whatever was
pushed since. The content checks run only for repositories that pass the metadata checks and
read the repository at its pin (else its default branch) through the GitHub tree and contents
API: one tree request answers the test suite, documentation and contribution guidelines; then
requirement files, then a bounded sample of ``.py`` files, stopping at the first framework.

``config/repos.yaml`` forces includes and excludes (reason recorded, ``forced`` set) and
pins commits; ``local_repos`` are appended as kept with their ``local_path``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date
from pathlib import Path

import pandas as pd
import yaml
from github import Github, GithubException
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dlbench.collect.github import fetch_meta, open_github
from dlbench.config import CrawlConfig, LocalRepo, SelectConfig
from dlbench.deps.declared import canonical_name, declared_requirements, is_dependency_file
from dlbench.deps.imports import module_imports
from dlbench.deps.tree import SourceTree
from dlbench.logs import Progress
from dlbench.parsing import Unparsable
from dlbench.records import RepoMeta, Selection, repo_slug
from dlbench.store import read_jsonl, write_frame, write_jsonl
from dlbench.testfiles import is_test_file

log = logging.getLogger(__name__)

LANGUAGE = "Python"
MAX_REQUIREMENT_FILES = 6  # content requests spent on dependency declarations
MAX_PY_SAMPLE = 8  # content requests spent on imports when the declarations name no framework
GITHUB = "https://github.com"  # where listed repositories without a copy on disk are cloned from
CSV_COLUMNS = ["full_name", "keep", "forced", "stars", "license", "sha", "local_path", "clone_url", "reasons"]


# ------------------------------------------------------------------ config/repos.yaml


class RepoOverride(BaseModel):
    model_config = ConfigDict(extra="forbid")
    repo: str = Field(description="owner/name")
    sha: str | None = None
    reason: str | None = None

    @field_validator("repo")
    @classmethod
    def _owner_name(cls, value: str) -> str:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", value):
            raise ValueError(f"expected owner/name, got {value!r}")
        return value


class ReposFile(BaseModel):
    """Schema of ``config/repos.yaml``."""

    model_config = ConfigDict(extra="forbid")
    include: list[RepoOverride] = Field(default_factory=list)
    exclude: list[RepoOverride] = Field(default_factory=list)
    pin: dict[str, str] = Field(default_factory=dict)

    def pinned(self, full_name: str) -> str | None:
        """The pinned commit: ``pin`` first, then an include's ``sha``."""
        pins = {k.lower(): v for k, v in self.pin.items()}
        include = self.included(full_name)
        return pins.get(full_name.lower()) or (include.sha if include else None)

    def included(self, full_name: str) -> RepoOverride | None:
        return next((o for o in self.include if o.repo.lower() == full_name.lower()), None)

    def excluded(self, full_name: str) -> RepoOverride | None:
        return next((o for o in self.exclude if o.repo.lower() == full_name.lower()), None)


def load_overrides(path: str | Path | None) -> ReposFile:
    """Read ``config/repos.yaml`` (a missing path or an empty file means no overrides)."""
    if path is None:
        return ReposFile()
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        return ReposFile.model_validate(raw)
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"{path}: key '{key}': {err['msg']}") from None


# ------------------------------------------------------------------ metadata checks


@dataclass
class Verdict:
    """Reasons collected for one repository: passes (evidence) and failures."""

    passes: list[str] = field(default_factory=list)
    fails: list[str] = field(default_factory=list)

    def check(self, ok: bool, passed: str, failed: str) -> None:
        (self.passes if ok else self.fails).append(passed if ok else failed)


@dataclass
class PinnedCommit:
    """The pinned commit's date (committer date, UTC), or why it could not be read."""

    sha: str
    day: date | None = None
    error: str | None = None


def pinned_commit(gh: Github, full_name: str, sha: str) -> PinnedCommit:
    """``GET /repos/{full_name}/commits/{sha}``: the day the pinned commit was committed."""
    try:
        committed = gh.get_repo(full_name).get_commit(sha).commit.committer.date
    except GithubException as exc:
        return PinnedCommit(sha, error=f"cannot read it: {exc.status} {_message(exc)}")
    return PinnedCommit(sha, day=committed.astimezone(UTC).date() if committed.tzinfo else committed.date())


def metadata_verdict(meta: RepoMeta, cfg: SelectConfig, pin: PinnedCommit | None = None) -> Verdict:
    """Every metadata check, each failing one recorded; recency from ``pin`` when given."""
    v = Verdict()
    v.check(meta.language == LANGUAGE, f"language: {LANGUAGE}", f"language: {meta.language or 'none'}, not {LANGUAGE}")
    v.check(
        cfg.allow_archived or not meta.archived,
        "archived: no" if not meta.archived else "archived: allowed",
        "archived: repository is archived",
    )
    v.check(
        cfg.allow_forks or not meta.fork, "fork: no" if not meta.fork else "fork: allowed", "fork: repository is a fork"
    )
    v.check(
        meta.stars >= cfg.min_stars,
        f"stars: {meta.stars} >= {cfg.min_stars}",
        f"stars: {meta.stars} < min_stars {cfg.min_stars}",
    )
    if cfg.pushed_after is not None:
        recency_check(v, cfg.pushed_after, meta.pushed_at.date() if meta.pushed_at else None, pin)
    _license_check(v, meta.license, cfg)
    return v


def recency_check(v: Verdict, after: date, pushed: date | None, pin: PinnedCommit | None = None) -> None:
    """Updated after ``after``: the last push (``pushed``), or the pinned commit's day when pinned."""
    if pin is not None:
        short = pin.sha[:12]
        v.check(
            pin.day is not None and pin.day > after,
            f"pushed: pinned commit {short} of {pin.day} after {after}",
            f"pushed: pinned commit {short} {pin.error}"
            if pin.error
            else f"pushed: pinned commit {short} of {pin.day} not after {after}",
        )
        return
    v.check(
        pushed is not None and pushed > after,
        f"pushed: {pushed} after {after}",
        f"pushed: last push {pushed or 'unknown'} not after {after}",
    )


def _license_check(v: Verdict, spdx: str | None, cfg: SelectConfig) -> None:
    known = spdx not in (None, "NOASSERTION")  # GitHub's NOASSERTION: a license it cannot name
    if cfg.licenses is not None:
        v.check(
            spdx in cfg.licenses, f"license: {spdx} allowed", f"license: {spdx or 'none'} not in allowed {cfg.licenses}"
        )
    elif cfg.require_license:
        v.check(known, f"license: {spdx}", f"license: {'none' if spdx is None else 'unrecognised (NOASSERTION)'}")
    else:
        v.passes.append(f"license: {spdx or 'none'} (not required)")


# ------------------------------------------------------------------ content checks

_IMPORT_LINE = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", re.MULTILINE)


def is_requirement_file(path: str) -> bool:
    """A file that declares dependencies (read through ``dlbench.deps``, as the image is built)."""
    return is_dependency_file(path)


def imported_names(source: str) -> set[str]:
    """Normalised top-level modules a Python file imports (a line scan where Python cannot parse it)."""
    try:
        return {canonical_name(m) for m in module_imports(source)}
    except Unparsable:
        return {canonical_name(m) for m in _IMPORT_LINE.findall(source)}


def declared_names(files: dict[str, str]) -> set[str]:
    """Distributions declared by the dependency files read (documentation groups left out)."""
    tree = SourceTree(paths=sorted(files), reader=files.get)
    return declared_requirements(tree).names(exclude_groups=("docs",))


def match_frameworks(names: Iterable[str], frameworks: Iterable[str]) -> list[str]:
    """Configured frameworks among ``names`` (``tensorflow-gpu`` counts as ``tensorflow``)."""
    wanted = {canonical_name(f): f for f in frameworks}
    return sorted({wanted[w] for n in names for w in wanted if n == w or n.startswith(w + "-")})


# Documentation: a README at the root and a documentation source. A source is a top-level
# documentation folder holding a file (docs/, doc/, documentation/, docs-source/), a Read the
# Docs config at the root, or the config of a Python documentation generator (Sphinx's
# conf.py, MkDocs's mkdocs.yml) at most two folders down outside any Python package (neupy's
# site/conf.py, imagededup's mkdocs/mkdocs.yml).
README = re.compile(r"readme(\.\w+)?", re.IGNORECASE)
DOC_FOLDER = re.compile(r"docs?|documentation|docs?[-_.]?(?:src|source)", re.IGNORECASE)
READTHEDOCS = frozenset({".readthedocs.yml", ".readthedocs.yaml", "readthedocs.yml", "readthedocs.yaml"})
DOC_GENERATOR_CONFIGS = frozenset({"conf.py", "mkdocs.yml", "mkdocs.yaml"})
# Contribution guidelines where GitHub finds them: CONTRIBUTING (any extension) at the root,
# in .github/ or in docs/.
CONTRIBUTING = re.compile(r"(?:\.github/|docs/)?contributing(\.\w+)?", re.IGNORECASE)


def readme_file(blobs: Iterable[str]) -> str | None:
    """The README at the root (the first by name when there are several)."""
    return min((p for p in blobs if README.fullmatch(p)), default=None)


def documentation_source(blobs: Iterable[str]) -> str | None:
    """Evidence of a documentation source (``docs/ (12 files)``, ``mkdocs.yml``), else None."""
    paths = list(blobs)
    folders: dict[str, int] = {}
    for p in paths:
        top, sep, _ = p.partition("/")
        if sep and DOC_FOLDER.fullmatch(top):
            folders[top] = folders.get(top, 0) + 1
    if folders:
        top = min(folders, key=lambda f: (-folders[f], f))
        return f"{top}/ ({folders[top]} files)"
    packages = {p.rpartition("/")[0] for p in paths if p.endswith("/__init__.py") or p == "__init__.py"}
    for p in sorted(paths, key=lambda p: (p.count("/"), p)):
        folder, _, name = p.rpartition("/")
        if (not folder and name.lower() in READTHEDOCS) or (
            name.lower() in DOC_GENERATOR_CONFIGS and p.count("/") <= 2 and folder not in packages
        ):
            return p
    return None


def contributing_file(blobs: Iterable[str]) -> str | None:
    """The contribution guidelines GitHub would show (root first, then .github/, docs/)."""
    found = [p for p in blobs if CONTRIBUTING.fullmatch(p)]
    return min(found, key=lambda p: (p.count("/"), not p.startswith(".github/"), p), default=None)


@dataclass
class ContentFindings:
    """What the tree and the files read say about one repository."""

    test_files: list[str] = field(default_factory=list)
    frameworks: list[str] = field(default_factory=list)
    framework_source: str | None = None
    readme: str | None = None
    docs_source: str | None = None
    contributing: str | None = None
    files_read: int = 0
    error: str | None = None


def inspect_content(gh: Github, full_name: str, ref: str, frameworks: list[str]) -> ContentFindings:
    """Read the tree at ``ref`` and as few files as needed to find a framework."""
    repo = gh.get_repo(full_name)  # lazy: no request
    try:
        tree = repo.get_git_tree(ref, recursive=True)
    except GithubException as exc:
        return ContentFindings(error=f"cannot read the tree at {ref}: {exc.status} {_message(exc)}")

    def read(path: str) -> str | None:
        try:
            content = repo.get_contents(path, ref=ref)
        except GithubException as exc:
            log.warning("%s: cannot read %s: %s", full_name, path, exc.status)
            return None
        return content.decoded_content.decode("utf-8", errors="replace")

    return inspect_tree([e.path for e in tree.tree if e.type == "blob"], read, frameworks)


def inspect_tree(blobs: list[str], read: Callable[[str], str | None], frameworks: list[str]) -> ContentFindings:
    """The content findings from a tree's file paths, reading files (``read``) only to find a
    framework; shared with readers of a local checkout (bench/bench_paper_selection.py)."""
    found = ContentFindings(
        test_files=sorted(p for p in blobs if is_test_file(p)),
        readme=readme_file(blobs),
        docs_source=documentation_source(blobs),
        contributing=contributing_file(blobs),
    )
    for path in _files_to_read(blobs, frameworks):
        text = read(path)
        if text is None:
            continue
        found.files_read += 1
        names = declared_names({path: text}) if is_requirement_file(path) else imported_names(text)
        hits = match_frameworks(names, frameworks)
        if hits:
            found.frameworks, found.framework_source = hits, path
            break
    return found


# Folders whose modules rarely show what the library itself imports (read last).
AUXILIARY_DIRS = frozenset({"examples", "example", "docs", "doc", "benchmarks", "benchmark", "scripts", "tools", "notebooks", "tutorials"})  # fmt: skip


def _files_to_read(blobs: list[str], frameworks: Iterable[str] = ()) -> list[str]:
    """Requirement files first, then a bounded sample of ``.py`` files: those named after a
    framework (``nncf/torch/__init__.py``, ``pennylane/qnn/torch.py``), library modules, test
    files, then examples, docs and scripts; shallow paths first within each."""
    names = {canonical_name(f).replace("-", "_") for f in frameworks}

    def names_framework(path: str) -> bool:
        stems = [part.removesuffix(".py").lower() for part in path.split("/")]
        return any(stem == n or stem.startswith(n + "_") for stem in stems for n in names)

    def rank(path: str) -> tuple[int, int, int, str]:
        auxiliary = bool(AUXILIARY_DIRS & {part.lower() for part in path.split("/")[:-1]})
        kind = 0 if names_framework(path) else 2 if is_test_file(path) else 1
        return (auxiliary, kind, path.count("/"), path)

    requirements = sorted((p for p in blobs if is_requirement_file(p)), key=lambda p: (p.count("/"), p))
    requirements = requirements[:MAX_REQUIREMENT_FILES]
    python = sorted((p for p in blobs if p.endswith(".py") and p not in requirements), key=rank)
    return requirements + python[:MAX_PY_SAMPLE]


def _message(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    return str(data.get("message", exc.data))


def content_verdict(v: Verdict, found: ContentFindings, cfg: SelectConfig) -> None:
    if found.error:
        v.fails.append(f"content: {found.error}")
        return
    v.check(
        bool(found.frameworks),
        f"framework: {', '.join(found.frameworks)} (in {found.framework_source})",
        f"framework: none of {cfg.frameworks} in requirements or imports ({found.files_read} files read)",
    )
    n = len(found.test_files)
    v.check(
        n >= cfg.min_test_files,
        f"tests: {n} test files",
        f"tests: {n} test files < min_test_files {cfg.min_test_files}",
    )
    if cfg.require_docs:
        readme, source = found.readme, found.docs_source
        v.check(
            readme is not None and source is not None,
            f"docs: {readme} and {source}",
            f"docs: {readme or 'no README'} and {source or 'no documentation source'} "
            "(docs/ or doc/ folder, mkdocs.yml, Sphinx conf.py, .readthedocs.yml)",
        )
    if cfg.require_contributing:
        v.check(
            found.contributing is not None,
            f"contributing: {found.contributing}",
            "contributing: no CONTRIBUTING file at the root, in .github/ or in docs/",
        )


# ------------------------------------------------------------------ selection


def _selection(meta: RepoMeta, keep: bool, reasons: list[str], sha: str | None, forced: str | None = None) -> Selection:
    return Selection(
        full_name=meta.full_name,
        slug=repo_slug(meta.full_name),
        keep=keep,
        reasons=reasons,
        clone_url=meta.clone_url,
        sha=sha,
        license=meta.license,
        stars=meta.stars,
        forced=forced,
    )


def judge(meta: RepoMeta, cfg: SelectConfig, overrides: ReposFile, gh: Github) -> Selection:
    """The verdict for one repository: forced, or every check with its reason."""
    sha = overrides.pinned(meta.full_name)
    excluded = overrides.excluded(meta.full_name)
    if excluded is not None:
        return _selection(meta, False, [f"forced: exclude ({excluded.reason or 'config/repos.yaml'})"], sha, "exclude")
    pin = pinned_commit(gh, meta.full_name, sha) if sha and cfg.pushed_after is not None else None
    verdict = metadata_verdict(meta, cfg, pin)
    included = overrides.included(meta.full_name)
    if included is not None:
        overridden = [f"{r} (overridden)" for r in verdict.fails]
        return _selection(
            meta, True, [f"forced: include ({included.reason or 'config/repos.yaml'})", *overridden], sha, "include"
        )
    if verdict.fails:
        return _selection(meta, False, [*verdict.fails, "content: not checked (metadata checks failed)"], sha)
    found = inspect_content(gh, meta.full_name, sha or meta.default_branch, cfg.frameworks)
    content_verdict(verdict, found, cfg)
    return _selection(meta, not verdict.fails, verdict.fails or verdict.passes, sha)


def apply_max_repos(selections: list[Selection], max_repos: int | None) -> None:
    """Keep the top ``max_repos`` by stars; forced includes and local repositories come first."""
    if max_repos is None:
        return
    kept = [s for s in selections if s.keep]
    kept.sort(key=lambda s: (s.forced != "include" and s.local_path is None, -s.stars, s.full_name))
    for rank, sel in enumerate(kept[max_repos:], start=max_repos + 1):
        sel.keep = False
        sel.reasons.append(f"max_repos: rank {rank} by stars, beyond max_repos {max_repos}")


def local_selection(local: LocalRepo) -> Selection:
    """A listed repository: on disk (checkout, mirror, bundle), else cloned from GitHub."""
    if local.path is None:
        reason = "listed (config local_repos): no copy on disk, cloned from GitHub"
        return Selection(full_name=local.name, slug=repo_slug(local.name), keep=True, reasons=[reason],
                         clone_url=f"{GITHUB}/{local.name}.git", sha=local.sha, as_of=local.as_of)  # fmt: skip
    path = str(Path(local.path).resolve())
    return Selection(
        full_name=local.name,
        slug=repo_slug(local.name),
        keep=True,
        reasons=[f"local: repository on disk at {local.path} (config local_repos)"],
        clone_url=path,
        sha=local.sha,
        as_of=local.as_of,
        local_path=path,
    )


def select_repos(
    crawled: list[RepoMeta], cfg: SelectConfig, local_repos: list[LocalRepo], overrides: ReposFile, gh: Github
) -> list[Selection]:
    """Judge every crawled repository and every forced include; append the local ones."""
    metas = {m.full_name.lower(): m for m in crawled}
    missing = [o for o in overrides.include if o.repo.lower() not in metas]
    selections = [_fetch_included(gh, o) for o in missing]
    progress = Progress(len(metas), "select", unit="repo")
    for meta in metas.values():
        selections.append(judge(meta, cfg, overrides, gh))
        progress.advance()
    selections.sort(key=lambda s: (-s.stars, s.full_name))
    locals_ = [local_selection(r) for r in local_repos]
    apply_max_repos(selections + locals_, cfg.max_repos)
    return selections + locals_


def _fetch_included(gh: Github, override: RepoOverride) -> Selection:
    """A forced include the crawl did not find: its metadata from ``GET /repos``."""
    reason = override.reason or "config/repos.yaml"
    try:
        meta = fetch_meta(gh, override.repo)
    except GithubException as exc:
        log.warning("forced include %s: %s", override.repo, exc.status)
        return Selection(
            full_name=override.repo,
            slug=repo_slug(override.repo),
            keep=False,
            forced="include",
            reasons=[f"forced: include ({reason}) failed: repository not found ({exc.status} {_message(exc)})"],
            clone_url="",
            sha=override.sha,
        )
    return _selection(meta, True, [f"forced: include ({reason}); not found by the crawl"], override.sha, "include")


def selection_frame(selections: list[Selection]) -> pd.DataFrame:
    """The human-readable table of ``results/select/repos.csv``."""
    rows = [s.model_dump() | {"reasons": "; ".join(s.reasons)} for s in selections]
    return pd.DataFrame(rows, columns=CSV_COLUMNS)


def select_file(
    crawl: str | Path | None, overrides: str | Path | None, out_jsonl: str | Path, out_csv: str | Path,
    github: CrawlConfig, cfg: SelectConfig, local_repos: list[LocalRepo],
) -> list[Selection]:  # fmt: skip
    """Select from a crawl file (read through the GitHub API ``github`` names); write every
    verdict to ``out_jsonl`` and ``out_csv``. Without a crawl (``crawl.enabled: false``) the
    selection is the local repositories."""
    if crawl is None:
        selections = [local_selection(r) for r in local_repos]
    else:
        with open_github(github) as gh:
            selections = select_repos(read_jsonl(crawl, RepoMeta), cfg, local_repos, load_overrides(overrides), gh)
    write_jsonl(out_jsonl, selections)
    write_frame(out_csv, selection_frame(selections))
    kept = sum(s.keep for s in selections)
    log.info("selected %d of %d repositories → %s", kept, len(selections), out_jsonl)
    return selections


def kept_slugs(path: str | Path) -> list[str]:
    """Slugs of the kept repositories in a selection file (for the workflow's ``get_repos()``)."""
    return [s.slug for s in read_jsonl(path, Selection) if s.keep]
