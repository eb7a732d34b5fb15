"""recokit: ranking metrics and tiny recommenders on numpy."""
from .metrics import (
    average_precision,
    dcg_at_k,
    hit_rate,
    mean_average_precision,
    mrr,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from .models import MatrixFactorization, PopularityRecommender
from .split import build_interaction_matrix, leave_one_out, train_test_split_per_user

__all__ = [
    "MatrixFactorization",
    "PopularityRecommender",
    "average_precision",
    "build_interaction_matrix",
    "dcg_at_k",
    "hit_rate",
    "leave_one_out",
    "mean_average_precision",
    "mrr",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "train_test_split_per_user",
]
