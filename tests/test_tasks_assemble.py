"""Assembling the benchmark: repository criteria, determinism, Parquet, card, live slices."""

from __future__ import annotations

import csv
import json
from datetime import date

import pandas as pd
import pytest

from dlbench.config import PromptsConfig, SelectConfig, StorageConfig
from dlbench.records import BenchmarkTask, CloneRecord, CloneStatus, repo_slug
from dlbench.report.card import card_file
from dlbench.report.slices import in_slice, slice_cutoff, slice_names, slice_of
from dlbench.store import read_jsonl, write_json, write_jsonl
from dlbench.tasks.assemble import BenchmarkPaths, assemble_files
from dlbench.tasks.merge import agreement_csv, merge_labels
from dlbench.tasks.prompts import draft_prompts
from dlbench.tasks.repos import read_repos_csv
from dlbench.tasks.sheets import SheetRow
from tests.test_tasks_prompts import make_function

GOOD, THIN, BROKEN = "owner/good", "owner/thin", "owner/broken"


def world(tmp_path):
    """Three repositories: one good, one with too few tests per function, one failed clone."""
    functions = {
        GOOD: [
            make_function(GOOD, qualname="Dense.forward", last_modified=date(2024, 8, 1)),
            make_function(GOOD, qualname="Dense.backward", last_modified=date(2023, 5, 1)),
            make_function(GOOD, path="lib/boxes.py", qualname="iou", last_modified=None),
            make_function(GOOD, path="lib/boxes.py", qualname="area", docstring=None),
        ],
        THIN: [make_function(THIN, qualname="Thin.f", tests=1)],
        BROKEN: [],
    }
    clones, fn_paths = [], []
    for name, fns in functions.items():
        slug = repo_slug(name)
        ok = name != BROKEN
        clone = CloneRecord(
            full_name=name,
            slug=slug,
            clone_url=f"file:///{slug}",
            path=f"results/repos/{slug}",
            sha="c" * 40 if ok else None,
            status=CloneStatus.OK if ok else CloneStatus.CLONE_ERROR,
            error=None if ok else "not found",
            license="MIT",
        )
        write_json(tmp_path / "repos" / f"{slug}.json", clone)
        write_jsonl(tmp_path / "mine" / slug / "functions.jsonl", fns)
        clones.append(tmp_path / "repos" / f"{slug}.json")
        fn_paths.append(tmp_path / "mine" / slug / "functions.jsonl")
    every = [f for fns in functions.values() for f in fns]
    prompts = draft_prompts(every, PromptsConfig(llm=None), StorageConfig().llm_cache)
    ids = sorted(f.task_id for f in functions[GOOD])
    sheets = [
        SheetRow("a", ids[0], stage="Evaluation & Metrics", task="Object Detection", data="Image"),
        SheetRow("b", ids[0], stage="eval", task="detection", data="image"),
        SheetRow("a", ids[1], keep="no", notes="duplicate of area"),
        SheetRow("b", ids[1], keep="no"),
        SheetRow("a", ids[2], stage="Training", edited_prompt="Write the backward pass."),
    ]
    merged = merge_labels(prompts, sheets)
    write_jsonl(tmp_path / "merged.jsonl", merged.labels)
    (tmp_path / "agreement.csv").write_text(agreement_csv(merged.agreement))
    return fn_paths, clones, ids


def run_assemble(tmp_path, out_name: str, cfg: SelectConfig | None = None):
    fn_paths, clones, ids = world(tmp_path)
    out = BenchmarkPaths(
        *(tmp_path / out_name / n for n in ("dlbench.jsonl", "dlbench.parquet", "dlbench.schema.json", "repos.csv"))
    )
    cfg = cfg or SelectConfig(min_tests_per_function=2, min_docstring_coverage=0.5)
    assembly = assemble_files(tmp_path / "merged.jsonl", fn_paths, clones, out, cfg)
    return out, assembly, ids


def test_kept_tasks_of_kept_repositories_only(tmp_path):
    out, assembly, ids = run_assemble(tmp_path, "bench")
    tasks = read_jsonl(out.jsonl, BenchmarkTask)
    assert [t.task_id for t in tasks] == [ids[0], ids[2], ids[3]]  # ids[1] discarded by both annotators
    first = tasks[0]
    assert (first.stage, first.task, first.data) == ("Evaluation & Metrics", "Object Detection", "Image")
    assert first.sha == "c" * 40 and first.license == "MIT" and first.slug == "owner__good"
    assert first.ground_truth.startswith("def area(") and first.tests == sorted(first.tests)
    edited = next(t for t in tasks if t.task_id == ids[2])
    assert (edited.prompt, edited.prompt_source) == ("Write the backward pass.", "edited")
    repos = {r["repo"]: r for r in csv.DictReader(open(out.repos, encoding="utf-8"))}
    assert repos[GOOD]["keep"] == "True" and repos[GOOD]["tasks"] == "3" and repos[GOOD]["docstring_coverage"] == "0.75"
    assert repos[THIN]["keep"] == "False"
    assert repos[THIN]["reasons"] == "1.00 tests per function < min_tests_per_function 2"
    assert repos[BROKEN]["reasons"] == "clone failed: not found"
    strict = SelectConfig(min_tests_per_function=2, min_docstring_coverage=0.8)
    _, strict_assembly, _ = run_assemble(tmp_path, "strict", strict)
    assert strict_assembly.tasks == []
    good = next(r for r in strict_assembly.repos if r.repo == GOOD)
    assert (good.keep, good.reasons) == (False, "docstring coverage 0.75 < min_docstring_coverage 0.8")


def test_assembling_twice_gives_identical_files(tmp_path):
    first, _, _ = run_assemble(tmp_path, "one")
    second, _, _ = run_assemble(tmp_path, "two")
    for a, b in zip(vars(first).values(), vars(second).values(), strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def from_pandas(column: str, value):
    """pandas' missing values (NaN, NaT) back to None; the tests column back to a list."""
    if column == "tests":
        return list(value)
    return None if pd.isna(value) else value


def test_parquet_round_trip_and_schema(tmp_path):
    out, assembly, _ = run_assemble(tmp_path, "bench")
    frame = pd.read_parquet(out.parquet)
    assert list(frame.columns) == list(BenchmarkTask.model_fields)
    assert frame["first_added"].iloc[0] == date(2023, 1, 5)
    back = [
        BenchmarkTask.model_validate({k: from_pandas(k, v) for k, v in row.items()}) for row in frame.to_dict("records")
    ]
    assert back == assembly.tasks
    schema = json.loads(out.schema.read_text())
    assert schema["title"] == "BenchmarkTask"
    contract = [
        "task_id",
        "repo",
        "sha",
        "path",
        "function",
        "class_name",
        "signature",
        "prompt",
        "ground_truth",
        "tests",
        "stage",
        "task",
        "data",
        "first_added",
        "last_modified",
    ]
    assert set(contract) <= set(schema["required"])


def write_card(tmp_path, out: BenchmarkPaths, adequacy: str | None = None, threshold: float = 0.5) -> str:
    """The card of an assembled benchmark; ``adequacy`` is the text of tables/adequacy.csv (None: absent)."""
    tables = tmp_path / "tables"
    if adequacy is not None:
        tables.mkdir(exist_ok=True)
        (tables / "adequacy.csv").write_text(adequacy)
    card_path = tmp_path / "card" / "README.md"
    card = card_file(
        out.jsonl, out.repos, tmp_path / "merged.jsonl", tmp_path / "agreement.csv", tables, card_path, threshold
    )
    assert card_path.read_text() == card
    return card


NO_MUTANTS = "No mutant model was evaluated, so the strength of the tests is not measured."


def test_dataset_card(tmp_path):
    out, _, ids = run_assemble(tmp_path, "bench")
    card = write_card(tmp_path, out)
    assert "**3 tasks** from 1 repositories" in card
    assert f"| owner/good | `{'c' * 40}` | MIT | 3 | yes | - |" in card
    assert "| owner/broken | - | MIT | 0 | no | clone failed: not found |" in card
    assert "| Evaluation & Metrics | 1 | 33.3% |" in card and "| Training | 1 | 33.3% |" in card
    assert "| (unlabelled) | 1 | 33.3% |" in card
    assert "1 tasks discarded by annotators; 1 functions dropped with their repository" in card
    assert f"| {ids[1]} | discarded by 2 of 2 annotators: a: duplicate of area |" in card
    assert "| stage | - | 1 | 2 | 2 | 1.0000 |" in card and "| keep | 1.0000 | 2 | 2 | 4 | 1.0000 |" in card
    assert "## Test adequacy" in card and NO_MUTANTS in card
    assert write_card(tmp_path, out) == card  # same inputs, same bytes


ADEQUACY_HEADER = "task_id,repo,stage,task,data,usable,mutants,killed,kill_rate,flagged\n"


def test_dataset_card_flags_weak_tests(tmp_path):
    out, _, ids = run_assemble(tmp_path, "bench")
    rows = [
        f"{ids[0]},owner/good,Evaluation & Metrics,Object Detection,Image,True,3,1,0.3333333333333333,True",
        f"{ids[2]},owner/good,Training,,,True,4,4,1.0,False",
        f"{ids[3]},owner/good,,,,False,5,2,0.4,True",
        "owner__good:lib/boxes.py:none,owner/good,,,,True,0,0,,False",
    ]
    card = write_card(tmp_path, out, ADEQUACY_HEADER + "\n".join(rows) + "\n", threshold=0.6)
    section = card[card.index("## Test adequacy") : card.index("## Discarded tasks")]
    assert "kill fewer than 0.6 of their mutants are flagged" in section
    assert "3 of 4 tasks have mutants; mean kill rate 0.58; 2 tasks flagged (kill rate < 0.6)." in section
    assert "| task | kill rate | mutants |" in section
    assert f"| {ids[0]} | 0.33 | 3 |" in section and f"| {ids[3]} | 0.40 | 5 |" in section
    assert ids[2] not in section and NO_MUTANTS not in section


@pytest.mark.parametrize("adequacy", [None, "", ADEQUACY_HEADER, ADEQUACY_HEADER + "a:b.py:f,a/b,,,,True,0,0,,False\n"])
def test_dataset_card_without_mutants(tmp_path, adequacy):
    out, _, _ = run_assemble(tmp_path, "bench")
    card = write_card(tmp_path, out, adequacy)
    assert NO_MUTANTS in card and "| kill rate |" not in card


def test_unreadable_adequacy_names_the_file(tmp_path):
    out, _, _ = run_assemble(tmp_path, "bench")
    with pytest.raises(ValueError, match=r"adequacy.csv:2: unreadable adequacy row"):
        write_card(tmp_path, out, ADEQUACY_HEADER + "a:b.py:f,a/b,,,,True,three,0,,False\n")


def test_repos_csv_round_trip(tmp_path):
    out, assembly, _ = run_assemble(tmp_path, "bench")
    back = read_repos_csv(out.repos)
    assert back == assembly.repos
    broken = next(r for r in back if r.repo == BROKEN)
    assert (broken.sha, broken.keep, broken.functions) == (None, False, 0)
    bad = tmp_path / "bad.csv"
    bad.write_text("repo,slug\nowner/x,owner__x\n")
    with pytest.raises(ValueError, match="bad.csv: columns"):
        read_repos_csv(bad)


def test_live_slices():
    assert slice_names([date(2025, 1, 1), date(2024, 1, 1), date(2024, 1, 1)]) == [
        "all",
        "after-2024-01-01",
        "after-2025-01-01",
    ]
    assert slice_cutoff("after-2024-06-01") == date(2024, 6, 1) and slice_cutoff("all") is None
    with pytest.raises(ValueError, match="not a slice name"):
        slice_cutoff("before-2024")
    late, early, unknown = (make_function(last_modified=d) for d in (date(2024, 6, 2), date(2024, 6, 1), None))
    cutoff = date(2024, 6, 1)
    assert slice_of(late, cutoff) and not slice_of(early, cutoff) and not slice_of(unknown, cutoff)
    assert slice_of(unknown, None) and in_slice(unknown, "all")
    assert slice_of({"last_modified": "2024-07-01"}, cutoff) and slice_of(
        {"last_modified": pd.Timestamp("2024-07-01")}, cutoff
    )
    assert not slice_of({"last_modified": None}, cutoff) and not slice_of({"last_modified": float("nan")}, cutoff)
