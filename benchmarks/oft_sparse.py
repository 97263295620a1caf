"""Benchmark: OFT-Sinkhorn on sparse networks, arc-list iterations vs dense vs OR-Tools.

Instances are NETGEN-like (``iclr25.oft.instances.make_netgen``: chains from the sources to
the sinks plus random arcs, integer costs in [1, 100]; capacitated: random arcs carry 10-50
against a mean source supply of 100, which raises the optimum by tens of percent), written as
DIMACS ``.min`` files and read back by ``iclr25.oft.read_dimacs(..., sparse=True)``.

1. Crossover: CPU time of one scaling iteration (uncapacitated: two kernel products;
   capacitated: the clip and a third) in the dense (B, n, n) layout and on the arc list, at
   n = 1000 and arc densities from 0.1% to 30% of the node pairs; the states after the timed
   steps are asserted equal (1e-10 relative) before the figures print.
2. DIMACS instances with 10⁴ and 10⁵ arcs: per iteration, sparse vs dense; to convergence
   (reg 1e-3, stop at balance violation 1e-6·Σs⁺, at most 20000 iterations), sparse vs dense
   vs OR-Tools ``SimpleMinCostFlow`` (exact on these integer data) and HiGHS; OFT's cost gap
   to OR-Tools' optimum. At 10⁵ arcs (n = 10⁴) the dense layout is timed per iteration only:
   its Newton finish factorises a 10⁴ x 10⁴ matrix per step; capacitated, the dense layout
   runs to convergence only with ``--dense-capacitated`` (its n² clip per scaling step).
   The DIMACS files go to a temporary folder removed afterwards.

All times are process CPU time (median of ``--repeat``), one torch thread; each table prints
the 1-minute load average.

    pip install -e ".[all,test,bench]"     # OR-Tools
    python benchmarks/oft_sparse.py --quick   # 10^4 arcs, short crossover sweep
    python benchmarks/oft_sparse.py           # 10^4 and 10^5 arcs
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import torch
from _timing import cpu_median, load, row

from iclr25.oft import min_cost_flow, oft_sinkhorn, read_dimacs
from iclr25.oft.capacity import WARMUP
from iclr25.oft.flow import _build, _Options
from iclr25.oft.instances import make_netgen
from iclr25.oft.io import write_dimacs
from iclr25.oft.problem import _check_problem
from iclr25.oft.scaling import _Scaling

M = "oft_sparse"  # rows apart from benchmarks/oft.py's, so `run_all --only` re-runs either alone


def _load() -> str:
    return f"load {load():.2f}"


def _scaling(s, C, cap, layout):
    """A scaling iteration's state at reg 1e-2, one stage, past the capacity warm-up."""
    opt = _Options(reg=1e-2, virtual_flow=1e-8, method="sinkhorn", epsilon_scaling=False,
                   cumulative=False, newton=False, iters=10**9, stopThr=0.0, layout=layout)
    pb, _, _ = _build(_check_problem(s, C, cap, None), opt)
    st = _Scaling(pb)
    st.start(0, pb.stages[0])
    return st


def _steps(st, k):
    for it in range(WARMUP + 1, WARMUP + 1 + k):  # every step clips when there are caps
        st.step(it)
        st.q_step()


def per_iteration(s, C, cap, k, repeat, dense=True):
    """CPU seconds per iteration, (sparse, dense or None), states asserted equal."""
    out = []
    states = []
    for layout in ("sparse", "dense") if dense else ("sparse",):
        st = _scaling(s, C, cap, layout)
        _steps(st, 2)  # warm-up
        out.append(cpu_median(lambda st=st: _steps(st, k), repeat) / k)
        states.append(st)
    if dense:
        a, b = states
        for x, y in ((a.u, b.u), (a.v, b.v)):
            err = float(((x - y).abs() / y.abs().clamp_min(1e-300)).max())
            assert err <= 1e-10, f"sparse and dense iterations disagree ({err:.2g})"
        states.clear()
    return out[0], (out[1] if dense else None)


def crossover(n, densities, k, repeat):
    print(f"\n## one iteration, dense (n x n) vs arc list, n = {n} ({_load()}, 1 thread, "
          f"median of {repeat} x {k} steps, CPU ms per iteration)")
    print(f"{'density':>8} {'arcs':>8} {'caps':>5} {'sparse ms':>10} {'dense ms':>9} "
          f"{'dense/sparse':>12}")
    found = {}
    for dens in densities:
        m = max(2 * n, int(dens * n * (n - 1)))
        for capd in (False, True):
            s, C, cap = make_netgen(n, m, capacitated=capd, seed=0)
            t_s, t_d = per_iteration(s, C, cap if capd else None, k, repeat)
            print(f"{dens:8.3%} {m:8d} {'yes' if capd else 'no':>5} {t_s * 1e3:10.3f} "
                  f"{t_d * 1e3:9.3f} {t_d / t_s:12.2f}", flush=True)
            if t_d < t_s and capd not in found:
                found[capd] = dens
    for capd in (False, True):
        where = (f"dense is faster from density {found[capd]:.1%}" if capd in found
                 else "sparse is faster at every density measured")
        print(f"crossover ({'capacitated' if capd else 'uncapacitated'}): {where}")


def _ortools(s, C, cap):
    """OR-Tools' optimum on the integer data, or None without OR-Tools."""
    try:
        from ortools.graph.python import min_cost_flow as mcf
    except ImportError:
        return None
    Cc = C.coalesce()
    i, j = Cc.indices().numpy()
    caps = (cap.coalesce().values().numpy() if cap is not None
            else np.full(i.size, s.clamp_min(0).sum().item()))
    smcf = mcf.SimpleMinCostFlow()
    smcf.add_arcs_with_capacity_and_unit_cost(i, j, caps.astype(np.int64),
                                              Cc.values().numpy().astype(np.int64))
    smcf.set_nodes_supplies(np.arange(len(s)), s.numpy().astype(np.int64))
    if smcf.solve() != smcf.OPTIMAL:
        raise AssertionError("OR-Tools found no optimum")
    return float(smcf.optimal_cost())


STOP = 1e-6  # OFT's stopThr (x Σs⁺), as in the claims


def _oft(s, C, cap, layout, iters):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # non-convergence is in the table
        return oft_sinkhorn(s, C, 1e-3, capacity=cap, stopThr=STOP, numItermax=iters,
                            layout=layout, log=True)


def _timed(fn, repeat):
    """(median CPU seconds of ``repeat`` calls, the last call's result)."""
    out = {}
    t = cpu_median(lambda: out.update(result=fn()), repeat)
    return t, out["result"]


def dimacs_table(sizes, dense_max_nodes, k, repeat, iters, dense_caps=False):
    print(f"\n## NETGEN-like DIMACS instances ({_load()}, 1 thread, CPU seconds, median of "
          f"{repeat}; OFT reg 1e-3, stop at violation 1e-6·Σs⁺, <= {iters} iterations)")
    print(f"{'nodes':>6} {'arcs':>7} {'caps':>5} {'solver':<16} {'s / iter':>9} {'s total':>9} "
          f"{'iters':>6} {'conv':>5} {'viol/Σs⁺':>9} {'gap to OR':>10}")
    with tempfile.TemporaryDirectory(prefix="oft_sparse_") as tmp:  # removed afterwards
        for n, m in sizes:
            _dimacs_rows(Path(tmp), n, m, dense_max_nodes, k, repeat, iters, dense_caps)


def _dimacs_rows(tmp, n, m, dense_max_nodes, k, repeat, iters, dense_caps):
    """The rows of one instance size, written to and read back from ``tmp``."""
    for capd in (False, True):
        s0, C0, cap0 = make_netgen(n, m, capacitated=capd, seed=0)
        f = tmp / f"netgen_{n}_{m}_{int(capd)}.min"
        write_dimacs(f, s0, C0, cap0 if capd else None, comment="make_netgen seed 0")
        s, C, cap = read_dimacs(f, sparse=True)
        cap = cap if capd else None
        dense = n <= dense_max_nodes and (dense_caps or not capd)
        opt = _ortools(s, C, cap)
        rows = []
        per_s, per_d = per_iteration(s, C, cap, k, 3)
        runs = {"sparse": per_s, "dense": per_d}
        for layout in ("sparse", "dense") if dense else ("sparse",):
            t, (_, lg) = _timed(partial(_oft, s, C, cap, layout, iters), repeat)
            rows.append((f"OFT {layout}", runs[layout], t, lg))
        if not dense:
            rows.append(("OFT dense", per_d, None, None))
        if opt is not None:
            t, _ = _timed(partial(_ortools, s, C, cap), repeat)
            rows.append(("OR-Tools", None, t, {"cost": opt}))
        t, (_, lp) = _timed(partial(min_cost_flow, s, C, capacity=cap, log=True), 1)
        rows.append(("HiGHS", None, t, lp))
        ref = opt if opt is not None else rows[-1][3]["cost"]
        if dense:  # agreement: both layouts stop within stopThr of one fixed point
            d = abs(rows[0][3]["cost"] - rows[1][3]["cost"]) / ref
            assert d <= 10 * STOP, f"sparse and dense OFT costs differ by {d:.2g}"
        mass = float(s.clamp_min(0).sum())
        for name, per, tot, lg in rows:
            cells = [f"{n:6d} {C._nnz():7d} {'yes' if capd else 'no':>5} {name:<16}",
                     f"{per:9.2e}" if per is not None else f"{'':>9}",
                     f"{tot:9.2f}" if tot is not None else f"{'n/a':>9}"]
            if lg is not None and "n_iter" in lg:
                cells += [f"{lg['n_iter']:6d}", f"{str(lg['converged']):>5}",
                          f"{lg['balance_violation'] / mass:9.1e}"]
            else:
                cells += [f"{'':>6}", f"{'':>5}", f"{'':>9}"]
            cells.append(f"{(lg['cost'] - ref) / ref:10.2e}" if lg is not None else "")
            print(" ".join(cells), flush=True)
        _speedups(rows, n, C._nnz(), capd)


def _speedups(rows, n, m, capd):
    by = {r[0]: r for r in rows}
    sp = by["OFT sparse"]
    parts = []
    case = f"{m} arcs{', capacitated' if capd else ''}"
    if by["OFT dense"][1] is not None:
        parts.append(f"per iteration {by['OFT dense'][1] / sp[1]:.1f}x faster than dense")
        row(M, f"sparse iteration, {case}", sp[1] * 1e3, by["OFT dense"][1] * 1e3,
            peer_name="dense iteration", unit="ms CPU",
            agreement="states equal to 1e-10", note="median of 3 x 20 steps")
    if by["OFT dense"][2] is not None:
        parts.append(f"to convergence {by['OFT dense'][2] / sp[2]:.1f}x faster than dense")
        row(M, f"sparse to convergence, {case}", sp[2], by["OFT dense"][2],
            peer_name="dense to convergence", unit="s CPU",
            agreement=f"costs within {10 * STOP:g}")
    if "OR-Tools" in by:
        parts.append(f"{sp[2] / by['OR-Tools'][2]:.1f}x slower than OR-Tools")
        opt = by["OR-Tools"][3]["cost"]
        row(M, f"sparse to convergence, {case}", sp[2], by["OR-Tools"][2],
            peer_name="OR-Tools SimpleMinCostFlow", unit="s CPU",
            agreement=f"cost gap {(sp[3]['cost'] - opt) / opt:.1e}",
            note="OFT converged" if sp[3]["converged"] else "OFT hit its 20000-iteration cap")
    print(f"-> n={n}, {m} arcs, {'capacitated' if capd else 'uncapacitated'}: sparse OFT "
          + ", ".join(parts))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="10^4 arcs only, short sweep")
    p.add_argument("--repeat", type=int, default=3, help="timings per figure (median)")
    p.add_argument("--iters", type=int, default=20000, help="OFT iteration cap")
    p.add_argument("--dense-max-nodes", type=int, default=2000,
                   help="run the dense layout to convergence up to this many nodes")
    p.add_argument("--dense-capacitated", action="store_true",
                   help="also run the capacitated dense layout to convergence")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    if args.quick:
        crossover(1000, (0.003, 0.01, 0.03, 0.1), 20, args.repeat)
        dimacs_table([(1000, 10**4)], args.dense_max_nodes, 20, 1, args.iters,
                     args.dense_capacitated)
    else:
        crossover(1000, (0.002, 0.005, 0.01, 0.02, 0.03, 0.1, 0.3), 50, args.repeat)
        dimacs_table([(1000, 10**4), (10**4, 10**5)], args.dense_max_nodes, 20, args.repeat,
                     args.iters, args.dense_capacitated)
    print(f"\n(total {time.perf_counter() - t0:.0f} s wall)")


if __name__ == "__main__":
    main()
