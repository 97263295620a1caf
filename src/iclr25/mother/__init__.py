"""MoTHer: recover model family trees (who was fine-tuned from whom) from the weights alone.

Horwitz, Shul, Hoshen, "Unsupervised Model Tree Heritage Recovery", ICLR 2025.
"""

from iclr25.mother.distances import kurtosis_scores, pairwise_distances, select_layers
from iclr25.mother.metrics import clustering_accuracy, edge_accuracy
from iclr25.mother.sources import ModelSource, as_sources
from iclr25.mother.tree import (
    DIRECTIONS,
    ModelForest,
    build_forest,
    cluster_trees,
    direction_penalty,
    edge_costs,
    recover_tree,
)
from iclr25.mother.zoo import Zoo, load_truth, make_lora_zoo, make_zoo

__all__ = [
    "DIRECTIONS",
    "ModelForest",
    "ModelSource",
    "Zoo",
    "as_sources",
    "build_forest",
    "cluster_trees",
    "clustering_accuracy",
    "direction_penalty",
    "edge_accuracy",
    "edge_costs",
    "kurtosis_scores",
    "load_truth",
    "make_lora_zoo",
    "make_zoo",
    "pairwise_distances",
    "recover_tree",
    "select_layers",
]
