"""V3 fixture: Irislucent/variance-versus-invariance ``model/v3_loss.py`` (``mpd`` and
``V3Loss._compute_loss_pure``), values and gradients.

Official code run unchanged. Inputs (seed 0): z_c, z_c_vq (6 samples x 5 fragments x 4),
z_s (6 x 5 x 3), all N(0, 1) with z_s given a per-sample offset; relativity 15 (every hinge
active), weights 1 on the four V3 terms (recon and commit terms zeroed). float64 throughout,
plus ``mpd`` on z = 2 + N(0, 1) (64 x 8 x 16) in float64 and float32: the float32 kernel's
error bound is tested against the float64 value.

    python tools/fidelity/v3.py --official /path/to/variance-versus-invariance
"""

import torch
from _common import commit, parse, save

args = parse(__doc__)
from model.v3_loss import V3Loss, mpd  # noqa: E402

g = torch.Generator().manual_seed(0)
zc = torch.randn(6, 5, 4, generator=g, dtype=torch.float64)
zq = zc + 0.1 * torch.randn(6, 5, 4, generator=g, dtype=torch.float64)
zs = torch.randn(6, 5, 3, generator=g, dtype=torch.float64) \
    + torch.randn(6, 1, 3, generator=g, dtype=torch.float64)
a, b, c = (t.clone().requires_grad_(True) for t in (zc, zq, zs))
cfg = {"relativity": 15.0, "weights": {k: 1.0 for k in
       ("content_loss", "style_loss", "sample_loss", "fragment_loss")}}
zero = torch.zeros(())
out = V3Loss(cfg).compute_loss(zero, a, b, zero, c, zero)
out["total_loss"].backward()
big = 2 + torch.randn(64, 8, 16, generator=g, dtype=torch.float64)
save(args.out, "v3", commit(args.official), z_c=zc, z_c_q=zq, z_s=zs,
     **{k: out[f"{k}_loss"].detach() for k in ("content", "style", "sample", "fragment", "total")},
     grad_z_c=a.grad, grad_z_c_q=b.grad, grad_z_s=c.grad,
     mpd_x=big, mpd64=mpd(big), mpd32=mpd(big.float()))
