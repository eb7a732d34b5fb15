"""The DL-Bench authors' tasks in their three published forms, resolved at the pinned commits.

- **named** (their current harness, alirezadaghigh99/DL-Bench): ``results/validation.jsonl``
  holds their gold run of every task (the last record per task id wins) and
  ``results/agentic_trajectories/DLBench_N.jsonl`` opens with "Implement the function `F`
  in `P` so it satisfies this specification: ...", which names the function and its file.
- **taxonomy** (the same repository, ``Taxonomy-Data/``): ``Original/processed_<repo><F><n>.py``
  is the reference definition, ``Result/<same stem>.txt`` names ``F`` and lists the test
  ids the authors ran it against; the file is found by the definition of ``F`` in the
  checkout most like their reference.
- **dleval** (the release zip of DL-Bench/DL-Bench): task files with a ``blob/<ref>/<path>``
  link, resolved by :mod:`dlbench.tasks.published`.

Every task becomes an :class:`~dlbench.records.AuthorsTask` row: where its function is at
the pinned commit (or why it is not there), the authors' test ids and gold result beside
the tests this project's mining gives it. Tasks present at the pin become benchmark records
(``prompt_source: authors``) with the test ids they ran, or our mined tests where none
is known, so their tasks run through the same harness as ours.
"""

from __future__ import annotations

import ast
import difflib
import functools
import json
import logging
import re
import subprocess
import textwrap
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from dlbench.mine.extract import extract_definitions, record_of
from dlbench.records import AuthorsTask, BenchmarkTask, FunctionRecord
from dlbench.tasks.assemble import task_from_function
from dlbench.tasks.published import definitions, locate, named_in_prompt, read_published

log = logging.getLogger(__name__)

PROMPT_SOURCE = "authors"
_NAMED = re.compile(r"Implement the function `(?P<function>[^`]+)` in `(?P<path>[^`]+)`[^:]*:\s*(?P<spec>.*)", re.S)
_STEM = re.compile(r"^processed_(?:classes-)?(?P<rest>.+?)(?P<number>\d+)$")
# A parametrized id runs to the "]" that ends it, spaces and all (pytest prints
# "test_init_fail[loc0-Number of kernels \\(3\\) must be ...] PASSED"); one cut short keeps the test whole.
_TEST_ID = re.compile(r"(?P<id>[\w./-]+\.py::[^\s'\",}\[]+(?:\[[^\n]*?\](?=[\s'\",}]|$))?)")
SIMILAR_ENOUGH = 0.6  # a definition less like the authors' reference than this is not theirs


# ---------------------------------------------------------------- their repository


class AuthorsRepo:
    """Files of the authors' repository: a work tree, or a git directory (a bare mirror) read at HEAD."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._git = not (self.root / "results").is_dir() and not (self.root / "Taxonomy-Data").is_dir()

    def files(self, folder: str) -> list[str]:
        if self._git:
            out = _run(["git", "-C", str(self.root), "ls-tree", "-r", "--name-only", "HEAD", folder])
            return sorted(out.splitlines())
        base = self.root / folder
        return sorted(str(p.relative_to(self.root)) for p in base.rglob("*") if p.is_file()) if base.is_dir() else []

    def text(self, path: str) -> str | None:
        if self._git:
            proc = subprocess.run(
                ["git", "-C", str(self.root), "show", f"HEAD:{path}"], capture_output=True, check=False
            )
            return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
        file = self.root / path
        return file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None


def _run(command: list[str]) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


# ---------------------------------------------------------------- what they published


@dataclass(frozen=True)
class Published:
    """One of the authors' tasks as they wrote it, before resolution."""

    form: str  # named, taxonomy, dleval
    source_id: str
    repo_name: str  # as the authors name the repository
    function: str
    path: str | None = None  # named: given; taxonomy: found; dleval: the link's
    spec: str = ""
    reference: str | None = None  # taxonomy: their reference definition
    tests: tuple[str, ...] = ()
    gold: str | None = None  # their harness's gold status: pass, fail, error
    gold_passed: int | None = None
    gold_failed: int | None = None


def authors_gold(repo: AuthorsRepo) -> dict[str, dict]:
    """Task id → the last record of their gold run (``results/validation.jsonl``)."""
    last: dict[str, dict] = {}
    for line in (repo.text("results/validation.jsonl") or "").splitlines():
        if line.strip():
            record = json.loads(line)
            last[record["task_id"]] = record
    return last


def first_message(trajectory: str) -> str | None:
    """The opening instruction of an agentic run (the first record with text)."""
    for line in trajectory.splitlines():
        try:
            content = json.loads(line).get("content")
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(content, str) and content:
            return content
    return None


def named_tasks(repo: AuthorsRepo) -> list[Published]:
    """Every task of their gold run, named by function and file where a trajectory names it."""
    tasks = []
    for task_id, record in authors_gold(repo).items():
        number = task_id.rpartition("/")[2]
        opening = first_message(repo.text(f"results/agentic_trajectories/DLBench_{number}.jsonl") or "") or ""
        named = _NAMED.match(opening.strip())
        counts = record.get("counts") or {}
        tasks.append(
            Published(
                form="named",
                source_id=task_id,
                repo_name=record["repo"],
                function=named["function"] if named else "",
                path=named["path"] if named else None,
                spec=named["spec"] if named else "",
                tests=()
                if named
                else taxonomy_test_ids(f"{record.get('stdout_tail') or ''}\n{record.get('detail') or ''}"),
                gold=record.get("status"),
                gold_passed=counts.get("passed"),
                gold_failed=(counts.get("failed") or 0) + (counts.get("errored") or 0),
            )
        )
    return tasks


def taxonomy_test_ids(result: str) -> tuple[str, ...]:
    """Pytest node ids in a Taxonomy result, as their runs named them (from a folder above the
    repository: ``../publishablew/<repo>/<repo>/tests/...``; ``rebased`` makes them ours)."""
    return tuple(sorted({found["id"].rstrip(".:") for found in _TEST_ID.finditer(result)}))


def rebased(ids: Iterable[str], checkout: Path) -> list[str]:
    """Node ids relative to the checkout: each file path cut to its longest tail that is a
    file there (ids whose file is not there are dropped), each name spelled as the file at
    the pin defines it (``as_defined``)."""
    found = set()
    for node in ids:
        path, sep, rest = node.partition("::")
        parts = path.split("/")
        tail = next(
            ("/".join(parts[i:]) for i in range(len(parts)) if (checkout / "/".join(parts[i:])).is_file()), None
        )
        if tail is not None:
            found.add(f"{tail}{sep}{as_defined(checkout / tail, rest)}")
    return as_test_functions(found)


def as_test_functions(ids: Iterable[str]) -> list[str]:
    """Each test function whose every published id is a parametrization, as the function:
    pytest runs all its parametrizations at the pin. Their ids name the parameters of the
    code their harness ran, which the pin may spell otherwise (torchgeo's
    ``test_resnet_weights[ResNet50_Weights.X]`` is ``test_resnet_weights[True]`` at the pin:
    pytest collected none of the published ones)."""
    by_function: dict[str, list[str]] = {}
    for node in ids:
        by_function.setdefault(node.split("[", 1)[0], []).append(node)
    kept = []
    for function, nodes in by_function.items():
        kept += [function] if all("[" in node for node in nodes) else nodes
    return sorted(kept)


def as_defined(test_file: Path, rest: str) -> str:
    """``rest`` (``Class::test[params]``) with each name that the file does not define, but
    defines once in another case, spelled as defined: lightly's published ids name
    ``testMMCRLoss``, its file at the pin ``TestMMCRLoss``, and pytest collects none of them."""
    if not rest:
        return rest
    try:
        stamp = test_file.stat()
    except OSError:
        return rest
    names = _defined_names(str(test_file), stamp.st_mtime_ns, stamp.st_size)
    if names is None:
        return rest
    spelled = []
    for part in rest.split("::"):
        name, bracket, params = part.partition("[")
        same = [n for n in names if n.lower() == name.lower()]
        spelled.append((same[0] if name not in names and len(same) == 1 else name) + bracket + params)
    return "::".join(spelled)


@functools.lru_cache(maxsize=256)
def _defined_names(test_file: str, mtime_ns: int, size: int) -> frozenset[str] | None:
    """Top-level functions and classes of ``test_file``, and the methods of those classes
    (None: unreadable); parsed once per file state (path, mtime and size), which many
    published ids share."""
    try:
        tree = ast.parse(Path(test_file).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names |= {n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    return frozenset(names)


def function_of_result(result: str) -> str | None:
    lines = result.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "function:":
            return lines[i + 1].strip() or None
    return None


def repo_name_of(stem: str, names: Iterable[str]) -> str | None:
    """The repository a Taxonomy file names: the longest known name its stem starts with."""
    match = _STEM.match(stem)
    rest = match["rest"] if match else stem
    starts = [n for n in names if rest.lower().startswith(n.lower())]
    return max(starts, key=len) if starts else None


def taxonomy_tasks(repo: AuthorsRepo, names: Iterable[str]) -> list[Published]:
    """Every Taxonomy-Data task with a reference and a named function."""
    names = list(names)
    tasks = []
    for path in repo.files("Taxonomy-Data/Result"):
        stem = Path(path).stem
        result = repo.text(path) or ""
        function, repo_name = function_of_result(result), repo_name_of(stem, names)
        reference = repo.text(f"Taxonomy-Data/Original/{stem}.py")
        if function and repo_name and reference:
            tasks.append(
                Published(
                    form="taxonomy",
                    source_id=f"Taxonomy/{stem}",
                    repo_name=repo_name,
                    function=function,
                    reference=reference,
                    tests=taxonomy_test_ids(result),
                )
            )
        else:
            log.warning("%s: no function, repository or reference, skipped", stem)
    return tasks


# ---------------------------------------------------------------- resolution at the pin


@dataclass(frozen=True)
class Where:
    path: str | None
    qualname: str | None
    reason: str = ""  # why it is not there
    located_by: str = ""  # how it was found


def in_file(checkout: Path, path: str, function: str, spec: str) -> Where:
    """``function`` of ``path`` at the checkout: the one definition of that name, or the one the spec points to."""
    file = checkout / path
    if not file.is_file():
        return Where(path, None, "file gone at the pinned commit")
    try:
        defs = definitions(file.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return Where(path, None, "file does not parse at the pinned commit")
    named = {q: span for q, span in defs.items() if q.rpartition(".")[2] == function}
    inner = [q for q in named if "<locals>" in q]
    named = {q: span for q, span in named.items() if q not in inner}
    if not named and inner:
        return nested(path, inner[0])
    if not named:
        return Where(path, None, "function gone from the file at the pinned commit")
    return Where(path, named_in_prompt(f"`{function}` {spec}", named) or min(named), located_by="named file")


def most_like(checkout: Path, function: str, reference: str) -> Where:
    """The definition of ``function`` in the checkout most like the authors' reference."""
    listed = subprocess.run(
        ["git", "-C", str(checkout), "grep", "-l", "-E", rf"def {re.escape(function)}\b", "--", "*.py"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    best: tuple[float, str, str] | None = None
    for path in listed.stdout.splitlines():
        source = (checkout / path).read_text(encoding="utf-8", errors="replace")
        for qualname, ratio in _similar_definitions(source, function, reference):
            if best is None or ratio > best[0]:
                best = (ratio, path, qualname)
    if best is None:
        return Where(None, None, "no definition of the function at the pinned commit")
    if best[0] < SIMILAR_ENOUGH:
        return Where(best[1], None, f"no definition like the authors' reference (closest {best[0]:.2f})")
    return Where(best[1], best[2], located_by=f"most like their reference ({best[0]:.2f})")


def _similar_definitions(source: str, function: str, reference: str) -> list[tuple[str, float]]:
    """(qualname, similarity to ``reference``) of each definition of ``function`` in ``source``."""
    try:
        defs = definitions(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    wanted = _normalised(reference)
    found = []
    for qualname, (start, end) in defs.items():
        if "<locals>" not in qualname and qualname.rpartition(".")[2] == function:
            text = _normalised("\n".join(lines[start - 1 : end]))
            found.append((qualname, difflib.SequenceMatcher(None, wanted, text, autojunk=False).ratio()))
    return found


def _normalised(code: str) -> list[str]:
    """Code lines compared: dedented, stripped, blank lines out (their references are re-indented)."""
    return [line.strip() for line in textwrap.dedent(code).splitlines() if line.strip()]


def resolve(task: Published, checkout: Path | None) -> Where:
    """Where the task's function is at the pinned commit, or why it is not there."""
    if checkout is None:
        return Where(task.path, None, f"repository {task.repo_name!r} is not reachable here")
    if task.form == "named":
        if not task.path:
            return Where(None, None, "no public file names the function")
        return in_file(checkout, task.path, task.function, task.spec)
    return most_like(checkout, task.function, task.reference or "")


def resolve_dleval(folder: str | Path, checkouts: Mapping[str, Path]) -> list[tuple[Published, Where]]:
    """The release zip's tasks through the published importer's resolution (links name commits
    of the repository's history, or its default branch on the day they published)."""
    resolved = []
    for published in read_published(folder):
        located = locate(published, checkouts, {})
        task = Published(
            form="dleval",
            source_id=published.source,
            repo_name=located.repo or (published.path.partition("/")[0] if published.ref == "master" else "?"),
            function=(located.qualname or "").rpartition(".")[2],
            path=located.path,
            spec=published.prompt,
        )
        found = located.qualname if not located.reason else None
        if found and "<locals>" in found:
            resolved.append((task, nested(located.path, found)))
            continue
        resolved.append((task, Where(located.path, found, located.reason, "their link" if found else "")))
    return resolved


def only_raises(file: Path, qualname: str) -> bool:
    """The definition's body, its docstring aside, is one ``raise NotImplementedError``: a
    base class's abstract method (deepchem's ``Loss._create_pytorch_loss``; subclasses and
    their tests never run it)."""
    source = file.read_text(encoding="utf-8", errors="replace")
    span = definitions(source).get(qualname)
    try:
        node = (
            ast.parse(textwrap.dedent("\n".join(source.splitlines()[span[0] - 1 : span[1]]))).body[0] if span else None
        )
    except SyntaxError:
        return False
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    raised = body[0].exc if len(body) == 1 and isinstance(body[0], ast.Raise) else None
    name = raised.func if isinstance(raised, ast.Call) else raised
    return isinstance(name, ast.Name) and name.id == "NotImplementedError"


def nested(path: str | None, qualname: str) -> Where:
    return Where(path, None, f"a nested function, never a task: only module and class level ones are ({qualname})")


# ---------------------------------------------------------------- records


def row(
    task: Published, where: Where, full_name: str | None, mined: Mapping[tuple[str, str], FunctionRecord]
) -> AuthorsTask:
    """One task's row: the authors' side and ours."""
    fn = mined.get((where.path or "", where.qualname or "")) if where.qualname else None
    status = "present" if where.qualname else ("unreachable" if full_name is None else "unresolved")
    return AuthorsTask(
        form=task.form,
        source_id=task.source_id,
        repo_name=task.repo_name,
        repo=full_name,
        function=task.function,
        path=where.path,
        qualname=where.qualname,
        status=status,
        reason=where.reason,
        located_by=where.located_by,
        authors_tests=list(task.tests),
        authors_gold=task.gold,
        authors_passed=task.gold_passed,
        authors_failed=task.gold_failed,
        mined_task_id=fn.task_id if fn else None,
        mined_tests=sorted(fn.tests) if fn else [],
    )


def by_shared_tests(rows: Sequence[AuthorsTask]) -> list[AuthorsTask]:
    """A named-form task no public file names, but whose run printed test ids, is the
    Taxonomy function of its repository those ids overlap most (a unique best only): their
    gold run of DLBench/261 printed CompressAI's ``test_entropy_models.py`` ids."""
    taxonomy = [r for r in rows if r.form == "taxonomy" and r.status == "present"]
    found = []
    for r in rows:
        if r.form == "named" and r.status == "unresolved" and r.authors_tests and not r.path:
            shared = {}
            for t in (t for t in taxonomy if t.repo == r.repo):
                overlap = len(set(r.authors_tests) & set(t.authors_tests))
                if overlap > shared.get((t.path, t.qualname), (0, None))[0]:
                    shared[(t.path, t.qualname)] = (overlap, t)
            ranked = sorted(shared.values(), key=lambda item: -item[0])
            if ranked and (len(ranked) == 1 or ranked[0][0] > ranked[1][0]):
                overlap, match = ranked[0]
                r = r.model_copy(update={
                    "status": "present", "reason": "", "located_by": f"test ids of their run shared with {match.source_id} ({overlap})",
                    **match.model_dump(include={"path", "qualname", "function", "mined_task_id", "mined_tests"}),
                })  # fmt: skip
        found.append(r)
    return found


def join_tests(rows: Sequence[AuthorsTask]) -> list[AuthorsTask]:
    """Each function's authors' test ids on every row that names it (Taxonomy lists tests,
    the named and dleval forms do not)."""
    tests: dict[tuple, set[str]] = {}
    for r in rows:
        if r.qualname:
            tests.setdefault((r.repo, r.path, r.qualname), set()).update(r.authors_tests)
    return [
        r.model_copy(update={"authors_tests": sorted(tests[(r.repo, r.path, r.qualname)])}) if r.qualname else r
        for r in rows
    ]


def function_record(checkout: Path, full_name: str, sha: str | None, path: str, qualname: str) -> FunctionRecord | None:
    """The function as mining would extract it (libcst, the lines of its top-level definition),
    for functions mining did not make tasks; None when libcst cannot take it."""
    source = (checkout / path).read_text(encoding="utf-8", errors="replace")
    top = qualname.split(".")[0]
    spans = {
        n.name: n
        for n in ast.parse(source).body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    if top not in spans:
        return None  # defined inside a module-level block: mining leaves those out too
    node = spans[top]
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    piece = extract_definitions(source, [(qualname, first, node.end_lineno or node.lineno)]).found.get(qualname)
    if piece is None:
        return None
    return record_of(piece, full_name, sha, path, qualname, definitions(source)[qualname][0], [])


def benchmark_task(r: AuthorsTask, record: FunctionRecord, spec: str) -> BenchmarkTask:
    """A present task as a benchmark record, as they posed it: their specification (else the
    docstring) and the test ids they ran (else our mined tests). Mining's tests for the same
    function stay on the row; transitive reach can give a core function hundreds."""
    return task_from_function(
        record.model_copy(update={"tests": r.authors_tests or r.mined_tests}),
        sha=record.sha,
        prompt=spec or record.docstring or "",
        prompt_source=PROMPT_SOURCE,
        stage=None,
        task=None,
        data=None,
    )


# ---------------------------------------------------------------- the import


@dataclass(frozen=True)
class Checkout:
    """A repository of the rebuild at its pinned commit, with what mining made tasks there."""

    full_name: str
    path: Path
    sha: str | None
    mined: Mapping[tuple[str, str], FunctionRecord]  # (path, qualname) → mined function


@dataclass(frozen=True)
class AuthorsImport:
    rows: list[AuthorsTask]
    tasks: list[BenchmarkTask]


def short_names(checkouts: Iterable[Checkout], aliases: Mapping[str, str]) -> dict[str, Checkout]:
    """How the authors name each repository (its short name, any case) → its checkout; an
    alias maps one of their names to an owner/name."""
    by_full = {c.full_name: c for c in checkouts}
    names = {c.full_name.rpartition("/")[2].lower(): c for c in by_full.values()}
    names.update({alias.lower(): by_full[full] for alias, full in aliases.items() if full in by_full})
    return names


def import_authors(
    authors_root: str | Path,
    checkouts: Sequence[Checkout],
    dleval: str | Path | None = None,
    aliases: Mapping[str, str] | None = None,
) -> AuthorsImport:
    """Every task of the three forms resolved at the pins, with our mined tests beside theirs.
    Taxonomy file names run repository and function together: they are read against the
    repositories checked out here and the aliases' names (which may name ones not reachable)."""
    repo = AuthorsRepo(authors_root)
    by_name = short_names(checkouts, aliases or {})
    names = set(by_name) | {n.lower() for n in aliases or {}}
    published = named_tasks(repo) + taxonomy_tasks(repo, names)
    resolved = [(t, resolve(t, _checkout_path(by_name, t.repo_name))) for t in published]
    if dleval is not None:
        as_linked = {c.full_name.rpartition("/")[2]: c.path for c in checkouts}  # their links keep the case
        resolved += resolve_dleval(dleval, {**{n: c.path for n, c in by_name.items()}, **as_linked})
    rows = join_tests(by_shared_tests([_row(t, w, by_name) for t, w in resolved]))
    specs = {t.source_id: t.spec for t, _ in resolved}
    tasks: dict[str, BenchmarkTask] = {}
    for r in sorted(rows, key=lambda r: ("named", "taxonomy", "dleval").index(r.form)):
        checkout = by_name.get(r.repo_name.lower())
        if r.status != "present" or checkout is None or not (r.mined_tests or r.authors_tests):
            continue
        record = checkout.mined.get((r.path, r.qualname)) or function_record(
            checkout.path, checkout.full_name, checkout.sha, r.path or "", r.qualname or ""
        )
        if record is not None:
            task = benchmark_task(r, record, specs.get(r.source_id, ""))
            tasks.setdefault(task.task_id, task)
    log.info("authors' tasks: %d rows, %d present, %d benchmark records", len(rows),
             sum(r.status == "present" for r in rows), len(tasks))  # fmt: skip
    return AuthorsImport(rows, list(tasks.values()))


def _checkout_path(by_name: Mapping[str, Checkout], repo_name: str) -> Path | None:
    checkout = by_name.get(repo_name.lower())
    return checkout.path if checkout else None


def _row(task: Published, where: Where, by_name: Mapping[str, Checkout]) -> AuthorsTask:
    checkout = by_name.get(task.repo_name.lower())
    if checkout is None:
        return row(task, where, None, {})
    if where.qualname and where.path and only_raises(checkout.path / where.path, where.qualname):
        where = Where(where.path, None, f"an abstract stub, never a task: its body only raises NotImplementedError, the null answer ({where.qualname})")  # fmt: skip
    return row(
        replace(task, tests=tuple(rebased(task.tests, checkout.path))), where, checkout.full_name, checkout.mined
    )


# ---------------------------------------------------------------- files


def dleval_folder(given: str | Path, work: Path) -> Path:
    """The folder holding the release's task files: ``given`` itself, the zip ``given`` extracted,
    or the zip a git directory holds at HEAD, extracted (into ``work``)."""
    given = Path(given)
    if given.is_dir() and (given / "HEAD").is_file() and not any(given.rglob("*.txt")):
        given = _zip_at_head(given, work)
    if given.is_file() and given.suffix == ".zip":
        with zipfile.ZipFile(given) as archive:
            archive.extractall(work / "dleval")
        given = work / "dleval"
    holding = {p.parent for p in given.rglob("*.txt")}
    if len(holding) != 1:
        raise ValueError(f"{given}: expected one folder of *.txt task files, found {len(holding)}")
    return holding.pop()


def _zip_at_head(git_dir: Path, work: Path) -> Path:
    archives = [
        n for n in _run(["git", "-C", str(git_dir), "ls-tree", "--name-only", "HEAD"]).split() if n.endswith(".zip")
    ]
    if not archives:
        raise ValueError(f"{git_dir}: no zip of task files at HEAD")
    work.mkdir(parents=True, exist_ok=True)
    target = work / archives[0]
    shown = subprocess.run(["git", "-C", str(git_dir), "show", f"HEAD:{archives[0]}"], capture_output=True, check=True)
    target.write_bytes(shown.stdout)
    return target


def summary(rows: Sequence[AuthorsTask]) -> list[dict]:
    """Per repository: the authors' tasks (their gold run), their distinct functions present at
    the pin and how many of those mining found (recall)."""
    by_repo: dict[str, list[AuthorsTask]] = {}
    for r in rows:
        by_repo.setdefault(r.repo or f"{r.repo_name} (not reachable)", []).append(r)
    table = []
    for repo, group in sorted(by_repo.items()):
        named = [r for r in group if r.form == "named"]
        present = {(r.path, r.qualname): r for r in group if r.status == "present"}
        found = [r for r in present.values() if r.mined_task_id]
        table.append({
            "repo": repo,
            "named": len(named),
            "named_present": sum(r.status == "present" for r in named),
            "authors_gold_pass": sum(r.authors_gold == "pass" for r in named),
            "dleval": sum(r.form == "dleval" for r in group),
            "taxonomy": sum(r.form == "taxonomy" for r in group),
            "functions_present": len(present),
            "found_by_mining": len(found),
            "recall": round(len(found) / len(present), 3) if present else None,
        })  # fmt: skip
    return table


def import_authors_files(
    source: str | Path,
    dleval: str | Path | None,
    aliases: Mapping[str, str],
    clones: Sequence[str | Path],
    functions: Sequence[str | Path],
    work: str | Path,
    out_rows: str | Path,
    out_tasks: str | Path,
    out_summary: str | Path,
) -> AuthorsImport:
    """Rule and command-line entry: their repository, the clone records and the mined functions
    of this build (``results/mine/<slug>/functions.jsonl``) → rows, benchmark records and the summary."""
    import pandas as pd

    from dlbench.records import CloneRecord
    from dlbench.store import read_json, read_jsonl, write_frame, write_jsonl

    mined_of = {Path(f).parent.name: f for f in functions}
    checkouts = []
    for clone_json in clones:
        clone = read_json(clone_json, CloneRecord)
        if clone.status == "ok" and clone.slug in mined_of:
            mined = {(f.path, f.qualname): f for f in read_jsonl(mined_of[clone.slug], FunctionRecord)}
            checkouts.append(Checkout(clone.full_name, Path(clone.path), clone.sha, mined))
    folder = dleval_folder(dleval, Path(work)) if dleval else None
    done = import_authors(source, checkouts, folder, aliases)
    write_jsonl(out_rows, done.rows)
    write_jsonl(out_tasks, done.tasks)
    write_frame(out_summary, pd.DataFrame(summary(done.rows)))
    return done
