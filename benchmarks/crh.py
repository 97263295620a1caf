"""Benchmark the CRH probe against the obvious alternatives a user would write.

There is no CRH library to compare with, so the peers are:
- the probe's streamed covariances vs per-sample gradients from ``torch.func`` (vmap of grad)
  with all samples stored, then covariances (speed, memory-free streaming, max deviation);
- ``alignment_score`` vs ``scipy.stats.pearsonr`` on the off-diagonal entries;
- ``power_law_exponent`` vs ``scipy.stats.linregress`` on the same (log λ, log vᵀAv) points.

Usage: ``python benchmarks/crh.py [--quick]``.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
import torch.nn.functional as F
from _timing import agree, compare, timed_row
from scipy import stats
from torch import nn
from torch.func import grad, vmap

from iclr25.crh import AlignmentProbe, alignment_score, power_law_exponent

M = "crh"


def normcov(v):
    v = v.detach().double()
    n = v.norm(dim=1, keepdim=True)
    v = torch.where(n > 0, v / n, v)
    mu = v.mean(0)
    return v.T @ v / len(v) - torch.outer(mu, mu)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    n, width, repeat = (2000, 64, 15) if args.quick else (20000, 256, 5)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                          nn.Linear(width, 10))
    X, y = torch.randn(n, 32), torch.randint(0, 10, (n,))
    loader = [(X[i:i + 500], y[i:i + 500]) for i in range(0, n, 500)]
    probe = AlignmentProbe(model, layers="2")

    def reference():
        with torch.no_grad():
            h_a = torch.relu(model[0](X))
            h_b = model[2](h_a)
        tail = nn.Sequential(model[3], model[4])
        g_b = -vmap(grad(lambda hb, t: F.cross_entropy(tail(hb)[None], t[None])))(h_b, y)
        W = model[2].weight.detach()
        return {"H_a": normcov(h_a), "H_b": normcov(h_b), "G_b": normcov(g_b),
                "G_a": normcov(g_b @ W)}

    # ours also scores the six relations; the reference stops at the covariances
    res = probe.run(loader)["2"]
    dev = max(agree(res.matrices[k], v, atol=1e-6, what=k) for k, v in reference().items())
    t_o, t_p = compare(lambda: probe.run(loader), reference, repeat)
    timed_row(M, f"4 covariances, n={n}, layer {width}x{width}", t_o, t_p,
              peer_name="torch.func vmap(grad), all samples stored",
              agreement=f"max |Δ| {dev:.0e}")

    A, B = res.matrices["H_b"], res.matrices["Z_b"]
    mask = ~np.eye(A.shape[0], dtype=bool)
    An, Bn = A.numpy(), B.numpy()
    dev = agree(alignment_score(A, B), stats.pearsonr(An[mask], Bn[mask])[0], atol=1e-10,
                what="alignment score")
    t_o, t_p = compare(lambda: float(alignment_score(A, B)),
                       lambda: stats.pearsonr(An[mask], Bn[mask])[0], 21)
    timed_row(M, "alignment_score", t_o, t_p, peer_name="scipy pearsonr off-diagonal",
              agreement=f"|Δ| {dev:.0e}")

    def peer_fit():
        lam, V = np.linalg.eigh(Bn)
        a = (V * (An @ V)).sum(0)
        keep = (lam > 1e-6 * lam.max()) & (a > 0)
        return stats.linregress(np.log(lam[keep]), np.log(a[keep])).slope

    dev = agree(power_law_exponent(A, B).exponent, peer_fit(), atol=1e-8, what="exponent")
    t_o, t_p = compare(lambda: power_law_exponent(A, B), peer_fit, 21)
    timed_row(M, "power_law_exponent", t_o, t_p, peer_name="numpy eigh + scipy linregress",
              agreement=f"|Δ| {dev:.0e}")


if __name__ == "__main__":
    main()
