"""OFT: min-cost flow by (capacity-constrained) entropic OFT-Sinkhorn matrix iterations.

Shi, Li, Zeng, Tu, Yan, "Optimal Flow Transport and its Entropic Regularization: a
GPU-friendly Matrix Iterative Algorithm for Flow Balance Satisfaction", ICLR 2025.

Sparse networks: ``oft_sinkhorn(..., layout="auto" | "dense" | "sparse")`` iterates on the arc
list (O(arcs) per iteration) for a torch sparse ``C`` or sparse enough arcs;
``read_dimacs(path, sparse=True)``, ``write_dimacs`` and ``make_netgen`` (NETGEN-like random
instances) give and take such problems.
"""

from iclr25.claims import Paper
from iclr25.oft.flow import flow_cost, flow_violations, min_cost_flow, oft_sinkhorn
from iclr25.oft.instances import make_layered, make_netgen
from iclr25.oft.io import from_networkx, read_dimacs, write_dimacs

PAPER = Paper(
    number=6,
    short="oft",
    title="Optimal Flow Transport and its Entropic Regularization: a GPU-friendly Matrix "
          "Iterative Algorithm for Flow Balance Satisfaction",
    authors="Liangliang Shi, Yufeng Li, Kaipeng Zeng, Yihui Tu, Junchi Yan",
    openreview="NtSlKEJ2DS",
)

__all__ = [
    "PAPER",
    "flow_cost",
    "flow_violations",
    "from_networkx",
    "make_layered",
    "make_netgen",
    "min_cost_flow",
    "oft_sinkhorn",
    "read_dimacs",
    "write_dimacs",
]
