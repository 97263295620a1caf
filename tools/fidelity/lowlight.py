"""Low-light fixture: huaqlili/unsupervised-light-enhance-ICLR2025 ``net/lformer.py``:
``N_net`` (denoiser, TransformerBlocks), ``R_net`` (reflectance, crossTransformerBlocks with
the prior as queries) and ``L_enhance_net`` (the curve exponent alpha).

Official modules run unchanged. Stubbed: ``dct_util.py`` (it runs a CUDA demo on image files
at import; only the DCT prior, not tested here, uses it) and thop (profiling).

Inputs (float64): width 8, 2 blocks, 1 head; x ~ U[0, 0.3] (2 x 3 x 12 x 12) and a prior
y ~ N(0, 1) (2 x 8 x 12 x 12), generator seed 1; the curve net at width 32 (the paper's: its
tail is width // 2 = 16, as ours) gets L ~ U[0.05, 1] (4 x 1 x 10 x 10). Weights are not
stored: each official parameter, in ``state_dict`` order, is ``base + 0.1 * N(0, 1)`` from a
``torch.Generator`` seeded 0 (a fresh one per network: N, R, the curve net), base 1 for
LayerNorm weights, skip scales and temperatures, else 0; the test repeats the recipe.
Outputs: N_net(x), R_net(x, y), L_enhance_net(L) (= ReLU(z)); and, with the curve net's
weights from seed 5 (z < 0 on every input), the official alpha (0: the ReLU died) beside
ours, softplus(z), pinned (made with iclr25's ``CurveNet``: the deliberate deviation).

    python tools/fidelity/lowlight.py --official /path/to/unsupervised-light-enhance-ICLR2025
"""

import numpy as np
import torch
from _common import commit, parse, save, stub

args = parse(__doc__)
stub("thop")
stub("dct_util", force=True)   # runs a CUDA demo on image files at import
from net.lformer import L_enhance_net, N_net, R_net  # noqa: E402

from iclr25.lowlight.networks import CurveNet  # noqa: E402  (the pinned case only)

torch.set_default_dtype(torch.float64)
ONES = ("norm1.body.weight", "norm2.body.weight", "skip_scale", "skip_scale2", "temperature")


def fill(net, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for k, p in net.state_dict().items():
            p.copy_((1.0 if k.endswith(ONES) else 0.0) + 0.1 * torch.randn(p.shape, generator=g))
    return net


gi = torch.Generator().manual_seed(1)
x = 0.3 * torch.rand(2, 3, 12, 12, generator=gi)
y = torch.randn(2, 8, 12, 12, generator=gi)
L = 0.05 + 0.95 * torch.rand(4, 1, 10, 10, generator=gi)
out = {"x": x, "y": y, "L": L}
for tag, net, call in (("noise", N_net(num=8), lambda n: n(x)),
                       ("reflectance", R_net(num=8), lambda n: n(x, y)),
                       ("alpha", L_enhance_net(num=32), lambda n: n(L))):
    fill(net)
    with torch.no_grad():
        out[tag] = call(net)
    out[f"{tag}_names"] = np.array(list(net.state_dict()))
    out[f"{tag}_shapes"] = np.array([str(tuple(p.shape)) for p in net.state_dict().values()])
# the pinned deviation: with the weight seed 5 the pre-activation z < 0 for every L, so the
# official alpha = ReLU(z) is 0 (dead, no gradient); ours is softplus(z) > 0
with torch.no_grad():
    out["alpha_dead"] = fill(L_enhance_net(num=32), seed=5)(L)
    net = CurveNet(width=32)
    net.load_state_dict({k: v for k, v in zip(
        net.state_dict(), [p for k, p in fill(L_enhance_net(num=32), seed=5).state_dict().items()
                           if k.startswith(("head", "tail"))], strict=True)})
    out["ours_alpha_dead"] = net(L)
save(args.out, "lowlight", commit(args.official), **out)
