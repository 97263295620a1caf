"""Db-TSW: distance-based tree-sliced Wasserstein distance, rotation invariant at SW's cost.

Tran, Nguyen, Pham, Chu, Le, Nguyen, "Distance-Based Tree-Sliced Wasserstein Distance",
ICLR 2025.
"""

from iclr25.claims import Paper
from iclr25.dbtsw.distance import DbTSWLoss, db_tsw, sample_trees, tree_wasserstein

PAPER = Paper(
    number=5,
    short="dbtsw",
    title="Distance-Based Tree-Sliced Wasserstein Distance",
    authors="Viet-Hoang Tran, Khoi N.M. Nguyen, Trang Pham, Thanh T. Chu, Tam Le, Tan M. Nguyen",
    arxiv="2503.11050",
    openreview="OiQttMHwce",
    code="Fsoft-AIC/DbTSW",
)

__all__ = ["PAPER", "DbTSWLoss", "db_tsw", "sample_trees", "tree_wasserstein"]
