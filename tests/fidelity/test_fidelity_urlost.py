"""URLOST against Robergr80/Magic_TV2's MI and kNN graph (fixture ``urlost``, MANIFEST.toml)."""

import numpy as np
import torch

from iclr25.urlost.organize import dependence, knn_affinity


def test_mutual_information(golden):
    g = golden("urlost")
    mi = dependence(torch.tensor(g["X"]), "mi", bins=int(g["bins"])).numpy()
    np.testing.assert_allclose(mi, g["mi"], rtol=1e-12, atol=1e-14)


def test_knn_affinity(golden):
    g = golden("urlost")
    # the official K counts the node itself (its self-MI, the entropy, tops its row)
    W = knn_affinity(torch.tensor(g["mi"]), k=int(g["K"]) - 1).numpy()
    np.testing.assert_allclose(W, g["knn"], rtol=1e-15, atol=0)
    assert (W > 0).sum() >= 2 * (int(g["K"]) - 1) * 4   # a real, non-empty graph
