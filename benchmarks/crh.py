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
import time

import numpy as np
import torch
import torch.nn.functional as F
from scipy import stats
from torch import nn
from torch.func import grad, vmap

from iclr25.crh import AlignmentProbe, alignment_score, power_law_exponent


def timeit(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def timeit_pair(fa, fb, repeat):
    """Best-of-``repeat`` times of two functions, run alternately (fair under shared load)."""
    ta = tb = float("inf")
    out_a = out_b = None
    for _ in range(repeat):
        t = time.perf_counter()
        out_a = fa()
        ta = min(ta, time.perf_counter() - t)
        t = time.perf_counter()
        out_b = fb()
        tb = min(tb, time.perf_counter() - t)
    return ta, out_a, tb, out_b


def normcov(v):
    v = v.detach().double()
    n = v.norm(dim=1, keepdim=True)
    v = torch.where(n > 0, v / n, v)
    mu = v.mean(0)
    return v.T @ v / len(v) - torch.outer(mu, mu)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    n, width, repeat = (2000, 64, 15) if args.quick else (20000, 256, 5)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                          nn.Linear(width, 10))
    X, y = torch.randn(n, 32), torch.randint(0, 10, (n,))
    loader = [(X[i:i + 500], y[i:i + 500]) for i in range(0, n, 500)]
    rows = []

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
    t_probe, res, t_ref, ref = timeit_pair(lambda: probe.run(loader)["2"], reference, repeat)
    dev = max(float((res.matrices[k] - ref[k]).abs().max()) for k in ref)
    rows.append(("4 covariances, layer 64x64" if args.quick else f"4 covariances, {width}^2",
                 t_probe, "torch.func vmap(grad)", t_ref, f"max |Δ| {dev:.1e}"))

    A, B = res.matrices["H_b"], res.matrices["Z_b"]
    mask = ~np.eye(A.shape[0], dtype=bool)
    t_ours, ours = timeit(lambda: float(alignment_score(A, B)), 20)
    An, Bn = A.numpy(), B.numpy()
    t_sp, peer = timeit(lambda: stats.pearsonr(An[mask], Bn[mask])[0], 20)
    rows.append(("alignment_score", t_ours, "scipy pearsonr", t_sp, f"|Δ| {abs(ours - peer):.1e}"))

    t_ours, fit = timeit(lambda: power_law_exponent(A, B), 20)

    def peer_fit():
        lam, V = np.linalg.eigh(Bn)
        a = np.einsum("ji,jk,ki->i", V, An, V)
        keep = (lam > 1e-6 * lam.max()) & (a > 0)
        return stats.linregress(np.log(lam[keep]), np.log(a[keep])).slope

    t_sp, slope = timeit(peer_fit, 20)
    rows.append(("power_law_exponent", t_ours, "numpy eigh + linregress", t_sp,
                 f"|Δ| {abs(fit.exponent - slope):.1e}"))

    print(f"n={n} samples, hidden width {width}, best of repeats, 1 thread")
    print(f"{'ours':28s} {'s':>9s}   {'peer':24s} {'s':>9s} {'peer/ours':>9s}  agreement")
    for name, t1, peer_name, t2, agree in rows:
        print(f"{name:28s} {t1:9.4f}   {peer_name:24s} {t2:9.4f} {t2 / t1:9.2f}  {agree}")


if __name__ == "__main__":
    main()
