#!/usr/bin/env python
"""Build the sample repositories' dated git histories and write them as git bundles.

Each repository's final tree is ``src/<name>/`` (minus HISTORY.yaml); its history is
described by ``src/<name>/HISTORY.yaml``::

    commits:
      - date: 2023-01-18T10:00:00Z
        message: Initial image ops
        # files first committed here; files no commit lists belong to the first commit
        add: [visionkit/boxes.py]
        # how this commit changed files that already existed
        introduce:              # definitions (module level or Class.method) added here
          visionkit/image.py: [pad, rotate90]
        replace:                # text edits: ``after`` is the text from this commit on
          - path: visionkit/boxes.py
            before: "old text\n"
            after: "new text\n"

The tree of commit i is the final tree with the ``introduce`` and ``replace`` changes of
every later commit undone, newest first, so the last commit equals ``src/<name>/``.
Author and committer, their e-mail and every date are fixed, so rebuilding gives the same
commit SHAs. Work happens in a temporary directory; only ``bundles/`` and the
``head_sha`` fields of ``github/repos.json`` are written (``--out`` writes bundles
elsewhere and leaves repos.json alone). ``--check-history`` also runs each library's
test suite at every commit and exits 1 if one fails.
"""
import argparse
import ast
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from sample_world import BUNDLES, CONTENT_DISTRACTORS, LIBRARIES, REPOS_JSON, SRC, SUITE_ARGS, SUITE_ENV

AUTHOR = ("dlbench sample bot", "sample-bot@dlbench.invalid")
HISTORY = "HISTORY.yaml"
IGNORED_PARTS = {"__pycache__", ".pytest_cache", HISTORY}


def final_tree(src: Path) -> dict:
    """Map relative path -> text of every file of the final tree."""
    files = {}
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_file() and not IGNORED_PARTS & set(rel.parts) and path.suffix != ".pyc":
            files[rel.as_posix()] = path.read_text(encoding="utf-8")
    return files


def find_definition(tree: ast.Module, qualname: str):
    """The def/class node of a module-level ``name`` or ``Class.method``, or None."""
    body, node = tree.body, None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def definition_lines(text: str, qualname: str) -> tuple:
    """1-based (first, last) line of a definition, decorators included; ValueError if absent."""
    node = find_definition(ast.parse(text), qualname)
    if node is None:
        raise ValueError(f"no definition {qualname!r}")
    return min([node.lineno] + [d.lineno for d in node.decorator_list]), node.end_lineno


def remove_definition(text: str, qualname: str, where: str) -> str:
    """Drop a definition (with decorators and the blank lines before it) from source."""
    try:
        first, last = definition_lines(text, qualname)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc} to introduce") from None
    lines = text.splitlines(keepends=True)
    start = first - 1
    while start > 0 and not lines[start - 1].strip():
        start -= 1
    return "".join(lines[:start] + lines[last:])


def undo_commit(files: dict, commit: dict, where: str) -> None:
    """Turn the tree after ``commit`` into the tree before it, in place."""
    for path in commit.get("add", []):
        del files[path]
    for edit in reversed(commit.get("replace", [])):
        text = files[edit["path"]]
        if text.count(edit["after"]) != 1:
            raise ValueError(f"{where}: 'after' text must occur once in {edit['path']}")
        files[edit["path"]] = text.replace(edit["after"], edit["before"])
    for path, names in commit.get("introduce", {}).items():
        for name in reversed(names):
            files[path] = remove_definition(files[path], name, f"{where} {path}")


def commit_trees(src: Path, commits: list) -> list:
    """The full file tree of every commit, oldest first."""
    files = final_tree(src)
    listed = {p for c in commits for p in c.get("add", [])}
    if listed - set(files):
        raise ValueError(f"{src.name}: HISTORY adds unknown files {sorted(listed - set(files))}")
    commits = [dict(commits[0], add=sorted(set(files) - listed | set(commits[0].get("add", []))))] + commits[1:]
    trees = [dict(files)]
    for i in range(len(commits) - 1, 0, -1):
        undo_commit(files, commits[i], f"{src.name} commit {i + 1}")
        trees.append(dict(files))
    return trees[::-1]


def git_date(value) -> str:
    """Git's internal date format for an ISO timestamp (YAML may hand us a datetime)."""
    when = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
    if when.tzinfo is None:
        raise ValueError(f"commit date {value!r} needs a time zone")
    return f"{int(when.timestamp())} +0000"


def git_env(home: Path, date: str) -> dict:
    return {
        "PATH": os.environ["PATH"], "HOME": str(home), "TZ": "UTC", "LC_ALL": "C",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": AUTHOR[0], "GIT_AUTHOR_EMAIL": AUTHOR[1],
        "GIT_COMMITTER_NAME": AUTHOR[0], "GIT_COMMITTER_EMAIL": AUTHOR[1],
        "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
    }


def git(repo: Path, env: dict, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,
                          capture_output=True, text=True)
    return proc.stdout.strip()


def write_tree(repo: Path, files: dict) -> None:
    for old in repo.rglob("*"):
        if old.is_file() and ".git" not in old.relative_to(repo).parts:
            old.unlink()
    for rel, text in files.items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def build_repo(name: str, work: Path, out_dir: Path) -> str:
    """Create ``name``'s repository under ``work``, bundle it, return the HEAD SHA."""
    src = SRC / name
    commits = yaml.safe_load((src / HISTORY).read_text(encoding="utf-8"))["commits"]
    repo = work / name
    env = git_env(work, git_date("2023-01-01T00:00:00+00:00"))
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], env=env, check=True)
    for commit, files in zip(commits, commit_trees(src, commits)):
        env = git_env(work, git_date(commit["date"]))
        write_tree(repo, files)
        git(repo, env, "add", "-A")
        git(repo, env, "commit", "-q", "--no-verify", "-m", commit["message"])
    out_dir.mkdir(parents=True, exist_ok=True)
    git(repo, env, "-c", "pack.threads=1", "bundle", "create", "-q",
        str(out_dir / f"{name}.bundle"), "--all")
    return git(repo, env, "rev-parse", "HEAD")


def failing_commits(name: str, bundle: Path, work: Path) -> list:
    """Run the test suite at every commit of a bundle; return 'sha: summary' of failures."""
    repo = work / f"{name}-history"
    env = dict(os.environ, **SUITE_ENV)
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True, capture_output=True)
    failures = []
    for sha in git(repo, env, "rev-list", "--reverse", "HEAD").split():
        git(repo, env, "checkout", "-q", sha)
        proc = subprocess.run([sys.executable, *SUITE_ARGS, "tests"],
                              cwd=repo, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            failures.append(f"{sha[:10]}: {proc.stdout.strip().splitlines()[-1:]}")
    return failures


def update_repos_json(heads: dict) -> None:
    repos = json.loads(REPOS_JSON.read_text(encoding="utf-8"))
    for repo in repos:
        if repo.get("bundle"):
            repo["head_sha"] = heads[repo["bundle"].removesuffix(".bundle")]
    REPOS_JSON.write_text(json.dumps(repos, indent=2) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write bundles here; leave repos.json alone")
    parser.add_argument("--check-history", action="store_true",
                        help="also run each library's suite at every commit (slow)")
    args = parser.parse_args(argv)
    out_dir = args.out or BUNDLES
    failures = []
    with tempfile.TemporaryDirectory(prefix="dlbench-sample-") as tmp:
        heads = {name: build_repo(name, Path(tmp), out_dir)
                 for name in (*LIBRARIES, *CONTENT_DISTRACTORS)}
        if args.check_history:
            for name in LIBRARIES:
                failures += [f"{name} {f}" for f in failing_commits(name, out_dir / f"{name}.bundle", Path(tmp))]
    if args.out is None:
        update_repos_json(heads)
    json.dump(heads, sys.stdout, indent=2)
    print()
    for line in failures:
        print(f"suite fails at {line}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
