"""Top-k ranking metrics.

Every metric takes ``ranked`` (recommended item ids, best first) and ``relevant`` (the
set of items the user actually interacted with).
"""
import numpy as np


def precision_at_k(ranked, relevant, k):
    """Fraction of the top-``k`` recommendations that are relevant.

    Args:
        ranked: recommended item ids, best first.
        relevant: collection of relevant item ids.
        k: cut-off, at least 1.

    Returns:
        float: precision in [0, 1]; the denominator is always ``k``.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    relevant = set(relevant)
    return sum(1 for item in ranked[:k] if item in relevant) / k


def recall_at_k(ranked, relevant, k):
    """Fraction of the relevant items found in the top ``k``.

    Args:
        ranked: recommended item ids, best first.
        relevant: collection of relevant item ids.
        k: cut-off.

    Returns:
        float: recall in [0, 1]; 0.0 when there are no relevant items.
    """
    relevant = set(relevant)
    if not relevant:
        return 0.0
    return sum(1 for item in ranked[:k] if item in relevant) / len(relevant)


def dcg_at_k(gains, k):
    """Discounted cumulative gain of a gain vector, ``sum(g_i / log2(i + 2))``.

    Args:
        gains: graded relevance of the ranked items, best first.
        k: cut-off.

    Returns:
        float: the DCG of the first ``k`` gains.
    """
    g = np.asarray(gains, dtype=np.float64)[:k]
    return float(np.sum(g / np.log2(np.arange(2, g.size + 2))))


def ndcg_at_k(ranked, relevant, k):
    """Normalized DCG with binary relevance.

    Args:
        ranked: recommended item ids, best first.
        relevant: collection of relevant item ids.
        k: cut-off.

    Returns:
        float: NDCG in [0, 1]; 0.0 when there are no relevant items.
    """
    relevant = set(relevant)
    if not relevant:
        return 0.0
    gains = [1.0 if item in relevant else 0.0 for item in ranked[:k]]
    ideal = dcg_at_k([1.0] * min(len(relevant), k), k)
    return dcg_at_k(gains, k) / ideal


def average_precision(ranked, relevant, k=None):
    """Average of precision@i over the ranks i that hold a relevant item.

    Args:
        ranked: recommended item ids, best first.
        relevant: collection of relevant item ids.
        k: optional cut-off; defaults to the whole list.

    Returns:
        float: AP normalized by ``min(len(relevant), k)``; 0.0 without relevant items.
    """
    relevant = set(relevant)
    if not relevant:
        return 0.0
    ranked = ranked[:k] if k is not None else ranked
    hits, total = 0, 0.0
    for i, item in enumerate(ranked, start=1):
        if item in relevant:
            hits += 1
            total += hits / i
    denom = min(len(relevant), k) if k is not None else len(relevant)
    return total / denom


def mean_average_precision(all_ranked, all_relevant, k=None):
    """Mean of ``average_precision`` over users."""
    return float(np.mean([average_precision(r, t, k) for r, t in zip(all_ranked, all_relevant)]))


def mrr(all_ranked, all_relevant):
    """Mean reciprocal rank of the first relevant item over users.

    Args:
        all_ranked: one ranked list per user.
        all_relevant: one collection of relevant items per user.

    Returns:
        float: MRR; users without any hit contribute 0.
    """
    scores = []
    for ranked, relevant in zip(all_ranked, all_relevant):
        relevant = set(relevant)
        rank = next((i for i, item in enumerate(ranked, start=1) if item in relevant), None)
        scores.append(0.0 if rank is None else 1.0 / rank)
    return float(np.mean(scores)) if scores else 0.0


def hit_rate(all_ranked, all_relevant, k):
    """Fraction of users with at least one relevant item in their top ``k``.

    Args:
        all_ranked: one ranked list per user.
        all_relevant: one collection of relevant items per user.
        k: cut-off.

    Returns:
        float: hit rate in [0, 1].
    """
    hits = [bool(set(ranked[:k]) & set(relevant)) for ranked, relevant in zip(all_ranked, all_relevant)]
    return float(np.mean(hits)) if hits else 0.0
