"""SCHull fixture: shihhsinwang0214/SCHull ``SCHull/schull.py:SCHull.get_schull`` (edge index,
edge attributes, radial array) on random clouds, and our pinned graph where we deliberately
differ (an atom at the centroid).

Official code run unchanged (numpy + scipy's qhull). Inputs (seed 0, float64): clouds of 12,
30 and 60 points ~ N(0, I_3) (generic: no atom at the centroid, no two on one ray);
``cat_data`` zeros; tol 1e-2. The "centroid" case is the octahedron of radius 1 plus an atom
at its centre (index 6): the official code drops that atom (its edges index the 6 others),
ours links it to its 3 nearest atoms (``schull/graph.py``), so the fixture stores the
official output AND our graph, pinned (``ours_centroid_edges``, made with iclr25).

    python tools/fidelity/schull.py --official /path/to/SCHull
"""

import numpy as np
import torch
from _common import commit, parse, save

args = parse(__doc__)
from SCHull import SCHull  # noqa: E402

from iclr25.schull import schull_graph  # noqa: E402  (the pinned case only)

rng = np.random.default_rng(0)
sch = SCHull(tol=1e-2)
out = {}
for n in (12, 30, 60):
    pos = rng.normal(size=(n, 3))
    data, _, ei, ea, radial = sch.get_schull(pos, np.zeros(n))
    assert len(data) == n
    out.update({f"pos{n}": pos, f"edges{n}": np.array(ei, dtype=np.int64),
                f"attr{n}": np.array(ea), f"radial{n}": np.array(radial)})
octa = np.array([[1., 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1], [0, 0, 0]])
data, _, ei, ea, radial = sch.get_schull(octa, np.zeros(7))
assert len(data) == 6    # the centre atom (last) is dropped; the others keep their index
out.update(pos_centroid=octa,
           official_centroid_edges=np.array(ei, dtype=np.int64))
out["ours_centroid_edges"] = schull_graph(torch.tensor(octa)).edge_index.numpy()
save(args.out, "schull", commit(args.official), **out)
