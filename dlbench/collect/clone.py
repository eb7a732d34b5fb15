"""Check out each selected repository at a pinned commit (GitPython).

A remote repository is cloned into ``results/repos/{slug}/`` and checked out at its pinned
SHA, or at the default branch's HEAD (recorded). An existing clone of the same URL is
reused (fetching only when the commit is missing), so reruns cost no clone. A clone that
keeps failing after retries yields ``CloneRecord(status=clone_error)`` instead of an
exception, so one bad repository never stops the workflow.

Local repositories (``local_repos``) are not cloned: with a ``sha`` (or an ``as_of`` day:
the default branch's last commit on or before it) they get a git worktree at that commit
under the same folder, without one the path is used as it is; a bare mirror always gets a
worktree. A local ``.bundle`` file is cloned like a remote. A source that lacks some blobs
(a mirror without its largest files) is checked out without them, each named in the record.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from pathlib import Path

from git import GitCommandError, InvalidGitRepositoryError, NoSuchPathError, Repo

from dlbench.config import CrawlConfig
from dlbench.records import CloneRecord, CloneStatus, Selection
from dlbench.store import read_jsonl, write_json

log = logging.getLogger(__name__)

GIT_ENV = {"GIT_TERMINAL_PROMPT": "0"}  # never wait for credentials in a batch job
MAX_ERROR_CHARS = 2000
MAX_CLONE_RETRIES = 3
MISSING_MARKER = "dlbench-missing-files"  # in a worktree's git folder: the files the source lacked


class CloneError(Exception):
    """A repository that could not be checked out (message for the record)."""


def clone_repo(sel: Selection, dest: str | Path, retries: int = 3, backoff_s: float = 1.0) -> CloneRecord:
    """Check ``sel`` out under ``dest``; never raises for a repository that cannot be had."""
    dest = Path(dest)
    try:
        if sel.local_path:
            path, sha, reused = local_checkout(sel, dest)
        else:
            path, sha, reused = remote_checkout(sel, dest, retries, backoff_s)
    except CloneError as exc:
        log.error("%s: %s", sel.full_name, exc)
        return _record(sel, str(dest), sel.sha, CloneStatus.CLONE_ERROR, error=str(exc)[:MAX_ERROR_CHARS])
    log.info("%s: %s at %s%s", sel.full_name, path, sha, " (reused)" if reused else "")
    missing = _missing_marker(Path(path))
    return _record(sel, str(path), sha, CloneStatus.OK, reused=reused, missing_files=missing)


def _record(sel: Selection, path: str, sha: str | None, status: CloneStatus, **extra) -> CloneRecord:
    return CloneRecord(
        full_name=sel.full_name,
        slug=sel.slug,
        clone_url=sel.clone_url,
        path=path,
        sha=sha,
        status=status,
        license=sel.license,
        **extra,
    )


# ------------------------------------------------------------------ remote


def remote_checkout(sel: Selection, dest: Path, retries: int, backoff_s: float) -> tuple[Path, str, bool]:
    """(path, checked-out sha, reused) for a repository reached by its clone URL."""
    repo = _existing_clone(dest, sel.clone_url)
    reused = repo is not None and (sel.sha is None or _has_commit(repo, sel.sha))
    fresh = repo is None
    if fresh:
        repo = _clone_with_retries(sel.clone_url, dest, retries, backoff_s)
    try:
        if sel.sha is not None and not _has_commit(repo, sel.sha):
            repo.git.fetch("origin", env=GIT_ENV)
        wanted = sel.sha or _as_of(repo, sel, "origin/HEAD") or repo.head.commit.hexsha
        return dest, _checkout(repo, wanted, fresh), reused
    except GitCommandError as exc:
        raise CloneError(f"cannot check out {sel.sha}: {_git_message(exc)}") from None


def _existing_clone(dest: Path, url: str) -> Repo | None:
    """A clone of ``url`` already at ``dest``; anything else there is removed."""
    if not dest.exists():
        return None
    try:
        repo = Repo(dest)
        if repo.remotes and repo.remotes.origin.url == url and repo.head.is_valid():
            return repo
    except (InvalidGitRepositoryError, NoSuchPathError, ValueError, AttributeError):
        pass
    log.info("%s holds no usable clone of %s: cloning afresh", dest, url)
    shutil.rmtree(dest)
    return None


def _clone_with_retries(url: str, dest: Path, retries: int, backoff_s: float) -> Repo:
    for attempt in range(retries + 1):
        try:
            return Repo.clone_from(url, dest, env=GIT_ENV, no_checkout=True)  # checked out by _checkout
        except GitCommandError as exc:
            shutil.rmtree(dest, ignore_errors=True)
            message = _git_message(exc)
            if attempt == retries:
                raise CloneError(f"clone of {url} failed after {retries + 1} attempts: {message}") from None
            delay = backoff_s * 2**attempt
            log.warning("clone of %s failed (%s); retry %d/%d in %.1f s", url, message, attempt + 1, retries, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


def _has_commit(repo: Repo, sha: str) -> bool:
    try:
        repo.git.cat_file("-e", f"{sha}^{{commit}}")
        return True
    except GitCommandError:
        return False


def _checkout(repo: Repo, sha: str, fresh: bool = False) -> str:
    """Detach at ``sha`` (a ``fresh`` clone has no files yet); return the full sha. Files whose
    blobs the source lacks are left out (``_check_out_present``)."""
    full = repo.commit(sha).hexsha
    if fresh or repo.head.commit.hexsha != full:
        try:
            repo.git.checkout("--force", "--detach", full)
        except GitCommandError as exc:
            if "unable to read" not in _git_message(exc) and "invalid object" not in _git_message(exc):
                raise
            _git(repo.working_dir, "update-ref", "--no-deref", "HEAD", full)
            _check_out_present(Path(repo.working_dir), full)
    return repo.head.commit.hexsha


def _git_message(exc: GitCommandError) -> str:
    text = (exc.stderr or str(exc)).strip()
    return " ".join(text.split())


# ------------------------------------------------------------------ local


def local_checkout(sel: Selection, dest: Path) -> tuple[Path, str | None, bool]:
    """(path, sha, reused) for a repository on disk: a worktree at ``sel.sha``, else the path itself."""
    source = Path(sel.local_path or "")
    if source.is_file() and source.suffix == ".bundle":  # a git bundle: cloned like a remote
        return remote_checkout(sel.model_copy(update={"clone_url": str(source.resolve())}), dest, 1, 0.0)
    if not source.is_dir():
        raise CloneError(f"local repository not found: {source}")
    if _is_git_folder(source):  # a mirror without a work tree (the fetch tool's has no config): cloned
        return remote_checkout(sel.model_copy(update={"clone_url": str(source.resolve())}), dest, 1, 0.0)
    try:
        repo = Repo(source)
    except InvalidGitRepositoryError:
        if (source / ".git").exists():  # a folder of files would be used as it is; a broken history would not
            raise CloneError(f"{source} has a .git that git cannot read (corrupt?)") from None
        if sel.sha is not None:
            raise CloneError(f"{source} is not a git repository, cannot check out {sel.sha}") from None
        return source, None, False
    try:
        wanted = sel.sha or _as_of(repo, sel, "HEAD")
        if wanted is None and not repo.bare:
            return source, repo.head.commit.hexsha, False
        return _worktree(repo, dest, wanted or repo.head.commit.hexsha)
    except (GitCommandError, ValueError) as exc:  # ValueError: GitPython cannot resolve a ref or object
        message = _git_message(exc) if isinstance(exc, GitCommandError) else str(exc)
        what = f"check out {sel.sha} of {source}" if sel.sha else f"read HEAD's commit of {source} (corrupt .git?)"
        raise CloneError(f"cannot {what}: {message}") from None


def _worktree(repo: Repo, dest: Path, sha: str) -> tuple[Path, str, bool]:
    wanted = repo.commit(sha).hexsha
    if dest.exists():
        try:
            if Repo(dest).head.commit.hexsha == wanted:
                return dest, wanted, True
        except (InvalidGitRepositoryError, NoSuchPathError, ValueError):
            pass
        shutil.rmtree(dest)
    repo.git.worktree("prune")  # forget worktrees whose folders are gone
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        repo.git.worktree("add", "--detach", str(dest.resolve()), wanted)
    except GitCommandError as exc:
        if "unable to read" not in _git_message(exc):
            raise
        _git(repo.git_dir, "worktree", "add", "--no-checkout", "--detach", str(dest.resolve()), wanted)
        _check_out_present(dest, wanted)
    return dest, wanted, False


def _is_git_folder(path: Path) -> bool:
    """A git folder itself (a bare mirror), not a work tree."""
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / ".git").exists()


def _as_of(repo: Repo, sel: Selection, branch: str) -> str | None:
    """The default branch's last commit on or before ``sel.as_of`` (its first-parent history)."""
    if sel.as_of is None:
        return None
    ref = branch if branch == "HEAD" or _has_commit(repo, branch) else "HEAD"
    found = repo.git.rev_list("-1", "--first-parent", f"--before={sel.as_of.isoformat()}T23:59:59Z", ref).strip()
    if not found:
        raise CloneError(f"no commit on or before {sel.as_of} in {sel.full_name}'s default branch")
    return found


def _check_out_present(dest: Path, sha: str) -> None:
    """Write the files of ``sha`` whose blobs the source holds into the work tree ``dest``
    (HEAD already there); the others (a snapshot leaves out its largest files) are listed in
    ``MISSING_MARKER`` of its git folder, for the clone record."""
    where = str(dest)
    entries = [_tree_entry(line) for line in _git(where, "ls-tree", "-r", "-z", sha).split("\0") if line]
    blobs = [(obj, path) for kind, obj, path in entries if kind == "blob"]
    check = _git(where, "cat-file", "--batch-check", stdin="".join(f"{o}\n" for o, _ in blobs))
    absent = {line.split()[0] for line in check.splitlines() if line.endswith(" missing")}
    present = "\0".join(p for o, p in blobs if o not in absent)
    _git(where, "checkout", sha, "--pathspec-from-file=-", "--pathspec-file-nul", stdin=present)
    missing = sorted(p for o, p in blobs if o in absent)
    (Path(Repo(dest).git_dir) / MISSING_MARKER).write_text("".join(f"{p}\n" for p in missing))
    log.warning("%s: checked out without %d file(s) the source lacks: %s", dest, len(missing), ", ".join(missing[:5]))


def _tree_entry(line: str) -> tuple[str, str, str]:
    """(type, object, path) of one ``ls-tree -z`` line: ``<mode> <type> <object>\\t<path>``."""
    meta, _, path = line.partition("\t")
    _, kind, obj = meta.split()
    return kind, obj, path


def _git(where: str, *args: str, stdin: str | None = None) -> str:
    """A git command run in ``where`` (a work tree or a git folder), with ``stdin``; its output."""
    done = subprocess.run(
        ["git", "-C", where, *args], input=stdin, capture_output=True, text=True, env=os.environ | GIT_ENV
    )
    if done.returncode != 0:
        raise GitCommandError(["git", *args], done.returncode, done.stderr)
    return done.stdout


def _missing_marker(path: Path) -> list[str]:
    """The files a checkout was made without (``_checkout_present_blobs``), if any."""
    try:
        marker = Path(Repo(path).git_dir) / MISSING_MARKER
    except (InvalidGitRepositoryError, NoSuchPathError):
        return []
    return marker.read_text().splitlines() if marker.is_file() else []


# ------------------------------------------------------------------ workflow entry


def clone_file(
    selection: str | Path, slug: str, out_json: str | Path, repos_dir: str | Path, cfg: CrawlConfig
) -> CloneRecord:
    """Check out the kept repository ``slug`` of a selection file; write its CloneRecord.

    Retries follow ``cfg`` (the GitHub client's settings), at most ``MAX_CLONE_RETRIES``:
    a clone that failed that often is not transient.
    """
    matches = [s for s in read_jsonl(selection, Selection) if s.slug == slug]
    if not matches:
        raise ValueError(f"{selection}: no repository {slug!r}")
    sel = matches[0]
    if not sel.keep:
        raise ValueError(f"{selection}: {sel.full_name} was not selected ({'; '.join(sel.reasons)})")
    record = clone_repo(sel, Path(repos_dir) / slug, min(cfg.max_retries, MAX_CLONE_RETRIES), cfg.backoff_s)
    write_json(out_json, record)
    return record
