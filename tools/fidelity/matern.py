"""Matérn fixture: mweiherer/matern-surface-reconstruction ``models/kernels/matern_kernel.py:
MaternKernel`` (``_compute_gram_matrix``, ``solve``/``evaluate`` of ``base_kernel.py``: the
Cholesky kernel ridge solve and the prediction).

Official code run unchanged. Inputs (seed 0, float64):
- Gram matrices of orders 1/2, 3/2, 5/2, inf with h = 0.5 between X (20 x 3) and Y (15 x 3)
  ~ U[-0.5, 0.5]^3;
- a fitted case: iclr25's ``make_shape("bumpy_sphere", 80, seed=0)`` points and normals,
  normalised and tripled as the Neural-Splines protocol (bounding-box centre, 1 / longest side,
  x and x ± 0.005 n with targets 0, ±0.005), solved by the official ``solve`` with reg 1e-7
  for (order 1/2, h 1.0: the NKF default) and (3/2, h 0.5), then ``evaluate`` at 200 queries
  ~ U[-0.45, 0.45]^3 (normalised units; stored with the input-space queries).
The official float32 evaluation (its GPU dtype) is stored beside the float64 one.

    python tools/fidelity/matern.py --official /path/to/matern-surface-reconstruction
"""

import torch
from _common import commit, parse, save, stub

args = parse(__doc__)
stub("cupy")  # CUDA-only arc-cosine angle kernel, imported by the package, unused here
from models.kernels.matern_kernel import MaternKernel  # noqa: E402

from iclr25.matern import make_shape  # noqa: E402  (inputs only)


def kernel(order, h, reg=1e-7):
    return MaternKernel({"model": {"kernel": {"reg_weight": reg,
                                              "kwargs": {"order": order, "h": h}}}})


g = torch.Generator().manual_seed(0)
X = torch.rand(20, 3, generator=g, dtype=torch.float64) - 0.5
Y = torch.rand(15, 3, generator=g, dtype=torch.float64) - 0.5
out = {"X": X, "Y": Y}
for tag, order in (("05", "1/2"), ("15", "3/2"), ("25", "5/2"), ("inf", "inf")):
    out[f"gram_{tag}"] = kernel(order, 0.5)._compute_gram_matrix(X, Y)

P, N, _ = make_shape("bumpy_sphere", 80, seed=0)
P, N = P.double(), N.double()
N = N / N.norm(dim=1, keepdim=True)
lo, hi = P.amin(0), P.amax(0)
Xn = (P - (lo + hi) / 2) / float((hi - lo).max())
off = 0.005
Xa = torch.cat([Xn, Xn + off * N, Xn - off * N])
y = torch.cat([torch.zeros(80), torch.full((80,), off), torch.full((80,), -off)]).double()
Qn = torch.rand(200, 3, generator=g, dtype=torch.float64) * 0.9 - 0.45
out.update(points=P, normals=N, queries=Qn * float((hi - lo).max()) + (lo + hi) / 2)
for tag, order, h in (("05", "1/2", 1.0), ("15", "3/2", 0.5)):
    k = kernel(order, h)
    k.solve(Xa[None], y[None, :, None], None)
    out[f"f_{tag}"] = k.evaluate(Qn[None])[0, :, 0]
    out[f"alpha_{tag}"] = k.result["alpha"][0, :, 0]
    k32 = kernel(order, h)
    k32.solve(Xa[None].float(), y[None, :, None].float(), None)
    out[f"f32_{tag}"] = k32.evaluate(Qn[None].float())[0, :, 0]
save(args.out, "matern", commit(args.official), **out)
