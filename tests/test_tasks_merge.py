"""Merging annotators' labels: normalisation, votes, ties, edits, keep, alpha, Label Studio."""

from __future__ import annotations

import json
import random

import krippendorff
import numpy as np
import pytest

from dlbench.config import LabelsConfig, PromptsConfig, StorageConfig
from dlbench.records import MergedLabel, PromptRecord
from dlbench.store import read_jsonl, write_jsonl
from dlbench.tasks.merge import (
    CONFLICTING_EDITS,
    KEEP_TIE,
    MISSING_VOTES,
    NO_VOTES,
    TIE,
    UNKNOWN_LABEL,
    UNKNOWN_TASK,
    MergePaths,
    krippendorff_alpha,
    majority,
    merge_labels,
    merge_labels_files,
    read_sheets,
)
from dlbench.tasks.prompts import draft_prompts
from dlbench.tasks.sheets import SheetError, SheetRow, read_sheet
from dlbench.tasks.vocab import DATA, STAGES, canonical_label
from tests.conftest import ROOT
from tests.test_tasks_prompts import make_function

FUNCTIONS = [make_function(qualname=q) for q in ("A.f", "B.g", "C.h", "D.i")]
PROMPTS = draft_prompts(FUNCTIONS, PromptsConfig(llm=None), StorageConfig().llm_cache)
T = [p.task_id for p in PROMPTS]


def package_alpha(units: list[list[str | None]]) -> float:
    """The krippendorff package's nominal alpha of the same units (coders × units matrix)."""
    domain = sorted({v for unit in units for v in unit if v is not None})
    code = {v: i for i, v in enumerate(domain)}
    matrix = [[np.nan if unit[c] is None else code[unit[c]] for unit in units] for c in range(len(units[0]))]
    return krippendorff.alpha(reliability_data=np.array(matrix, dtype=float), level_of_measurement="nominal")


def rows(annotator: str, table: dict[str, dict[str, str]]) -> list[SheetRow]:
    return [SheetRow(annotator=annotator, task_id=task_id, **cells) for task_id, cells in table.items()]


# ---------------------------------------------------------------- vocabulary


@pytest.mark.parametrize(
    ("dimension", "typed", "canonical"),
    [
        ("stage", "pre-processing", "Pre/Post Processing"),
        ("stage", "Pre/Post processing ", "Pre/Post Processing"),
        ("stage", "evaluation and metrics", "Evaluation & Metrics"),
        ("stage", "EVAL", "Evaluation & Metrics"),
        ("stage", "eval & metrics", "Evaluation & Metrics"),
        ("stage", "model construction", "Model Construction"),
        ("task", "time series prediction", "Time-Series Prediction"),
        ("task", "object-detection", "Object Detection"),
        ("task", "segmentation", "Image Segmentation"),
        ("task", "recommender", "Recommendation"),
        ("data", "structured_array", "Structured Array"),
        ("data", "images", "Image"),
        ("data", "other", "Others"),
        ("keep", "Y", "yes"),
        ("keep", "discard", "no"),
        ("keep", 0.0, "no"),
        ("keep", True, "yes"),
    ],
)
def test_spelling_variants_normalise_to_the_paper_vocabulary(dimension, typed, canonical):
    cell = canonical_label(dimension, typed)
    assert (cell.value, cell.unknown) == (canonical, False)


def test_unknown_and_blank_cells():
    assert canonical_label("stage", "Deployment").unknown and canonical_label("stage", "Deployment").value is None
    assert canonical_label("task", "  ") == canonical_label("task", None)
    assert not canonical_label("task", None).unknown
    with pytest.raises(ValueError, match="unknown label dimension"):
        canonical_label("colour", "red")


# ---------------------------------------------------------------- alpha


def test_alpha_equals_the_krippendorff_package_with_missing_votes():
    rng = random.Random(7)
    labels = ["Training", "Inference", "Model Construction", None]
    for _ in range(20):
        units = [[rng.choice(labels) for _ in range(4)] for _ in range(rng.randint(5, 30))]
        units.append(["Training", "Training", None, None])  # always two values, never one only
        units.append(["Inference", None, None, None])  # a unit alpha cannot pair
        assert krippendorff_alpha(units) == pytest.approx(package_alpha(units), abs=1e-12)


def test_alpha_on_krippendorffs_textbook_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal example: 0.743
    coders = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [[None if v is None else str(v) for v in u] for u in zip(*coders, strict=True)]
    assert krippendorff_alpha(units) == pytest.approx(package_alpha(units), abs=1e-12)
    assert round(krippendorff_alpha(units), 3) == 0.743


def test_alpha_is_undefined_without_pairs_or_variation():
    assert krippendorff_alpha([["x", None], [None, "y"]]) is None
    assert krippendorff_alpha([["x", "x"], ["x", "x"]]) is None


def test_majority():
    assert majority(["a", "a", "b"]) == ("a", False)
    assert majority(["a", "b", None]) == (None, True)
    assert majority(["a", None, None]) == ("a", False)
    assert majority([None, None]) == (None, False)


# ---------------------------------------------------------------- votes


def test_ties_missing_and_unknown_votes_are_listed_never_resolved():
    sheets = (
        rows("ann1", {T[0]: {"stage": "Training", "task": "Classification", "data": "Image"}})
        + rows("ann2", {T[0]: {"stage": "inference", "task": "classification", "data": "Imagery"}})
        + rows("ann3", {T[0]: {"stage": "", "task": "regression", "data": "images"}})
    )
    result = merge_labels(PROMPTS, sheets)
    label = result.labels[0]
    assert (label.stage, label.task, label.data) == (None, "Classification", "Image")
    assert label.votes["stage"] == ["Training", "Inference", None]
    assert label.votes["data"] == ["Image", None, "Image"]
    reasons = {(d.task_id, d.dimension, d.reason) for d in result.disagreements}
    assert (T[0], "stage", TIE) in reasons
    assert (T[0], "data", UNKNOWN_LABEL) in reasons
    assert (T[0], "data", MISSING_VOTES) in reasons
    assert (T[0], "task", TIE) not in reasons
    tie = next(d for d in result.disagreements if d.reason == TIE)
    assert tie.votes == "ann1=Training; ann2=Inference; ann3="
    unknown = next(d for d in result.disagreements if d.reason == UNKNOWN_LABEL)
    assert unknown.detail == "ann2: 'Imagery'"
    assert {(d.task_id, d.reason) for d in result.disagreements if d.task_id != T[0]} == {(t, NO_VOTES) for t in T[1:]}


def test_keep_discard_by_majority_with_reason():
    sheets = rows(
        "ann1",
        {
            T[0]: {"keep": "no", "notes": "trivial getter"},
            T[1]: {"keep": "no", "notes": "flaky"},
            T[2]: {"stage": "Training"},
        },
    )
    sheets += rows(
        "ann2", {T[0]: {"keep": "n", "notes": "too easy"}, T[1]: {"stage": "Training"}, T[2]: {"keep": "yes"}}
    )
    sheets += rows("ann3", {T[0]: {"stage": "Training", "keep": "yes"}, T[1]: {"keep": "", "notes": ""}})
    result = merge_labels(PROMPTS, sheets)
    by_id = {label.task_id: label for label in result.labels}
    assert not by_id[T[0]].keep
    assert by_id[T[0]].discard_reason == "discarded by 2 of 3 annotators: ann1: trivial getter; ann2: too easy"
    # ann2 labelled T[1] and left keep blank: a keep vote; ann3's empty row is no vote → 1:1 tie, kept
    assert by_id[T[1]].keep and by_id[T[1]].votes["keep"] == ["no", "yes", None]
    assert any(d.task_id == T[1] and d.reason == KEEP_TIE for d in result.disagreements)
    assert by_id[T[2]].keep and by_id[T[2]].discard_reason is None


def test_edited_prompt_rules():
    draft = PROMPTS[1].prompt  # c "edits" T[1] back to its draft: not an edit
    sheets = rows(
        "a",
        {
            T[0]: {"edited_prompt": "Better prompt."},
            T[1]: {"edited_prompt": "One."},
            T[2]: {"edited_prompt": "X."},
            T[3]: {"edited_prompt": "P."},
        },
    )
    sheets += rows(
        "b",
        {
            T[0]: {"edited_prompt": "Better   prompt.\n"},
            T[1]: {"edited_prompt": ""},
            T[2]: {"edited_prompt": "Y."},
            T[3]: {"edited_prompt": "Q."},
        },
    )
    sheets += rows(
        "c", {T[0]: {"edited_prompt": "Other."}, T[1]: {"edited_prompt": f"  {draft}  "}, T[3]: {"edited_prompt": "Q."}}
    )
    result = merge_labels(PROMPTS, sheets)
    by_id = {label.task_id: label for label in result.labels}
    assert (by_id[T[0]].prompt, by_id[T[0]].prompt_source) == ("Better prompt.", "edited")  # 2 of 3 editors
    assert (by_id[T[1]].prompt, by_id[T[1]].prompt_source) == ("One.", "edited")  # the only real edit
    assert (by_id[T[2]].prompt, by_id[T[2]].prompt_source) == (PROMPTS[2].prompt, "draft")  # conflicting singles
    assert (by_id[T[3]].prompt, by_id[T[3]].prompt_source) == ("Q.", "edited")
    conflicts = [d for d in result.disagreements if d.reason == CONFLICTING_EDITS]
    assert [d.task_id for d in conflicts] == [T[2]]


def test_unlabelled_tasks_keep_the_draft_unless_labels_are_required():
    sheets = rows("a", {T[0]: {"stage": "Training"}, "nobody:x.py:f": {"stage": "Training"}})
    relaxed = merge_labels(PROMPTS, sheets)
    assert [(lab.keep, lab.stage, lab.prompt_source) for lab in relaxed.labels[1:]] == [(True, None, "draft")] * 3
    assert any(d.reason == UNKNOWN_TASK and d.task_id == "nobody:x.py:f" for d in relaxed.disagreements)
    strict = merge_labels(PROMPTS, sheets, require_labels=True)
    assert strict.labels[0].keep
    assert all(not lab.keep and "require_labels" in lab.discard_reason for lab in strict.labels[1:])


def test_agreement_rows():
    sheets = rows("a", {t: {"stage": "Training", "task": "General", "data": "Text"} for t in T})
    sheets += rows(
        "b",
        {
            T[0]: {"stage": "Training", "task": "General", "data": "Text"},
            T[1]: {"stage": "Inference", "task": "General", "data": "Image"},
        },
    )
    result = merge_labels(PROMPTS, sheets)
    by_dim = {a.dimension: a for a in result.agreement}
    assert list(by_dim) == ["stage", "task", "data", "keep", "overall"]
    assert by_dim["stage"].units == 2 and by_dim["stage"].annotators == 2 and by_dim["stage"].values == 4
    assert by_dim["stage"].alpha == pytest.approx(package_alpha([["Training", "Training"], ["Training", "Inference"]]))
    assert by_dim["task"].alpha is None  # everybody agrees on one value: alpha undefined
    assert by_dim["overall"].alpha == pytest.approx((by_dim["stage"].alpha + by_dim["data"].alpha) / 2)


# ---------------------------------------------------------------- files


def labelstudio_export(path, annotations: dict[str, list[dict]]) -> None:
    """A Label Studio JSON export as the tool writes it (tasks with annotation results)."""
    tasks = []
    for i, (task_id, anns) in enumerate(annotations.items(), 1):
        tasks.append(
            {
                "id": i,
                "data": {"task_id": task_id, "repo": "owner/lib", "code": "...", "prompt": "..."},
                "annotations": anns,
            }
        )
    path.write_text(json.dumps(tasks))


def ls_annotation(who, cancelled=False, **cells) -> dict:
    result = []
    for name, value in cells.items():
        if name in ("edited_prompt", "notes"):
            result.append({"from_name": name, "to_name": "code", "type": "textarea", "value": {"text": [value]}})
        else:
            result.append({"from_name": name, "to_name": "code", "type": "choices", "value": {"choices": [value]}})
    return {"id": 1, "completed_by": who, "was_cancelled": cancelled, "result": result}


def test_labelstudio_export_parsing(tmp_path):
    path = tmp_path / "ls_export.json"
    labelstudio_export(
        path,
        {
            T[0]: [
                ls_annotation(1, stage="Training", task="General", keep="yes"),
                ls_annotation({"id": 2, "email": "b@x.org"}, stage="Inference", notes="hm"),
            ],
            T[1]: [
                ls_annotation(1, data="Text", edited_prompt="New prompt."),
                ls_annotation(3, cancelled=True, stage="Training"),
            ],
        },
    )
    parsed = read_sheet(path)
    assert [(r.annotator, r.task_id, r.stage, r.task, r.data, r.keep, r.edited_prompt, r.notes) for r in parsed] == [
        ("ls_export/1", T[0], "Training", "General", "", "yes", "", ""),
        ("ls_export/b@x.org", T[0], "Inference", "", "", "", "", "hm"),
        ("ls_export/1", T[1], "", "", "Text", "", "New prompt.", ""),
    ]


def test_labelstudio_json_min_export_parsing(tmp_path):
    path = tmp_path / "ls_min.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": 1,
                    "task_id": T[0],
                    "code": "...",
                    "stage": "Training",
                    "keep": "no",
                    "notes": "dup",
                    "annotator": 4,
                },
                {
                    "id": 2,
                    "task_id": T[1],
                    "task": "General",
                    "edited_prompt": ["Line one.", "Line two."],
                    "annotator": 4,
                },
            ]
        )
    )
    parsed = read_sheet(path)
    assert [(r.annotator, r.task_id, r.stage, r.task, r.keep, r.edited_prompt, r.notes) for r in parsed] == [
        ("ls_min/4", T[0], "Training", "", "no", "", "dup"),
        ("ls_min/4", T[1], "", "General", "", "Line one.\nLine two.", ""),
    ]


def test_merge_files_end_to_end(tmp_path):
    write_jsonl(tmp_path / "prompts.jsonl", PROMPTS)
    csv_sheet = tmp_path / "ann_csv.csv"
    csv_sheet.write_text(
        "\ufefftask_id,repo,stage,task,data,keep,edited_prompt,notes\n"
        + f"{T[0]},owner/lib,Training,general,text,yes,,\n"
    )
    ls_sheet = tmp_path / "ann_ls.json"
    labelstudio_export(ls_sheet, {T[0]: [ls_annotation(5, stage="Training", task="General", data="Image")]})
    out = MergePaths(tmp_path / "merged.jsonl", tmp_path / "agreement.csv", tmp_path / "disagreements.csv")
    merge_labels_files([tmp_path / "prompts.jsonl"], [csv_sheet, ls_sheet], out, LabelsConfig())
    merged = read_jsonl(out.merged, MergedLabel)
    assert [m.task_id for m in merged] == T
    assert merged[0].annotator_ids == ["ann_csv", "ann_ls/5"]
    assert (merged[0].stage, merged[0].task, merged[0].data) == ("Training", "General", None)
    assert out.agreement.read_text().splitlines()[0] == "dimension,alpha,units,annotators,values,observed_agreement"
    assert f"{T[0]},data,tie," in out.disagreements.read_text()


def test_bad_sheets_get_clear_errors(tmp_path):
    (tmp_path / "x.ods").write_text("")
    with pytest.raises(SheetError, match="unsupported sheet format"):
        read_sheet(tmp_path / "x.ods")
    (tmp_path / "y.csv").write_text("id,stage\n1,Training\n")
    with pytest.raises(SheetError, match="no 'task_id' column"):
        read_sheet(tmp_path / "y.csv")
    (tmp_path / "z.json").write_text("{")
    with pytest.raises(SheetError, match="cannot read sheet"):
        read_sheet(tmp_path / "z.json")


# ---------------------------------------------------------------- the sample world's sheets

SAMPLE_SHEETS = [ROOT / "resources/sample/labels" / f"annotator_{i}.csv" for i in (1, 2, 3)]
SAMPLE = "dlbench-sample__"


@pytest.fixture(scope="module")
def sample_merge():
    sheets = read_sheets(SAMPLE_SHEETS)
    drafts = {
        r.task_id: PromptRecord(
            task_id=r.task_id,
            repo=r.task_id.split(":")[0].replace("__", "/"),
            prompt=f"Draft for {r.task_id}.",
            source="template",
        )
        for r in sheets
    }
    return merge_labels(list(drafts.values()), sheets)


def test_sample_sheets_alpha_equals_the_package(sample_merge):
    by_dim = {a.dimension: a for a in sample_merge.agreement}
    for dimension in ("stage", "task", "data", "keep"):
        units = [label.votes[dimension] for label in sample_merge.labels]
        assert by_dim[dimension].alpha == pytest.approx(package_alpha(units), abs=1e-12)
        assert by_dim[dimension].annotators == 3
    assert by_dim["stage"].units == len(sample_merge.labels)  # every task has >= 2 stage votes
    assert 0.5 < by_dim["overall"].alpha < 1


def test_sample_sheets_spellings_ties_discards_and_edits(sample_merge):
    unknown = [(d.task_id, d.detail) for d in sample_merge.disagreements if d.reason == UNKNOWN_LABEL]
    assert unknown == [(f"{SAMPLE}nnkit:nnkit/activations.py:dropout", "annotator_2: 'Audio'")]
    ties = {(d.task_id.split(":", 2)[-1], d.dimension) for d in sample_merge.disagreements if d.reason == TIE}
    assert {("nms", "stage"), ("Dense.forward", "stage"), ("MinMaxScaler.fit", "task")} <= ties
    by_name = {label.task_id.split(":", 2)[-1]: label for label in sample_merge.labels}
    assert {name for name, label in by_name.items() if not label.keep} == {"hflip", "Vocabulary.size"}
    assert by_name["hflip"].discard_reason.startswith("discarded by 2 of 3 annotators: annotator_1: trivial wrapper")
    assert {name for name, label in by_name.items() if label.prompt_source == "edited"} == {
        "iou",
        "sliding_windows",
        "ndcg_at_k",
        "Adam.step",
    }
    skipped = by_name["clip_boxes"]
    assert skipped.votes["keep"][2] is None and skipped.votes["stage"][2] is None and skipped.annotators == 3
    assert all(label.stage in (*STAGES, None) and label.data in (*DATA, None) for label in sample_merge.labels)
