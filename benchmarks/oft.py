# ruff: noqa: B023  (closures are timed at once, inside their loop iteration)
"""Benchmark: OFT-Sinkhorn vs exact min-cost flow solvers on the paper's layered instances.

Peers, same instances, same process: HiGHS (``scipy.optimize.linprog``, our
``min_cost_flow``), OR-Tools ``SimpleMinCostFlow`` and networkx ``network_simplex`` (costs
x1e4 and supplies x1e6, rounded: both are integer solvers), and for the uncapacitated case
shortest paths + ``ot.emd2`` (OT on path costs). A missing peer is noted and skipped.
Then the issue's targets: one uncapacitated iteration vs four (B,n,n)·(B,n) products,
16 instances in one call vs 16 calls, and time growth with n. Last, the throughput table
(issue 39): instances solved per second at n = 300, B in {1, 16, 256}, one batched OFT call
(reg 1e-3, stop at balance violation 1e-6·Σs⁺, <= 20000 iterations) against OR-Tools solving
the same instances one by one, on CPU and, where present, CUDA.

    python benchmarks/oft.py --quick
    python benchmarks/oft.py --throughput-only [--batches 1 16 256] [--iters 20000]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from _timing import (
    compare,
    dispatch_note,
    measure,
    op_compare,
    op_times,
    profile_note,
    row,
)

from iclr25.oft import flow_cost, make_layered, min_cost_flow, oft_sinkhorn

M = "oft"


def _timed(fn, *args, **kw):
    """Result and CPU seconds of one call (every solver in a table is timed this way)."""
    out = []
    t = measure(lambda: out.append(fn(*args, **kw)), 1, warmup=0)
    return out[0], t.cpu


def _integer_problem(s, C, cap):
    """Arc lists with costs x1e4 and supplies x1e6 rounded (balanced exactly)."""
    Cn, sn = C.numpy(), s.numpy()
    i, j = np.nonzero(np.isfinite(Cn) & ~np.eye(len(sn), dtype=bool))
    cost = np.rint(Cn[i, j] * 1e4).astype(np.int64)
    sup = np.rint(sn * 1e6).astype(np.int64)
    sup[np.argmax(sup)] -= sup.sum()
    if cap is None:
        caps = np.full(i.size, int(sup.clip(0).sum()), dtype=np.int64)
    else:
        caps = np.floor(np.broadcast_to(cap.numpy(), Cn.shape)[i, j] * 1e6).astype(np.int64)
    return i, j, cost, sup, caps


def ortools_cost(s, C, cap):
    try:
        from ortools.graph.python import min_cost_flow as mcf
    except ImportError:
        return None
    i, j, cost, sup, caps = _integer_problem(s, C, cap)
    smcf = mcf.SimpleMinCostFlow()
    smcf.add_arcs_with_capacity_and_unit_cost(i, j, caps, cost)
    smcf.set_nodes_supplies(np.arange(len(sup)), sup)
    if smcf.solve() != smcf.OPTIMAL:
        return float("nan")
    return smcf.optimal_cost() / 1e10


def networkx_cost(s, C, cap):
    import networkx as nx

    i, j, cost, sup, caps = _integer_problem(s, C, cap)
    G = nx.DiGraph()
    for k, v in enumerate(sup):
        G.add_node(k, demand=-int(v))
    if cap is None:
        G.add_weighted_edges_from(zip(i.tolist(), j.tolist(), cost.tolist(), strict=True))
    else:
        G.add_edges_from((a, b, {"weight": w, "capacity": c}) for a, b, w, c in
                         zip(i.tolist(), j.tolist(), cost.tolist(), caps.tolist(), strict=True))
    c, _ = nx.network_simplex(G)
    return c / 1e10


def pot_path_cost(s, C):
    try:
        import ot
    except ImportError:
        return None
    from scipy.sparse.csgraph import shortest_path

    Cn, sn = C.numpy(), s.numpy()
    W = np.where(np.isfinite(Cn), Cn, 0.0)
    src, snk = np.flatnonzero(sn > 0), np.flatnonzero(sn < 0)
    D = shortest_path(W, directed=True, indices=src)[:, snk]
    return float(ot.emd2(sn[src], -sn[snk], D))


def solve_table(layers, iters, threads_note):
    print(f"\n## exact solvers vs OFT-Sinkhorn ({threads_note}); gap to HiGHS, "
          "violation = max balance violation / Σs⁺ (cap viol for capacitated)")
    print(f"{'n':>5} {'caps':>5} {'solver':<22} {'time s':>8} {'cost':>10} {'gap':>9} "
          f"{'viol':>9} {'iters':>6}")
    for m in layers:
        s, C = make_layered(m, m, m, seed=0)
        n = 3 * m
        F0, t_lp = _timed(min_cost_flow, s, C)
        opt0 = flow_cost(F0, C)
        for capped in (False, True):
            cap = 0.25 * F0.max() if capped else None
            if capped:
                Fx, t_lp = _timed(min_cost_flow, s, C, capacity=cap)
                opt = flow_cost(Fx, C)
            else:
                opt = opt0
            rows = [("HiGHS (scipy)", t_lp, opt, 0.0, None)]
            c, t = _timed(ortools_cost, s, C, cap)
            rows.append(("OR-Tools (int)", t, c, None, None) if c is not None
                        else ("OR-Tools: not installed", None, None, None, None))
            c, t = _timed(networkx_cost, s, C, cap)
            rows.append(("networkx simplex (int)", t, c, None, None))
            if not capped:
                c, t = _timed(pot_path_cost, s, C)
                rows.append(("shortest path + emd2", t, c, None, None) if c is not None
                            else ("POT: not installed", None, None, None, None))
            for reg in (3e-3, 1e-3):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    (F, lg), t = _timed(oft_sinkhorn, s, C, reg, capacity=cap,
                                        numItermax=iters, log=True)
                v = lg["balance_violation"]
                if capped:
                    v = max(v, lg["capacity_violation"])
                rows.append((f"OFT-Sinkhorn reg={reg:g}", t, lg["cost"], v, lg["n_iter"]))
            t_or, c_or = rows[1][1], rows[1][2]
            if c_or is not None and n == 300:
                t_oft, c_oft = rows[-1][1], rows[-1][2]
                row(M, f"solve n={n} {'capacitated' if capped else 'uncapacitated'}", t_oft,
                    t_or, unit="s CPU", peer_name="OR-Tools SimpleMinCostFlow (int)",
                    agreement=f"cost gap to HiGHS: OFT {(c_oft - opt) / opt:.2e}, OR-Tools "
                    f"{(c_or - opt) / opt:.2e}", note="one call each, reg 1e-3")
            for name, t, c, v, it in rows:
                gap = "" if c is None else f"{(c - opt) / opt:9.2e}"
                print(f"{n:5d} {'yes' if capped else 'no':>5} {name:<22} "
                      f"{'' if t is None else f'{t:8.3f}':>8} "
                      f"{'' if c is None else f'{c:10.6f}':>10} {gap:>9} "
                      f"{'' if v is None else f'{v:9.1e}':>9} {'' if it is None else it:>6}")


def iteration_cost(sizes, reps):
    print("\n## one uncapacitated iteration vs four (B,n,n)·(B,n) products "
          "(target <= 1.5x); time per iteration by n (target O(n²))")
    print(f"{'B':>3} {'n':>5} {'iter ms':>9} {'4 bmv ms':>9} {'ratio':>6}")
    for B, m in sizes:
        inst = [make_layered(m, m, m, seed=k) for k in range(B)]
        s = torch.stack([i[0] for i in inst])
        C = torch.stack([i[1] for i in inst])
        K = torch.rand(B, 3 * m, 3 * m, dtype=torch.float64)
        v = torch.rand(B, 3 * m, 1, dtype=torch.float64)
        # plain scaling iterations: no Newton hand-over, one reg (what the heading times); a
        # call of `reps` iterations, setup included (so per_it is an upper bound), against
        # `reps` rounds of four products, alternating, median of 3 CPU times each
        kw = dict(stopThr=0.0, newton=False, epsilon_scaling=False)

        def bmv():
            for _ in range(reps):
                for _ in range(4):
                    torch.bmm(K, v)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            t_o, t_p = compare(lambda: oft_sinkhorn(s, C, 1e-2, numItermax=reps, **kw), bmv, 3)
        per_it, bmv_t = t_o.cpu / reps, t_p.cpu / reps
        # where the time goes at small n: operator count x per-call cost, both sides
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            calls = (dispatch_note(lambda: oft_sinkhorn(s, C, 1e-2, numItermax=reps, **kw),
                                   reps, "iteration", per_it),
                     dispatch_note(bmv, reps, "iteration", bmv_t))
        row(M, f"one uncapacitated iteration B={B} n={3 * m}", 1e3 * per_it, 1e3 * bmv_t,
            unit="ms CPU", peer_name="four (B,n,n)·(B,n) products", target=1 / 1.5,
            agreement="the products an iteration needs", note=f"{reps} iterations per call, "
            f"setup included; median of 3; profile: ours {calls[0]}; the products {calls[1]}")
        print(f"{B:3d} {3 * m:5d} {per_it * 1e3:9.3f} {bmv_t * 1e3:9.3f} {per_it / bmv_t:6.2f}")
    print("memory (by construction, not measured on CPU): an uncapacitated iteration holds K "
          "only (O(B·n) vectors besides); every 50th builds P and keeps the last finite P; "
          "capacities add cap and the clip bound -> <= 4 (B,n,n) float64 buffers.")


def batch_speedup(m, B, iters):
    print(f"\n## {B} instances (n={3 * m}) in one call vs {B} calls (target >= 4x)")
    inst = [make_layered(m, m, m, seed=k) for k in range(B)]
    s = torch.stack([i[0] for i in inst])
    C = torch.stack([i[1] for i in inst])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # CPU time of each side, alternating (median of 3), so the load hits both alike
        t_one, t_many = compare(lambda: oft_sinkhorn(s, C, 3e-3, numItermax=iters),
                                lambda: [oft_sinkhorn(s[k], C[k], 3e-3, numItermax=iters)
                                         for k in range(B)], 3)
        its = [int(oft_sinkhorn(s[k], C[k], 3e-3, numItermax=iters, log=True)[1]["n_iter"])
               for k in range(B)]
        prof = profile_note(*op_compare(lambda: oft_sinkhorn(s, C, 3e-3, numItermax=iters),
                                        lambda: [oft_sinkhorn(s[k], C[k], 3e-3, numItermax=iters)
                                                 for k in range(B)], 1))
    # the batch steps every instance until the slowest converges: B·max(its) instance-steps
    # against sum(its) one by one, the work the batching must win back
    row(M, f"{B} instances n={3 * m} in one call", t_one.cpu, t_many.cpu, unit="s CPU",
        peer_name=f"{B} calls one by one", target=4, wall=(t_one.wall, t_many.wall),
        agreement="the same solver and stopThr", note=f"median of 3; iterations one by one "
        f"{min(its)}-{max(its)} (sum {sum(its)}), batched {B} x {max(its)} = {B * max(its)} "
        f"instance-iterations ({B * max(its) / sum(its):.2f}x the work); {prof}")


def line_search_share(m, seeds):
    """CPU share of the Newton finish's line search in the uncapacitated solve (target <=
    30%): ``newton._line_search`` wrapped by a CPU clock, reg 1e-3, stopThr 1e-6."""
    import iclr25.oft.newton as newton

    inner = newton._line_search
    spent = [0.0]

    def timed(*a):
        t = time.process_time()
        out = inner(*a)
        spent[0] += time.process_time() - t
        return out

    print(f"\n## line search share of the uncapacitated solve, n={3 * m} (target <= 30%)")
    newton._line_search = timed
    try:
        for seed in seeds:
            s, C = make_layered(m, m, m, seed=seed)
            oft_sinkhorn(s, C, 1e-3, stopThr=1e-6)  # warm-up
            spent[0] = 0.0
            t = time.process_time()
            for _ in range(3):
                oft_sinkhorn(s, C, 1e-3, stopThr=1e-6)
            share = spent[0] / (time.process_time() - t)
            prof = profile_note(op_times(lambda s=s, C=C: oft_sinkhorn(s, C, 1e-3, stopThr=1e-6),
                                         1), top=5)
            row(M, f"line search share n={3 * m} seed {seed}", 100 * share, None,
                peer_name="-", unit="% of solve CPU", target="≤ 30%", met=share <= 0.30,
                note="3 solves; the line search evaluates the plan on the active arcs only "
                f"(each trial one exp, one gather and one index_add per arc); whole solve's {prof}")
    finally:
        newton._line_search = inner


def cuda_check(iters):
    if not torch.cuda.is_available():
        print("\n(no CUDA device: skipping the n=5000 GPU timing)")
        return
    print("\n## CUDA, n=5000 (reg 3e-3)")
    s, C = make_layered(1667, 1666, 1667, seed=0)
    c, t_or = _timed(ortools_cost, s, C, None)
    sd, Cd = s.cuda(), C.cuda()
    oft_sinkhorn(sd, Cd, 3e-3, numItermax=10)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        t = time.perf_counter()
        F, lg = oft_sinkhorn(sd, Cd, 3e-3, numItermax=iters, log=True)
        torch.cuda.synchronize()
        t_gpu = time.perf_counter() - t
    peak = torch.cuda.max_memory_allocated() / 2**20
    print(f"OFT-Sinkhorn GPU {t_gpu:.2f} s ({lg['n_iter']} iterations, viol "
          f"{lg['balance_violation']:.1e}, peak {peak:.0f} MiB = {peak / (5000**2 * 8 / 2**20):.1f}"
          f" n² buffers); OR-Tools CPU {'n/a' if c is None else f'{t_or:.2f} s'}"
          + ("" if c is None else f", gap {(lg['cost'] - c) / c:.3%}"))


def throughput(m, batches, iters, devices):
    print(f"\n## instances solved per second, n={3 * m}: one batched OFT call (reg 1e-3, "
          f"stopThr 1e-6, <= {iters} iterations) vs OR-Tools one by one (CPU); times are "
          "process CPU time on CPU (robust to a loaded machine), synchronised wall time on CUDA")
    print(f"{'B':>4} {'device':>6} {'OFT s':>8} {'OFT inst/s':>10} {'converged':>9} "
          f"{'worst gap':>9} {'iters':>6} {'OR-Tools s':>10} {'OR inst/s':>9} {'OFT/OR':>7}")
    for B in batches:
        inst = [make_layered(m, m, m, seed=k) for k in range(B)]
        s = torch.stack([i[0] for i in inst])
        C = torch.stack([i[1] for i in inst])
        opt = [ortools_cost(s[k], C[k], None) for k in range(B)]  # values, and warm-up
        for dev in devices:
            sd, Cd = s.to(dev), C.to(dev)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                oft_sinkhorn(sd, Cd, 1e-3, numItermax=10)  # warm-up (CUDA context, kernels)
                out = []

                def oft(sd=sd, Cd=Cd, dev=dev, out=out):
                    out.append(oft_sinkhorn(sd, Cd, 1e-3, numItermax=iters, stopThr=1e-6,
                                            log=True))
                    if dev != "cpu":
                        torch.cuda.synchronize()

                # one timing each, the same way (CPU and wall); CPU time is the figure on CPU
                t_o, t_p = compare(oft, lambda s=s, C=C: [ortools_cost(s[k], C[k], None)
                                                          for k in range(B)], 1, warmup=0)
                _, lg = out[-1]
                t_oft = t_o.cpu if dev == "cpu" else t_o.wall
                t_or = t_p.cpu
            conv = int(lg["converged"].sum())
            gap = "n/a"
            if opt[0] is not None:
                o = torch.tensor(opt, dtype=torch.float64)
                gap = f"{float(((lg['cost'].cpu() - o) / o).max()):9.2%}"
                if dev == "cpu":
                    row(M, f"instances/s n={3 * m} B={B} (batched call)", B / t_oft, B / t_or,
                        better="higher", unit="instances/s CPU",
                        peer_name="OR-Tools SimpleMinCostFlow one by one", agreement=f"worst "
                        f"cost gap {gap.strip()}; {conv}/{B} converged",
                        wall=(B / t_o.wall, B / t_p.wall), note="one timing each")
            or_rate = "n/a" if opt[0] is None else f"{B / t_or:9.2f}"
            ratio = "n/a" if opt[0] is None else f"{(B / t_oft) / (B / t_or):7.3f}"
            print(f"{B:4d} {dev:>6} {t_oft:8.2f} {B / t_oft:10.3f} {conv:>4d}/{B:<4d} {gap:>9} "
                  f"{int(lg['n_iter'].max()):6d} "
                  f"{t_or if opt[0] is not None else float('nan'):10.2f} {or_rate:>9} "
                  f"{ratio:>7}", flush=True)


BATCHES = [1, 16, 256]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="n in {60, 300}, fewer repetitions")
    p.add_argument("--throughput-only", action="store_true",
                   help="only the instances/s table (issue 39)")
    p.add_argument("--batches", type=int, nargs="+", default=BATCHES,
                   help="batch sizes of the throughput table (--quick: 1 16)")
    p.add_argument("--iters", type=int, default=20000, help="OFT iteration cap (throughput)")
    args = p.parse_args(argv)
    threads = torch.get_num_threads()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if args.throughput_only:
        throughput(100, args.batches, args.iters, devices)
        return
    if args.quick:
        solve_table((20, 100), 20000, f"{threads} threads")
        iteration_cost(((1, 20), (1, 100), (1, 200), (16, 20)), 200)
        line_search_share(100, (0, 1, 2))
        batch_speedup(20, 16, 2000)
        if args.batches == BATCHES:  # B = 256 takes > 10 CPU minutes: not a quick check
            args.batches = BATCHES[:2]
    else:
        solve_table((100, 200, 500), 20000, f"{threads} threads")
        iteration_cost(((1, 20), (1, 100), (1, 200), (1, 500), (16, 20)), 200)
        line_search_share(100, (0, 1, 2))
        batch_speedup(20, 16, 20000)
    cuda_check(20000)
    throughput(100, args.batches, args.iters, devices)
    print("\nOn CPU exact solvers win at these sizes (no CPU speed-up is claimed).")


if __name__ == "__main__":
    main()
