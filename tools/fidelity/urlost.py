"""URLOST fixture: Robergr80/Magic_TV2's pairwise mutual information and kNN graph.

Official functions run unchanged: ``model/sampling_retina_3.py:calc_MI`` (``np.histogram2d``
then sklearn ``mutual_info_score``) over every column pair, and ``utils/spectral.py:
distance_sklearn_metrics`` + ``adjacency`` (the kNN graph of ``get_weighted_cluster``, which
symmetrises MI first). torchvision (imported, unused here) is stubbed when absent.

Inputs (seed 0): 400 samples x 8 columns: z ~ N(0, I_3); columns are noisy mixtures of z and
two heavy-tailed ones, so MI spans near 0 to the entropies; 16 bins; K = 4 neighbours
(the official K counts the node itself, whose MI, its entropy, is the row's largest).

    python tools/fidelity/urlost.py --official /path/to/Magic_TV2
"""

import numpy as np
from _common import commit, parse, save, stub

args = parse(__doc__)
stub("torchvision", "torchvision.transforms")
from model.sampling_retina_3 import calc_MI  # noqa: E402
from utils.spectral import adjacency, distance_sklearn_metrics  # noqa: E402

rng = np.random.default_rng(0)
z = rng.normal(size=(400, 3))
mix = rng.normal(size=(3, 6))
X = np.concatenate([z @ mix + 0.3 * rng.normal(size=(400, 6)),
                    rng.standard_t(2, size=(400, 1)), np.exp(z[:, :1])], axis=1)
d, bins, K = X.shape[1], 16, 4
mi = np.array([[calc_MI(X[:, i], X[:, j], bins) for j in range(d)] for i in range(d)])
sym = (mi + mi.T) / 2
dist, idx = distance_sklearn_metrics(-sym.copy(), K)
W = np.asarray(adjacency(dist, idx).todense())
save(args.out, "urlost", commit(args.official), X=X, bins=bins, K=K, mi=mi, knn=W)
