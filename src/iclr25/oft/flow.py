"""OFT-Sinkhorn (entropic min-cost flow by matrix iterations) and an exact HiGHS reference.

Conventions (shared by every function here):

- ``s`` (n,) or (B, n): node supply, ``> 0`` at sources, ``< 0`` at sinks, summing to 0.
  A flow ``F`` balances when ``F.sum(-1) - F.sum(-2) == s`` (out-flow minus in-flow);
  networkx's ``demand`` is ``-s``.
- ``C`` (n, n) or (B, n, n): edge costs ``>= 0``; ``inf`` means "no edge". The diagonal is
  ignored (every node carries the paper's virtual self-flow instead).
- ``capacity``: scalar or broadcastable to (…, n, n), ``>= 0``, ``inf`` = uncapacitated.
- ``node_capacity``: scalar or broadcastable to (…, n), a bound on a node's throughput
  ``q`` (its real out-flow), ``>= 0``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from iclr25._checks import as_tensor, check_choice, check_int, check_range

Method = Literal["sinkhorn", "sinkhorn_log"]
Clip = Literal["exact", "paper"]

WARMUP = 20  # iterations before capacities are clipped (the paper's warm-up)
CHECK_EVERY = 50  # iterations between balance checks


# --- validation ---------------------------------------------------------------------------

def _real(x: object, name: str) -> torch.Tensor:
    """``x`` as a real tensor (bool and complex refused), without NaN; inf is left to callers."""
    t = as_tensor(x, name, finite=False)
    if t.dtype == torch.bool:
        raise TypeError(f"{name} must be numeric, got {t.dtype}")
    if t.is_floating_point() and bool(torch.isnan(t).any()):
        raise ValueError(f"{name} contains {int(torch.isnan(t).sum())} NaN value(s)")
    return t


def _capacity(value: object, name: str, shape: tuple[int, ...], doc: str,
              dev: torch.device) -> torch.Tensor:
    """A float64 capacity broadcast to ``shape`` on ``dev``, checked >= 0."""
    t = _real(value, name).to(device=dev, dtype=torch.float64)
    if t.ndim > len(shape):
        raise ValueError(f"{name} must be a scalar or {doc}, got shape {tuple(t.shape)}")
    try:
        t = torch.broadcast_to(t, shape)
    except RuntimeError as exc:
        raise ValueError(f"{name} must broadcast to {shape}, got shape "
                         f"{tuple(t.shape)}") from exc
    if bool((t < 0).any()):
        raise ValueError(f"{name} must be >= 0, got minimum {float(t.min()):g}")
    return t


def _check_problem(
    s: object, C: object, capacity: object, node_capacity: object,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None, bool,
           torch.dtype]:
    """Validate a (batched) flow problem; return float64 ``s, C, cap, ncap``, batched, dtype."""
    C_t = _real(C, "C")
    s_t = _real(s, "s")
    if C_t.ndim not in (2, 3) or C_t.shape[-1] != C_t.shape[-2]:
        raise ValueError(f"C must be (n, n) or (B, n, n), got shape {tuple(C_t.shape)}")
    n = C_t.shape[-1]
    if s_t.ndim not in (1, 2) or s_t.shape[-1] != n:
        raise ValueError(f"s must be (n,) or (B, n) with n={n} (from C), got shape "
                         f"{tuple(s_t.shape)}")
    batched = C_t.ndim == 3 or s_t.ndim == 2
    B = max(C_t.shape[0] if C_t.ndim == 3 else 1, s_t.shape[0] if s_t.ndim == 2 else 1)
    for name, t, lead in (("C", C_t, C_t.ndim == 3), ("s", s_t, s_t.ndim == 2)):
        if lead and t.shape[0] not in (1, B):
            raise ValueError(f"{name} has batch size {t.shape[0]}, expected {B}")
    out_dtype = (C_t.dtype if C_t.is_floating_point()
                 else s_t.dtype if s_t.is_floating_point() else torch.float64)
    dev = C_t.device
    C64 = C_t.to(device=dev, dtype=torch.float64).expand(B, n, n)
    s64 = s_t.to(device=dev, dtype=torch.float64).expand(B, n)
    if bool(torch.isinf(s64).any()):
        raise ValueError("s contains infinite value(s)")
    if bool((C64 == -math.inf).any()) or bool((C64 < 0).any()):
        raise ValueError(f"C must be >= 0 (inf = no edge), got minimum {float(C64.min()):g}")
    total = s64.abs().sum(-1)
    if bool((total == 0).any()):
        raise ValueError("s is all zero: there is nothing to route")
    imbalance = s64.sum(-1)
    rel = 1e-9 if not s_t.is_floating_point() else max(1e-9, 16 * torch.finfo(s_t.dtype).eps)
    if bool((imbalance.abs() > rel * total).any()):
        raise ValueError(f"s must sum to 0 (supply = demand), got sum "
                         f"{float(imbalance.abs().max()):g} with sum|s| = {float(total.max()):g}")
    # spread the rounding residue (float32 input) over the nodes, in proportion to |s|
    s64 = s64 - imbalance.unsqueeze(-1) * s64.abs() / total.unsqueeze(-1)
    cap = ncap = None
    if capacity is not None:
        cap = _capacity(capacity, "capacity", (B, n, n), "(…, n, n)", dev)
    if node_capacity is not None:
        ncap = _capacity(node_capacity, "node_capacity", (B, n), "(…, n)", dev)
        short = s64 > ncap * (1 + 1e-12)
        if bool(short.any()):
            b, i = (int(v) for v in short.nonzero()[0])
            raise ValueError(f"node_capacity[{i}] = {float(ncap[b, i]):g} is below the supply "
                             f"{float(s64[b, i]):g} that node {i} must send out (instance {b})")
    _check_reachable(s64, _edges(C64, cap), "C")
    return s64, C64, cap, ncap, batched, out_dtype


def _edges(C: torch.Tensor, cap: torch.Tensor | None) -> torch.Tensor:
    """(B, n, n) bool: usable edges (finite cost, positive capacity, off the diagonal)."""
    E = torch.isfinite(C)
    if cap is not None:
        E = E & (cap > 0)
    return E & ~torch.eye(C.shape[-1], dtype=torch.bool, device=C.device)


def _check_reachable(s: torch.Tensor, E: torch.Tensor, name: str) -> None:
    """Raise naming the node if a supply has no out-edge or a demand no path from any supply."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    for b in range(s.shape[0]):  # validation per instance; the solver itself is batched
        sb = s[b].cpu().numpy()
        Eb = E[b].cpu().numpy()
        inst = f" (instance {b})" if s.shape[0] > 1 else ""
        bad = np.flatnonzero((sb > 0) & ~Eb.any(1))
        if bad.size:
            raise ValueError(f"{name}: supply node {bad[0]} has no out-edge{inst}")
        bad = np.flatnonzero((sb < 0) & ~Eb.any(0))
        if bad.size:
            raise ValueError(f"{name}: demand node {bad[0]} has no in-edge{inst}")
        n = sb.size
        rows, cols = np.nonzero(Eb)
        src = np.flatnonzero(sb > 0)
        rows = np.concatenate([rows, np.full(src.size, n)])
        cols = np.concatenate([cols, src])
        G = csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n + 1, n + 1))
        seen = np.zeros(n + 1, dtype=bool)
        seen[breadth_first_order(G, n, directed=True, return_predecessors=False)] = True
        bad = np.flatnonzero((sb < 0) & ~seen[:n])
        if bad.size:
            raise ValueError(f"{name}: demand node {bad[0]} is unreachable from every supply "
                             f"node (disconnected graph){inst}")


# --- OFT-Sinkhorn -------------------------------------------------------------------------

def _log_q_step(log_ab: torch.Tensor, s: torch.Tensor, log_abs_half_s: torch.Tensor,
                d: torch.Tensor, ncap: torch.Tensor | None
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """The q-step in logs: ``log x, log y`` from ``log ab`` (see ``_run_scaling``)."""
    log_r = 0.5 * torch.logaddexp(log_ab, 2 * log_abs_half_s)
    log_t = torch.logaddexp(log_r, log_abs_half_s)
    lx = torch.where(s < 0, log_ab - log_t, log_t)
    ly = torch.where(s > 0, log_ab - log_t, log_t)
    if ncap is not None:
        lim = ncap + d
        clip = lx > torch.log(lim)
        lx = torch.where(clip, torch.log(lim), lx)
        ly = torch.where(clip, torch.log((lim - s).clamp_min(1e-300)), ly)
    return lx, ly


def _mv(K: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """(B, n, n)·(B, n) -> (B, n): ``K v``."""
    return torch.bmm(K, v.unsqueeze(-1)).squeeze(-1)


def _tmv(K: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """(B, n, n)·(B, n) -> (B, n): ``Kᵀ u`` without forming ``Kᵀ``."""
    return torch.bmm(u.unsqueeze(1), K).squeeze(1)


def _lse_rows(logK: torch.Tensor, lv: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
    """``log(K v + exp(extra))`` for ``log K`` (B, n, n) and ``log v`` (B, n)."""
    return torch.logaddexp(torch.logsumexp(logK + lv.unsqueeze(1), dim=-1), extra)


def _lse_cols(logK: torch.Tensor, lu: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
    """``log(Kᵀ u + exp(extra))`` for ``log K`` (B, n, n) and ``log u`` (B, n)."""
    return torch.logaddexp(torch.logsumexp(logK + lu.unsqueeze(-1), dim=-2), extra)


def oft_sinkhorn(
    s: object,
    C: object,
    reg: float = 1e-3,
    *,
    capacity: object = None,
    node_capacity: object = None,
    virtual_flow: float = 1e-8,
    method: Method = "sinkhorn",
    epsilon_scaling: bool = True,
    capacity_clip: Clip = "exact",
    newton: bool = True,
    numItermax: int = 20000,  # noqa: N803 (POT's name)
    stopThr: float = 1e-9,  # noqa: N803
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
    - Newton finish (default, without capacities): once the scaling's balance violation is
      ``<= 1e-2·Σs⁺`` the remaining ε stages are solved by damped Newton steps on the dual
      potentials (``_newton``: a Laplacian solve per step), the same fixed point (to 1e-10
      on the tests' instances). At n = 300, reg = 1e-3, stopThr 1e-6, seeds 0-2 the scaling
      alone ends at violations 6.5e-6 / 7.4e-6 after 20000 iterations and converges at 10800;
      with Newton all three converge in 103-106 iterations (50 scaling, the rest Newton), at
      the same cost to 7e-5 relative (what the scaling's balance slack allows).
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

    Args:
        s: (n,) or (B, n) supplies (> 0) and demands (< 0), summing to 0 per instance.
        C: (n, n) or (B, n, n) costs >= 0, ``inf`` = no edge; diagonal ignored.
        reg: entropic regularisation relative to the largest finite cost (> 0).
        capacity: scalar or (…, n, n) edge capacities >= 0 (``inf`` = none).
        node_capacity: scalar or (…, n) bounds on node throughput >= 0.
        virtual_flow: the self-flow ``d`` on each node (> 0; the paper's 1e-8).
        method: ``"sinkhorn"`` (the paper's scalings, stabilised by absorption) or
            ``"sinkhorn_log"`` (log-domain, slower).
        epsilon_scaling: anneal reg from about 0.1 down to ``reg`` (False: the paper's single
            stage at ``reg``; kernel entries that underflow then drop their edge).
        capacity_clip: ``"exact"`` (clip the unclipped kernel at every step) or ``"paper"``
            (the official cumulative ``K = min(K, cap / (u vᵀ))``, with consistent indices).
        newton: finish with Newton steps on the dual (only without ``capacity`` and
            ``node_capacity``; False: the scaling iteration throughout).
        numItermax: maximum number of iterations, all ε stages together.
        stopThr: stop when ``max |P 1 - Pᵀ 1 - s| <= stopThr · Σ s⁺`` (checked every 50).
        log: also return a dict with ``n_iter``, ``converged``, ``cost``,
            ``balance_violation`` (max absolute), ``capacity_violation``,
            ``node_capacity_violation``, ``dropped_edges`` (without ε-scaling; the Newton
            finish computes the plan in log form, so such edges may carry flow again) and
            ``history`` (iteration, reg, relative violation, cost at every check). Values are
            Python scalars for one instance and (B,) tensors for a batch.

    Returns:
        F: (n, n) or (B, n, n) flow in the dtype of ``C`` (float64 for integer input), on
        its device; or ``(F, log)``.

    Raises:
        ValueError: bad shapes, NaN, negative costs or capacities, ``s`` not summing to 0 or
            all zero, supply without out-edge, demand unreachable (naming the node),
            ``reg``/``virtual_flow`` <= 0, unknown ``method``.
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
    reg = check_range(reg, "reg", 0, low_open=True)
    virtual_flow = check_range(virtual_flow, "virtual_flow", 0, low_open=True)
    check_choice(method, "method", Method)
    check_choice(capacity_clip, "capacity_clip", Clip)
    for name, flag in (("epsilon_scaling", epsilon_scaling), ("newton", newton)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    numItermax = check_int(numItermax, "numItermax", 1)
    stopThr = check_range(stopThr, "stopThr", 0)
    s64, C64, cap, ncap, batched, out_dtype = _check_problem(s, C, capacity, node_capacity)
    B, n = s64.shape

    E = torch.isfinite(C64)
    E.diagonal(dim1=-2, dim2=-1).fill_(False)
    scale = torch.where(E, C64, 0.0).amax(dim=(-2, -1))
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    eps = (reg * scale).view(B, 1, 1)
    mass = s64.clamp_min(0).sum(-1)  # Σ s⁺ per instance
    d = torch.full_like(s64, virtual_flow)
    tol = stopThr * mass

    regs = _schedule(reg) if epsilon_scaling else [reg]
    with torch.no_grad():
        dropped = torch.zeros(B, dtype=torch.long, device=s64.device)
        if method == "sinkhorn" and not epsilon_scaling:
            dropped, cut = _drop_underflow(s64, C64, E, eps, cap, reg)
            if cut:
                method = "sinkhorn_log"
        if cap is not None and bool(torch.isinf(cap).all()):
            cap = None
        pb = _Problem(C=C64, E=E, s=s64, d=d, cap=cap, ncap=ncap,
                      stages=[(r, (r * scale).view(B, 1, 1)) for r in regs], iters=numItermax,
                      tol=tol, stage_tol=torch.maximum(tol, STAGE_THR * mass), mass=mass,
                      cumulative=capacity_clip == "paper",
                      newton=newton and cap is None and ncap is None)
        P, n_iter, conv, hist = _solve(pb, method)
        del E, pb
        F = torch.relu(P - P.transpose(-1, -2))
        del P
        F.diagonal(dim1=-2, dim2=-1).zero_()

    if not bool(conv.all()):
        warnings.warn(f"OFT-Sinkhorn did not reach stopThr={stopThr:g} in {numItermax} "
                      f"iterations for {int((~conv).sum())} of {B} instance(s); the flow is off "
                      f"balance (see log['balance_violation'])", RuntimeWarning, stacklevel=2)
    out = F.to(out_dtype)
    if not batched:
        out = out[0]
    if not log:
        return out
    stats = flow_violations(F, s64, capacity=cap, node_capacity=ncap)
    Cz = torch.where(torch.isfinite(C64), C64, 0.0)
    info: dict[str, Any] = {
        "n_iter": n_iter, "converged": conv, "cost": (F * Cz).sum(dim=(-2, -1)),
        "dropped_edges": dropped, **stats,
    }
    if not batched:
        info = {k: (v[0].item() if isinstance(v, torch.Tensor) else v) for k, v in info.items()}
        hist = {k: [h[0] if isinstance(h, list) else h for h in v] for k, v in hist.items()}
    info["history"] = hist
    return out, info


@dataclass
class _Problem:
    """A validated batched problem (float64) and the settings every iteration shares."""

    C: torch.Tensor  # (B, n, n) costs, inf = no edge
    E: torch.Tensor  # (B, n, n) bool: finite cost, off the diagonal
    s: torch.Tensor  # (B, n) supplies
    d: torch.Tensor  # (B, n) virtual self-flow
    cap: torch.Tensor | None  # (B, n, n) edge capacities
    ncap: torch.Tensor | None  # (B, n) node throughput bounds
    stages: list[tuple[float, torch.Tensor]]  # (reg, eps (B, 1, 1)) per ε stage
    iters: int  # numItermax, all stages together
    tol: torch.Tensor  # (B,) balance violation that ends the last stage
    stage_tol: torch.Tensor  # (B,) that ends an intermediate stage
    mass: torch.Tensor  # (B,) Σs⁺
    cumulative: bool  # the paper's cumulative capacity clip
    newton: bool  # hand over to Newton once the violation is <= NEWTON_AT·Σs⁺


def _drop_underflow(s: torch.Tensor, C: torch.Tensor, E: torch.Tensor, eps: torch.Tensor,
                    cap: torch.Tensor | None, reg: float) -> tuple[torch.Tensor, bool]:
    """Edges whose single-stage kernel underflows, per instance, and whether that cuts a demand
    off its supply (then the log domain must take over)."""
    kept = E & (torch.exp(-torch.where(E, C, 0.0) / eps) > 0)
    dropped = (E & ~kept).sum(dim=(-2, -1))
    if not bool((dropped > 0).any()):
        return dropped, False
    warnings.warn(f"{int(dropped.sum())} edge(s) dropped: exp(-C/(reg·max C)) "
                  f"underflows; use method='sinkhorn_log', a larger reg or "
                  f"epsilon_scaling=True", RuntimeWarning, stacklevel=3)
    try:
        _check_reachable(s, kept & _edges(C, cap), "C")
    except ValueError:
        warnings.warn(f"reg={reg:g} underflows exp(-C/(reg·max C)) and cuts the "
                      f"graph: switching to method='sinkhorn_log'", RuntimeWarning,
                      stacklevel=3)
        return dropped.zero_(), True
    return dropped, False


def _solve(pb: _Problem, method: Method) -> tuple:
    """Run ``method``'s iteration; the scalings fall back to the log domain on overflow."""
    out = None
    if method == "sinkhorn":
        out = _run_scaling(pb)
        if out is None:
            warnings.warn("numerical overflow in the scaling iteration: switching to "
                          "method='sinkhorn_log'", RuntimeWarning, stacklevel=3)
    if out is None:
        out = _run_log(pb)
    return out


def _record(hist: dict[str, list], it: int, reg: float, viol: torch.Tensor,
            mass: torch.Tensor, P: torch.Tensor, Cz: torch.Tensor) -> None:
    F = torch.relu(P - P.transpose(-1, -2))
    hist["iteration"].append(it)
    hist["reg"].append(reg)
    hist["violation"].append((viol / mass).tolist())
    hist["cost"].append((F * Cz).sum(dim=(-2, -1)).tolist())


class _Track:
    """Per-instance iteration counts and convergence flags, and the history of the checks."""

    def __init__(self, pb: _Problem, hist: dict[str, list] | None = None) -> None:
        B = pb.s.shape[0]
        self.pb = pb
        self.n_iter = torch.full((B,), pb.iters, dtype=torch.long, device=pb.s.device)
        self.conv = torch.zeros(B, dtype=torch.bool, device=pb.s.device)
        self.hist = hist if hist is not None else {
            "iteration": [], "reg": [], "violation": [], "cost": []}
        self.Cz = torch.where(torch.isfinite(pb.C), pb.C, 0.0)

    def check(self, it: int, reg: float, viol: torch.Tensor, thr: torch.Tensor, last: bool,
              P: torch.Tensor) -> bool:
        """Record a balance check; True when the solve ends (budget spent or all converged)."""
        if last:
            new = (viol <= thr) & ~self.conv
            self.n_iter[new] = it
            self.conv |= new
        _record(self.hist, it, reg, viol, self.pb.mass, P, self.Cz)
        return it == self.pb.iters or (last and bool(self.conv.all()))

    def result(self, P: torch.Tensor) -> tuple:
        """The solve's result: ``(P, n_iter, converged, history)``."""
        return P, self.n_iter, self.conv, self.hist


ABSORB = 1e30  # absorb the scalings into K when they leave [1/ABSORB, ABSORB]
STAGE_THR = 1e-4  # x Σs⁺: balance violation that ends an intermediate ε-scaling stage
REG_START = 0.1  # ε-scaling starts at the first reg·4^k >= this (relative to max C)


def _schedule(reg: float) -> list[float]:
    """ε-scaling: ``reg·4^k, …, reg·4, reg``, starting at the first ``>= REG_START``."""
    k = max(0, math.ceil(math.log(REG_START / reg, 4) - 1e-9))
    return [reg * 4.0**j for j in range(k, -1, -1)]


NEWTON_AT = 1e-2  # x Σs⁺: balance violation at which the scaling hands over to Newton
NEWTON_RIDGE = 1e-10  # x the largest weighted degree: ridge that keeps the Laplacian solvable
LINE_SEARCH = 40  # step halvings before Newton gives up on an instance


def _handover(pb: _Problem, viol: torch.Tensor) -> bool:
    """Whether the scaling hands the remaining stages to Newton."""
    return pb.newton and bool((viol <= NEWTON_AT * pb.mass).all())


def _newton(pb: _Problem, stages: list, phi: torch.Tensor, it: int, hist: dict[str, list]):
    """Finish the ε stages by damped Newton steps on the dual potentials ``phi`` (cost units).

    Without capacities the fixed point of the scaling iteration at ``eps`` is the maximiser of
    the concave dual ``D(phi) = <phi, s> - eps·Σ_ij P_ij``,
    ``P_ij = exp((phi_i - phi_j - C_ij) / eps)`` on the edges (``u_i = exp(phi_i/eps) = 1/v_i``:
    the paper's ``u_i v_i = 1``). Its gradient is the balance residual ``r = s - (P 1 - Pᵀ 1)``
    and its Hessian ``-L/eps``, ``L`` the Laplacian of ``P + Pᵀ``, so a Newton step solves
    ``(L + ridge·I) δ = eps·r`` (batched Cholesky; ``r ⟂ 1`` keeps the constant shift out).
    Steps are halved until ``D`` rises by Armijo's rule or ``|r|₂`` falls (the second test
    decides once ``D``'s increments are below float64 resolution). Scaling slows to ~1/t near
    the optimum at small reg; Newton converges quadratically there (Brauer et al. 2017, "A
    Sinkhorn-Newton method for entropic optimal transport"), and each later ε stage starts
    from the last one's ``phi``. Each step counts as one iteration of ``numItermax`` but costs
    an (n, n) factorisation, O(n³). An instance whose line search fails stops where it is.
    """
    E, s = pb.E, pb.s
    B, n = s.shape
    Cm = torch.where(E, pb.C, 0.0)
    eye = torch.eye(n, dtype=s.dtype, device=s.device)
    track = _Track(pb, hist)  # counts afresh from the handover
    for stage, (reg, eps) in enumerate(stages):
        last = stage == len(stages) - 1
        thr = pb.tol if last else pb.stage_tol
        e1 = eps.view(B)

        def plan(p, eps=eps, e1=e1):
            z = torch.where(E, (p.unsqueeze(-1) - p.unsqueeze(-2) - Cm) / eps, -math.inf)
            P = z.exp_()
            return P, s - P.sum(-1) + P.sum(-2), (p * s).sum(-1) - e1 * P.sum((-2, -1))

        P, r, D = plan(phi)
        active = torch.ones(B, dtype=torch.bool, device=s.device)
        while True:
            viol = r.abs().amax(-1)
            done = active & (viol <= thr)
            if last:
                track.n_iter[done] = it
                track.conv |= done
            active &= ~done
            end = it >= pb.iters or (last and not bool(active.any()))
            if it % CHECK_EVERY == 0 or end:
                _record(track.hist, it, reg, viol, pb.mass, P, track.Cz)
            if end:
                return track.result(P)
            if not bool(active.any()):
                break
            it += 1
            delta = _newton_direction(P, r, e1, eye)
            phi, P, r, D, todo = _line_search(plan, phi, delta, P, r, D, active)
            active &= ~todo  # no acceptable step: float64 resolution reached
    raise AssertionError("unreachable")


def _newton_direction(P: torch.Tensor, r: torch.Tensor, e1: torch.Tensor,
                      eye: torch.Tensor) -> torch.Tensor:
    """The Newton step ``δ`` solving ``(L + ridge·I) δ = eps·r``."""
    B = P.shape[0]
    W = P + P.transpose(-1, -2)
    deg = W.sum(-1)
    L = torch.diag_embed(deg) - W + NEWTON_RIDGE * deg.amax(-1).view(B, 1, 1) * eye
    Lc, info = torch.linalg.cholesky_ex(L)
    delta = torch.cholesky_solve((e1.unsqueeze(-1) * r).unsqueeze(-1), Lc).squeeze(-1)
    if bool((info != 0).any()):  # numerically indefinite: LU instead
        delta = torch.linalg.solve(L, e1.unsqueeze(-1) * r)
    return delta


def _line_search(plan, phi, delta, P, r, D, active):
    """Halve the step along ``delta`` until the dual rises (Armijo) or ``|r|₂`` falls.

    Returns the accepted ``phi, P, r, D`` and the instances left with no acceptable step.
    """
    B = P.shape[0]
    slope = (r * delta).sum(-1)
    rn = r.norm(dim=-1)
    alpha = torch.ones(B, dtype=phi.dtype, device=phi.device)
    todo = active.clone()
    for _ in range(LINE_SEARCH):
        cand = phi + alpha.unsqueeze(-1) * delta
        Pc, rc, Dc = plan(cand)
        # strict: at float64 resolution nothing passes and the instance stops
        ok = todo & torch.isfinite(Dc) & ((Dc > D + 1e-4 * alpha * slope)
                                          | (rc.norm(dim=-1) < (1 - 1e-4 * alpha) * rn))
        phi = torch.where(ok.unsqueeze(-1), cand, phi)
        P = torch.where(ok.view(B, 1, 1), Pc, P)
        r = torch.where(ok.unsqueeze(-1), rc, r)
        D = torch.where(ok, Dc, D)
        todo &= ~ok
        if not bool(todo.any()):
            break
        alpha = torch.where(todo, alpha / 2, alpha)
    return phi, P, r, D, todo


def _pot_kernel(C, E, f, g, eps):
    """``exp((f_i + g_j - C_ij) / eps)`` on the edges, 0 elsewhere and on the diagonal."""
    K = torch.where(E, (f.unsqueeze(-1) + g.unsqueeze(-2) - torch.where(E, C, 0.0)) / eps,
                    -math.inf).exp_()
    K.diagonal(dim1=-2, dim2=-1).zero_()
    return K


def _run_scaling(pb: _Problem):
    """The paper's iteration on ``K = exp(-C/eps)`` (float64), with ε-scaling and absorption.

    The self-loop kernel ``h_i = K_ii`` is kept as a vector (the diagonal of ``K`` stays 0),
    so after pinning ``h = d / (u v)`` the products with the full kernel are
    ``K v + d / u`` and ``Kᵀ u + d / v``: two (B,n,n)·(B,n) products per uncapacitated
    iteration (three with edge capacities, whose clip changes ``K``).

    Potentials ``f, g`` (cost units) hold what was absorbed: the working kernel is
    ``exp((f_i + g_j - C_ij) / eps)`` and the true scalings are ``exp(f/eps)·u``,
    ``exp(g/eps)·v``. They are absorbed when ``u`` or ``v`` leave ``[1/ABSORB, ABSORB]``
    (checked every 50 steps) and at the end of every ε stage, whose next kernel is rebuilt
    from them at the smaller ``eps`` (Schmitzer's stabilised scaling): no entry overflows, and
    kernel entries that underflow carry flow below 1e-300. The q-step sees the original kernel
    through ``(K₀ V)(K₀ᵀ U) = (K v)(Kᵀ u)·exp(-(f + g)/eps)``. An intermediate stage ends at
    balance violation ``<= stage_tol``, the last at ``<= tol``; ``iters`` counts all stages.

    Capacities: ``K = min(K_unclipped, cap / (u vᵀ))`` from the unclipped kernel at every
    step (the exact dual update of the capacity multipliers), not the paper's cumulative
    ``K = min(K, cap / (u vᵀ))`` (``cumulative=True``), which keeps every cap that bound during
    the transient.

    Returns ``(P, n_iter, converged, history)``, or None on overflow (the caller switches to
    the log domain).
    """
    st = _Scaling(pb)
    track = _Track(pb)
    it = 0
    for stage, (reg, eps) in enumerate(pb.stages):
        last = stage == len(pb.stages) - 1
        thr = pb.tol if last else pb.stage_tol
        st.start(stage, eps)
        while True:
            it += 1
            st.step(it)
            if it % CHECK_EVERY == 0 or it == pb.iters:
                viol = (st.u * st.Kv - st.v * st.Ktu - pb.s).abs().amax(-1)
                if not (bool(torch.isfinite(viol).all()) and bool(torch.isfinite(st.Kv).all())):
                    return None
                P = st.u.unsqueeze(-1) * st.K * st.v.unsqueeze(-2)
                if track.check(it, reg, viol, thr, last, P):
                    return track.result(P)
                del P
                if _handover(pb, viol):
                    return _newton(pb, pb.stages[stage:], st.potential(), it, track.hist)
                if bool((viol <= thr).all()):
                    break
                st.absorb_if_large()
            st.q_step()
        st.end_stage()
    raise AssertionError("unreachable")


class _Scaling:
    """The scaling iteration's state: absorbed potentials ``f, g``, scalings ``u, v``, the
    working kernel ``K`` (and the unclipped ``K0``), self-loop kernel ``h``, flows ``x, y``."""

    def __init__(self, pb: _Problem) -> None:
        s, d = pb.s, pb.d
        self.pb = pb
        self.neg, self.pos = s < 0, s > 0
        self.s2q, self.hs = 0.25 * s * s, 0.5 * s.abs()
        self.x, self.y = s.clamp_min(0) + d, (-s).clamp_min(0) + d
        self.f, self.g = torch.zeros_like(s), torch.zeros_like(s)
        self.h = torch.ones_like(s)  # self-loop kernel 1 (cost 0) before the first pin

    def start(self, stage: int, eps: torch.Tensor) -> None:
        """Rebuild the kernel at a stage's ``eps`` from the potentials; scalings at 1."""
        pb = self.pb
        self.e1 = eps.squeeze(-1)
        self.K = _pot_kernel(pb.C, pb.E, self.f, self.g, eps)
        self.K0 = self.K.clone() if pb.cap is not None and not pb.cumulative else None
        self.inv_uv = torch.exp(-(self.f + self.g) / self.e1) if stage else None
        self.u, self.v = torch.ones_like(pb.s), torch.ones_like(pb.s)
        self.Kv = torch.addcmul(_mv(self.K, self.v), self.h, self.v)

    def step(self, it: int) -> None:
        """Update ``u``, ``v``, pin ``h`` and, after the warm-up, clip ``K`` at the caps."""
        pb, K, d = self.pb, self.K, self.pb.d
        u = self.x / self.Kv
        w = _tmv(K, u)
        v = self.y / torch.addcmul(w, self.h, u)
        self.h = d / (u * v)
        if pb.cap is not None and it > WARMUP:
            torch.minimum(K if self.K0 is None else self.K0,
                          pb.cap / u.unsqueeze(-1) / v.unsqueeze(-2), out=K)
            w = _tmv(K, u)
        self.Kv = torch.addcdiv(_mv(K, v), d, u)
        self.Ktu = torch.addcdiv(w, d, v)
        self.u, self.v = u, v

    def potential(self) -> torch.Tensor:
        """The dual potential ``phi`` (cost units) that Newton starts from."""
        e1 = self.e1
        return 0.5 * (self.f + e1 * torch.log(self.u) - self.g - e1 * torch.log(self.v))

    def absorb_if_large(self) -> None:
        """Absorb ``u, v`` into ``f, g`` and ``K`` once they leave ``[1/ABSORB, ABSORB]``."""
        u, v, e1 = self.u, self.v, self.e1
        big = torch.maximum(torch.maximum(u, 1 / u), torch.maximum(v, 1 / v)).amax()
        if float(big) > ABSORB:
            self.f, self.g = self.f + e1 * torch.log(u), self.g + e1 * torch.log(v)
            uv = u.unsqueeze(-1) * v.unsqueeze(-2)
            self.K.mul_(uv)
            if self.K0 is not None:
                self.K0.mul_(uv)
            del uv
            self.inv_uv = torch.exp(-(self.f + self.g) / e1)
            self.Kv, self.Ktu = u * self.Kv, v * self.Ktu  # diag(u) K_old v: the new frame's K 1
            self.h = self.pb.d.clone()
            self.u, self.v = torch.ones_like(u), torch.ones_like(v)

    def q_step(self) -> None:
        """The free throughput: out-flow ``x`` and in-flow ``y`` from ``u_i v_i = 1``."""
        Kv, Ktu = self.Kv, self.Ktu
        ab = Kv * Ktu if self.inv_uv is None else Kv * Ktu * self.inv_uv
        # x = q + d and y = q - s + d solve x·y = ab; with t = sqrt(ab + s²/4) + |s|/2 the
        # roots without cancellation are x = ab/t where s < 0 else t, y = ab/t where s > 0 else t
        t = torch.add(ab, self.s2q).sqrt_().add_(self.hs)
        abt = ab / t
        self.x = torch.where(self.neg, abt, t)
        self.y = torch.where(self.pos, abt, t)
        if self.pb.ncap is not None:
            self.x, self.y = _clip_node(self.x, self.y, self.pb.s, self.pb.d, self.pb.ncap)

    def end_stage(self) -> None:
        """Absorb into the potentials for the next stage; the pinned self-flow stays ``d``."""
        self.f = self.f + self.e1 * torch.log(self.u)
        self.g = self.g + self.e1 * torch.log(self.v)
        self.h = self.pb.d.clone()
        self.K = self.K0 = None


def _clip_node(x, y, s, d, ncap):
    """Throughput bound ``q <= ncap``: out-flow ``x = q + d``, in-flow ``y = x - s``."""
    lim = ncap + d
    clip = x > lim
    return torch.where(clip, lim, x), torch.where(clip, lim - s, y)


def _run_log(pb: _Problem):
    """Log-domain twin of :func:`_run_scaling`: ``f = log u``, ``g = log v``, ``log K``.

    The self-loop kernel ``log K_ii`` is kept apart in ``lkd`` (the diagonal of ``logK`` is
    -inf), so the pinned ``K_ii = d / (u_i v_i)`` never meets the capacity clip. Across ε
    stages the potentials ``eps·f``, ``eps·g`` carry over.
    """
    s, d = pb.s, pb.d
    log_d = torch.log(d)
    log_cap = torch.log(pb.cap) if pb.cap is not None else None
    log_half_s = torch.log(0.5 * s.abs())
    lx, ly = torch.log(s.clamp_min(0) + d), torch.log((-s).clamp_min(0) + d)
    f, g = torch.zeros_like(s), torch.zeros_like(s)
    lkd = torch.zeros_like(s)  # self-loop kernel 1 (cost 0) before the first pin
    track = _Track(pb)
    it = 0
    prev = None
    for stage, (reg, eps) in enumerate(pb.stages):
        last = stage == len(pb.stages) - 1
        thr = pb.tol if last else pb.stage_tol
        if prev is not None:
            ratio = (prev / eps).squeeze(-1)
            f, g = f * ratio, g * ratio
            lkd = log_d - f - g
        prev = eps
        logK0, logK = _log_kernel(pb, eps, log_cap is not None)
        lKv = _lse_rows(logK, g, lkd + g)
        while True:
            it += 1
            f = lx - lKv
            g = ly - _lse_cols(logK, f, lkd + f)
            lkd = log_d - f - g
            if log_cap is not None and it > WARMUP:
                torch.minimum(logK0, log_cap - f.unsqueeze(-1) - g.unsqueeze(-2), out=logK)
                # (cumulative: logK is logK0, so the clip accumulates)
                logK.diagonal(dim1=-2, dim2=-1).fill_(-math.inf)
            lKv = _lse_rows(logK, g, log_d - f)
            lKtu = _lse_cols(logK, f, log_d - g)
            if it % CHECK_EVERY == 0 or it == pb.iters:
                viol = (torch.exp(f + lKv) - torch.exp(g + lKtu) - s).abs().amax(-1)
                P = torch.exp(f.unsqueeze(-1) + logK + g.unsqueeze(-2))
                if track.check(it, reg, viol, thr, last, P):
                    return track.result(P)
                if _handover(pb, viol):
                    phi = 0.5 * eps.squeeze(-1) * (f - g)
                    return _newton(pb, pb.stages[stage:], phi, it, track.hist)
                if bool((viol <= thr).all()):
                    break
            lx, ly = _log_q_step(lKv + lKtu, s, log_half_s, d, pb.ncap)
        del logK, logK0
    raise AssertionError("unreachable")


def _log_kernel(pb: _Problem, eps: torch.Tensor, clipped: bool
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """A stage's ``log K`` unclipped, and the working copy (the same tensor when the clip is
    cumulative or there are no capacities)."""
    logK0 = torch.where(pb.E, -torch.where(pb.E, pb.C, 0.0) / eps, -math.inf)
    logK0.diagonal(dim1=-2, dim2=-1).fill_(-math.inf)
    return logK0, logK0.clone() if clipped and not pb.cumulative else logK0


def flow_violations(
    F: object, s: object, *, capacity: object = None, node_capacity: object = None,
) -> dict[str, torch.Tensor]:
    """How far a flow is from feasible: balance, edge and node capacity, negativity.

    Args:
        F: (n, n) or (B, n, n) flow.
        s: (n,) or (B, n) supplies.
        capacity: scalar or (…, n, n) edge capacities, or None.
        node_capacity: scalar or (…, n) throughput bounds, or None.

    Returns:
        dict of (B,) float64 tensors (B = 1 for one instance): ``balance_violation``
        ``max|F 1 - Fᵀ 1 - s|``, ``capacity_violation`` ``max(F - cap)⁺``,
        ``node_capacity_violation`` ``max(out-flow - node cap)⁺``, ``negativity``.
    """
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

def min_cost_flow(
    s: object, C: object, *, capacity: object = None, node_capacity: object = None,
    log: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, dict[str, Any]]:
    """Exact min-cost flow by linear programming (HiGHS via ``scipy.optimize.linprog``).

    Same problem and conventions as :func:`oft_sinkhorn` without the entropy: float costs,
    edge capacities ``F <= capacity`` and node throughput ``F 1 <= node_capacity``.

    Args:
        s: (n,) or (B, n) supplies/demands summing to 0.
        C: (n, n) or (B, n, n) costs >= 0, ``inf`` = no edge; diagonal ignored.
        capacity: scalar or (…, n, n) edge capacities, or None.
        node_capacity: scalar or (…, n) node throughput bounds, or None.
        log: also return ``{"cost": ...}`` (float, or (B,) tensor for a batch).

    Returns:
        F: optimal flow, (n, n) or (B, n, n), dtype of ``C`` (float64 for integers).

    Raises:
        ValueError: as :func:`oft_sinkhorn`'s input checks, or when the capacities make the
            problem infeasible (naming ``capacity``).
    """
    s64, C64, cap, ncap, batched, out_dtype = _check_problem(s, C, capacity, node_capacity)
    E = _edges(C64, cap).cpu().numpy()
    Cn, sn = C64.cpu().numpy(), s64.cpu().numpy()
    capn = cap.cpu().numpy() if cap is not None else None
    ncapn = ncap.cpu().numpy() if ncap is not None else None
    sols = [_lp(Cn[b], sn[b], E[b], None if capn is None else capn[b],
                None if ncapn is None else ncapn[b], b) for b in range(s64.shape[0])]
    F = np.stack([f for f, _ in sols])
    costs = np.array([c for _, c in sols])
    out = torch.as_tensor(F, dtype=out_dtype, device=C64.device)
    if not batched:
        out = out[0]
    if not log:
        return out
    cost = torch.as_tensor(costs, device=C64.device)
    return out, {"cost": cost if batched else float(cost[0])}


def _lp(C: np.ndarray, s: np.ndarray, E: np.ndarray, cap: np.ndarray | None,
        ncap: np.ndarray | None, b: int) -> tuple[np.ndarray, float]:
    """Instance ``b``'s min-cost flow by HiGHS: the (n, n) flow and its cost."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    n = s.size
    i, j = np.nonzero(E)
    m = i.size
    k = np.arange(m)
    A = coo_matrix((np.r_[np.ones(m), -np.ones(m)], (np.r_[i, j], np.r_[k, k])),
                   shape=(n, m)).tocsr()
    ub = np.full(m, np.inf) if cap is None else cap[i, j]
    A_ub = b_ub = None
    if ncap is not None and np.isfinite(ncap).any():
        rows = np.isfinite(ncap)
        A_ub = coo_matrix((np.ones(m), (i, k)), shape=(n, m)).tocsr()[rows]
        b_ub = ncap[rows]
    res = linprog(C[i, j], A_ub=A_ub, b_ub=b_ub, A_eq=A, b_eq=s,
                  bounds=np.stack([np.zeros(m), ub], 1), method="highs")
    if res.status == 2:
        raise ValueError("capacity/node_capacity make the flow infeasible: supply cannot "
                         f"reach demand within the capacities (instance {b})")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed: {res.message}")
    F = np.zeros((n, n))
    F[i, j] = np.maximum(res.x, 0)
    return F, res.fun


def flow_cost(F: object, C: object) -> torch.Tensor | float:
    """``<C, F>`` over real edges (``inf`` costs and the diagonal skipped).

    Returns a Python float for one (n, n) flow, a (B,) tensor for a batch.
    """
    Ft = as_tensor(F, "F", ndim=(2, 3))
    Ct = _real(C, "C").to(device=Ft.device, dtype=torch.float64)
    if Ct.ndim not in (2, 3) or Ct.shape[-2:] != Ft.shape[-2:] or Ct.shape[-1] != Ct.shape[-2]:
        raise ValueError(f"C must be (n, n) or (B, n, n) like F, got C {tuple(Ct.shape)} "
                         f"and F {tuple(Ft.shape)}")
    Cz = torch.where(torch.isfinite(Ct), Ct, 0.0)
    Cz = Cz * (1 - torch.eye(Cz.shape[-1], dtype=Cz.dtype, device=Cz.device))
    c = (Ft.to(torch.float64) * Cz).sum(dim=(-2, -1))
    return float(c) if c.ndim == 0 else c
