"""``dlbench evaluate`` from the exported benchmark alone (issue 28, item 2).

In an empty folder, given only the export (``dlbench.jsonl``), a predictions file and the
sample's git bundles, the command checks each repository out at its tasks' commit, builds
(or reuses) its image, draws the ``--limit`` sample as ``dlbench run`` does and prints the
report's pass@k overall and per pipeline stage: gold passes every task drawn, null none.
The rest checks the parts on their own: where a repository's source is found, the subset,
and the scores the report computes over the evaluated tasks.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.collect.clone import clone_repo
from dlbench.config import MineConfig
from dlbench.generate.code_mutants import null_body
from dlbench.images.recipe import ENVIRONMENTS_DIR, IMAGE_FILE
from dlbench.mine.api import mine
from dlbench.records import BenchmarkTask, CloneRecord, EvalStatus, Evaluation, ImageRecord, Selection, repo_slug
from dlbench.report.render import scores_summary
from dlbench.report.tables import evaluated_table
from dlbench.report.uncertainty import Bootstrap
from dlbench.standalone import Places, Subset, checkout, chosen_tasks, source_in, unreported_ks, unscored_models
from dlbench.store import read_json, read_jsonl, write_json, write_jsonl
from dlbench.tasks.assemble import task_from_function
from tests.conftest import ROOT

SAMPLE = ROOT / "resources" / "sample"
BUNDLES = SAMPLE / "bundles"
REPOS = ("dlbench-sample/nnkit", "dlbench-sample/tskit")


def head_sha(repo: str) -> str:
    listed = json.loads((SAMPLE / "github" / "repos.json").read_text())
    return next(r["head_sha"] for r in listed if r["full_name"] == repo)


def labels() -> dict[tuple[str, str, str], dict]:
    rows = [json.loads(line) for line in (SAMPLE / "truth.jsonl").read_text().splitlines()]
    return {(r["repo"], r["path"], r["qualname"]): r for r in rows}


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's benchmark over two repositories, built as the workflow builds it (the
    bundle checked out at its head, mined, each function a task with the truth file's labels)
    and exported as ``dlbench.jsonl`` alone: no checkout or image record goes with it."""
    build = tmp_path_factory.mktemp("build")
    truth, tasks = labels(), []
    for repo in REPOS:
        name = repo.split("/")[1]
        selection = Selection(
            full_name=repo, slug=repo_slug(repo), keep=True, reasons=[], clone_url="",
            sha=head_sha(repo), local_path=str(BUNDLES / f"{name}.bundle"),
        )  # fmt: skip
        clone = clone_repo(selection, build / name)
        mined = mine(Path(clone.path), repo, clone.sha, 3, MineConfig(workers=1), build / "cache", dates=False)
        for fn in mined.functions:
            label = truth[(repo, fn.path, fn.qualname)]
            prompt = f"Write `{fn.qualname}` of {fn.path}."
            tasks.append(
                task_from_function(
                    fn, sha=clone.sha, prompt=prompt, stage=label["stage"], task=label["task"], data=label["data"]
                )
            )
    out = tmp_path_factory.mktemp("export")
    write_jsonl(out / "dlbench.jsonl", sorted(tasks, key=lambda t: t.task_id))
    return out


def predictions(path: Path, tasks: list[BenchmarkTask], model: str) -> str:
    code = (lambda t: t.ground_truth) if model == "gold" else (lambda t: null_body(t.ground_truth))
    path.write_text("".join(json.dumps({"task_id": t.task_id, "code": code(t), "model": model}) + "\n" for t in tasks))
    return path.name


def row_of(output: str, model: str) -> list[str]:
    """The cells of the model's line in the printed "pass@1 per model" table."""
    line = next(line for line in output.splitlines() if line.startswith(f"| {model} | predictions |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


@pytest.mark.docker
def test_the_export_alone_is_evaluated_in_an_empty_folder(
    require_docker: None, export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    monkeypatch.chdir(empty)
    tasks = read_jsonl(export / "dlbench.jsonl", BenchmarkTask)
    assert len(tasks) > 20 and {t.slug for t in tasks} == {repo_slug(r) for r in REPOS}
    command = ["evaluate", "--tasks", str(export / "dlbench.jsonl"), "--repos-from", str(BUNDLES),
               "--backend", "docker", "--limit", "3"]  # fmt: skip

    gold = predictions(empty / "gold.jsonl", tasks, "gold")
    assert main([*command, "--predictions", gold, "--out", "e.jsonl"]) == 0
    printed = capsys.readouterr().out
    evaluations = read_jsonl(empty / "e.jsonl", Evaluation)
    assert len(evaluations) == 3 and all(e.passed for e in evaluations), [(e.task_id, e.status) for e in evaluations]
    assert "3/3 candidates passed (of 3 tasks drawn)" in printed
    pass1, interval, ratio, n_tasks = row_of(printed, "gold")[2:]
    assert pass1.startswith("100.0") and ratio.startswith("100.0") and n_tasks == "3", printed
    assert "pass@k per pipeline stage" in printed

    drawn = {e.task_id for e in evaluations}
    stages = {t.stage for t in tasks if t.task_id in drawn}
    assert sum(f"| {stage} | gold | predictions |" in printed for stage in stages) == len(stages)

    null = predictions(empty / "null.jsonl", tasks, "null")
    assert main([*command, "--predictions", null, "--out", "n.jsonl"]) == 0
    printed = capsys.readouterr().out
    evaluations = read_jsonl(empty / "n.jsonl", Evaluation)
    assert {e.task_id for e in evaluations} == drawn  # the same seeded draw
    assert not any(e.passed for e in evaluations) and {e.status for e in evaluations} <= {EvalStatus.FAIL}
    assert row_of(printed, "null")[2].startswith("0.0")

    work = empty / "dlbench-work"
    assert sorted(p.name for p in empty.iterdir()) == ["dlbench-work", "e.jsonl", "gold.jsonl", "n.jsonl", "null.jsonl"]
    clones = [read_json(p, CloneRecord) for p in sorted((work / "repos").glob("*.json"))]
    assert {c.slug for c in clones} == {t.slug for t in tasks if t.task_id in drawn}
    assert all(c.reused and c.sha == head_sha(c.full_name) for c in clones)  # the second run kept the checkouts
    assert sorted(p.name for p in (work / "images").glob("*.json")) == sorted(f"{c.slug}.json" for c in clones)
    assert any((work / "evidence").rglob("evaluation.json"))


@pytest.mark.docker
def test_an_exported_lock_builds_the_image_without_resolving_again(
    require_docker: None, export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``environments/{repo}/image.json`` beside the tasks (the dataset export's), the image
    comes from that record's lock: the build log says so and the image is the same one (same
    pins, same base: the same content hash)."""
    tasks = read_jsonl(export / "dlbench.jsonl", BenchmarkTask)
    command = ["evaluate", "--repos-from", str(BUNDLES), "--backend", "docker", "--limit", "1",
               "--repos", REPOS[0]]  # fmt: skip

    def gold_run(folder: Path, tasks_file: Path) -> Path:
        """``dlbench evaluate`` of gold in an empty ``folder``; its work folder."""
        folder.mkdir()
        monkeypatch.chdir(folder)
        gold = predictions(folder / "gold.jsonl", tasks, "gold")
        assert main([*command, "--tasks", str(tasks_file), "--predictions", gold, "--out", "e.jsonl"]) == 0
        return folder / "dlbench-work"

    first = gold_run(tmp_path / "first", export / "dlbench.jsonl")
    resolved = read_json(first / "images" / f"{repo_slug(REPOS[0])}.json", ImageRecord)
    assert resolved.environment and resolved.environment.lock

    exported = tmp_path / "export"
    (exported / ENVIRONMENTS_DIR / resolved.repo).mkdir(parents=True)
    shutil.copy(export / "dlbench.jsonl", exported / "dlbench.jsonl")
    write_json(exported / ENVIRONMENTS_DIR / resolved.repo / IMAGE_FILE, resolved)
    second = gold_run(tmp_path / "second", exported / "dlbench.jsonl")
    rebuilt = read_json(second / "images" / f"{resolved.repo}.json", ImageRecord)
    log = Path(rebuilt.build_log).read_text()
    assert "from the recorded lock" in log and "# resolved as of" not in log  # no resolution ran
    assert rebuilt.tag == resolved.tag and rebuilt.environment == resolved.environment
    assert all(e.passed for e in read_jsonl(second.parent / "e.jsonl", Evaluation))


def test_a_repository_is_found_as_a_bundle_a_mirror_or_a_checkout(tmp_path: Path) -> None:
    assert source_in(BUNDLES, "dlbench-sample/nnkit") == BUNDLES / "nnkit.bundle"
    assert source_in(BUNDLES, "someone/else") is None
    (tmp_path / "acme+lib" / "repo" / "objects").mkdir(parents=True)
    (tmp_path / "acme+lib" / "repo" / "HEAD").write_text("ref: refs/heads/main\n")
    assert source_in(tmp_path, "acme/lib") == tmp_path / "acme+lib" / "repo"  # a mirror as the fetch tool lays it out
    (tmp_path / "acme__tool" / ".git").mkdir(parents=True)
    assert source_in(tmp_path, "acme/tool") == tmp_path / "acme__tool"


def test_a_repository_without_a_source_is_cloned_from_github_and_recorded(tmp_path: Path, monkeypatch) -> None:
    """GitHub is the fallback (unreachable here: a clone error, recorded, not an exception)."""
    monkeypatch.setattr("dlbench.standalone.GITHUB", str(tmp_path / "no-such-host"))
    monkeypatch.setattr("dlbench.standalone.CLONE_RETRIES", 0)
    task = BenchmarkTask(
        task_id="acme__lib:lib/a.py:f", repo="acme/lib", sha="a" * 40, path="lib/a.py", function="f", class_name=None,
        signature="def f():", prompt="p", ground_truth="def f():\n    pass\n", tests=["tests/test_a.py::test_f"],
        stage=None, task=None, data=None, first_added=None, last_modified=None, qualname="f", slug="acme__lib",
        start_line=1, end_line=2,
    )  # fmt: skip
    places = Places(work=tmp_path / "work", repos_from=BUNDLES, workflow_repos=tmp_path / "none")
    record = checkout([task], places)
    assert record is not None and record.status == "clone_error" and "no-such-host/acme/lib.git" in (record.error or "")
    assert read_json(tmp_path / "work" / "repos" / "acme__lib.json", CloneRecord) == record


def test_the_subset_is_the_seeded_stratified_draw_of_dlbench_run(export: Path) -> None:
    tasks = read_jsonl(export / "dlbench.jsonl", BenchmarkTask)
    assert chosen_tasks(tasks, Subset()) is None
    drawn = chosen_tasks(tasks, Subset(limit=5, seed=1))
    assert drawn is not None and len(drawn) == 5 and drawn == chosen_tasks(reversed(tasks), Subset(limit=5, seed=1))
    assert len({t.slug for t in tasks if t.task_id in drawn}) == 2  # every repository has its share
    one = tasks[0].task_id
    assert chosen_tasks(tasks, Subset(task_ids=[one, "nope:x.py:f"])) == {one}
    assert {t.slug for t in tasks if t.task_id in chosen_tasks(tasks, Subset(repos=[REPOS[1]]))} == {
        repo_slug(REPOS[1])
    }


def test_scores_are_the_reports_over_the_evaluated_tasks(export: Path) -> None:
    """Two tasks of two stages, three samples each: pass@1 and pass@3 overall and per stage,
    an infrastructure fault left out, and a model lacking a task left unscored."""
    tasks = {t.task_id: t for t in read_jsonl(export / "dlbench.jsonl", BenchmarkTask)}
    first = next(iter(tasks.values()))
    second = next(t for t in tasks.values() if t.stage != first.stage)

    def ev(task: BenchmarkTask, sample: int, passed: bool, model: str = "m", status: str | None = None) -> Evaluation:
        status = status or ("pass" if passed else "fail")
        return Evaluation(task_id=task.task_id, model=model, technique="predictions", sample=sample, status=status,
                          passed=passed, tests={}, duration_s=0.0)  # fmt: skip

    evaluations = [ev(first, s, s == 0) for s in range(3)] + [ev(second, s, True) for s in range(3)]
    evaluations += [ev(second, 3, False, status="image_error"), ev(first, 0, True, model="partial")]
    table = evaluated_table(tasks, evaluations, [1, 3], Bootstrap(resamples=200))
    overall = table[(table.dimension == "overall") & (table.model == "m")].set_index("metric")
    assert overall.loc["pass@1", "value"] == pytest.approx((1 / 3 + 1) / 2)
    assert overall.loc["pass@3", "value"] == 1.0 and overall.loc["pass@1", "n_tasks"] == 2
    assert overall.loc["pass@1", "n_excluded"] == 1
    stages = table[(table.dimension == "stage") & (table.metric == "pass@1") & (table.model == "m")]
    stages = stages.set_index("category")
    assert stages.loc[first.stage, "value"] == pytest.approx(1 / 3) and stages.loc[second.stage, "value"] == 1.0
    # "partial" has one of the two tasks: scored on that task's stage only, and the command says why not overall
    assert set(table[table.model == "partial"].category) == {first.stage}
    assert [line.split(":")[0] for line in unscored_models(evaluations, table)] == ["partial"]
    assert unreported_ks(evaluations, [1, 3, 5], table) == [
        "pass@5: not reported: pass@k needs k samples of every task (the fewest here: 1)"
    ]
    text = scores_summary(table)
    assert "pass@k per model" in text and "pass@k per pipeline stage" in text and "| m | predictions |" in text
