"""COX fixture: zhuohuangai/Out-of-Modal-Generalization ``models/vib.py:VIB.forward`` (the
"connect" bottleneck), commit 6637d0e.

No git snapshot of the repository can be fetched here; the file was read from the search
service's code index at that commit (``read_file``) and saved as ``PATH/models/vib.py``;
pass ``--official PATH``. Official module run unchanged.

Inputs (float64): D = 16, bottleneck K = 8 (the official hidden width 1024 is fixed). The
weights are not stored (8 MB): every parameter, in the official ``state_dict`` order
(encode then decode, weight then bias), is ``0.02 * N(0, 1)`` drawn from a
``torch.Generator`` seeded 0, a recipe the test repeats. h ~ N(0, I) (6 x 16, generator
seed 1); the reparameterisation noise is the global RNG seeded 2 (the official
``randn_like``). Outputs: the prediction, and mu / log-variance (``encode``'s two halves).

    python tools/fidelity/cox.py --official /path/to/Out-of-Modal-Generalization
"""

import torch
from _common import parse, save

args = parse(__doc__)
from models.vib import VIB  # noqa: E402

torch.set_default_dtype(torch.float64)
vib = VIB(16, 8)
g = torch.Generator().manual_seed(0)
with torch.no_grad():
    for p in vib.state_dict().values():
        p.copy_(0.02 * torch.randn(p.shape, generator=g))
h = torch.randn(6, 16, generator=torch.Generator().manual_seed(1))
torch.manual_seed(2)
with torch.no_grad():
    pred = vib(h)
    stats = vib.encode(h)
save(args.out, "cox", "6637d0e985fd68c313e0835696575fe8bd77a01c (read from the code index)",
     h=h, pred=pred, mu=stats[:, :8], logvar=stats[:, 8:])
