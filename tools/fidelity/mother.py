"""MoTHer fixture: eliahuhorwitz/MoTHer's kurtosis, distances and directed tree on a toy zoo.

Official functions run unchanged: ``utils.py:calc_ku`` (kurtosis score),
``clustering.py:calc_full_distance_matrix`` (L1 distance with ``LORA = False``, rank distance
with ``LORA = True``), and ``MDST.py:build_tree`` (the MDST with the kurtosis penalty, lam 0.3,
``rev=False`` and ``rev=True``). Only their loaders are replaced: ``pickle.load`` returns a
model graph of the zoo below and ``AutoModel.from_pretrained(path)`` returns the zoo's model
(transformers is stubbed). Needs pandas and tqdm.

Zoo (seed 0): a root with 3 children, each with 2 grandchildren, 10 models, names in the
official ``r-i-j`` scheme; each model has two 8x8 layers and one 8x4 (non-square, ignored).
Children add N(0, 0.05^2) noise plus heavy-tailed outliers to the root's weights (so kurtosis
changes along edges), grandchildren add N(0, 0.02^2) noise to their parent's. For the rank
distance, edges add rank-1 updates instead. float32 weights, as real checkpoints.

    python tools/fidelity/mother.py --official /path/to/MoTHer
"""

import os
import pickle
import tempfile
from types import SimpleNamespace

import numpy as np
import torch
from _common import commit, parse, save, stub

args = parse(__doc__)
stub("transformers")
import clustering  # noqa: E402
import pandas as pd  # noqa: E402
from MDST import build_tree  # noqa: E402
from utils import calc_ku  # noqa: E402

g = torch.Generator().manual_seed(0)
SHAPES = {"a.weight": (8, 8), "b.weight": (8, 8), "c.weight": (8, 4)}


def child_of(parent, scale, outliers, rank1):
    out = {}
    for k, W in parent.items():
        if rank1:
            u, v = torch.randn(W.shape[0], 1, generator=g), torch.randn(1, W.shape[1], generator=g)
            out[k] = W + 0.1 * u @ v
        else:
            d = scale * torch.randn(W.shape, generator=g)
            if outliers:
                d += torch.where(torch.rand(W.shape, generator=g) < 0.05, 1.0, 0.0) * 0.5
            out[k] = W + d
    return out


def zoo(rank1):
    names, models, parents = ["0-X-X"], {}, {"0-X-X": None}
    models["0-X-X"] = {k: torch.randn(s, generator=g) * 0.2 for k, s in SHAPES.items()}
    for i in range(3):
        c = f"0-{i}-X"
        models[c] = child_of(models["0-X-X"], 0.05, True, rank1)
        names.append(c)
        parents[c] = "0-X-X"
        for j in range(2):
            gc = f"0-{i}-{j}"
            models[gc] = child_of(models[c], 0.02, False, rank1)
            names.append(gc)
            parents[gc] = c
    return names, {k: {n: t.float() for n, t in v.items()} for k, v in models.items()}, parents


def graph(names, parents):
    node = {n: SimpleNamespace(children=[], metadata=SimpleNamespace(model_path=n)) for n in names}
    for n, p in parents.items():
        if p is not None:
            node[p].children.append(node[n])
    return SimpleNamespace(get_roots=lambda: [node["0-X-X"]])


def official_distance(names, models, parents, lora):
    clustering.LORA = lora
    clustering.pickle = SimpleNamespace(load=lambda f: graph(names, parents))
    clustering.AutoModel = SimpleNamespace(from_pretrained=lambda p: SimpleNamespace(
        state_dict=lambda: dict(models[p])))
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        open("graph.pkl", "wb").write(pickle.dumps(0))
        clustering.calc_full_distance_matrix("graph.pkl", lora=lora)
        D = pd.read_csv(f'{"lora_" if lora else ""}dist_checkpoint_full.csv', index_col=0)
        os.chdir(cwd)
    return D.loc[names, names].to_numpy(dtype=np.float64)


out = {}
for tag, rank1 in (("ft", False), ("lora", True)):
    names, models, parents = zoo(rank1)
    for k in SHAPES:
        out[f"{tag}_{k}"] = np.stack([models[n][k].numpy() for n in names])
    out[f"{tag}_ku"] = np.array([calc_ku(SimpleNamespace(state_dict=lambda m=models[n]: m))
                                 for n in names], dtype=np.float64)
    out[f"{tag}_dist"] = official_distance(names, models, parents, lora=rank1)
names, models, parents = zoo(False)   # only names/parents reused below
out["names"] = np.array(names)
ku = pd.Series(out["ft_ku"], index=names)
D = pd.DataFrame(out["ft_dist"], index=names, columns=names)
for rev in (False, True):
    edges, acc = build_tree(ku, D, 0.3, {f"{p} -> {c}" for c, p in parents.items() if p}, rev=rev)
    par = {e.split(" -> ")[1]: e.split(" -> ")[0] for e in edges}
    out[f"parents_rev{int(rev)}"] = np.array([names.index(par[n]) if n in par else -1
                                              for n in names])
    print(f"rev={rev}: official edge accuracy {acc:.1f}%")
save(args.out, "mother", commit(args.official), **out)
