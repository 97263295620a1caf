"""OFT-Sinkhorn (entropic min-cost flow by matrix iterations) and an exact HiGHS reference.

Conventions (shared by every function here):

- ``s`` (n,) or (B, n): node supply, ``> 0`` at sources, ``< 0`` at sinks, summing to 0.
  A flow ``F`` balances when ``F.sum(-1) - F.sum(-2) == s`` (out-flow minus in-flow);
  networkx's ``demand`` is ``-s``.
- ``C`` (n, n) or (B, n, n): edge costs ``>= 0``; ``inf`` means "no edge". The diagonal is
  ignored (every node carries the paper's virtual self-flow instead). ``C`` may also be a
  torch sparse COO tensor whose stored entries are the arcs; flows then come back sparse.
- ``capacity``: scalar or broadcastable to (…, n, n), ``>= 0``, ``inf`` = uncapacitated.
- ``node_capacity``: scalar or broadcastable to (…, n), a bound on a node's throughput
  ``q`` (its real out-flow), ``>= 0``.

The solver's parts: :mod:`~iclr25.oft.problem` (checks, the problem), :mod:`~iclr25.oft.arcs`
(dense or sparse kernel products), :mod:`~iclr25.oft.scaling` (the iteration),
:mod:`~iclr25.oft.newton` (the Newton finish), :mod:`~iclr25.oft.capacity` (capacities and
their clips), :mod:`~iclr25.oft.bookkeeping` (schedule, counts, history).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from iclr25._checks import as_tensor, check_choice, check_int, check_range, user_stacklevel
from iclr25._contract import RealArray, checked
from iclr25.oft.arcs import Arcs, DenseArcs, SparseArcs, use_sparse
from iclr25.oft.bookkeeping import STAGE_THR, _schedule
from iclr25.oft.capacity import _real, edge_capacity
from iclr25.oft.problem import (
    _check_problem,
    _check_reachable,
    _Checked,
    _on_arc_list,
    _Problem,
    _Stage,
)
from iclr25.oft.scaling import _solve

Method = Literal["sinkhorn", "sinkhorn_log"]
Clip = Literal["exact", "paper"]
Layout = Literal["auto", "dense", "sparse"]


@checked
def oft_sinkhorn(
    s: RealArray,
    C: RealArray,
    reg: float = 1e-3,
    *,
    capacity: RealArray | None = None,
    node_capacity: RealArray | None = None,
    virtual_flow: float = 1e-8,
    method: Method = "sinkhorn",
    epsilon_scaling: bool = True,
    capacity_clip: Clip = "exact",
    newton: bool = True,
    numItermax: int = 20000,  # noqa: N803 (POT's name)
    stopThr: float = 1e-9,  # noqa: N803
    layout: Layout = "auto",
    log: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, dict[str, Any]]:
    """Entropic min-cost flow by OFT-Sinkhorn / capacity-constrained EOFT-Sinkhorn.

    Solves ``min <C, P> + reg·max(C)·Σ P (log P - 1)`` over ``P >= 0`` with flow balance
    ``P 1 - Pᵀ 1 = s``, optional edge capacities ``P <= capacity`` and node throughputs
    ``q <= node_capacity``, by alternating scalings ``P = diag(u) K diag(v)``,
    ``K = exp(-C / (reg·max C))``, with the paper's free throughput ``q`` (closed form, from
    ``u_i v_i = 1``) and a virtual self-flow ``d = virtual_flow`` on every node so that
    isolated nodes do not force flow through real edges (Shi et al., ICLR 2025, OFT-Sinkhorn
    and Capacity-Constrained EOFT-Sinkhorn). Per iteration::

        u = (q + d) / (K v);   v = (q - s + d) / (Kᵀ u);   K_ii = d / (u_i v_i)
        K = min(K₀, cap / (u vᵀ))           # after 20 warm-up steps, with capacities
        (q + d)(q - s + d) = (K v)(Kᵀ u)    # solved without cancellation; q = min(q, node cap)

    Differences from the official code, each measured on the paper's layered instances:

    - ε-scaling (default): reg is annealed ``reg·4^k, …, reg·4, reg`` from the first value
      ``>= 0.1``, each stage warm-started from the last one's potentials and ended at balance
      violation ``<= 1e-4·Σs⁺`` (the last at ``stopThr``), with the scalings absorbed into the
      kernel (no overflow or underflow at any reg). At n = 300, reg = 1e-3 the paper's single
      stage needs > 20000 iterations to reach 1e-6; see ``benchmarks/oft.py``.
    - Newton finish (default): once the scaling's balance violation is ``<= 1e-2·Σs⁺``
      the remaining ε stages are solved by damped Newton steps on the dual potentials
      (``_newton``: a Laplacian solve per step, on the arcs that carry flow), the same fixed
      point (to 1e-10 on the tests' instances). At n = 300, reg = 1e-3, stopThr 1e-6,
      seeds 0-2 the scaling alone ends at violations 6.5e-6 / 7.4e-6 after 20000
      iterations and converges at 10800; with Newton all three converge in 114-124
      iterations. With edge capacities the dual is piecewise smooth (an arc at its cap
      has no curvature) and Newton is semismooth, Levenberg-Marquardt-shifted, through
      the remaining stages like the uncapacitated finish; its active arcs only grow within
      a stage (a subset can leave the capacities no feasible flow; its dual then rises
      without bound): the paper's capacitated iteration, which stalls near violation
      2e-4·Σs⁺ after 20000 iterations on the benchmarks' instances, converges at stopThr
      1e-6 in 126 iterations (layered, n = 300), 366 (NETGEN-like, 10⁴ arcs; 426 dense) and
      406 (10⁵ arcs).
    - The capacity clip starts from the unclipped kernel ``K₀`` at every step (the exact dual
      update of the capacity multipliers); the official ``K = min(K, cap / (u vᵀ))`` is
      cumulative, so a cap that bound once in the transient stays bound and the flow's cost
      rises (the gap this caused is in ``oft/claim.py``). The official clip also uses
      transposed scalings ``cap_ij / (u_j v_i)``, which violates asymmetric capacities.
    - reg is relative to the largest finite edge cost. NETGEN instances read by the official
      ``read_netgen`` give non-edges cost 10× the largest edge cost, so the official reg
      is relative to 10 × max C: official ``reg = r`` there is ``reg = 10·r`` here.
    - ``method="sinkhorn"`` switches to the log domain (with a warning) if the scalings
      overflow or, without ε-scaling, if an underflowed kernel cuts a demand off its supply.

    The result is ``relu(P - Pᵀ)``, which keeps the balance of ``P`` exactly and removes
    2-cycles and self-loops.

    Sparse graphs: with ``layout="sparse"`` every iteration runs on the arc list (gathers and
    ``index_add_``, O(arcs) per iteration on CPU or GPU) instead of (B, n, n) matrices
    (O(n²)); the Newton finish then solves its Laplacian systems by conjugate gradients. Same
    fixed point as the dense layout (to 1e-10 in the tests). ``layout="auto"`` (default) picks
    sparse for a torch sparse ``C`` or when the arcs fill at most
    ``iclr25.oft.arcs.SPARSE_DENSITY`` (2%) of the n(n-1) node pairs, dense otherwise. A
    torch sparse ``C`` (COO, sparse in every dimension) lists the arcs as its stored entries
    (``inf`` entries and the diagonal are dropped) and gives a sparse flow back.

    Args:
        s: (n,) or (B, n) supplies (> 0) and demands (< 0), summing to 0 per instance.
        C: (n, n) or (B, n, n) costs >= 0, ``inf`` = no edge; diagonal ignored. Dense, or
            a torch sparse COO tensor whose stored entries are the arcs.
        reg: entropic regularisation relative to the largest finite cost (> 0).
        capacity: scalar or (…, n, n) edge capacities >= 0 (``inf`` = none); with a sparse
            ``C`` also a torch sparse tensor holding an entry for every arc.
        node_capacity: scalar or (…, n) bounds on node throughput >= 0.
        virtual_flow: the self-flow ``d`` on each node (> 0; the paper's 1e-8).
        method: ``"sinkhorn"`` (the paper's scalings, stabilised by absorption) or
            ``"sinkhorn_log"`` (log-domain, slower).
        epsilon_scaling: anneal reg from about 0.1 down to ``reg`` (False: the paper's single
            stage at ``reg``; kernel entries that underflow then drop their edge).
        capacity_clip: ``"exact"`` (clip the unclipped kernel at every step) or ``"paper"``
            (the official cumulative ``K = min(K, cap / (u vᵀ))``, with consistent indices).
        newton: finish with Newton steps on the dual (not with ``node_capacity`` or the
            paper's cumulative clip; False: the scaling iteration throughout).
        numItermax: maximum number of iterations, all ε stages together.
        stopThr: stop when ``max |P 1 - Pᵀ 1 - s| <= stopThr · Σ s⁺`` (checked every 50).
        layout: ``"auto"``, ``"dense"`` or ``"sparse"``: where the iterations run (above).
        log: also return a dict with ``n_iter``, ``converged``, ``cost``,
            ``balance_violation`` (max absolute), ``capacity_violation``,
            ``node_capacity_violation``, ``dropped_edges`` (without ε-scaling; the Newton
            finish computes the plan in log form, so such edges may carry flow again) and
            ``history`` (iteration, reg, relative violation, cost at every check). Values are
            Python scalars for one instance and (B,) tensors for a batch.

    Returns:
        F: (n, n) or (B, n, n) flow in the dtype of ``C`` (float64 for integer input), on
        its device (a coalesced torch sparse tensor on ``C``'s arcs when ``C`` is sparse);
        or ``(F, log)``.

    Raises:
        ValueError: bad shapes, NaN, negative costs or capacities, ``s`` not summing to 0 or
            all zero, supply without out-edge, demand unreachable (naming the node),
            ``reg``/``virtual_flow`` <= 0, unknown ``method`` or ``layout``, duplicate
            entries in a sparse ``C``.
        TypeError: bool or complex input.

    Examples:
        >>> import torch
        >>> from iclr25.oft import oft_sinkhorn
        >>> inf = float("inf")
        >>> C = torch.tensor([[0., 1., 3.], [inf, 0., 1.], [inf, inf, 0.]])
        >>> s = torch.tensor([1., 0., -1.])
        >>> F = oft_sinkhorn(s, C, reg=1e-2)
        >>> round(float((F * C.nan_to_num(posinf=0)).sum()), 3)   # path 0 -> 1 -> 2
        2.0
        >>> torch.allclose(F.sum(-1) - F.sum(-2), s, atol=1e-8)
        True
    """
    opt = _Options(
        reg=check_range(reg, "reg", 0, low_open=True),
        virtual_flow=check_range(virtual_flow, "virtual_flow", 0, low_open=True),
        method=check_choice(method, "method", Method),
        epsilon_scaling=_flag(epsilon_scaling, "epsilon_scaling"),
        cumulative=check_choice(capacity_clip, "capacity_clip", Clip) == "paper",
        newton=_flag(newton, "newton"),
        iters=check_int(numItermax, "numItermax", 1),
        stopThr=check_range(stopThr, "stopThr", 0),
        layout=check_choice(layout, "layout", Layout))
    chk = _check_problem(s, C, capacity, node_capacity)
    with torch.no_grad():
        pb, dropped, method = _build(chk, opt)
        P, n_iter, conv, hist = _solve(pb, method)
        F = pb.arcs.flow(P)
        del P
        if not pb.arcs.sparse:
            F.diagonal(dim1=-2, dim2=-1).zero_()
    if not bool(conv.all()):
        warnings.warn(f"OFT-Sinkhorn did not reach stopThr={opt.stopThr:g} in {opt.iters} "
                      f"iterations for {int((~conv).sum())} of {len(conv)} instance(s); the "
                      f"flow is off balance (see log['balance_violation'])"
                      + ("; capacities that cannot carry the supply never balance: "
                         "min_cost_flow says whether they can"
                         if capacity is not None or node_capacity is not None else ""),
                      RuntimeWarning, stacklevel=user_stacklevel())
    out = _output(chk, pb.arcs, F)
    if not log:
        return out
    info: dict[str, Any] = {
        "n_iter": n_iter, "converged": conv, "cost": pb.arcs.cost(F),
        "dropped_edges": dropped, **_violations(pb.arcs, F, pb.s, pb.cap, pb.ncap),
    }
    if not chk.batched:
        info = {k: (v[0].item() if isinstance(v, torch.Tensor) else v) for k, v in info.items()}
        hist = {k: [h[0] if isinstance(h, list) else h for h in v] for k, v in hist.items()}
    info["history"] = hist
    return out, info


def _flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class _Options:
    """:func:`oft_sinkhorn`'s checked options."""

    reg: float
    virtual_flow: float
    method: str
    epsilon_scaling: bool
    cumulative: bool  # capacity_clip == "paper"
    newton: bool
    iters: int  # numItermax
    stopThr: float  # noqa: N815
    layout: str


def _build(chk: _Checked, opt: _Options) -> tuple[_Problem, torch.Tensor, str]:
    """The problem the iterations run on, the edges dropped by underflow (B,) and the method
    (the log domain when dropping them would cut a demand off)."""
    arcs, s, cap = chk.arcs, chk.s, chk.cap
    B, n = s.shape
    sparse = use_sparse(opt.layout, chk.sparse_input, arcs.count(), B * n * (n - 1))
    if sparse and not arcs.sparse:
        arcs = SparseArcs.from_dense(arcs)
        cap = None if cap is None else cap[chk.arcs.E]
    elif arcs.sparse and not sparse:
        arcs = DenseArcs.from_sparse(arcs)
        cap = None if cap is None else chk.arcs.to_dense(cap)
    scale = arcs.batch_max(arcs.Cz)
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    mass = s.clamp_min(0).sum(-1)  # Σ s⁺ per instance
    tol = opt.stopThr * mass
    regs = _schedule(opt.reg) if opt.epsilon_scaling else [opt.reg]
    stage_tol = torch.maximum(tol, STAGE_THR * mass)
    stages = [_Stage(r, arcs.per_arc(r * scale), (r * scale).view(B, 1),
                     tol if k == len(regs) - 1 else stage_tol, k == len(regs) - 1)
              for k, r in enumerate(regs)]
    method = opt.method
    dropped = torch.zeros(B, dtype=torch.long, device=s.device)
    if method == "sinkhorn" and not opt.epsilon_scaling:
        dropped, cut = _drop_underflow(arcs, s, stages[0].eps, cap, opt.reg)
        if cut:
            method = "sinkhorn_log"
    if cap is not None and bool(torch.isinf(cap).all()):
        cap = None
    pb = _Problem(arcs=arcs, s=s, d=torch.full_like(s, opt.virtual_flow), cap=cap,
                  ncap=chk.ncap, stages=stages, iters=opt.iters, mass=mass,
                  cumulative=opt.cumulative,
                  newton=opt.newton and chk.ncap is None
                  and not (cap is not None and opt.cumulative))
    return pb, dropped, method


def _drop_underflow(arcs: Arcs, s: torch.Tensor, eps: torch.Tensor, cap: torch.Tensor | None,
                    reg: float) -> tuple[torch.Tensor, bool]:
    """Edges whose single-stage kernel underflows, per instance, and whether that cuts a demand
    off its supply (then the log domain must take over)."""
    alive = torch.exp(-arcs.Cz / eps) > 0
    lost = ~alive if arcs.sparse else arcs.E & ~alive
    dropped = arcs.batch_sum(lost.long())
    if not bool((dropped > 0).any()):
        return dropped, False
    warnings.warn(f"{int(dropped.sum())} edge(s) dropped: exp(-C/(reg·max C)) "
                  f"underflows; use method='sinkhorn_log', a larger reg or "
                  f"epsilon_scaling=True", RuntimeWarning, stacklevel=user_stacklevel())
    try:
        _check_reachable(s, arcs.instance_arcs(~lost if cap is None else ~lost & (cap > 0)),
                         "C")
    except ValueError:
        warnings.warn(f"reg={reg:g} underflows exp(-C/(reg·max C)) and cuts the "
                      f"graph: switching to method='sinkhorn_log'", RuntimeWarning,
                      stacklevel=user_stacklevel())
        return dropped.zero_(), True
    return dropped, False


def _output(chk: _Checked, arcs: Arcs, F: torch.Tensor) -> torch.Tensor:
    """The flow as the caller gave ``C``: dense (n, n) / (B, n, n), or torch sparse."""
    F = F.to(chk.out_dtype)
    if chk.sparse_input:
        return chk.arcs.to_sparse(chk.arcs.gather(F) if not arcs.sparse else F, chk.batched)
    if arcs.sparse:
        F = arcs.to_dense(F)
    return F if chk.batched else F[0]


def _violations(arcs: Arcs, F: torch.Tensor, s: torch.Tensor, cap: torch.Tensor | None,
                ncap: torch.Tensor | None) -> dict[str, torch.Tensor]:
    """:func:`flow_violations` of a flow in the arcs' layout."""
    if not arcs.sparse:
        return flow_violations(F, s, capacity=cap, node_capacity=ncap)
    out = arcs.row_sums(F)
    zero = torch.zeros(arcs.B, dtype=torch.float64, device=F.device)
    res = {"balance_violation": (out - arcs.col_sums(F) - s).abs().amax(-1),
           "capacity_violation": zero, "node_capacity_violation": zero,
           "negativity": arcs.batch_max((-F).clamp_min(0))}
    if cap is not None:
        res["capacity_violation"] = arcs.batch_max((F - cap).clamp_min(0))
    if ncap is not None:
        res["node_capacity_violation"] = (out - ncap).clamp_min(0).amax(-1)
    return res


@checked
def flow_violations(
    F: RealArray, s: RealArray, *, capacity: RealArray | None = None,
    node_capacity: RealArray | None = None,
) -> dict[str, torch.Tensor]:
    """How far a flow is from feasible: balance, edge and node capacity, negativity.

    Args:
        F: (n, n) or (B, n, n) flow, dense or torch sparse (its stored entries).
        s: (n,) or (B, n) supplies.
        capacity: scalar or (…, n, n) edge capacities, or None.
        node_capacity: scalar or (…, n) throughput bounds, or None.

    Returns:
        dict of (B,) float64 tensors (B = 1 for one instance): ``balance_violation``
        ``max|F 1 - Fᵀ 1 - s|``, ``capacity_violation`` ``max(F - cap)⁺``,
        ``node_capacity_violation`` ``max(out-flow - node cap)⁺``, ``negativity``.
    """
    if isinstance(F, torch.Tensor) and F.is_sparse:
        return _sparse_violations(F, s, capacity, node_capacity)
    Ft = as_tensor(F, "F", ndim=(2, 3)).to(torch.float64)
    st = as_tensor(s, "s", ndim=(1, 2)).to(device=Ft.device, dtype=torch.float64)
    if Ft.ndim == 2:
        Ft = Ft.unsqueeze(0)
    if st.ndim == 1:
        st = st.unsqueeze(0)
    if Ft.shape[-1] != Ft.shape[-2] or st.shape[-1] != Ft.shape[-1] or (
            len(st) not in (1, len(Ft)) and len(Ft) != 1):
        raise ValueError(f"F must be (n, n) flows and s (n,) supplies of one n (batched "
                         f"alike), got F {tuple(Ft.shape)} and s {tuple(st.shape)}")
    Ft = Ft.clone()
    Ft.diagonal(dim1=-2, dim2=-1).zero_()
    out = Ft.sum(-1)
    zero = torch.zeros(Ft.shape[0], dtype=torch.float64, device=Ft.device)
    res = {"balance_violation": (out - Ft.sum(-2) - st).abs().amax(-1),
           "capacity_violation": zero, "node_capacity_violation": zero,
           "negativity": (-Ft).clamp_min(0).amax(dim=(-2, -1))}
    if capacity is not None:
        cap = torch.as_tensor(capacity, dtype=torch.float64, device=Ft.device)
        res["capacity_violation"] = (Ft - cap).clamp_min(0).amax(dim=(-2, -1))
    if node_capacity is not None:
        nc = torch.as_tensor(node_capacity, dtype=torch.float64, device=Ft.device)
        res["node_capacity_violation"] = (out - nc).clamp_min(0).amax(-1)
    return res


# --- exact reference ----------------------------------------------------------------------

@checked
def min_cost_flow(
    s: RealArray, C: RealArray, *, capacity: RealArray | None = None,
    node_capacity: RealArray | None = None,
    log: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, dict[str, Any]]:
    """Exact min-cost flow by linear programming (HiGHS via ``scipy.optimize.linprog``).

    Same problem and conventions as :func:`oft_sinkhorn` without the entropy: float costs,
    edge capacities ``F <= capacity`` and node throughput ``F 1 <= node_capacity``.

    Args:
        s: (n,) or (B, n) supplies/demands summing to 0.
        C: (n, n) or (B, n, n) costs >= 0, ``inf`` = no edge; diagonal ignored; dense or
            torch sparse (as in :func:`oft_sinkhorn`).
        capacity: scalar or (…, n, n) edge capacities (torch sparse with a sparse ``C``),
            or None.
        node_capacity: scalar or (…, n) node throughput bounds, or None.
        log: also return ``{"cost": ...}`` (float, or (B,) tensor for a batch).

    Returns:
        F: optimal flow, (n, n) or (B, n, n), dtype of ``C`` (float64 for integers); torch
        sparse on ``C``'s arcs when ``C`` is sparse.

    Raises:
        ValueError: as :func:`oft_sinkhorn`'s input checks, or when the capacities make the
            problem infeasible (naming ``capacity``).
    """
    chk = _check_problem(s, C, capacity, node_capacity)
    arcs, cap = _on_arc_list(chk)
    usable = torch.ones(arcs.count(), dtype=torch.bool) if cap is None else (cap > 0).cpu()
    idx, cost = arcs.idx.cpu().numpy(), arcs.C.cpu().numpy()
    ub = np.full(cost.size, np.inf) if cap is None else cap.cpu().numpy()
    sn = chk.s.cpu().numpy()
    ncapn = chk.ncap.cpu().numpy() if chk.ncap is not None else None
    bounds = np.searchsorted(idx[0], np.arange(arcs.B + 1))
    values, costs = np.zeros(cost.size), []
    for b in range(arcs.B):
        sel = np.arange(bounds[b], bounds[b + 1])[usable[bounds[b]:bounds[b + 1]].numpy()]
        lp = _ArcLP(tails=idx[1, sel], heads=idx[2, sel], cost=cost[sel], s=sn[b], ub=ub[sel],
                    ncap=None if ncapn is None else ncapn[b])
        values[sel], c = _lp(lp, b)
        costs.append(c)
    F = torch.as_tensor(values, dtype=torch.float64, device=arcs.C.device)
    out = _output(chk, arcs, F)
    if not log:
        return out
    cost_t = torch.as_tensor(np.array(costs), device=F.device)
    return out, {"cost": cost_t if chk.batched else float(cost_t[0])}


@dataclass
class _ArcLP:
    """One instance's min-cost flow as arc lists (numpy), for HiGHS."""

    tails: np.ndarray  # (m,) arc tails
    heads: np.ndarray  # (m,) arc heads
    cost: np.ndarray  # (m,)
    s: np.ndarray  # (n,) supplies
    ub: np.ndarray  # (m,) arc capacities (inf = none)
    ncap: np.ndarray | None  # (n,) node throughput bounds


def _lp(lp: _ArcLP, b: int) -> tuple[np.ndarray, float]:
    """Instance ``b``'s min-cost flow by HiGHS: the (m,) arc flows and their cost."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    n, i, j, ncap = lp.s.size, lp.tails, lp.heads, lp.ncap
    m = i.size
    k = np.arange(m)
    A = coo_matrix((np.r_[np.ones(m), -np.ones(m)], (np.r_[i, j], np.r_[k, k])),
                   shape=(n, m)).tocsr()
    A_ub = b_ub = None
    if ncap is not None and np.isfinite(ncap).any():
        rows = np.isfinite(ncap)
        A_ub = coo_matrix((np.ones(m), (i, k)), shape=(n, m)).tocsr()[rows]
        b_ub = ncap[rows]
    res = linprog(lp.cost, A_ub=A_ub, b_ub=b_ub, A_eq=A, b_eq=lp.s,
                  bounds=np.stack([np.zeros(m), lp.ub], 1), method="highs")
    if res.status == 2:
        raise ValueError("capacity/node_capacity make the flow infeasible: supply cannot "
                         f"reach demand within the capacities (instance {b})")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed: {res.message}")
    return np.maximum(res.x, 0), res.fun


@checked
def flow_cost(F: RealArray, C: RealArray) -> torch.Tensor | float:
    """``<C, F>`` over real edges (``inf`` costs and the diagonal skipped).

    ``F`` and ``C`` may be dense or torch sparse (stored entries; a pair ``C`` does not store
    is no edge). Returns a Python float for one (n, n) flow, a (B,) tensor for a batch.
    """
    if isinstance(F, torch.Tensor) and F.is_sparse:
        return _sparse_cost(F, C)
    if isinstance(C, torch.Tensor) and C.is_sparse:  # a dense F: C as dense, inf unstored
        Cc = C.coalesce()
        C = torch.full(C.shape, torch.inf, dtype=torch.float64, device=C.device)
        C[tuple(Cc.indices())] = Cc.values().to(torch.float64)
    Ft = as_tensor(F, "F", ndim=(2, 3))
    Ct = _real(C, "C").to(device=Ft.device, dtype=torch.float64)
    if Ct.ndim not in (2, 3) or Ct.shape[-2:] != Ft.shape[-2:] or Ct.shape[-1] != Ct.shape[-2]:
        raise ValueError(f"C must be (n, n) or (B, n, n) like F, got C {tuple(Ct.shape)} "
                         f"and F {tuple(Ft.shape)}")
    Cz = torch.where(torch.isfinite(Ct), Ct, 0.0)
    Cz = Cz * (1 - torch.eye(Cz.shape[-1], dtype=Cz.dtype, device=Cz.device))
    c = (Ft.to(torch.float64) * Cz).sum(dim=(-2, -1))
    return float(c) if c.ndim == 0 else c


def _flow_arcs(F: torch.Tensor, name: str = "F") -> tuple[SparseArcs, torch.Tensor, bool]:
    """A torch sparse flow's stored entries as arcs (zero costs) and their values."""
    if F.ndim not in (2, 3) or F.shape[-1] != F.shape[-2] or F.sparse_dim() != F.ndim:
        raise ValueError(f"{name} must be a sparse (n, n) or (B, n, n) tensor, got shape "
                         f"{tuple(F.shape)}")
    Fc = F.coalesce()
    idx, val = Fc.indices(), Fc.values().to(torch.float64)
    batched = F.ndim == 3
    if not batched:
        idx = torch.cat([torch.zeros_like(idx[:1]), idx])
    B, n = (F.shape[0] if batched else 1), F.shape[-1]
    arcs = SparseArcs(B, n, idx, torch.zeros_like(val))
    return arcs, val, batched


def _sparse_violations(F: torch.Tensor, s: object, capacity: object, node_capacity: object
                       ) -> dict[str, torch.Tensor]:
    """:func:`flow_violations` of a torch sparse flow (O(stored entries))."""
    arcs, val, _ = _flow_arcs(F)
    st = as_tensor(s, "s", ndim=(1, 2)).to(device=val.device, dtype=torch.float64)
    if st.shape[-1] != arcs.n or (st.ndim == 2 and st.shape[0] not in (1, arcs.B)):
        raise ValueError(f"F must be (n, n) flows and s (n,) supplies of one n (batched "
                         f"alike), got F {tuple(F.shape)} and s {tuple(st.shape)}")
    val = torch.where(arcs.idx[1] != arcs.idx[2], val, 0.0)
    cap = None
    if isinstance(capacity, torch.Tensor) and capacity.is_sparse:
        cap = edge_capacity(capacity, arcs, val.device)
    elif capacity is not None:  # as the dense flow_violations reads it
        cap = arcs.gather(torch.broadcast_to(torch.as_tensor(
            capacity, dtype=torch.float64, device=val.device), (arcs.B, arcs.n, arcs.n)))
    ncap = None
    if node_capacity is not None:
        ncap = torch.as_tensor(node_capacity, dtype=torch.float64, device=val.device)
    return _violations(arcs, val, st.expand(arcs.B, arcs.n), cap, ncap)


def _sparse_cost(F: torch.Tensor, C: object) -> torch.Tensor | float:
    """:func:`flow_cost` of a torch sparse flow: its entries times ``C`` at them."""
    arcs, val, batched = _flow_arcs(F)
    b, i, j = arcs.idx
    if isinstance(C, torch.Tensor) and C.is_sparse:
        if tuple(C.shape[-2:]) != (arcs.n, arcs.n):
            raise ValueError(f"C must be (n, n) or (B, n, n) like F, got C {tuple(C.shape)} "
                             f"and F {tuple(F.shape)}")
        Cc = C.coalesce()
        ci, cv = Cc.indices(), Cc.values().to(torch.float64)
        n = arcs.n
        key = (ci[0] * n + ci[1]) * n + ci[2] if C.ndim == 3 else ci[0] * n + ci[1]
        want = (b * n + i) * n + j if C.ndim == 3 else i * n + j
        pos = torch.searchsorted(key, want).clamp_max(max(key.numel() - 1, 0))
        found = key[pos] == want if key.numel() else torch.zeros_like(want, dtype=torch.bool)
        cost = torch.where(found, cv[pos] if cv.numel() else 0.0, torch.inf)
    else:
        Ct = _real(C, "C").to(device=val.device, dtype=torch.float64)
        if Ct.ndim not in (2, 3) or Ct.shape[-2:] != F.shape[-2:]:
            raise ValueError(f"C must be (n, n) or (B, n, n) like F, got C {tuple(Ct.shape)} "
                             f"and F {tuple(F.shape)}")
        cost = torch.broadcast_to(Ct, (arcs.B, arcs.n, arcs.n))[b, i, j]
    real = torch.isfinite(cost) & (i != j)
    c = arcs.batch_sum(torch.where(real, val * torch.where(real, cost, 0.0), 0.0))
    return c if batched else float(c[0])
