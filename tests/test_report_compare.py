"""Comparison with other benchmarks: loaders, tokens, complexity, and the whole run on small files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dlbench.cli import main
from dlbench.records import BenchmarkTask, Similarity
from dlbench.report import compare as cx
from dlbench.report.external import ExternalFormatError, ExternalTask, load_benchmark
from dlbench.store import write_jsonl
from tests.test_faults_rules import job_stats
from tests.workflow_runs import project_copy, snakemake

DS1000 = [  # (library, prompt, reference_code) in DS-1000's published record format
    ("Pandas", "Problem: I have a DataFrame df with a column 'a'. How do I keep the rows where a > 2?", "result = df[df['a'] > 2]\n"),
    ("Pandas", "Problem: How can I sort a pandas DataFrame by two columns, descending?", "result = df.sort_values(['a', 'b'], ascending=False)\n"),
    ("Numpy", "Problem: Given a numpy array, how do I count the unique values in it?", "result = len(np.unique(a))\n"),
    ("Numpy", "Problem: How do I replace the negative entries of a numpy array by zero?", "a[a < 0] = 0\nresult = a\n"),
    ("Pandas", "Problem: How do I rename the column 'x' of a DataFrame to 'y'?", "if 'x' in df:\n    df = df.rename(columns={'x': 'y'})\nresult = df\n"),
]  # fmt: skip
DLBENCH = [  # (name, prompt, ground truth)
    ("train_epoch", "Write a function train_epoch that runs one training epoch of a PyTorch model over a DataLoader, "
     "calling loss.backward() and optimizer.step() for every batch, and returns the mean loss.",
     "def train_epoch(model, loader, optimizer, loss_fn):\n    total = 0.0\n    for x, y in loader:\n        optimizer.zero_grad()\n"
     "        loss = loss_fn(model(x), y)\n        loss.backward()\n        optimizer.step()\n        total += loss.item()\n"
     "    return total / len(loader)\n"),
    ("conv_block", "Create a PyTorch nn.Module ConvBlock with a Conv2d layer, BatchNorm2d and ReLU activation; forward applies them to a tensor.",
     "def conv_block(channels):\n    return nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU())\n"),
    ("masked_softmax", "Implement masked_softmax that applies softmax over the last dimension of an attention score tensor, "
     "setting masked positions to -inf first.",
     "def masked_softmax(scores, mask):\n    if mask is not None:\n        scores = scores.masked_fill(~mask, float('-inf'))\n"
     "    return torch.softmax(scores, dim=-1)\n"),
    ("freeze_backbone", "Write freeze_backbone that disables gradients for every parameter of a pretrained backbone network.",
     "def freeze_backbone(model):\n    for p in model.backbone.parameters():\n        p.requires_grad = False\n    return model\n"),
]  # fmt: skip


def write_ds1000(path: Path) -> Path:
    records = [
        {"prompt": p, "reference_code": c, "code_context": "exec_context = ''", "metadata": {"problem_id": i, "library": lib,
         "library_problem_id": i, "test_case_cnt": 1, "perturbation_type": "Origin", "perturbation_origin_id": i}}
        for i, (lib, p, c) in enumerate(DS1000)
    ]  # fmt: skip
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    return path


def write_dlbench(path: Path) -> Path:
    write_jsonl(path, [
        BenchmarkTask(
            task_id=f"o__r:m.py:{name}", repo="o/r", sha=None, path="m.py", function=name, class_name=None,
            signature=f"def {name}():", prompt=prompt, ground_truth=code, tests=["t.py::a"], stage=None, task=None,
            data=None, first_added=None, last_modified=None, qualname=name, slug="o__r", start_line=1, end_line=2,
        )
        for name, prompt, code in DLBENCH
    ])  # fmt: skip
    return path


def test_ds1000_records_load_with_library_ids(tmp_path: Path) -> None:
    tasks = load_benchmark(write_ds1000(tmp_path / "ds1000.jsonl.gz"), "ds1000", "DS-1000")
    assert [t.task_id for t in tasks][:3] == ["Pandas/0", "Pandas/1", "Numpy/2"]
    assert tasks[3].code == "a[a < 0] = 0\nresult = a\n" and tasks[0].benchmark == "DS-1000"


def test_aicodereval_takes_known_fields_and_names_the_ones_it_found(tmp_path: Path) -> None:
    good = tmp_path / "aicodereval.jsonl"
    good.write_text(
        json.dumps({"instruction": "Translate text with a pipeline.", "output": "def f(t):\n    return t\n"}) + "\n"
    )
    assert load_benchmark(good, "aicodereval", "AICoderEval") == [
        ExternalTask("AICoderEval", "0", "Translate text with a pipeline.", "def f(t):\n    return t\n")
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"instruction": "x", "body": "y"}) + "\n")
    with pytest.raises(ExternalFormatError, match=r"bad.jsonl:1: none of .*\(fields: body, instruction\)"):
        load_benchmark(bad, "aicodereval", "AICoderEval")
    with pytest.raises(ExternalFormatError, match="unknown benchmark format 'humaneval'"):
        load_benchmark(good, "humaneval", "x")


def test_tokens_keep_listed_identifiers_whole_and_split_the_rest() -> None:
    assert cx.tokens("DataLoader batch_size") == ["dataloader", "batch", "size"]
    assert cx.tokens("nn.Conv2d(x) getLabelIssues") == ["nn", "conv2d", "x", "get", "label", "issues"]
    dl, ml = cx.keywords()
    assert not dl & ml and {"tensor", "backward"} <= dl and {"sklearn", "classifier"} <= ml


def test_snippets_are_scored_as_function_bodies() -> None:
    snippet = ExternalTask("b", "0", "p", "if a:\n    x = 1\nelif b:\n    x = 2\nresult = x\n")
    measured = cx.measure(snippet)
    assert (measured.loc, measured.cyclomatic, measured.cognitive) == (5, 3, 2)
    function = ExternalTask("b", "1", "train the model", "    def f(self, loss):\n        loss.backward()\n")
    measured = cx.measure(function)
    assert (measured.loc, measured.cyclomatic, measured.cognitive) == (2, 1, 0)
    # train the model | def f self loss loss backward: DL backward; ML train, model, loss twice
    assert (measured.tokens, measured.dl_tokens, measured.ml_tokens) == (9, 1, 4)


def test_similarity_of_a_benchmark_with_itself_skips_identical_pairs() -> None:
    vectors = pd.DataFrame([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]).to_numpy()
    rows = {(r.benchmark, r.other): r for r in cx.similarities("prompt", ["a", "a", "b"], vectors)}
    assert rows[("a", "a")].mean_cosine == 0.0  # the one distinct pair is orthogonal
    assert rows[("a", "b")].mean_cosine == 0.5 and rows[("b", "a")].mean_cosine == 0.5
    assert rows[("b", "b")].mean_cosine == 1.0


@pytest.mark.slow  # loads torch and the sentence encoder (about a minute on 2 busy cores)
def test_the_three_comparisons_run_on_a_small_ds1000_file(tmp_path: Path) -> None:
    sources = [
        cx.Source("DL-Bench", "dlbench", str(write_dlbench(tmp_path / "dlbench.jsonl"))),
        cx.Source("DS-1000", "ds1000", str(write_ds1000(tmp_path / "ds1000.jsonl.gz"))),
    ]
    out = tmp_path / "compare"
    measured = cx.compare_benchmarks(sources, out, perplexity=30.0, seed=0)
    assert list(measured["benchmark"].value_counts().sort_index()) == [len(DLBENCH), len(DS1000)]
    summary = (out / "summary.md").read_text()
    assert "| DL-Bench | 4 |" in summary and "| DS-1000 | 5 |" in summary
    shares = measured.groupby("benchmark")[["dl_tokens", "tokens"]].sum()
    assert (
        shares.loc["DL-Bench", "dl_tokens"] / shares.loc["DL-Bench", "tokens"]
        > shares.loc["DS-1000", "dl_tokens"] / shares.loc["DS-1000", "tokens"]
    )
    complexity = measured.groupby("benchmark")["cyclomatic"].mean()
    assert complexity["DL-Bench"] > complexity["DS-1000"]  # loops and branches against one-liners
    similarity = pd.read_csv(out / "similarity.csv")
    rows = [Similarity(**r) for r in similarity.to_dict("records")]
    assert len(rows) == 2 * 4  # prompt and code, every ordered pair of two benchmarks
    by = {(r.kind, r.benchmark, r.other): r.mean_cosine for r in rows}
    for kind in cx.KINDS:  # each benchmark is closer to itself than to the other
        assert by[(kind, "DL-Bench", "DL-Bench")] > by[(kind, "DL-Bench", "DS-1000")] < by[(kind, "DS-1000", "DS-1000")]
    for kind in cx.KINDS:
        assert (out / f"tsne_{kind}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_comparison_needs_two_benchmarks(tmp_path: Path) -> None:
    source = cx.Source("DS-1000", "ds1000", str(write_ds1000(tmp_path / "ds1000.jsonl.gz")))
    with pytest.raises(ValueError, match="two benchmarks or more"):
        cx.compare_benchmarks([source], tmp_path / "out")


def test_the_command_line_names_what_is_wrong(tmp_path: Path, capsys) -> None:
    ds1000 = write_ds1000(tmp_path / "ds1000.jsonl.gz")
    assert main(["compare", "--benchmark", f"DS-1000:ds1000:{ds1000}", "--out", str(tmp_path / "out")]) == 2
    assert "two benchmarks or more" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", "--benchmark", "DS-1000", "--out", str(tmp_path / "out")])
    assert "expected NAME:FORMAT:PATH, got 'DS-1000'" in capsys.readouterr().err


def test_a_configured_comparison_is_a_target_of_the_workflow(tmp_path: Path) -> None:
    project = project_copy(tmp_path / "project")  # no results: every target is planned
    ds1000 = write_ds1000(tmp_path / "ds1000.jsonl.gz")
    extra = tmp_path / "compare.yaml"
    extra.write_text(
        yaml.safe_dump({"compare": {"benchmarks": [{"name": "DS-1000", "format": "ds1000", "path": str(ds1000)}]}})
    )
    default = job_stats(snakemake(project, "-n", timeout=300))
    configured = job_stats(snakemake(project, "-n", "--configfile", "config/config.yaml", str(extra), timeout=300))
    assert "compare_benchmarks" not in default and configured["compare_benchmarks"] == 1
    assert default["export_failures"] == default["merge_failures"] == 1  # Table 6 is always built
