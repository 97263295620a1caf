"""Consistent online k-means: a stream clusterer whose centres change O(k log n) times in all.

Chan, Jiang, Wu, Zhao, "Online Clustering with Nearly Optimal Consistency", ICLR 2025.
"""

from iclr25.claims import Paper
from iclr25.kmeans.consistent import OFFLINE, ConsistentKMeans, clustering_cost, dz_seeding

PAPER = Paper(
    number=10,
    short="kmeans",
    title="Online Clustering with Nearly Optimal Consistency",
    authors="T-H. Hubert Chan, Shaofeng H.-C. Jiang, Tianyi Wu, Mengshi Zhao",  # as recalled in
    # the notes; OpenReview shows the paper but not its authors here, so unverified
    openreview="NA2vUMaMOm",
)

__all__ = ["OFFLINE", "PAPER", "ConsistentKMeans", "clustering_cost", "dz_seeding"]
