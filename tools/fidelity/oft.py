"""OFT fixture: the official ``EOFT/alg.py`` (``eoft_WO``: OFT-Sinkhorn; ``eoft_EN``: edge
capacities), and our pinned flows where we deliberately differ (overflow, capacity clip).

Provenance: the file is in the search service's code index (id 11770522860, path
``EOFT/alg.py``) with no repository name and no commit; no git snapshot can be fetched. Save
that text as ``PATH/alg.py`` and pass ``--official PATH``. Its hard-coded ``.to('cuda')`` is
redirected to the CPU here (the computation is unchanged, float64 as in the file).

Instance (seed 0): a 3/3/3 layered network in the unit square, Euclidean costs on the
source->transit and transit->sink edges, supplies 1/3 and demands -1/3. As the official
driver (``read_netgen``): non-edges cost 10 x the largest edge cost and the kernel is
``exp(-M0 / r)`` with ``M0 = C / max C``, so the official ``r`` is our ``reg = 10 r``
(relative to the largest edge cost); virtual flow d0 = 1e-8; 20000 iterations, break_err
1e-15. Output flows are ``relu(P - Pᵀ)`` (the paper's post-processing).

- ``F_r01``, ``F_r002``: official OFT-Sinkhorn flows at r = 0.01 and 0.002.
- Overflow: at r = 2e-4 the official scalings overflow (non-finite P, stored as
  ``overflow_official_finite`` = False); ``ours_overflow`` pins our flow at reg 2e-3.
- Capacity: every edge capped at 0.2 (the uncapacitated flow carries up to 0.26); the official
  clip ``cap_ij / (u_j v_i)`` is transposed and its flow exceeds the cap (``F_cap_official``);
  ``ours_cap`` pins our flow (exact clip), which respects it.

    python tools/fidelity/oft.py --official /path/to/EOFT
"""

import contextlib
import io

import torch
from _common import parse, save

args = parse(__doc__)
_to = torch.Tensor.to
torch.Tensor.to = lambda self, *a, **k: _to(self, *[("cpu" if x == "cuda" else x) for x in a],
                                             **k)
import alg  # noqa: E402

from iclr25.oft import oft_sinkhorn  # noqa: E402  (pinned cases only)

g = torch.Generator().manual_seed(0)
n = 9
pts = torch.rand(n, 2, generator=g, dtype=torch.float64)
C = torch.full((n, n), float("inf"), dtype=torch.float64)
for lo, hi in ((range(0, 3), range(3, 6)), (range(3, 6), range(6, 9))):
    for i in lo:
        for j in hi:
            C[i, j] = (pts[i] - pts[j]).norm()
edge = torch.isfinite(C)
mx = C[edge].max()
M0 = (torch.where(edge, C, 10 * mx) / (10 * mx)).fill_diagonal_(0)[None]
s = torch.tensor([1 / 3] * 3 + [0] * 3 + [-1 / 3] * 3, dtype=torch.float64)
third = [1 / 3] * 3


def official(fn, r, **kw):
    with contextlib.redirect_stdout(io.StringIO()):
        P, _ = fn(1, M0.clone(), r, third, third, 1e-15, 20000, 3, 3, 1e-8, **kw)
    return P[0]


out = {"C": C, "s": s}
for tag, r in (("r01", 0.01), ("r002", 0.002)):
    P = official(alg.eoft_WO, r)
    out[f"F_{tag}"] = torch.relu(P - P.T)
    out[f"balance_{tag}"] = (P.sum(1) - P.sum(0) - s).abs().max()
P = official(alg.eoft_WO, 2e-4)
out["overflow_official_finite"] = bool(torch.isfinite(P).all())
out["ours_overflow"] = oft_sinkhorn(s, C, reg=2e-3, stopThr=1e-12, numItermax=50000)
cap = torch.where(edge, 0.2, float("inf")).to(torch.float64)
P = official(alg.eoft_EN, 0.01, Edge_C=cap[None].clone())
out["cap"] = cap
out["F_cap_official"] = torch.relu(P - P.T)
out["ours_cap"] = oft_sinkhorn(s, C, reg=0.1, capacity=cap, stopThr=1e-12, numItermax=50000)
save(args.out, "oft", "code-index:11770522860 (EOFT/alg.py, no repository or commit)", **out)
