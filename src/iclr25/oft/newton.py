"""The Newton finish: damped Newton steps on the dual potentials, once the scaling is close.

Without capacities the fixed point of the scaling iteration at ``eps`` is the maximiser of
the concave dual ``D(phi) = <phi, s> - eps·Σ_ij P_ij``,
``P_ij = exp((phi_i - phi_j - C_ij) / eps)`` on the arcs (``u_i = exp(phi_i/eps) = 1/v_i``:
the paper's ``u_i v_i = 1``). Its gradient is the balance residual ``r = s - (P 1 - Pᵀ 1)``
and its Hessian ``-L/eps``, ``L`` the Laplacian of ``P + Pᵀ``, so a Newton step solves
``(L + ridge·I) δ = eps·r`` (``r ⟂ 1`` keeps the constant shift out): by batched Cholesky
for dense arcs, O(n³), and by preconditioned conjugate gradients for sparse arcs, O(arcs)
per CG step. Steps are halved until ``D`` rises by Armijo's rule or ``|r|₂`` falls (the
second test decides once ``D``'s increments are below float64 resolution). Scaling slows to
~1/t near the optimum at small reg; Newton converges quadratically there (Brauer et al.
2017, "A Sinkhorn-Newton method for entropic optimal transport"), and each later ε stage
starts from the last one's ``phi``. Each step counts as one iteration of ``numItermax``. An
instance whose line search fails stops where it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from iclr25.oft.bookkeeping import CHECK_EVERY, _Track
from iclr25.oft.problem import _Problem, _Stage

NEWTON_AT = 1e-2  # x Σs⁺: balance violation at which the scaling hands over to Newton
NEWTON_RIDGE = 1e-10  # x the largest weighted degree: ridge that keeps the Laplacian solvable
LINE_SEARCH = 40  # step halvings before Newton gives up on an instance
FORCING = 0.1  # sparse layout: CG stops at relative residual min(this, sqrt(violation / Σs⁺))


def _handover(pb: _Problem, viol: torch.Tensor) -> bool:
    """Whether the scaling hands the remaining stages to Newton."""
    return pb.newton and bool((viol <= NEWTON_AT * pb.mass).all())


@dataclass
class _Dual:
    """A point of the dual: potentials ``phi`` (B, n), their plan ``P`` (arc layout), the
    balance residual ``r`` (B, n) and the dual value ``D`` (B,)."""

    phi: torch.Tensor
    P: torch.Tensor
    r: torch.Tensor
    D: torch.Tensor

    @classmethod
    def at(cls, pb: _Problem, stage: _Stage, phi: torch.Tensor) -> _Dual:
        arcs = pb.arcs
        P = arcs.potential_plan(phi, stage.eps)
        r = pb.s - arcs.row_sums(P) + arcs.col_sums(P)
        return cls(phi, P, r, (phi * pb.s).sum(-1) - stage.eps1.squeeze(-1) * arcs.batch_sum(P))


def _newton(pb: _Problem, stages: list[_Stage], phi: torch.Tensor, it: int,
            hist: dict[str, list]) -> tuple:
    """Finish ``stages`` from the potentials ``phi`` (cost units) at iteration ``it``.

    Returns ``(P, n_iter, converged, history)``."""
    B = pb.s.shape[0]
    track = _Track(pb, hist)  # counts afresh from the handover
    for stage in stages:
        pt = _Dual.at(pb, stage, phi)
        active = torch.ones(B, dtype=torch.bool, device=pb.s.device)
        while True:
            viol = pt.r.abs().amax(-1)
            done = active & (viol <= stage.thr)
            if stage.last:
                track.mark(it, done)
            active &= ~done
            end = it >= pb.iters or (stage.last and not bool(active.any()))
            if it % CHECK_EVERY == 0 or end:
                track.record(it, stage.reg, viol, pt.P)
            if end:
                return track.result(pt.P)
            if not bool(active.any()):
                break
            it += 1
            rhs = stage.eps1 * pt.r
            # inexact Newton (sparse layout): the forcing term shrinks with the residual
            rtol = (viol / pb.mass).sqrt().clamp_max(FORCING)
            delta = pb.arcs.laplacian_solve(pt.P, rhs, NEWTON_RIDGE, rtol)
            pt, todo = _line_search(pb, stage, pt, delta, active)
            active &= ~todo  # no acceptable step: float64 resolution reached
        phi = pt.phi
    raise AssertionError("unreachable")


def _line_search(pb: _Problem, stage: _Stage, pt: _Dual, delta: torch.Tensor,
                 active: torch.Tensor) -> tuple[_Dual, torch.Tensor]:
    """Halve the step along ``delta`` until the dual rises (Armijo) or ``|r|₂`` falls.

    Returns the accepted point and the instances left with no acceptable step.
    """
    B = pb.s.shape[0]
    slope = (pt.r * delta).sum(-1)
    rn = pt.r.norm(dim=-1)
    alpha = torch.ones(B, dtype=pt.phi.dtype, device=pt.phi.device)
    todo = active.clone()
    phi, P, r, D = pt.phi, pt.P, pt.r, pt.D
    for _ in range(LINE_SEARCH):
        c = _Dual.at(pb, stage, phi + alpha.unsqueeze(-1) * delta)
        # strict: at float64 resolution nothing passes and the instance stops
        ok = todo & torch.isfinite(c.D) & ((c.D > D + 1e-4 * alpha * slope)
                                           | (c.r.norm(dim=-1) < (1 - 1e-4 * alpha) * rn))
        phi = torch.where(ok.unsqueeze(-1), c.phi, phi)
        P = pb.arcs.select(ok, c.P, P)
        r = torch.where(ok.unsqueeze(-1), c.r, r)
        D = torch.where(ok, c.D, D)
        todo &= ~ok
        if not bool(todo.any()):
            break
        alpha = torch.where(todo, alpha / 2, alpha)
    return _Dual(phi, P, r, D), todo
