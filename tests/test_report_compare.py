"""Comparison with other benchmarks: loaders, tokens, complexity, and the whole run on small files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
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


# The paper's DL/ML token ratio, by hand, on keyword lists made for the example.
WORDS = cx.Keywords(dl=frozenset({"conv", "nn", "weight_decay"}), ml=frozenset({"train", "loss"}), paper=frozenset())
RATIO_TASKS = [
    # tokens after preprocessing ("the", "and", "its" are stop words, "def" and "return" Python's):
    #   train* training* loss* convnet* (conv) nn_model* (nn: a whole part) weightdecay* (weight_decay,
    #   underscores ignored) report step annotation (holds "nn", but not as a part): 6 of 9
    ExternalTask("b", "1", "Train the ConvNet and report its training loss.",
                 "def step(nn_model, weightDecay):\n    return nn_model.loss(weightDecay) + annotation\n"),
    # sort list items result sorted ("the", "of" are stop words): 0 of 5
    ExternalTask("b", "2", "Sort the list of items.", "result = sorted(items)\n"),
]  # fmt: skip


def test_the_token_ratio_of_a_hand_computed_example_is_the_papers():
    first, second = (cx.measure(t, WORDS) for t in RATIO_TASKS)
    assert (first.tokens, first.keyword_tokens, first.dl_tokens, first.ml_tokens) == (9, 6, 3, 3)
    assert first.token_ratio == pytest.approx(6 / 9)
    assert (second.tokens, second.keyword_tokens, second.token_ratio) == (5, 0, 0.0)
    summary = cx.summary_table(pd.DataFrame([first.model_dump(), second.model_dump()]))
    # per task, then averaged: (6/9 + 0/5) / 2, not the pooled 6/14 = 0.429
    assert summary.loc[0, ["DL/ML token ratio", "DL token ratio", "ML token ratio"]].tolist() == [
        "0.333",
        "0.167",
        "0.167",
    ]


def test_a_token_set_counts_each_token_once():
    found = cx.tokens("loss = loss_fn(x); loss.backward(); return loss")
    assert sorted(found) == ["backward", "loss", "loss_fn"] and found["loss_fn"] == {"loss", "fn"}
    assert cx.count_tokens("loss loss loss", WORDS) == cx.TokenCounts(tokens=1, keyword=1, dl=0, ml=1)


def test_keyword_lists_hold_the_terms_the_paper_names():
    words = cx.keywords()
    assert not words.dl & words.ml and {"tensor", "backward"} <= words.dl and {"sklearn", "classifier"} <= words.ml
    named = {"autoencoder", "backpropagation", "momentum", "convolution", "initialization", "weight_decay"}
    assert words.paper == named and named <= words.dl  # issue 26 names these six of the paper's examples
    assert "6 of them named by the paper" in words.label()


def test_snippets_are_scored_as_function_bodies() -> None:
    snippet = ExternalTask("b", "0", "p", "if a:\n    x = 1\nelif b:\n    x = 2\nresult = x\n")
    measured = cx.measure(snippet)
    assert (measured.loc, measured.cyclomatic, measured.cognitive) == (5, 3, 2)
    function = ExternalTask("b", "1", "train the model", "    def f(self, loss):\n        loss.backward()\n")
    measured = cx.measure(function)
    assert (measured.loc, measured.cyclomatic, measured.cognitive) == (2, 1, 0)
    # train model self loss backward (the, def, f left out): DL backward; ML train, model, loss
    assert (measured.tokens, measured.keyword_tokens, measured.dl_tokens, measured.ml_tokens) == (5, 4, 1, 3)


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
    for instrument in ("the paper's definition", "keywords.yaml", "complexipy ", "radon ", cx.SENTENCE_LABEL):
        assert instrument in summary, instrument
    ratio = measured.groupby("benchmark")["token_ratio"].mean()
    assert ratio["DL-Bench"] > ratio["DS-1000"]
    complexity = measured.groupby("benchmark")["cyclomatic"].mean()
    assert complexity["DL-Bench"] > complexity["DS-1000"]  # loops and branches against one-liners
    similarity = pd.read_csv(out / "similarity.csv")
    rows = [Similarity(**r) for r in similarity.to_dict("records")]
    assert len(rows) == 2 * 4  # prompt and code, every ordered pair of two benchmarks
    assert {r.encoder for r in rows} == {cx.SENTENCE_LABEL}  # the default code encoder is the sentence encoder
    by = {(r.kind, r.benchmark, r.other): r.mean_cosine for r in rows}
    for kind in cx.KINDS:  # each benchmark is closer to itself than to the other
        assert by[(kind, "DL-Bench", "DL-Bench")] > by[(kind, "DL-Bench", "DS-1000")] < by[(kind, "DS-1000", "DS-1000")]
    for kind in cx.KINDS:
        assert (out / f"tsne_{kind}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_code_encoder_without_local_weights_stops_naming_the_key(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache: the model is nowhere here
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    with pytest.raises(
        cx.EncoderUnavailable, match=r"compare.code_encoder: no local copy of 'microsoft/codebert-base'"
    ):
        cx.code_encoder("microsoft/codebert-base")
    sources = [
        cx.Source("DL-Bench", "dlbench", str(write_dlbench(tmp_path / "dlbench.jsonl"))),
        cx.Source("DS-1000", "ds1000", str(write_ds1000(tmp_path / "ds1000.jsonl.gz"))),
    ]
    with pytest.raises(cx.EncoderUnavailable):  # before any output is written
        cx.compare_benchmarks(sources, tmp_path / "out", code_encoder_name=str(tmp_path / "no-such-model"))
    assert not (tmp_path / "out").exists()


def tiny_bert(folder: Path) -> Path:
    """A two-layer BERT with random weights and a ten-word vocabulary, saved as a local model folder."""
    transformers = pytest.importorskip("transformers")
    folder.mkdir()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "def", "return", "x", "loss", "(", ")", ":"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=8, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=16)  # fmt: skip
    transformers.BertModel(config).save_pretrained(folder)
    return folder


def test_a_local_transformers_model_embeds_code(tmp_path: Path) -> None:
    folder = tiny_bert(tmp_path / "tiny-bert")
    encoder = cx.code_encoder(str(folder))
    assert encoder.label.startswith(str(folder)) and "mean of the last hidden states" in encoder.label
    texts = ["def f(x): return x", "loss", "x " * 2000]  # the last is cut at 512 tokens
    vectors = encoder.encode(texts)
    assert vectors.shape == (3, 8) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.allclose(encoder.encode(texts[:1]), vectors[:1], atol=1e-5)  # padding does not move an embedding


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
