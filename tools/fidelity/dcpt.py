"""DCPT fixture: MILab-PKU/dcpt ``basicsr/archs/degrad_classify_arch.py:PromptIR_NoImg_DC``,
the degradation classifier ("decoder") on tapped restorer features.

The official module runs unchanged; ``basicsr/__init__.py`` (which imports the whole
training stack: cv2, datasets, models) is bypassed by registering empty ``basicsr`` and
``basicsr.archs`` packages whose ``__path__`` points into the checkout, so only
``utils/registry.py`` and the architecture file execute. Needs fvcore (PyPI).

Inputs (float64): feature_dims (4, 8, 16), 2 bottlenecks per stage, 5 classes; features of
2 images at 16, 8 and 4 pixels ~ N(0, 1) (generator seed 1). Weights are not stored: each
official parameter, in ``state_dict`` order, is ``base + 0.1 * N(0, 1)`` from a
``torch.Generator`` seeded 0, with base 1 for LayerNorm weights and 0 otherwise (the
parameter names and shapes are stored, the test repeats the recipe). Output: the logits.

    python tools/fidelity/dcpt.py --official /path/to/dcpt
"""

import sys
import types

import numpy as np
import torch
from _common import commit, parse, save

args = parse(__doc__)
for name in ("basicsr", "basicsr.utils", "basicsr.archs"):
    mod = types.ModuleType(name)
    mod.__path__ = [str(args.official / name.replace(".", "/"))]
    sys.modules[name] = mod
from basicsr.archs.degrad_classify_arch import PromptIR_NoImg_DC  # noqa: E402

torch.set_default_dtype(torch.float64)
dims = (4, 8, 16)
net = PromptIR_NoImg_DC(list(dims), num_res_blocks=2, num_classes=5).eval()
g = torch.Generator().manual_seed(0)
sd = net.state_dict()
with torch.no_grad():
    for k, p in sd.items():
        p.copy_((1.0 if k.endswith("norm.weight") else 0.0) + 0.1 * torch.randn(p.shape,
                                                                                generator=g))
gf = torch.Generator().manual_seed(1)
feats = [torch.randn(2, c, s, s, generator=gf) for c, s in zip(dims, (16, 8, 4), strict=True)]
with torch.no_grad():
    logits = net(None, [f.clone() for f in feats])
save(args.out, "dcpt", commit(args.official), logits=logits,
     **{f"feature{i}": f for i, f in enumerate(feats)},
     param_names=np.array(list(sd)), param_shapes=np.array([str(tuple(p.shape)) for p in
                                                             sd.values()]))
