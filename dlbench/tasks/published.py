"""Import the DL-Bench authors' published task files as benchmark records.

A published task file (their release zip, ``dleval/*.txt``) holds ``stage:``, ``task:`` and
``data:`` lines, the prompt they wrote after ``prompt:``, and the ground truth as
``ground Truth:blob/<sha|master>/<path>[#L<line>]``. A ``master`` link's path starts with
the repository's folder name and means the default branch on the day they published
(``PUBLISHED_DATE``); a commit link names the repository only through its commit, found in
whichever checkout holds it (bundles whose history was rewritten map upstream ids to
theirs in ``NAME.shamap.tsv``).

Resolution: the function is the innermost definition holding the linked line at the
linked commit, or, for links without a line, the first name the prompt introduces
(``called X``, ``named `X```) that the file then defined. The task is then looked up by
qualified name at the pinned commit (the checkout's HEAD), so a function whose lines moved
still resolves; its tests are the ones the project's mining (``dlbench.mine.api.mine``)
finds for it there. Files that resolve to a function with tests become ``BenchmarkTask``
records with the authors' prompt and labels (``prompt_source: published``), so any model
can be scored on them with ``dlbench evaluate``; every file gets a ``PublishedTask`` row
saying what became of it.
"""

from __future__ import annotations

import ast
import logging
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from dlbench.config import MineConfig
from dlbench.records import BenchmarkTask, FunctionRecord, PublishedTask
from dlbench.store import write_jsonl
from dlbench.tasks.assemble import task_from_function
from dlbench.tasks.vocab import LABEL_DIMENSIONS, canonical_label

log = logging.getLogger(__name__)

PUBLISHED_DATE = date(2024, 9, 12)  # the date of the DL-Bench release zip (its dleval task files)
PROMPT_SOURCE = "published"
_GROUND_TRUTH = re.compile(
    r"ground truth:\s*blob/(?P<ref>[^/\s]+)/(?P<path>[^#\s]+)(?:#L(?P<line>\d+))?", re.IGNORECASE
)
_LABEL = re.compile(r"^(stage|task|data):[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_PROMPT = re.compile(r"^prompt:[ \t]*\n?", re.IGNORECASE | re.MULTILINE)
_WORD = re.compile(r"`?[A-Za-z_]\w*`?")
_INTRODUCING = frozenset({"called", "named", "function", "method"})


@dataclass(frozen=True)
class PublishedFile:
    """One published task file as written."""

    source: str
    labels: dict[str, str]  # stage, task, data as typed
    prompt: str
    ref: str  # commit id or "master"
    path: str  # for "master": <repo folder>/<path in the repository>
    line: int | None


@dataclass(frozen=True)
class Located:
    """Where a published task's function lives: repository, file, the linked commit and the definition."""

    repo: str | None
    path: str
    commit: str | None
    qualname: str | None
    reason: str = ""


# ---------------------------------------------------------------- the task files


def parse_published(text: str, source: str) -> PublishedFile | None:
    """A task file's labels, prompt and link; None when it has no ground-truth link."""
    link = _GROUND_TRUTH.search(text)
    if link is None:
        return None
    labels = {m[1].lower(): m[2].strip() for m in _LABEL.finditer(text[: link.start()])}
    start = _PROMPT.search(text)
    prompt = text[start.end() if start else 0 : link.start()].strip()
    line = int(link["line"]) if link["line"] else None
    return PublishedFile(source, labels, prompt, link["ref"], link["path"], line)


def read_published(directory: str | Path) -> list[PublishedFile]:
    """Every ``*.txt`` task file of ``directory`` with a link, by file name."""
    found = []
    for path in sorted(Path(directory).glob("*.txt")):
        parsed = parse_published(path.read_text(encoding="utf-8", errors="replace"), path.name)
        if parsed is None:
            log.warning("%s: no ground-truth link, skipped", path.name)
        else:
            found.append(parsed)
    return found


def labels_of(published: PublishedFile) -> dict[str, str | None]:
    """Their labels in the project's vocabularies (an unknown spelling stays None)."""
    return {d: canonical_label(d, published.labels.get(d, "")).value for d in LABEL_DIMENSIONS}


# ---------------------------------------------------------------- git


def git(checkout: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True, check=True).stdout


def has_commit(checkout: Path, sha: str) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(checkout), "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True, check=False
    )
    return proc.returncode == 0


def read_shamap(path: str | Path) -> dict[str, str]:
    """Upstream commit id → the bundle's (``NAME.shamap.tsv``: a header, then two tab-separated ids)."""
    path = Path(path)
    if not path.is_file():
        return {}
    rows = (line.split("\t") for line in path.read_text().splitlines()[1:] if "\t" in line)
    return {upstream.strip(): ours.strip() for upstream, ours in rows}


def master_when_published(checkout: Path, published: date = PUBLISHED_DATE) -> str | None:
    """What "master" in a published link means: the default branch's last commit before they
    published (None when the history starts later)."""
    return git(checkout, "rev-list", "-1", f"--before={published.isoformat()}", "HEAD").strip() or None


# ---------------------------------------------------------------- definitions


def definitions(source: str) -> dict[str, tuple[int, int]]:
    """Qualname → (first line with decorators, last line) of every function; nested ones
    as ``outer.<locals>.inner`` (these can never be tasks: mining takes top-level code)."""
    found: dict[str, tuple[int, int]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found[prefix + node.name] = (first, node.end_lineno or node.lineno)
                visit(node.body, f"{prefix}{node.name}.<locals>.")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body + node.orelse + getattr(node, "finalbody", []), prefix)

    visit(ast.parse(source).body, "")
    return found


def at_line(defs: dict[str, tuple[int, int]], line: int) -> str | None:
    """The innermost definition holding ``line``."""
    holding = [(end - start, q) for q, (start, end) in defs.items() if start <= line <= end]
    return min(holding)[1] if holding else None


def named_in_prompt(prompt: str, defs: dict[str, tuple[int, int]]) -> str | None:
    """The function a prompt asks for: the first introduced name the file defines, exact
    then ignoring case; among methods of that name, the one whose class the prompt
    introduces, else names."""
    words = _WORD.findall(prompt)
    introduced = [
        w.strip("`") for prev, w in zip(["", *words], words, strict=False) if w[0] == "`" or prev in _INTRODUCING
    ]
    plain = [w.strip("`") for w in words]
    for names in (introduced, plain):
        for fold in (str, str.lower):
            for name in names:
                matches = [q for q in defs if "<locals>" not in q and fold(q.rpartition(".")[2]) == fold(name)]
                if matches:
                    owner_rank = {**{n: 1 for n in plain}, **{n: 0 for n in introduced}}
                    return min(matches, key=lambda q: owner_rank.get(q.rpartition(".")[0], 2))
    return None


# ---------------------------------------------------------------- resolution


def linked_repo(
    published: PublishedFile, checkouts: Mapping[str, Path], shamaps: Mapping[str, Mapping[str, str]]
) -> tuple[str | None, str, str | None]:
    """(repository, path in it, commit in its checkout) a link names; the repository is None
    when no checkout holds it."""
    if published.ref == "master":  # ``master/<repo>/<path>``
        repo, _, path = published.path.partition("/")
        return (repo, path, master_when_published(checkouts[repo])) if repo in checkouts else (None, path, None)
    for repo, checkout in checkouts.items():
        sha = shamaps.get(repo, {}).get(published.ref, published.ref)
        if has_commit(checkout, sha):
            return repo, published.path, sha
    return None, published.path, None


def locate(
    published: PublishedFile, checkouts: Mapping[str, Path], shamaps: Mapping[str, Mapping[str, str]]
) -> Located:
    """The function a published task names, at its linked commit, checked against the checkout's HEAD."""
    repo, path, commit = linked_repo(published, checkouts, shamaps)
    if repo is None or commit is None:
        return Located(repo, path, commit, None, "no checkout holds the linked commit or repository")
    checkout = checkouts[repo]
    try:
        then = definitions(git(checkout, "show", f"{commit}:{path}"))
    except subprocess.CalledProcessError:
        return Located(repo, path, commit, None, "file missing at the linked commit")
    qualname = at_line(then, published.line) if published.line is not None else named_in_prompt(published.prompt, then)
    if qualname is None:
        return Located(repo, path, commit, None, "no definition at the line or named by the prompt")
    if not (checkout / path).is_file():
        return Located(repo, path, commit, qualname, "file gone at the pinned commit")
    if qualname not in definitions((checkout / path).read_text(encoding="utf-8", errors="replace")):
        return Located(repo, path, commit, qualname, f"{qualname} gone at the pinned commit")
    return Located(repo, path, commit, qualname)


# ---------------------------------------------------------------- records


def benchmark_task(published: PublishedFile, fn: FunctionRecord) -> BenchmarkTask:
    """The published task as a benchmark record: their prompt and labels, our function and tests."""
    return task_from_function(
        fn, sha=fn.sha, prompt=published.prompt, prompt_source=PROMPT_SOURCE, **labels_of(published)
    )


def import_row(published: PublishedFile, where: Located, fn: FunctionRecord | None) -> PublishedTask:
    """What became of one published task file."""
    if where.reason:
        status, reason = "unresolved", where.reason
    elif fn is None and "<locals>" in (where.qualname or ""):
        status, reason = "no_tests", "a nested function: mining takes module- and class-level functions only"
    elif fn is None:
        status, reason = "no_tests", "mining found no test reaching it at the pinned commit"
    else:
        status, reason = "imported", ""
    return PublishedTask(
        source=published.source,
        repo=where.repo,
        path=where.path,
        ref=published.ref,
        commit=where.commit,
        line=published.line,
        qualname=where.qualname,
        labels_raw=published.labels,
        prompt=published.prompt,
        status=status,
        reason=reason,
        tests=len(fn.tests) if fn else 0,
        task_id=fn.task_id if fn else None,
        **labels_of(published),
    )


def mined_functions(
    checkout: Path, name: str, cfg: MineConfig, parse_cache: str | Path, min_tests: int, dates: bool
) -> dict[tuple[str, str], FunctionRecord]:
    """(path, qualname) → function record of everything the project's mining finds tested at HEAD."""
    from dlbench.mine.api import mine
    from dlbench.mine.history import head_sha

    result = mine(checkout, name, head_sha(checkout), min_tests, cfg, parse_cache, dates=dates)
    return {(fn.path, fn.qualname): fn for fn in result.functions}


@dataclass(frozen=True)
class ImportResult:
    tasks: list[BenchmarkTask]
    rows: list[PublishedTask]


def import_published(
    files: Sequence[PublishedFile],
    checkouts: Mapping[str, Path],
    shamaps: Mapping[str, Mapping[str, str]],
    cfg: MineConfig,
    parse_cache: str | Path,
    min_tests: int = 1,
    dates: bool = True,
) -> ImportResult:
    """Resolve every file, mine each repository that any file names once, and build the records."""
    located = [(f, locate(f, checkouts, shamaps)) for f in files]
    needed = sorted({where.repo for _, where in located if where.repo and not where.reason})
    mined = {repo: mined_functions(checkouts[repo], repo, cfg, parse_cache, min_tests, dates) for repo in needed}
    tasks, rows = [], []
    for published, where in located:
        fn = None if where.reason else mined[where.repo].get((where.path, where.qualname or ""))
        rows.append(import_row(published, where, fn))
        if fn is not None:
            tasks.append(benchmark_task(published, fn))
    log.info("published tasks: %d files, %d imported with tests", len(files), len(tasks))
    return ImportResult(_unique(tasks), rows)


def _unique(tasks: list[BenchmarkTask]) -> list[BenchmarkTask]:
    """One record per task id (two published files may name the same function: the first wins)."""
    unique: dict[str, BenchmarkTask] = {}
    for task in tasks:
        unique.setdefault(task.task_id, task)
    return list(unique.values())


# ---------------------------------------------------------------- checkouts


def checkout_of(repos_dir: Path, work: Path, name: str) -> Path:
    """``repos_dir/NAME`` when it is a checkout, else a clone of ``repos_dir/NAME.bundle`` in ``work`` (kept)."""
    if (repos_dir / name / ".git").exists():
        return repos_dir / name
    target = work / name
    if not target.is_dir():
        work.mkdir(parents=True, exist_ok=True)
        bundle = repos_dir / f"{name}.bundle"
        subprocess.run(["git", "clone", "-q", str(bundle), str(target)], check=True, capture_output=True)
    return target


def repository_names(repos_dir: Path) -> list[str]:
    """Repositories in ``repos_dir``: git bundles and checkouts, by name."""
    bundles = {p.stem for p in repos_dir.glob("*.bundle")}
    checkouts = {p.name for p in repos_dir.iterdir() if (p / ".git").exists()}
    return sorted(bundles | checkouts)


def import_published_files(
    tasks_dir: str | Path,
    repos_dir: str | Path,
    work: str | Path,
    out_tasks: str | Path,
    out_rows: str | Path,
    cfg: MineConfig,
    parse_cache: str | Path,
    min_tests: int = 1,
    dates: bool = True,
) -> ImportResult:
    """Rule and command-line entry: task files + repositories (bundles or checkouts) → records."""
    repos_dir, work = Path(repos_dir), Path(work)
    names = repository_names(repos_dir)
    checkouts = {name: checkout_of(repos_dir, work, name) for name in names}
    shamaps = {name: read_shamap(repos_dir / f"{name}.shamap.tsv") for name in names}
    result = import_published(read_published(tasks_dir), checkouts, shamaps, cfg, parse_cache, min_tests, dates)
    write_jsonl(out_tasks, result.tasks)
    write_jsonl(out_rows, result.rows)
    return result
