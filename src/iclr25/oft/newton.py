"""The Newton finish: damped Newton steps on the dual potentials, once the scaling is close.

The fixed point of the scaling iteration at ``eps`` (with the exact capacity clip) is the
maximiser of the concave dual ``D(phi) = <phi, s> - Σ_ij psi(z_ij)``,
``z_ij = (phi_i - phi_j - C_ij) / eps`` on the arcs (``u_i = exp(phi_i/eps) = 1/v_i``: the
paper's ``u_i v_i = 1``), ``psi(z) = eps·e^z`` where the plan ``P_ij = min(e^z, cap_ij)``
is below its cap and ``cap·eps·(z - log cap + 1)`` where it is clipped (``min_{0<=P<=cap}``
of the entropic Lagrangian; C¹ across the kink). Its gradient is the balance residual
``r = s - (P 1 - Pᵀ 1)`` and its (generalised) Hessian ``-L/eps``, ``L`` the Laplacian of
``W + Wᵀ``, ``W`` the plan on the arcs below their caps (a clipped arc's flow does not move
with ``phi``). A Newton step solves ``(L + ridge·I) δ = eps·r`` (``r ⟂ 1`` keeps the
constant shift out): by batched Cholesky when the problem's layout is dense, O(n³), and by
preconditioned conjugate gradients for sparse arcs, O(arcs) per CG step. Steps are halved
until ``D`` rises by Armijo's rule or ``|r|₂`` falls (the second test decides once ``D``'s
increments are below float64 resolution). Scaling slows to ~1/t near the optimum at small
reg; Newton converges quadratically there (Brauer et al. 2017, "A Sinkhorn-Newton method for
entropic optimal transport"), and with capacities, where ``D``'s gradient is piecewise
smooth, the generalised-Hessian (semismooth) Newton method with this line search converges
globally and, near the solution, superlinearly (Qi & Sun 1993, "A nonsmooth version of
Newton's method"). Each later ε stage starts from the last one's ``phi``. Each step counts as
one iteration of ``numItermax``. An instance whose line search fails stops where it is.

Active arcs: the finish works on the arcs whose plan is at least ``ACTIVE_FLOOR·Σs⁺`` when
they are chosen (an arc list, whatever the problem's layout), re-chosen on the full arcs at
every ε stage and whenever ``phi`` has moved enough that a left-out arc could have grown by
``ACTIVE_GROWTH``: every left-out arc carries below ``1e-27·Σs⁺`` throughout. At reg 1e-3
on the dense layered instances this is a few percent of the n² pairs, so the line search's
plan evaluations (most of the finish) cost O(active arcs), not O(n²). With edge capacities a
re-choice keeps every arc chosen before in the stage (the set only grows): a left-out arc
may be one a feasible flow needs (at a new ε stage the old ``phi`` puts arcs far below the
floor), and then the sub-problem is infeasible and its dual rises without bound; the
potentials then spread, the set goes stale within a step or two and the re-choice adds the
arcs across the saturated cut (on the NETGEN-like instance with 10⁵ arcs, at reg 4e-3 the
set grows from 42.8k to over 44.1k arcs within the stage). Re-choosing afresh instead
(before issue 73) could drop them again: every active arc ended at its cap with violation
~Σs⁺ until the steps ran out. A stage still unfinished after :data:`PATIENCE` steps goes on
with every arc active, where the dual is bounded whenever the capacities admit a flow (on
the 10⁴-arc instance in the dense layout the final stage's subset stalls near violation
7e-2·Σs⁺: 922 iterations in all without this, 426 with it).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from iclr25.oft.arcs import SparseArcs
from iclr25.oft.bookkeeping import CHECK_EVERY, _Track
from iclr25.oft.problem import _Problem, _Stage

NEWTON_AT = 1e-2  # x Σs⁺: balance violation at which the scaling hands over to Newton
NEWTON_RIDGE = 1e-10  # x the largest weighted degree: ridge that keeps the Laplacian solvable
LINE_SEARCH = 40  # step halvings before Newton gives up on an instance
FORCING = 0.1  # sparse layout: CG stops at relative residual min(this, sqrt(violation / Σs⁺))
LM = 1e-2  # x |r|₂: the first Levenberg-Marquardt shift of a capacitated Newton stage
LM_RANGE = (1e-8, 1e4)  # and the range it adapts in
PATIENCE = 200  # with capacities: Newton steps in a stage before every arc is active (x2:
# before the scaling takes over)
ACTIVE_FLOOR = 1e-50  # x Σs⁺: arcs whose plan is below this are left out when chosen
ACTIVE_GROWTH = 1e25  # re-choose once a left-out arc's plan could have grown by this factor


def _handover(pb: _Problem, viol: torch.Tensor) -> bool:
    """Whether the scaling hands the remaining stages to Newton."""
    return pb.newton and bool((viol <= NEWTON_AT * pb.mass).all())


def _full_plan(pb: _Problem, stage: _Stage, phi: torch.Tensor) -> torch.Tensor:
    """The plan ``min(exp(z), cap)`` on all of the problem's arcs (its layout)."""
    P = pb.arcs.potential_plan(phi, stage.eps)
    return P if pb.cap is None else torch.minimum(P, pb.cap)


@dataclass
class _Active:
    """The active arcs: a sub-problem on an arc list, its stage and the ``phi`` it was chosen
    at."""

    pb: _Problem
    stage: _Stage
    phi: torch.Tensor

    keep: torch.Tensor  # the active arcs among the problem's (its layout)

    @classmethod
    def choose(cls, pb: _Problem, stage: _Stage, phi: torch.Tensor,
               grow: torch.Tensor | None = None) -> _Active:
        """The arcs above the floor at ``phi``, and those of ``grow`` (with capacities)."""
        arcs = pb.arcs
        keep = arcs.potential_plan(phi, stage.eps) >= arcs.per_arc(ACTIVE_FLOOR * pb.mass)
        if pb.cap is not None:
            keep &= pb.cap > 0
            if grow is not None:
                keep |= grow
            cap = pb.cap[keep] if arcs.sparse else pb.cap[arcs.E & keep]
        sub = arcs.subset(keep)
        sub_stage = dataclasses.replace(stage, eps=sub.per_arc(stage.eps1))
        sub_pb = dataclasses.replace(pb, arcs=sub, cap=None if pb.cap is None else cap,
                                     stages=[sub_stage],
                                     log_cap=None if pb.cap is None else torch.log(cap))
        return cls(sub_pb, sub_stage, phi, keep)

    def stale(self, phi: torch.Tensor) -> bool:
        """Whether a left-out arc could have grown by ``ACTIVE_GROWTH`` since the choice."""
        move = phi - self.phi
        spread = (move.amax(-1) - move.amin(-1)) / self.stage.eps1.squeeze(-1)
        return bool((spread > math.log(ACTIVE_GROWTH)).any())


@dataclass
class _Dual:
    """A point of the dual on an arc list: potentials ``phi`` (B, n), the plan ``P`` (M,),
    the Hessian's arc weights ``W`` (M,) (``P`` below the caps, 0 at them), the balance
    residual ``r`` (B, n) and the dual value ``D`` (B,)."""

    phi: torch.Tensor
    P: torch.Tensor
    W: torch.Tensor
    r: torch.Tensor
    D: torch.Tensor

    @classmethod
    def at(cls, pb: _Problem, stage: _Stage, phi: torch.Tensor) -> _Dual:
        arcs: SparseArcs = pb.arcs  # type: ignore[assignment]
        # in place on the fresh differences (same values; one exp and no temporaries: the
        # line search evaluates this once per trial step)
        z = arcs.difference(phi).sub_(arcs.C).div_(stage.eps)
        if pb.cap is None:
            P = W = psi = z.exp_()
        else:
            P = W = psi = torch.exp(z)
            clipped = P > pb.cap
            P = torch.where(clipped, pb.cap, P)
            W = torch.where(clipped, 0.0, P)
            psi = torch.where(clipped, pb.cap * (z - pb.log_cap + 1), P)
        r = pb.s - arcs.net_out(P)
        D = (phi * pb.s).sum(-1) - stage.eps1.squeeze(-1) * arcs.batch_sum(psi)
        return cls(phi, P, W, r, D)


def _newton(pb: _Problem, stages: list[_Stage], phi: torch.Tensor, it: int,
            hist: dict[str, list]) -> tuple[tuple | None, torch.Tensor, int, bool]:
    """Finish ``stages`` from the potentials ``phi`` (cost units) at iteration ``it``.

    Returns ``(result, phi, it, finished)``: ``result`` is ``(P, n_iter, converged,
    history)`` (``P`` on all of the problem's arcs) when the solve ends, else None and the
    scaling goes on from ``phi`` at iteration ``it``: with the next stage when the stages
    ``finished``, or, when Newton gave up (with capacities, after ``2·PATIENCE`` steps in
    one stage: a safety net, not reached on the benchmarks' instances), from the potentials
    the stuck stage started at, in the stage the scaling handed over in."""
    B = pb.s.shape[0]
    track = _Track(pb, hist)  # counts afresh from the handover
    for stage in stages:
        act = _Active.choose(pb, stage, phi)
        track.pb = act.pb  # the history's costs from the active arcs
        pt = _Dual.at(act.pb, act.stage, phi)
        active = torch.ones(B, dtype=torch.bool, device=pb.s.device)
        lm = torch.full((B,), LM, dtype=phi.dtype, device=phi.device)
        steps = 0
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
                return track.result(_full_plan(pb, stage, pt.phi)), pt.phi, it, True
            if not bool(active.any()):
                break
            if pb.cap is not None and steps == PATIENCE:  # stalled: on every arc from here
                act = _Active.choose(pb, stage, pt.phi, pb.cap > 0)
                track.pb = act.pb
                pt = _Dual.at(act.pb, act.stage, pt.phi)
            if pb.cap is not None and steps == 2 * PATIENCE:  # the scaling resumes where it was
                return None, phi, it, False
            it += 1
            steps += 1
            rhs = stage.eps1 * pt.r
            # inexact Newton (sparse layout): the forcing term shrinks with the residual
            rtol = (viol / pb.mass).sqrt().clamp_max(FORCING)
            # with capacities, Levenberg-Marquardt: a node whose arcs are all at their caps
            # has no curvature; the shift lm·|r|₂ bounds its step and vanishes at the solution
            floor = pt.r.norm(dim=-1) * lm
            delta = act.pb.arcs.laplacian_solve(pt.W, rhs, NEWTON_RIDGE, rtol, floor)
            pt, todo, alpha = _line_search(act.pb, act.stage, pt, delta, active)
            # full steps relax the shift, halved ones stiffen it (x2 per halving beyond one)
            lm = (lm * 0.5 / alpha**2).clamp(*LM_RANGE)
            active &= ~todo  # no acceptable step: float64 resolution reached
            if act.stale(pt.phi):
                act = _Active.choose(pb, stage, pt.phi, None if pb.cap is None else act.keep)
                track.pb = act.pb
                pt = _Dual.at(act.pb, act.stage, pt.phi)
        phi = pt.phi
    return None, phi, it, True


def _line_search(pb: _Problem, stage: _Stage, pt: _Dual, delta: torch.Tensor,
                 active: torch.Tensor) -> tuple[_Dual, torch.Tensor, torch.Tensor]:
    """Halve the step along ``delta`` until the dual rises (Armijo) or ``|r|₂`` falls.

    Returns the accepted point, the instances left with no acceptable step and the step
    lengths (B,) (1 for the instances not searched).
    """
    B = pb.s.shape[0]
    slope = (pt.r * delta).sum(-1)
    rn = pt.r.norm(dim=-1)
    alpha = torch.ones(B, dtype=pt.phi.dtype, device=pt.phi.device)
    todo = active.clone()
    phi, P, W, r, D = pt.phi, pt.P, pt.W, pt.r, pt.D
    for _ in range(LINE_SEARCH):
        c = _Dual.at(pb, stage, phi + alpha.unsqueeze(-1) * delta)
        # strict: at float64 resolution nothing passes and the instance stops
        ok = todo & torch.isfinite(c.D) & ((c.D > D + 1e-4 * alpha * slope)
                                           | (c.r.norm(dim=-1) < (1 - 1e-4 * alpha) * rn))
        if bool(ok.all()):  # every instance takes this step: nothing to merge
            return c, ~ok, alpha
        phi = torch.where(ok.unsqueeze(-1), c.phi, phi)
        P = pb.arcs.select(ok, c.P, P)
        W = pb.arcs.select(ok, c.W, W)
        r = torch.where(ok.unsqueeze(-1), c.r, r)
        D = torch.where(ok, c.D, D)
        todo &= ~ok
        if not bool(todo.any()):
            break
        alpha = torch.where(todo, alpha / 2, alpha)
    return _Dual(phi, P, W, r, D), todo, torch.where(active, alpha, 1.0)
