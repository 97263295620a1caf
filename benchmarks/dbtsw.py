"""Benchmark: Db-TSW vs POT's sliced Wasserstein at an equal number of directions.

Same inputs, same process, torch float32 on CPU: forward + backward time of
``db_tsw(n_trees=L/4, n_lines=4)`` against ``ot.sliced_wasserstein_distance(n_projections=L)``
(p = 1 for both; alternating calls, median of 3, CPU and wall), relative error of each to the
exact W1 (``ot.emd2``, Euclidean cost; for n <= 2000: the two are different estimators, so
"agreement" is each one's distance to the exact value), the growth exponent of time with n, and
the measured peak RSS of each at n = 10^4, d = 50 (spawned processes). The issue's target: Db-TSW
no slower than POT SW at L = 400, n = 10⁵, d = 50.

    python benchmarks/dbtsw.py --quick
"""

from __future__ import annotations

import argparse

import numpy as np
import ot
import torch
from _timing import compare, peak_rss_mb, row, timed_row

from iclr25.dbtsw import db_tsw

M = "dbtsw"


def _pair(n: int, d: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g)
    Y = torch.randn(n, d, generator=g) * 1.5 + 0.5
    return X, Y


def _ours(X, Y, L, seed):
    Xr = X.clone().requires_grad_()
    v = db_tsw(Xr, Y, n_trees=L // 4, n_lines=4, p=1, seed=seed)
    v.backward()
    return float(v.detach())


def _pot(X, Y, L, P):
    Xr = X.clone().requires_grad_()
    v = ot.sliced_wasserstein_distance(Xr, Y, n_projections=L, p=1, projections=P)
    v.backward()
    return float(v.detach())


def _dirs(d: int, L: int, seed: int) -> torch.Tensor:
    P = torch.randn(d, L, generator=torch.Generator().manual_seed(seed + 1))
    return P / P.norm(dim=0, keepdim=True)


def _mem_job(side: str, n: int, d: int, L: int) -> None:
    torch.set_num_threads(1)
    X, Y = _pair(n, d, 0)
    _ours(X, Y, L, 0) if side == "ours" else _pot(X, Y, L, _dirs(d, L, 0))


def run(ns, dims, L, repeats, seed=0):
    rows = []
    for d in dims:
        for n in ns:
            X, Y = _pair(n, d, seed)
            P = _dirs(d, L, seed)
            agreement = "different estimators of W1 at equal L"
            if n <= 2000:
                w1 = float(ot.emd2([], [], ot.dist(X.double().numpy(), Y.double().numpy(),
                                                   metric="euclidean")))
                e_o, e_p = abs(_ours(X, Y, L, seed) - w1) / w1, abs(_pot(X, Y, L, P) - w1) / w1
                agreement = f"rel. error to exact W1: Db-TSW {e_o:.3f}, SW {e_p:.3f}"
            t_o, t_p = compare(lambda X=X, Y=Y: _ours(X, Y, L, seed),
                               lambda X=X, Y=Y, P=P: _pot(X, Y, L, P), repeats)
            target = 1.0 if (n, d) == (100_000, 50) else None
            timed_row(M, f"fwd+bwd d={d} n={n} L={L}", t_o, t_p, target=target,
                      peer_name="POT sliced_wasserstein_distance", agreement=agreement)
            rows.append((d, n, t_o.cpu, t_p.cpu))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n up to 10^4, one repeat")
    ap.add_argument("--target", action="store_true", help="only the target row (1e5, d=50)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    L = 400
    repeats = 1 if args.target else 3
    ns = (1000, 10_000) if args.quick else (1000, 10_000, 100_000)
    print(f"Db-TSW ({L // 4} trees x 4 lines) vs POT SW ({L} directions), fwd+bwd, float32, "
          f"{args.threads} thread(s), median of {repeats}")
    rows = run((100_000,), (50,), L, 1) if args.target else run(ns, (3, 50), L, repeats)
    n_mem = 10_000
    row(M, f"peak RSS fwd+bwd d=50 n={n_mem} L={L}", peak_rss_mb(_mem_job, "ours", n_mem, 50, L),
        peak_rss_mb(_mem_job, "pot", n_mem, 50, L), peer_name="POT sliced_wasserstein_distance",
        unit="MB", agreement="measured, spawned process")
    print("\ngrowth of time with n (log-log slope; n log n reads ~1.0-1.1):")
    for d in (3, 50):
        sub = sorted({(r[1], r) for r in rows if r[0] == d})
        if len(sub) >= 2:
            n = np.log([s[0] for s in sub])
            for col, name in ((2, "Db-TSW"), (3, "POT SW")):
                t = np.log([s[1][col] for s in sub])
                print(f"  d={d:>3} {name:7s} slope {np.polyfit(n, t, 1)[0]:.2f}")


if __name__ == "__main__":
    main()
