"""Test files and test cases as pytest collects them (the project's collection options,
``paths.PytestLayout``; pytest's defaults are named below).

Cases: top-level ``test*`` functions; ``test*`` methods of ``Test*`` classes without an
``__init__``; ``test*`` methods of ``unittest.TestCase`` subclasses whatever their name
(unittest's own prefix: pytest's ``python_classes``/``python_functions`` do not apply).
Inherited test methods count for the subclass (pytest collects them under its name).
Parametrized cases collapse to the function's node id, flagged ``parametrized``.
A case the project skips whatever the environment (``@pytest.mark.skip``, ``unittest.skip``,
a module's ``pytestmark`` or top-level ``pytest.skip``), or that no test command of the
project runs (``runs``: ``-m "not optional"`` on an ``optional`` test), is kept with the
reason in ``skipped``; it reaches no function (``callgraph.build_calls``), as it never runs.
Test *support* files (test folders, files importing pytest) never hold functions under
test.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from dlbench.config import MineConfig
from dlbench.mine.cache import load_clone
from dlbench.mine.paths import DEFAULT_LAYOUT, PytestLayout
from dlbench.mine.runs import deselection
from dlbench.mine.symbols import (
    ClassInfo,
    Decorator,
    FunctionInfo,
    ModuleSummary,
    Symbol,
    SymbolTable,
)
from dlbench.records import TestCase, TestKind
from dlbench.store import write_jsonl
from dlbench.testfiles import in_test_dir, named_like_test

log = logging.getLogger(__name__)

_UNITTEST_BASES = ("TestCase", "IsolatedAsyncioTestCase")
# What skips a test whatever the environment (``skipif``/``skipUnless`` decide when run).
_SKIPS = frozenset({"pytest.mark.skip", "pytest.skip", "unittest.skip", "unittest.case.skip"})
_MARK = "pytest.mark."


def is_test_support(path: str, summary: ModuleSummary, layout: PytestLayout = DEFAULT_LAYOUT) -> bool:
    """Files that are tests or serve tests: never the source of a function under test
    (files named like tests count even where the project's pytest does not collect them)."""
    return (
        layout.is_test_code(path) or named_like_test(path) or in_test_dir(path) or "pytest" in summary.imported_modules
    )


def helper_modules(support: Iterable[str], cases: Iterable[TestCase]) -> set[str]:
    """Test-support modules that hold no test case and are not named like test code
    (``tests/utils.py``, ``tests/gate_data.py``; small-text's ``python_files = tests/**/*.py``
    makes every file there a test module): the helpers tests call, repository functions like others."""
    holding = {case.file for case in cases}
    return {p for p in support if p not in holding and not named_like_test(p)}


def is_parametrized(decorators) -> bool:
    return any(d.name.rpartition(".")[2] == "parametrize" for d in decorators)


def find_test_cases(table: SymbolTable, repo: str, layout: PytestLayout = DEFAULT_LAYOUT) -> list[TestCase]:
    """Every test case of the checkout, in file then definition order."""
    cases: list[TestCase] = []
    for path in sorted(table.summaries):
        if layout.is_test_module(path):
            cases.extend(_module_cases(table, repo, path, layout))
    return cases


def _module_cases(table: SymbolTable, repo: str, path: str, layout: PytestLayout) -> list[TestCase]:
    summary = table.summaries[path]
    module_skip = skip_reason(table, path, summary.marks)
    module_marks = mark_names(table, path, summary.marks)
    found: list[tuple[int, TestCase]] = []
    for fn in summary.functions.values():
        if layout.is_test_function(fn.name):
            skipped = _never_runs(table, layout, path, path, fn, module_skip, module_marks)
            found.append((fn.lineno, _case(repo, path, None, fn, TestKind.PYTEST_FUNCTION, False, skipped)))
    for cls in summary.classes.values():
        sym = Symbol("class", path, cls.name)
        kind = _class_kind(table, sym, cls, layout)
        if kind is None:
            continue
        class_param = is_parametrized(cls.decorators)
        class_skip = module_skip or _class_skip(table, sym)
        class_marks = module_marks | _class_marks(table, sym)
        # unittest's loader takes ``test*`` methods whatever ``python_functions`` says.
        wanted = layout.is_test_function if kind == TestKind.PYTEST_METHOD else DEFAULT_LAYOUT.is_test_function
        for owner, fn in _test_methods(table, sym, wanted):
            skipped = _never_runs(table, layout, path, owner.path, fn, class_skip, class_marks)
            found.append((cls.lineno, _case(repo, path, cls.name, fn, kind, class_param, skipped)))
    return [case for _, case in sorted(found, key=lambda item: item[0])]


def _never_runs(
    table: SymbolTable, layout: PytestLayout, path: str, defined_in: str, fn: FunctionInfo,
    outer_skip: str | None, outer_marks: frozenset[str],
) -> str | None:  # fmt: skip
    """Why the test ``fn`` (collected from ``path``, defined in ``defined_in``) never runs:
    a skip around it or on it, or no project command running its marks."""
    marks = outer_marks | mark_names(table, defined_in, fn.decorators)
    return outer_skip or skip_reason(table, defined_in, fn.decorators) or deselection(layout.commands, path, marks)


def skip_reason(table: SymbolTable, path: str, decorators: tuple[Decorator, ...]) -> str | None:
    """Why a test under these marks of file ``path`` never runs (the mark's reason), or None
    when it may (``mark.skip`` after ``from pytest import mark`` is ``pytest.mark.skip``)."""
    for mark in decorators:
        if table.absolute_name(path, mark.name) in _SKIPS:
            return next(iter(mark.args), None) or dict(mark.kwargs).get("reason") or "no reason given"
    return None


def _class_skip(table: SymbolTable, cls: Symbol) -> str | None:
    """A skip on the class or a repository base (pytest and unittest both inherit it)."""
    for item in table.mro(cls):
        if reason := skip_reason(table, item.path, table.class_info(item).decorators):
            return reason
    return None


def mark_names(table: SymbolTable, path: str, decorators: tuple[Decorator, ...]) -> frozenset[str]:
    """The pytest marks among the decorators of file ``path`` (``@pytest.mark.slow`` → ``slow``)."""
    names = (table.absolute_name(path, mark.name).removeprefix(_MARK) for mark in decorators)
    return frozenset(name for name in names if name and "." not in name)


def _class_marks(table: SymbolTable, cls: Symbol) -> frozenset[str]:
    """Marks on the class and its repository bases (pytest's ``iter_markers`` sees them all)."""
    return frozenset().union(*(mark_names(table, c.path, table.class_info(c).decorators) for c in table.mro(cls)))


def _class_kind(table: SymbolTable, sym: Symbol, cls: ClassInfo, layout: PytestLayout) -> TestKind | None:
    if cls.test_disabled:
        return None
    if any(base.rpartition(".")[2] in _UNITTEST_BASES for base in table.external_bases(sym)):
        return TestKind.UNITTEST_METHOD
    has_init = table.method(sym, "__init__") is not None
    return TestKind.PYTEST_METHOD if layout.is_test_class(cls.name) and not has_init else None


def _test_methods(table: SymbolTable, cls: Symbol, wanted: Callable[[str], bool]) -> list[tuple[Symbol, FunctionInfo]]:
    """Test methods visible on the class, own and inherited, first definition wins; each
    with the class that defines it."""
    seen: dict[str, tuple[Symbol, FunctionInfo]] = {}
    for item in table.mro(cls):
        for name, fn in table.class_info(item).methods.items():
            if wanted(name) and name not in seen:
                seen[name] = (item, fn)
    return list(seen.values())


def _case(
    repo: str, path: str, class_name: str | None, fn: FunctionInfo, kind: TestKind, class_param: bool,
    skipped: str | None,
) -> TestCase:  # fmt: skip
    node_id = f"{path}::{class_name}::{fn.name}" if class_name else f"{path}::{fn.name}"
    return TestCase(
        repo=repo,
        file=path,
        node_id=node_id,
        kind=kind,
        class_name=class_name,
        name=fn.name,
        line=fn.def_lineno,
        parametrized=class_param or is_parametrized(fn.decorators),
        skipped=skipped,
    )


# ---------------------------------------------------------------- rule adapter


def find_tests_file(clone_json: str | Path, out: str | Path, cfg: MineConfig, parse_cache: str | Path) -> int:
    """Rule ``find_tests``: the clone record's checkout → ``tests.jsonl``."""
    clone, repo = load_clone(clone_json, cfg, parse_cache)
    cases = find_test_cases(repo.table, clone.full_name, repo.layout) if repo else []
    log.info("%s: %d test cases, %d never run", clone.full_name, len(cases), sum(bool(c.skipped) for c in cases))
    return write_jsonl(out, cases)
