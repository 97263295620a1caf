"""MoTHer against eliahuhorwitz/MoTHer on a toy zoo (fixture ``mother``, see MANIFEST.toml)."""

import numpy as np
import pytest
import torch

from iclr25.mother.distances import kurtosis_scores, pairwise_distances
from iclr25.mother.tree import arborescence, edge_costs

LAYERS = ("a.weight", "b.weight", "c.weight")


def _zoo(g, tag):
    names = [str(n) for n in g["names"]]
    return {n: {k: torch.tensor(g[f"{tag}_{k}"][i]) for k in LAYERS} for i, n in enumerate(names)}


@pytest.mark.parametrize("tag,metric", [("ft", "l1"), ("lora", "rank")])
def test_distances_and_kurtosis(golden, tag, metric):
    g = golden("mother")
    zoo = _zoo(g, tag)
    D = pairwise_distances(zoo, metric=metric).numpy()
    # the official sums run in the weights' float32; ours in float64
    np.testing.assert_allclose(D, g[f"{tag}_dist"], rtol=1e-6, atol=0)
    np.testing.assert_allclose(kurtosis_scores(zoo).numpy(), g[f"{tag}_ku"], rtol=2e-6)


@pytest.mark.parametrize("rev,direction", [(0, "finetune"), (1, "pretrain")])
def test_directed_tree(golden, rev, direction):
    g = golden("mother")
    C = edge_costs(torch.tensor(g["ft_dist"]), torch.tensor(g["ft_ku"]), 0.3, direction)
    np.testing.assert_array_equal(arborescence(C), g[f"parents_rev{rev}"])
