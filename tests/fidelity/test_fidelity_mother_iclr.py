"""MoTHer's full fine-tuning recipe against the ICLR version of ``MoTHer_FullFT.py``
(fixture ``mother_iclr``, see MANIFEST.toml): RMS distance, output.dense kurtosis, MDST."""

import numpy as np
import torch

from iclr25.mother.distances import kurtosis_scores, pairwise_distances
from iclr25.mother.tree import arborescence, edge_costs


def test_distance_kurtosis_tree(golden):
    g = golden("mother_iclr")
    keys = [str(k) for k in g["keys"]]
    zoo = {str(n): {k: torch.tensor(g["weights"][i][j]) for j, k in enumerate(keys)}
           for i, n in enumerate(g["names"])}
    D = pairwise_distances(zoo, layers="attention", metric="rms").numpy()
    ku = kurtosis_scores(zoo, layers="output.dense").numpy()
    # the official RMS and scipy's kurtosis run in the weights' float32, ours in float64
    np.testing.assert_allclose(D, g["dist"], rtol=1e-6, atol=0)
    np.testing.assert_allclose(ku, g["ku"], rtol=0, atol=2e-5)   # 12 float32 kurtoses summed
    np.testing.assert_array_equal(arborescence(edge_costs(torch.tensor(D), torch.tensor(ku),
                                                          0.3, "finetune")), g["parents"])
