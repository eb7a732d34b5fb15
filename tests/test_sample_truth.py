"""truth.jsonl: well-formed, enough tasks, follows the documented rule, equals the runtime trace."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parent.parent / "resources" / "sample"
sys.path.insert(0, str(SAMPLE))  # the sample scripts are plain modules, not a package

import build_sample  # noqa: E402
import check_truth  # noqa: E402
import make_labels  # noqa: E402
import sample_world as sw  # noqa: E402

TRUTH = check_truth.load_truth()


def rows_of(library: str) -> list[dict]:
    return [r for r in TRUTH.values() if r["repo"] == f"{sw.OWNER}/{library}"]


def node_ids_of(library: str, qualname: str) -> list[str]:
    return next(r["tests"] for r in rows_of(library) if r["qualname"] == qualname)


def test_truth_equals_runtime_trace_of_the_bundles(tmp_path):
    for name in sw.LIBRARIES:
        sw.clone_bundle(name, tmp_path / name)
    proc = subprocess.run(
        [sys.executable, str(SAMPLE / "check_truth.py"), "--repos-root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"{len(TRUTH)} functions traced, 0 differences" in proc.stdout


def test_enough_tasks():
    tasks = Counter(r["repo"] for r in TRUTH.values() if len(r["tests"]) >= sw.MIN_TESTS_PER_TASK)
    assert sum(tasks.values()) >= 60
    assert all(tasks[f"{sw.OWNER}/{name}"] >= 12 for name in sw.LIBRARIES)


@pytest.mark.parametrize("library", sw.LIBRARIES)
def test_every_library_has_helpers_below_the_task_threshold(library):
    assert any(1 <= len(r["tests"]) < sw.MIN_TESTS_PER_TASK for r in rows_of(library))


def test_rows_are_well_formed():
    for (repo, path, qualname), row in TRUTH.items():
        name = repo.split("/")[1]
        assert path.startswith(f"{name}/") and path.endswith(".py")
        assert row["function"] == qualname.split(".")[-1]
        assert row["class_name"] == (qualname.split(".")[0] if "." in qualname else None)
        assert row["tests"] == sorted(set(row["tests"])) and row["tests"]
        assert all(t.startswith("tests/test_") and "::" in t and "[" not in t for t in row["tests"])
        for dim, allowed in make_labels.DIMENSIONS.items():
            assert row[dim] in allowed, (qualname, dim, row[dim])
        assert build_sample.definition_lines((sw.SRC / name / path).read_text(encoding="utf-8"), qualname)


@pytest.mark.parametrize(
    "library, qualname, node_id, reached",
    [
        # a call inside library code (Dense.__init__ -> xavier_uniform) is not followed
        ("nnkit", "xavier_uniform", "tests/test_layers.py::test_init_shapes", False),
        ("nnkit", "Dense.__init__", "tests/test_layers.py::test_init_shapes", True),
        # a class without __init__ reaches the nearest base's
        ("nnkit", "Optimizer.__init__", "tests/test_optim.py::TestSGD::test_single_step", True),
        # unittest setUp counts for every test method
        ("visionkit", "to_grayscale", "tests/test_color.py::TestGrayscale::test_shape", True),
        # an inherited method resolves to the base class defining it
        ("recokit", "BaseRecommender.recommend", "tests/test_models.py::test_popularity_recommend", True),
        (
            "tskit",
            "BaseScaler.fit_transform",
            "tests/test_preprocessing.py::TestStandardScaler::test_fit_transform",
            True,
        ),
        # fixtures count transitively (vocab -> tokenized_corpus -> whitespace_tokenize)
        ("textkit", "Vocabulary.build", "tests/test_vocab.py::test_encode_known", True),
        ("textkit", "whitespace_tokenize", "tests/test_vocab.py::test_encode_known", True),
        # a helper method of the test class, and a module helper under a parametrized test
        ("recokit", "hit_rate", "tests/test_metrics.py::TestUserLevelMetrics::test_hit_rate", True),
        ("tskit", "sliding_windows", "tests/test_windows.py::test_sliding_windows_count", True),
    ],
)
def test_rule_cases(library, qualname, node_id, reached):
    assert (node_id in node_ids_of(library, qualname)) is reached


def test_library_internal_helpers_are_not_reached():
    qualnames = {key[2] for key in TRUTH}
    assert not qualnames & {
        "check_image",
        "_as_boxes",
        "_pair",
        "BaseScaler._check_fitted",
        "MatrixFactorization.score_items",
    }


def test_diff_reports_every_kind_of_mismatch():
    traced = {key: row["tests"] for key, row in TRUTH.items()}
    assert check_truth.diff(TRUTH, traced) == []
    first, second = sorted(traced)[:2]
    traced[first] = traced[first][1:]
    del traced[second]
    traced[("dlbench-sample/nnkit", "nnkit/init.py", "zeros2")] = ["tests/test_init.py::test_zeros"]
    problems = check_truth.diff(TRUTH, traced)
    kinds = sorted(re.match(r"only in trace|only in truth|tests differ", p).group() for p in problems)
    assert kinds == ["only in trace", "only in truth", "tests differ"]
