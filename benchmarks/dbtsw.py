"""Benchmark: Db-TSW vs POT's sliced Wasserstein at an equal number of directions.

Same inputs, same process, torch float32 on CPU: forward + backward time of
``db_tsw(n_trees=L/4, n_lines=4)`` against ``ot.sliced_wasserstein_distance(n_projections=L)``
(p = 1 for both), relative error of each to the exact W1 (``ot.emd2``, Euclidean cost; for
n <= 2000), the growth exponent of time with n, and the size of Db-TSW's largest intermediate
(T·k·(n_s + n_t) entries: memory O(T·k·n), no T×k×n×d tensor). The issue's target: Db-TSW
no slower than POT SW at L = 400, n = 10⁵, d = 50.

    python benchmarks/dbtsw.py --quick
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import ot
import torch

from iclr25.dbtsw import db_tsw


def _time(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _pair(n: int, d: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g)
    Y = torch.randn(n, d, generator=g) * 1.5 + 0.5
    return X, Y


def run(ns, dims, L, repeats, seed=0):
    rows = []
    for d in dims:
        for n in ns:
            X, Y = _pair(n, d, seed)
            P = torch.randn(d, L, generator=torch.Generator().manual_seed(seed + 1))
            P = P / P.norm(dim=0, keepdim=True)

            def ours(X=X, Y=Y):
                Xr = X.clone().requires_grad_()
                v = db_tsw(Xr, Y, n_trees=L // 4, n_lines=4, p=1, seed=seed)
                v.backward()
                return float(v.detach())

            def pot(X=X, Y=Y, P=P):
                Xr = X.clone().requires_grad_()
                v = ot.sliced_wasserstein_distance(Xr, Y, n_projections=L, p=1, projections=P)
                v.backward()
                return float(v.detach())

            t_ours, t_pot = _time(ours, repeats), _time(pot, repeats)
            err_ours = err_pot = float("nan")
            if n <= 2000:
                w1 = float(ot.emd2([], [], ot.dist(X.double().numpy(), Y.double().numpy(),
                                                   metric="euclidean")))
                err_ours, err_pot = abs(ours() - w1) / w1, abs(pot() - w1) / w1
            mem_mb = (L // 4) * 4 * (2 * n + 1) * 4 / 2**20  # one float32 (T, k, N) tensor
            rows.append((d, n, t_ours, t_pot, err_ours, err_pot, mem_mb))
            print(f"d={d:>3} n={n:>7}  Db-TSW {t_ours * 1e3:9.1f} ms  POT SW {t_pot * 1e3:9.1f} ms"
                  f"  POT/Db-TSW {t_pot / t_ours:5.2f}x  rel.err to W1: Db-TSW {err_ours:.3f}"
                  f" SW {err_pot:.3f}  (T,k,N) tensor {mem_mb:.1f} MB", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n up to 10^4, one repeat")
    ap.add_argument("--target", action="store_true", help="only the target row (1e5, d=50)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    L = 400
    repeats = 1 if args.quick or args.target else 3
    ns = (1000, 10_000) if args.quick else (1000, 10_000, 100_000)
    print(f"Db-TSW ({L // 4} trees x 4 lines) vs POT SW ({L} directions), fwd+bwd, float32, "
          f"{args.threads} thread(s), best of {repeats}")
    rows = run((100_000,), (50,), L, 1) if args.target else run(ns, (3, 50), L, repeats)
    print("\ngrowth of time with n (log-log slope; n log n reads ~1.0-1.1):")
    for d in (3, 50):
        sub = sorted({(r[1], r) for r in rows if r[0] == d})
        if len(sub) >= 2:
            n = np.log([s[0] for s in sub])
            for col, name in ((2, "Db-TSW"), (3, "POT SW")):
                t = np.log([s[1][col] for s in sub])
                print(f"  d={d:>3} {name:7s} slope {np.polyfit(n, t, 1)[0]:.2f}")
    target = [r for r in rows if r[0] == 50 and r[1] == 100_000]
    if target:
        r = target[-1]
        ratio = r[3] / r[2]
        print(f"\nTARGET (n=1e5, d=50, L=400): POT SW / Db-TSW time = {ratio:.2f}x -> "
              f"{'met' if ratio >= 1 else 'NOT met'} (Db-TSW no slower than POT SW)")


if __name__ == "__main__":
    main()
