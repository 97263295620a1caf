"""Low-light whole-network fixture: huaqlili/unsupervised-light-enhance-ICLR2025
``net/lformer.py:net`` (the network the released weights are the ``state_dict`` of) at an
odd and an even size, as its own ``eval.py`` runs it: the whole image, no padding.

Official modules run unchanged on the CPU: ``torch.Tensor.cuda`` is the identity (the
prior's band masks call ``.cuda()``), ``dct_util.py``'s functions are executed from the
checkout without the demo below them (it reads image files at import), thop is stubbed.
The prior's B2 band permutes coefficients within anti-diagonals by ``torch.randperm`` drawn
afresh on every call; here ``torch.randperm(k)`` returns ``k − 1, ..., 0``, for which
``shuffle_one_frequency_level`` is the identity (ours: the test makes its shuffle the
identity too), so the outputs can be compared number for number.

Inputs (float64): the paper's sizes (``net()``: widths 64/48/32, 2 blocks); each official
parameter, in ``state_dict`` order, is ``base + 0.05 * N(0, 1)`` from a ``torch.Generator``
seeded 0, base 1 for LayerNorm weights, skip scales and temperatures, else 0, rounded to
float32 (the precision ``load_official``'s network keeps), and the curve net's last bias
0.7 (so that α = ReLU(z) > 0); the test repeats the recipe and loads it with
``load_official``. Images x ~ 0.3 · U[0, 1), generator seed 1: 1 × 3 × 51 × 71 (odd)
then 1 × 3 × 48 × 64 (even). Outputs: the enhanced image I and the reflectance R at both
sizes (float32 to keep the file small; the test's tolerance allows for it).

    python tools/fidelity/lowlight_net.py --official /path/to/unsupervised-light-enhance-ICLR2025
"""

import sys
import types

import numpy as np
import torch
from _common import commit, parse, save, stub

args = parse(__doc__)
stub("thop", "torchvision")   # profiling; dct_util imports transforms for its demo
torch.Tensor.cuda = lambda self, *a, **k: self          # CPU: .cuda() is the identity
src = (args.official / "dct_util.py").read_text()
dct_util = types.ModuleType("dct_util")
exec(compile(src.split("\nimport os\n")[0], str(args.official / "dct_util.py"), "exec"),
     dct_util.__dict__)                                 # the functions, not the demo below
sys.modules["dct_util"] = dct_util
from net.lformer import net  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.randperm = lambda n, *a, **k: torch.arange(n - 1, -1, -1)   # B2: the identity
ONES = ("norm1.body.weight", "norm2.body.weight", "skip_scale", "skip_scale2", "temperature")

model = net().eval()
g = torch.Generator().manual_seed(0)
with torch.no_grad():
    for k, p in model.state_dict().items():
        w = (1.0 if k.endswith(ONES) else 0.0) + 0.05 * torch.randn(p.shape, generator=g)
        p.copy_(w.float())         # float32 values: load_official's float32 net holds them
    model.L_enhance_net.tail[2].bias.fill_(float(torch.tensor(0.7, dtype=torch.float32)))
gi = torch.Generator().manual_seed(1)
out = {"names": np.array(list(model.state_dict())),
       "shapes": np.array([str(tuple(p.shape)) for p in model.state_dict().values()])}
for tag, (h, w) in (("odd", (51, 71)), ("even", (48, 64))):
    x = 0.3 * torch.rand(1, 3, h, w, generator=gi)
    with torch.no_grad():
        _, _, refl, _, enhanced = model(x)       # L, L, R, X, I
    out[f"I_{tag}"] = enhanced.float()
    out[f"R_{tag}"] = refl.float()
save(args.out, "lowlight_net", commit(args.official), **out)
