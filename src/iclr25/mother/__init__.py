"""MoTHer: recover model family trees (who was fine-tuned from whom) from the weights alone.

Horwitz, Shul, Hoshen, "Unsupervised Model Tree Heritage Recovery", ICLR 2025. Zoos with a
known answer for trying it out are in ``iclr25.mother.testbed`` (``make_zoo``,
``make_lora_zoo``) and ``iclr25 mother make-zoo``.
"""

from iclr25.claims import Paper
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

PAPER = Paper(
    number=1,
    short="mother",
    title="Unsupervised Model Tree Heritage Recovery",
    authors="Eliahu Horwitz, Asaf Shul, Yedid Hoshen",
    arxiv="2405.18432",
    openreview="QVj3kUvdvl",
    code="eliahuhorwitz/MoTHer",
)

__all__ = [
    "DIRECTIONS",
    "PAPER",
    "ModelForest",
    "ModelSource",
    "as_sources",
    "build_forest",
    "cluster_trees",
    "clustering_accuracy",
    "direction_penalty",
    "edge_accuracy",
    "edge_costs",
    "kurtosis_scores",
    "pairwise_distances",
    "recover_tree",
    "select_layers",
]
