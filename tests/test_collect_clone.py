"""Clones with real git: pinned and default commits, reuse without a new clone, failures, local repos."""

from __future__ import annotations

import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dlbench.collect.clone import clone_file, clone_repo
from dlbench.config import CrawlConfig
from dlbench.records import CloneRecord, CloneStatus, Selection
from dlbench.store import read_json, write_jsonl
from tests.test_collect_support import TORCHY, git, make_bundle, make_git_repo


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """(bundle path, commit shas oldest first) of a three-commit repository."""
    root = tmp_path_factory.mktemp("origin")
    shas = make_git_repo(root / "torchy", TORCHY, commits=3)
    return make_bundle(root / "torchy", root / "torchy.bundle"), shas


def selection(url: str, sha: str | None = None, **extra) -> Selection:
    return Selection(
        full_name="acme/torchy", slug="acme__torchy", keep=True, reasons=["ok"], clone_url=url, sha=sha, **extra
    )


def test_clone_at_the_default_branch_head_is_recorded(origin, tmp_path):
    bundle, shas = origin
    record = clone_repo(selection(str(bundle)), tmp_path / "acme__torchy", retries=0)
    assert record.status == CloneStatus.OK and record.sha == shas[-1] and not record.reused
    assert (tmp_path / "acme__torchy" / "tests" / "test_layers.py").exists()
    assert git(tmp_path / "acme__torchy", "rev-parse", "HEAD") == shas[-1]


def test_clone_at_a_pinned_commit_then_reuse_without_cloning(origin, tmp_path):
    bundle, shas = origin
    dest = tmp_path / "acme__torchy"
    first = clone_repo(selection(str(bundle), shas[0]), dest, retries=0)
    assert first.sha == shas[0] and not (dest / "CHANGES.txt").exists()
    marker = dest / ".git" / "dlbench-marker"  # survives only if the clone is not redone
    marker.write_text("x")
    again = clone_repo(selection(str(bundle), shas[0]), dest, retries=0)
    assert again.reused and again.sha == shas[0] and marker.exists()
    moved = clone_repo(selection(str(bundle), shas[1][:10]), dest, retries=0)  # another pin, short sha
    assert moved.reused and moved.sha == shas[1] and marker.exists()
    assert git(dest, "rev-parse", "HEAD") == shas[1]


def test_a_foreign_folder_is_replaced_by_a_fresh_clone(origin, tmp_path):
    bundle, shas = origin
    dest = tmp_path / "acme__torchy"
    dest.mkdir()
    (dest / "junk.txt").write_text("left over from a killed job")
    record = clone_repo(selection(str(bundle)), dest, retries=0)
    assert record.status == CloneStatus.OK and not record.reused and not (dest / "junk.txt").exists()


def test_unknown_pinned_commit_is_a_clone_error(origin, tmp_path):
    bundle, _ = origin
    record = clone_repo(selection(str(bundle), "0" * 40), tmp_path / "acme__torchy", retries=0)
    assert record.status == CloneStatus.CLONE_ERROR and "cannot check out" in record.error


class _Refusing(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):  # noqa: N802
        type(self).hits += 1
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_unreachable_url_is_retried_then_recorded_as_clone_error(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/acme/torchy.git"
        record = clone_repo(selection(url), tmp_path / "acme__torchy", retries=2, backoff_s=0.05)
    finally:
        server.shutdown()
        server.server_close()
    assert record.status == CloneStatus.CLONE_ERROR
    assert "failed after 3 attempts" in record.error and "503" in record.error
    assert _Refusing.hits == 3  # the first attempt and two retries reached the server
    assert not (tmp_path / "acme__torchy").exists()


def test_missing_bundle_fails_without_raising(tmp_path):
    record = clone_repo(selection(str(tmp_path / "nope.bundle")), tmp_path / "x", retries=1, backoff_s=0.01)
    assert record.status == CloneStatus.CLONE_ERROR and record.sha is None


def test_local_repository_without_sha_is_used_in_place(origin, tmp_path):
    _, shas = origin
    src = tmp_path / "mine"
    local_shas = make_git_repo(src, {"a.py": "x = 1\n"}, commits=2)
    record = clone_repo(selection(str(src), local_path=str(src)), tmp_path / "repos" / "me__mine")
    assert record.status == CloneStatus.OK and record.path == str(src) and record.sha == local_shas[-1]
    assert not (tmp_path / "repos").exists()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert clone_repo(selection(str(plain), local_path=str(plain)), tmp_path / "p").sha is None


def test_local_repository_with_sha_gets_a_worktree_reused_on_rerun(tmp_path):
    src = tmp_path / "mine"
    local_shas = make_git_repo(src, {"a.py": "x = 1\n"}, commits=2)
    dest = tmp_path / "repos" / "me__mine"
    record = clone_repo(selection(str(src), local_shas[0], local_path=str(src)), dest)
    assert record.status == CloneStatus.OK and record.path == str(dest) and record.sha == local_shas[0]
    assert not (dest / "CHANGES.txt").exists() and (src / "CHANGES.txt").exists()  # the source stays as it was
    assert git(src, "rev-parse", "HEAD") == local_shas[-1]
    assert clone_repo(selection(str(src), local_shas[0], local_path=str(src)), dest).reused
    missing = clone_repo(selection(str(src), local_shas[0], local_path=str(tmp_path / "gone")), dest)
    assert missing.status == CloneStatus.CLONE_ERROR and "not found" in missing.error


def _garbage_head(git_dir: Path) -> None:
    (git_dir / "HEAD").write_text("garbage\n")


def _objects_removed(git_dir: Path) -> None:
    for folder in (git_dir / "objects").glob("??"):
        shutil.rmtree(folder)


def _branch_names_a_missing_commit(git_dir: Path) -> None:
    (git_dir / "refs" / "heads" / "main").write_text("1" * 40 + "\n")


def _gitfile_names_a_missing_folder(git_dir: Path) -> None:
    shutil.rmtree(git_dir)
    git_dir.write_text("gitdir: /nonexistent/dlbench-gitdir\n")


CORRUPT = {
    "HEAD is garbage": (_garbage_head, "has a .git that git cannot read"),
    "objects removed": (_objects_removed, "could not be resolved"),
    "branch names a missing commit": (_branch_names_a_missing_commit, "could not be resolved"),
    ".git file names a missing folder": (_gitfile_names_a_missing_folder, "has a .git that git cannot read"),
}


@pytest.mark.parametrize("pinned", [False, True], ids=["no sha", "sha"])
@pytest.mark.parametrize("corruption", list(CORRUPT))
def test_local_repository_with_a_corrupt_git_is_a_clone_error(corruption: str, pinned: bool, tmp_path: Path) -> None:
    corrupt, message = CORRUPT[corruption]
    src = tmp_path / "mine"
    sha = make_git_repo(src, {"a.py": "x = 1\n"})[0]
    corrupt(src / ".git")
    sel_path, out = tmp_path / "select.jsonl", tmp_path / "repos" / "acme__torchy.json"
    write_jsonl(sel_path, [selection(str(src), sha if pinned else None, local_path=str(src))])
    record = clone_file(sel_path, "acme__torchy", out, tmp_path / "repos", CrawlConfig(max_retries=0))
    assert read_json(out, CloneRecord) == record
    if pinned and corruption == "branch names a missing commit":  # the pinned commit itself is intact
        assert record.status == CloneStatus.OK and record.sha == sha
        return
    assert record.status == CloneStatus.CLONE_ERROR and str(src) in record.error and message in record.error


def test_clone_file_writes_the_record_of_a_kept_repository(origin, tmp_path):
    bundle, shas = origin
    sel_path = tmp_path / "select.jsonl"
    dropped = Selection(full_name="acme/x", slug="acme__x", keep=False, reasons=["stars: 1 < 50"], clone_url="u")
    write_jsonl(sel_path, [selection(str(bundle), shas[1]), dropped])
    out = tmp_path / "repos" / "acme__torchy.json"
    record = clone_file(sel_path, "acme__torchy", out, tmp_path / "repos", CrawlConfig(max_retries=0))
    assert read_json(out, CloneRecord) == record and record.sha == shas[1]
    assert record.path == str(tmp_path / "repos" / "acme__torchy")
    with pytest.raises(ValueError, match="was not selected"):
        clone_file(sel_path, "acme__x", tmp_path / "x.json", tmp_path / "repos", CrawlConfig())
    with pytest.raises(ValueError, match="no repository"):
        clone_file(sel_path, "acme__nope", tmp_path / "y.json", tmp_path / "repos", CrawlConfig())


def dated_mirror(root: Path) -> tuple[Path, list[str]]:
    """A bare mirror (as the fetch tool brings) of a repository with commits on three days; the
    last one adds ``data/big.bin``, whose blob the mirror then loses (snapshots leave out large files)."""
    import os
    import subprocess

    work = root / "work"
    work.mkdir(parents=True)
    git(work, "init", "--quiet", "--initial-branch=main")
    shas = []
    for day, (rel, text) in zip(("2024-01-10", "2024-06-20", "2025-03-01"), [("a.py", "A = 1\n"), ("b.py", "B = 2\n"), ("data/big.bin", "x" * 100)]):  # fmt: skip
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
        git(work, "add", "-A")
        env = os.environ | {"GIT_AUTHOR_DATE": f"{day}T12:00:00Z", "GIT_COMMITTER_DATE": f"{day}T12:00:00Z",
                            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}  # fmt: skip
        subprocess.run(["git", "commit", "--quiet", "-m", day], cwd=work, env=env, check=True)
        shas.append(git(work, "rev-parse", "HEAD"))
    mirror = root / "acme+torchy" / "repo"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(work), str(mirror)], check=True)
    blob = git(work, "rev-parse", "HEAD:data/big.bin")
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()
    (mirror / "config").unlink()  # the fetch tool's mirrors have none
    return mirror, shas


@pytest.mark.parametrize(("as_of", "expected"), [("2024-06-20", 1), ("2024-12-31", 1), ("2024-01-10", 0)])
def test_a_bare_mirror_pinned_by_day_gets_a_worktree_at_that_days_commit(tmp_path, as_of, expected) -> None:
    from datetime import date

    mirror, shas = dated_mirror(tmp_path / "mirrors")
    sel = selection(str(mirror), local_path=str(mirror), as_of=date.fromisoformat(as_of))
    record = clone_repo(sel, tmp_path / "acme__torchy", retries=0)
    assert record.status == CloneStatus.OK and record.sha == shas[expected], record
    assert (tmp_path / "acme__torchy" / "a.py").is_file() and record.missing_files == []


def test_a_mirror_without_some_blobs_is_checked_out_without_those_files(tmp_path) -> None:
    mirror, shas = dated_mirror(tmp_path / "mirrors")
    record = clone_repo(selection(str(mirror), local_path=str(mirror)), tmp_path / "acme__torchy", retries=0)
    assert record.status == CloneStatus.OK and record.sha == shas[-1], record
    assert record.missing_files == ["data/big.bin"]
    assert (tmp_path / "acme__torchy" / "b.py").read_text() == "B = 2\n"
    assert not (tmp_path / "acme__torchy" / "data" / "big.bin").exists()


def test_listed_repositories_come_from_the_mirrors_folder_else_from_github(tmp_path) -> None:
    from pydantic import ValidationError

    from dlbench.collect.select import local_selection
    from dlbench.config import Config, LocalRepo

    mirror, _ = dated_mirror(tmp_path / "mirrors")
    listed = [{"name": "acme/torchy", "as_of": "2024-12-31"}, {"name": "other/gone", "as_of": "2024-12-31"}]
    cfg = Config.model_validate({"local_repos": listed, "local_mirrors": str(tmp_path / "mirrors")})
    here, elsewhere = (local_selection(r) for r in cfg.local_repos)
    assert here.local_path == str(mirror.resolve()) and str(here.as_of) == "2024-12-31"
    assert elsewhere.local_path is None and elsewhere.clone_url == "https://github.com/other/gone.git"
    with pytest.raises(ValidationError, match="sha or as_of"):
        LocalRepo(name="a/b", sha="abc", as_of="2024-01-01")
