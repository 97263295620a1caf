"""URLOST: self-organized tokens and a masked autoencoder for data with no known topology.

Yun, Zhang, LeCun, Chen, "Unsupervised Representation Learning withOut Stationarity or
Topology", ICLR 2025.
"""

from iclr25.claims import Paper
from iclr25.urlost.mae import URLOST, URLOSTMAE, GroupLinear, grid_patches
from iclr25.urlost.organize import (
    SelfOrganizingClusters,
    density_adjusted_laplacian,
    dependence,
    discretize,
    equal_width_bins,
    group_tokens,
    groups_from_labels,
    knn_affinity,
    spectral_clusters,
)
from iclr25.urlost.retina import foveate, retina_sampler

PAPER = Paper(
    number=13,
    short="urlost",
    title="Unsupervised Representation Learning withOut Stationarity or Topology",
    authors="Zeyu Yun, Juexiao Zhang, Yann LeCun, Yubei Chen",
    arxiv="2310.04496",
    code="Robergr80/Magic_TV2",
)

__all__ = [
    "PAPER", "URLOST", "URLOSTMAE", "GroupLinear", "SelfOrganizingClusters", "dependence",
    "density_adjusted_laplacian", "discretize", "equal_width_bins", "foveate",
    "grid_patches", "group_tokens", "groups_from_labels", "knn_affinity", "retina_sampler",
    "spectral_clusters",
]
