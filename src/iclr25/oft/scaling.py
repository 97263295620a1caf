"""The scaling iteration of OFT-Sinkhorn, with the paper's scalings and in the log domain.

Both run on the problem's arc layout (dense (B, n, n) or an arc list; see
:mod:`iclr25.oft.arcs`), go through the ε stages and hand over to the Newton finish
(:mod:`iclr25.oft.newton`) once the balance violation allows.
"""

from __future__ import annotations

import warnings

import torch

from iclr25._checks import user_stacklevel
from iclr25.oft.bookkeeping import CHECK_EVERY, _Track
from iclr25.oft.capacity import WARMUP, clip_node, log_clip_node
from iclr25.oft.newton import _handover, _newton
from iclr25.oft.problem import _Problem, _Stage

ABSORB = 1e30  # absorb the scalings into K when they leave [1/ABSORB, ABSORB]


def _solve(pb: _Problem, method: str) -> tuple:
    """Run ``method``'s iteration; the scalings fall back to the log domain on overflow."""
    out = None
    if method == "sinkhorn":
        out = _run_scaling(pb)
        if out is None:
            warnings.warn("numerical overflow in the scaling iteration: switching to "
                          "method='sinkhorn_log'", RuntimeWarning, stacklevel=user_stacklevel())
    if out is None:
        out = _run_log(pb)
    return out


def _run_scaling(pb: _Problem) -> tuple | None:
    """The paper's iteration on ``K = exp(-C/eps)`` (float64), with ε-scaling and absorption.

    The self-loop kernel ``h_i = K_ii`` is kept as a vector (the diagonal of ``K`` stays 0),
    so after pinning ``h = d / (u v)`` the products with the full kernel are
    ``K v + d / u`` and ``Kᵀ u + d / v``: two kernel products per uncapacitated
    iteration (three with edge capacities, whose clip changes ``K``).

    Potentials ``f, g`` (cost units) hold what was absorbed: the working kernel is
    ``exp((f_i + g_j - C_ij) / eps)`` and the true scalings are ``exp(f/eps)·u``,
    ``exp(g/eps)·v``. They are absorbed when ``u`` or ``v`` leave ``[1/ABSORB, ABSORB]``
    (checked every 50 steps) and at the end of every ε stage, whose next kernel is rebuilt
    from them at the smaller ``eps`` (Schmitzer's stabilised scaling): no entry overflows, and
    kernel entries that underflow carry flow below 1e-300. The q-step sees the original kernel
    through ``(K₀ V)(K₀ᵀ U) = (K v)(Kᵀ u)·exp(-(f + g)/eps)``. A stage ends at its balance
    violation threshold; ``iters`` counts all stages.

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
    for k, stage in enumerate(pb.stages):
        st.start(k, stage)
        newton = True  # until Newton gives up on this stage
        while True:
            it += 1
            st.step(it)
            if it % CHECK_EVERY == 0 or it == pb.iters:
                viol = (st.u * st.Kv - st.v * st.Ktu - pb.s).abs().amax(-1)
                if not (bool(torch.isfinite(viol).all()) and bool(torch.isfinite(st.Kv).all())):
                    return None
                P = pb.arcs.plan(st.u, st.K, st.v)
                if track.check(it, stage, viol, P):
                    return track.result(P)
                del P
                if newton and _handover(pb, viol):
                    res, phi, it, newton = _newton(pb, pb.stages[k:], st.potential(), it,
                                                   track.hist)
                    if res is not None:
                        return res
                    st.resume(phi)
                    if newton:  # the stage is done
                        break
                    st.start(k, stage)
                    continue
                if bool((viol <= stage.thr).all()):
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

    def start(self, k: int, stage: _Stage) -> None:
        """Rebuild the kernel at stage ``k``'s ``eps`` from the potentials; scalings at 1."""
        pb = self.pb
        self.e1 = stage.eps1
        self.K = pb.arcs.kernel(self.f, self.g, stage.eps)
        self.K0 = self.K.clone() if pb.cap is not None and not pb.cumulative else None
        self.inv_uv = torch.exp(-(self.f + self.g) / self.e1) if k else None
        self.u, self.v = torch.ones_like(pb.s), torch.ones_like(pb.s)
        self.Kv = torch.addcmul(pb.arcs.mv(self.K, self.v), self.h, self.v)

    def step(self, it: int) -> None:
        """Update ``u``, ``v``, pin ``h`` and, after the warm-up, clip ``K`` at the caps."""
        pb, K, d, arcs = self.pb, self.K, self.pb.d, self.pb.arcs
        u = self.x / self.Kv
        w = arcs.tmv(K, u)
        v = self.y / torch.addcmul(w, self.h, u)
        self.h = d / (u * v)
        if pb.cap is not None and it > WARMUP:
            # K = min(K0, cap / (u vᵀ)); K0 is K itself for the paper's cumulative clip
            torch.minimum(K if self.K0 is None else self.K0, arcs.outer_div(pb.cap, u, v),
                          out=K)
            w = arcs.tmv(K, u)
        self.Kv = torch.addcdiv(arcs.mv(K, v), d, u)
        self.Ktu = torch.addcdiv(w, d, v)
        self.u, self.v = u, v

    def potential(self) -> torch.Tensor:
        """The dual potential ``phi`` (cost units) that Newton starts from."""
        e1 = self.e1
        return 0.5 * (self.f + e1 * torch.log(self.u) - self.g - e1 * torch.log(self.v))

    def resume(self, phi: torch.Tensor) -> None:
        """Carry on from the potentials ``phi`` (cost units) Newton ended a stage at."""
        self.f, self.g = phi, -phi
        self.u, self.v = torch.ones_like(phi), torch.ones_like(phi)
        self.h = self.pb.d.clone()

    def absorb_if_large(self) -> None:
        """Absorb ``u, v`` into ``f, g`` and ``K`` once they leave ``[1/ABSORB, ABSORB]``."""
        u, v, e1 = self.u, self.v, self.e1
        big = torch.maximum(torch.maximum(u, 1 / u), torch.maximum(v, 1 / v)).amax()
        if float(big) > ABSORB:
            self.f, self.g = self.f + e1 * torch.log(u), self.g + e1 * torch.log(v)
            uv = self.pb.arcs.outer(u, v)
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
            self.x, self.y = clip_node(self.x, self.y, self.pb.s, self.pb.d, self.pb.ncap)

    def end_stage(self) -> None:
        """Absorb into the potentials for the next stage; the pinned self-flow stays ``d``."""
        self.f = self.f + self.e1 * torch.log(self.u)
        self.g = self.g + self.e1 * torch.log(self.v)
        self.h = self.pb.d.clone()
        self.K = self.K0 = None


def _log_q_step(log_ab: torch.Tensor, s: torch.Tensor, log_abs_half_s: torch.Tensor,
                d: torch.Tensor, ncap: torch.Tensor | None
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """The q-step in logs: ``log x, log y`` from ``log ab`` (see ``_Scaling.q_step``)."""
    log_r = 0.5 * torch.logaddexp(log_ab, 2 * log_abs_half_s)
    log_t = torch.logaddexp(log_r, log_abs_half_s)
    lx = torch.where(s < 0, log_ab - log_t, log_t)
    ly = torch.where(s > 0, log_ab - log_t, log_t)
    if ncap is not None:
        lx, ly = log_clip_node(lx, ly, s, d, ncap)
    return lx, ly


def _run_log(pb: _Problem) -> tuple:
    """Log-domain twin of :func:`_run_scaling`: ``f = log u``, ``g = log v``, ``log K``.

    The self-loop kernel ``log K_ii`` is kept apart in ``lkd`` (the diagonal of ``logK`` is
    -inf), so the pinned ``K_ii = d / (u_i v_i)`` never meets the capacity clip. Across ε
    stages the potentials ``eps·f``, ``eps·g`` carry over.
    """
    s, d, arcs = pb.s, pb.d, pb.arcs
    log_d = torch.log(d)
    log_cap = torch.log(pb.cap) if pb.cap is not None else None
    log_half_s = torch.log(0.5 * s.abs())
    lx, ly = torch.log(s.clamp_min(0) + d), torch.log((-s).clamp_min(0) + d)
    f, g = torch.zeros_like(s), torch.zeros_like(s)
    lkd = torch.zeros_like(s)  # self-loop kernel 1 (cost 0) before the first pin
    track = _Track(pb)
    it = 0
    prev = None
    for k, stage in enumerate(pb.stages):
        if prev is not None:
            ratio = prev / stage.eps1
            f, g = f * ratio, g * ratio
            lkd = log_d - f - g
        prev = stage.eps1
        logK0 = arcs.log_kernel(stage.eps)
        logK = logK0.clone() if log_cap is not None and not pb.cumulative else logK0
        lKv = arcs.lse_rows(logK, g, lkd + g)
        newton = True  # until Newton gives up on this stage
        while True:
            it += 1
            f = lx - lKv
            g = ly - arcs.lse_cols(logK, f, lkd + f)
            lkd = log_d - f - g
            if log_cap is not None and it > WARMUP:
                # (cumulative: logK is logK0, so the clip accumulates)
                arcs.log_clip(logK0, log_cap, f, g, out=logK)
            lKv = arcs.lse_rows(logK, g, log_d - f)
            lKtu = arcs.lse_cols(logK, f, log_d - g)
            if it % CHECK_EVERY == 0 or it == pb.iters:
                viol = (torch.exp(f + lKv) - torch.exp(g + lKtu) - s).abs().amax(-1)
                P = arcs.log_plan(f, logK, g)
                if track.check(it, stage, viol, P):
                    return track.result(P)
                if newton and _handover(pb, viol):
                    res, phi, it, newton = _newton(pb, pb.stages[k:],
                                                   0.5 * stage.eps1 * (f - g), it, track.hist)
                    if res is not None:
                        return res
                    f, g = phi / stage.eps1, -phi / stage.eps1
                    lkd = log_d - f - g
                    if newton:  # the stage is done
                        break
                    lKv = arcs.lse_rows(logK, g, lkd + g)
                    continue
                if bool((viol <= stage.thr).all()):
                    break
            lx, ly = _log_q_step(lKv + lKtu, s, log_half_s, d, pb.ncap)
        del logK, logK0
    raise AssertionError("unreachable")
