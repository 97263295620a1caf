"""Db-TSW fixture: official ``db_tsw/db_tsw.py:DbTSW.__call__`` (Fsoft-AIC/DbTSW) on fixed trees.

Inputs: X, Y ~ N(0, 1) / N(1, 1) (30 x 3, seed 0); 8 trees of 4 lines from the official
``generate_trees_frames`` ("gaussian_raw", root mean 0.3, std 0.1). Outputs: the distance for
p in {1, 2} with delta 2, the gradient of the p = 2 distance w.r.t. X, all float64 (default dtype
set to float64, since the official code builds its root coordinates with the default dtype),
and the same p = 2 value and gradient run in float32 (the dtype of the official GPU runs).

    python tools/fidelity/dbtsw.py --official /path/to/DbTSW
"""

import torch
from _common import commit, parse, save

args = parse(__doc__)
from db_tsw.db_tsw import DbTSW  # noqa: E402
from db_tsw.utils import generate_trees_frames  # noqa: E402

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
X = torch.randn(30, 3)
Y = torch.randn(30, 3) + 1.0
theta, intercept = generate_trees_frames(8, 4, 3, mean=0.3, std=0.1, device="cpu")
out = {"X": X, "Y": Y, "theta": theta, "roots": intercept[:, 0, :]}
for p in (1, 2):
    Xg = X.clone().requires_grad_(True)
    tw = DbTSW(p=p, delta=2.0, device="cpu")(Xg, Y, theta, intercept)
    tw.backward()
    out[f"tw_p{p}"], out[f"grad_p{p}"] = tw.detach(), Xg.grad
torch.set_default_dtype(torch.float32)
Xg = X.float().requires_grad_(True)
tw = DbTSW(p=2, delta=2.0, device="cpu")(Xg, Y.float(), theta.float(), intercept.float())
tw.backward()
out["tw_p2_f32"], out["grad_p2_f32"] = tw.detach(), Xg.grad
save(args.out, "dbtsw", commit(args.official), **out)
