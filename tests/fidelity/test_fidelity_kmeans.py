"""Consistent online k-means against a hand-traced stream (fixture ``kmeans``; no official
code, see MANIFEST.toml and tools/fidelity/kmeans.py for the trace)."""

import numpy as np
import torch

from iclr25.kmeans import ConsistentKMeans


def exact_1d_2means(X, w, k, g):
    """The trace's offline solver: the best split of the sorted points, centres the means."""
    x = torch.sort(X[:, 0]).values
    costs = [((x[:s] - x[:s].mean()) ** 2).sum() + ((x[s:] - x[s:].mean()) ** 2).sum()
             for s in range(1, len(x))]
    s = int(torch.stack(costs).argmin()) + 1
    return torch.stack([x[:s].mean(), x[s:].mean()])[:, None]


def test_hand_traced_stream(golden):
    g = golden("kmeans")
    km = ConsistentKMeans(2, eps=float(g["eps"]), offline=exact_1d_2means, seed=0).fit(g["X"])
    expected = list(zip(g["log_t"].tolist(), g["log_slot"].tolist(),
                        [str(k) for k in g["log_kind"]], strict=True))
    assert km.change_log_ == expected
    np.testing.assert_allclose(km.cluster_centers_, g["centers"], rtol=0, atol=1e-12)
    assert km.cost_ == float(g["cost"]) and km.n_reclusterings_ == int(g["n_reclusterings"])
    np.testing.assert_array_equal(km.labels_, g["labels"])
