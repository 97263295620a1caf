"""SCHull: sparse, connected, rigid graphs of molecules and point clouds from a convex hull.

Wang, Huang, Baker, Sun, Tang, Wang, "A Theoretically-Principled Sparse, Connected, and Rigid
Graph Representation of Molecules", ICLR 2025 (Oral).
"""

from iclr25.claims import Paper
from iclr25.datasets.molecules import Conformers, conformers, read_sdf, read_xyz, write_xyz
from iclr25.schull.features import schull_features
from iclr25.schull.graph import SCHullGraph, schull_graph, unit_directions
from iclr25.schull.metrics import is_connected, is_rigid, num_undirected_edges, rigidity_rank
from iclr25.schull.model import SchNetCHA
from iclr25.schull.neighbors import knn_graph, radius_graph

PAPER = Paper(
    number=11,
    short="schull",
    title="A Theoretically-Principled Sparse, Connected, and Rigid Graph Representation of "
          "Molecules",
    authors="Shih-Hsin Wang, Yuhao Huang, Justin Baker, Yuan-En Sun, Qi Tang, Bao Wang",
    openreview="OIvg3MqWX2",
    code="shihhsinwang0214/SCHull",
)

__all__ = [
    "PAPER",
    "SCHull",
    "SCHullGraph",
    "SchNetCHA",
    "Conformers",
    "conformers",
    "is_connected",
    "is_rigid",
    "knn_graph",
    "num_undirected_edges",
    "radius_graph",
    "read_sdf",
    "read_xyz",
    "rigidity_rank",
    "schull_features",
    "schull_graph",
    "unit_directions",
    "write_xyz",
]


def __getattr__(name: str) -> object:
    # SCHull is a torch-geometric transform: importing torch-geometric takes seconds, so it
    # waits until the transform is asked for (and the rest of the method works without it)
    if name == "SCHull":
        from iclr25.schull.transform import SCHull

        return SCHull
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "SCHull"])
