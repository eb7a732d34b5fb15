"""Parse cache (counted parses), process pool, mine_checkout and the rule adapters."""

from __future__ import annotations

import pickle

from dlbench.config import MineConfig
from dlbench.mine.api import mine, mine_checkout
from dlbench.mine.callgraph import call_graph_file
from dlbench.mine.extract import extract_functions_file
from dlbench.mine.tests import find_tests_file
from dlbench.records import (
    CallRecord,
    CloneRecord,
    CloneStatus,
    FunctionRecord,
    SkipKind,
    SkippedRecord,
    TestCase,
)
from dlbench.store import read_jsonl, write_json
from tests.test_mine_callgraph import write_tree


def library(n_modules: int) -> dict[str, str]:
    """A package of ``n_modules`` modules, each tested by three tests in its own file."""
    files = {"pkg/__init__.py": ""}
    for i in range(n_modules):
        files[f"pkg/m{i}.py"] = f"def f{i}(x):\n    return x + {i}\n"
        files[f"tests/test_m{i}.py"] = f"from pkg.m{i} import f{i}\n\n" + "".join(
            f"def test_{j}():\n    assert f{i}({j})\n\n" for j in range(3)
        )
    return files


def test_cache_reparses_only_changed_files(tmp_path):
    root = write_tree(tmp_path / "repo", library(3))
    cfg, cache = MineConfig(workers=1), tmp_path / "cache"
    cold = mine(root, "acme/lib", None, 3, cfg, cache, dates=False)
    assert (cold.stats.files, cold.stats.parsed, cold.stats.cached) == (7, 7, 0)
    warm = mine(root, "acme/lib", None, 3, cfg, cache, dates=False)
    assert (warm.stats.parsed, warm.stats.cached) == (0, 7)
    assert warm.functions == cold.functions
    (root / "tests/test_m1.py").write_text("from pkg.m1 import f1\n\ndef test_only():\n    f1(1)\n")
    changed = mine(root, "acme/lib", None, 3, cfg, cache, dates=False)
    assert changed.stats.parsed == 1
    assert sorted(f.qualname for f in changed.functions) == ["f0", "f2"]


def test_unreadable_cache_entry_is_reparsed(tmp_path):
    root = write_tree(tmp_path / "repo", library(1))
    cfg, cache = MineConfig(workers=1), tmp_path / "cache"
    first = mine(root, "acme/lib", None, 3, cfg, cache, dates=False)
    entries = sorted((tmp_path / "cache").rglob("*.pkl"))
    assert len(entries) == 4  # three file summaries and one file's extraction
    for i, entry in enumerate(entries):
        entry.write_bytes(b"not a pickle" if i % 2 else pickle.dumps(["wrong", "type"]))
    again = mine(root, "acme/lib", None, 3, cfg, cache, dates=False)
    assert again.stats.parsed == 3 and again.functions == first.functions


def test_process_pool_gives_the_same_result(tmp_path):
    root = write_tree(tmp_path / "repo", library(12))
    serial = mine(root, "acme/lib", None, 3, MineConfig(workers=1), tmp_path / "serial", dates=False)
    parallel = mine(root, "acme/lib", None, 3, MineConfig(workers=2), tmp_path / "c", dates=False)
    assert parallel.stats.parsed == 25
    assert parallel.functions == serial.functions and len(serial.functions) == 12


def test_mine_checkout_writes_the_three_artifacts(tmp_path):
    root = write_tree(tmp_path / "repo", library(2))
    out = mine_checkout(root, tmp_path / "out", tmp_path / "c", min_tests=3)
    assert out == tmp_path / "out" / "functions.jsonl"
    assert len(read_jsonl(tmp_path / "out" / "tests.jsonl", TestCase)) == 6
    assert len(read_jsonl(tmp_path / "out" / "calls.jsonl", CallRecord)) == 6
    functions = read_jsonl(out, FunctionRecord)
    assert [f.task_id for f in functions] == ["repo:pkg/m0.py:f0", "repo:pkg/m1.py:f1"]
    assert all(f.sha is None for f in functions)


def clone_record(tmp_path, status: CloneStatus, path: str) -> str:
    record = CloneRecord(
        full_name="acme/lib",
        slug="acme__lib",
        clone_url="file:///x",
        path=path,
        sha=None,
        status=status,
        error=None if status == CloneStatus.OK else "boom",
    )
    target = tmp_path / "acme__lib.json"
    write_json(target, record)
    return str(target)


def run_adapters(tmp_path, clone_json: str) -> tuple[list, list, list, list]:
    cfg, cache = MineConfig(), tmp_path / "cache"
    mine_dir = tmp_path / "mine"
    find_tests_file(clone_json, mine_dir / "tests.jsonl", cfg, cache)
    call_graph_file(clone_json, mine_dir / "tests.jsonl", mine_dir / "calls.jsonl", cfg, cache)
    extract_functions_file(
        clone_json, mine_dir / "calls.jsonl", mine_dir / "functions.jsonl", cfg, cache, mine_dir / "skipped.jsonl"
    )
    return (
        read_jsonl(mine_dir / "tests.jsonl", TestCase),
        read_jsonl(mine_dir / "calls.jsonl", CallRecord),
        read_jsonl(mine_dir / "functions.jsonl", FunctionRecord),
        read_jsonl(mine_dir / "skipped.jsonl", SkippedRecord),
    )


def test_rule_adapters_chain(tmp_path):
    root = write_tree(tmp_path / "repo", library(2))
    (root / "pkg/broken.py").write_text("def broken(:\n")
    tests, calls, functions, skipped = run_adapters(tmp_path, clone_record(tmp_path, CloneStatus.OK, str(root)))
    assert len(tests) == 6 and len(calls) == 6
    assert [(s.repo, s.path, s.kind) for s in skipped] == [("acme/lib", "pkg/broken.py", SkipKind.FILE)]
    assert [f.task_id for f in functions] == ["acme__lib:pkg/m0.py:f0", "acme__lib:pkg/m1.py:f1"]


def test_rule_adapters_write_empty_outputs_for_failed_clones(tmp_path):
    clone_json = clone_record(tmp_path, CloneStatus.CLONE_ERROR, str(tmp_path / "missing"))
    assert run_adapters(tmp_path, clone_json) == ([], [], [], [])


def test_files_that_do_not_parse_are_skipped(tmp_path, caplog):
    files = library(1)
    files["pkg/legacy.py"] = "print 'python 2'\n"
    root = write_tree(tmp_path / "repo", files)
    (root / "pkg/latin1.py").write_bytes(b"# caf\xe9\ndef g():\n    return 1\n")  # not UTF-8, no cookie
    with caplog.at_level("WARNING"):
        result = mine(root, "acme/lib", None, 3, MineConfig(), tmp_path / "c", dates=False)
    assert [f.qualname for f in result.functions] == ["f0"]
    assert "2 files do not parse, e.g. pkg/latin1.py" in caplog.text  # Python would not import it either
    assert [(s.path, s.reason.split(":")[0]) for s in result.skipped] == [
        ("pkg/latin1.py", "cannot decode"),
        ("pkg/legacy.py", "SyntaxError"),
    ]
