"""MoTHer fixture, ICLR version: ``MoTHer_FullFT.py:calc_dist_and_ku`` (mean over layers of
the per-layer RMS weight difference; kurtosis of the ``output.dense`` layers), then
``MDST.py:build_tree`` (lam 0.3, rev False).

Provenance: the ICLR camera-ready ``MoTHer_FullFT.py`` (commit a8a63267..., per the
project's spec) is not in the git snapshot (HEAD 82fa4e2 is the arXiv version); its text was
read from the search service's code index (file id 54883253994). ``--official PATH`` is a
copy of the HEAD checkout with that file saved over ``MoTHer_FullFT.py``. That version calls
``_get_layer_kinds()`` without arguments (its own utils.py was not readable; HEAD's asserts on
it), so the name is bound here to HEAD's ViT list, the four kinds the spec gives
(attention.query/key/value, output.dense). Loaders replaced as in ``mother.py``;
transformers and shortuuid (model_graph.py) stubbed. Needs pandas 2.2, networkx < 3.4, tqdm.

Zoo (seed 0, float32 weights as checkpoints): 10 models named ``r-i-j`` (a root, 3 children,
2 grandchildren each), HF ViT names ``encoder.layer.{0..11}.attention.{kind}.weight`` (6 x 6);
children add N(0, 0.05^2) noise and sparse +0.5 outliers, grandchildren N(0, 0.02^2).

    python tools/fidelity/mother_iclr.py --official /path/to/MoTHer-with-ICLR-FullFT
"""

import numpy as np
import torch
from _common import parse, save, stub

args = parse(__doc__)
stub("transformers", "shortuuid")
from types import SimpleNamespace  # noqa: E402

import MoTHer_FullFT as off  # noqa: E402
from utils import _get_layer_kinds  # noqa: E402

off._get_layer_kinds = lambda: _get_layer_kinds(vit=True)
g = torch.Generator().manual_seed(0)
KEYS = [f"encoder.layer.{b}.attention.{k}.weight" for b in range(12)
        for k in _get_layer_kinds(vit=True)]


def child(parent, scale, outliers):
    out = {}
    for k, W in parent.items():
        d = scale * torch.randn(W.shape, generator=g)
        if outliers:
            d += (torch.rand(W.shape, generator=g) < 0.05).float() * 0.5
        out[k] = W + d
    return out


names, models, parents = ["0-X-X"], {}, {"0-X-X": None}
models["0-X-X"] = {k: 0.2 * torch.randn(6, 6, generator=g) for k in KEYS}
for i in range(3):
    c = f"0-{i}-X"
    names.append(c)
    models[c], parents[c] = child(models["0-X-X"], 0.05, True), "0-X-X"
    for j in range(2):
        gc = f"0-{i}-{j}"
        names.append(gc)
        models[gc], parents[gc] = child(models[c], 0.02, False), c
node = {n: SimpleNamespace(children=[], metadata=SimpleNamespace(model_path=n)) for n in names}
for n, p in parents.items():
    if p is not None:
        node[p].children.append(node[n])
graph = SimpleNamespace(get_roots=lambda: [node["0-X-X"]])
off.AutoModel = SimpleNamespace(from_pretrained=lambda p: SimpleNamespace(
    state_dict=lambda: dict(models[p])))
ku, dist = off.calc_dist_and_ku(graph, 0)
edges, acc = off.build_tree(ku, dist, 0.3, {f"{p} -> {c}" for c, p in parents.items() if p})
par = {e.split(" -> ")[1]: e.split(" -> ")[0] for e in edges}
print(f"official edge accuracy {acc:.1f}%")
save(args.out, "mother_iclr", "code-index:54883253994 (MoTHer_FullFT.py, ICLR version; "
     "rest of the checkout 82fa4e29f865590e90168dc9fc42ff06666f1158)",
     names=np.array(names), keys=np.array(KEYS),
     weights=np.stack([np.stack([models[n][k].numpy() for k in KEYS]) for n in names]),
     dist=dist.loc[names, names].to_numpy(np.float64), ku=ku[names].to_numpy(np.float64),
     parents=np.array([names.index(par[n]) if n in par else -1 for n in names]))
