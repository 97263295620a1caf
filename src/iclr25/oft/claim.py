"""OFT reproduction: OFT-Sinkhorn and capacity-constrained EOFT-Sinkhorn vs the LP optimum.

The paper's central claim (abstract, Table 1) is that the matrix iterations "approximate
optimal solutions" of min-cost flow while keeping flow balance. We solve the paper's
``uniform_WO`` three-layer instances (random points, Euclidean costs) exactly with HiGHS and
with OFT-Sinkhorn at reg = 1e-3 (relative to the largest cost), at most 20000 iterations,
stopping once the balance violation is <= 1e-6·Σs⁺, and measure the worst relative cost gap
over seeds. A gap only counts if the flow is feasible: balance violation <= 1e-6·Σs⁺ (and
capacity violation <= 1e-9·cap), else it counts as ``INFEASIBLE`` = 1 (a 100% gap: a fail,
not an inf reading, which the report would call inconclusive), since an off-balance flow can
cost *less* than the optimum (research notes). The capacitated claim would be uninformative if
the caps did not bind (its control); the cap is a quarter of the largest edge flow of the exact
uncapacitated optimum, which raises the LP optimum by several percent (reported).

Why the capacitated gap read 0.041 (6x the issue's pilot) before issue 39: the paper's clip
``K = min(K, cap / (u vᵀ))`` is cumulative, so every cap that bound during the transient stays
bound and the flow is pushed onto dearer edges. Clipping the unclipped kernel at every step
(the exact dual update) removes it; the capacitated table reports the paper's clip beside ours
on the same instances (``paper iteration``: one stage, cumulative clip).

Controls: HiGHS's exact flows are feasible and their optimum finite and positive (a solver's
"did the baseline learn?"). Trivial arm: the cost-blind flow s⁺d⁻ᵀ/Σs⁺ on the direct
source-sink edges, which must not be near-optimal.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import ClassVar

import torch

from iclr25.claims import (
    Comparison,
    Context,
    Evidence,
    Setting,
    Table,
    claim,
    experiment,
    scalar,
)
from iclr25.oft.flow import flow_cost, flow_violations, min_cost_flow, oft_sinkhorn
from iclr25.oft.instances import make_layered


@dataclass(frozen=True)
class Layered(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("iters", "sweep_iters")  # solver iterations
    layer: int  # nodes per layer (sources, transit, sinks); the 100 = n 300, 40k edges
    seeds: tuple[int, ...]  # instances; worst seed is the claim
    reg: float  # the 1e-3, relative to the largest cost
    iters: int  # the budget of 20000 iterations
    cap_fraction: float  # uniform cap = this x the largest exact uncapacitated edge flow
    sweep_regs: tuple[float, ...]  # figure: the paper iteration's gap / violation vs iteration
    sweep_iters: int
    sweep_layers: tuple[int, ...]  # figure: gap vs n on the first seed


BALANCE_TOL = 1e-6  # x Σs⁺ (= 1 here): above it the gap counts as INFEASIBLE
CAPACITY_TOL = 1e-9  # x cap
INFEASIBLE = 1.0  # the gap an infeasible flow counts as: fails any threshold below 100%


@dataclass
class LayeredEvidence(Evidence):
    worst_gap: float = scalar("fraction", "worst-seed relative gap, 1 if infeasible")
    worst_cost: float = scalar("cost", "OFT cost on the worst seed")
    worst_lp: float = scalar("cost", "LP optimum on the worst seed")
    worst_gap_capacitated: float = scalar("fraction", "vs the capacitated LP")
    worst_cost_capacitated: float = scalar("cost", "EOFT cost on the worst capacitated seed")
    worst_lp_capacitated: float = scalar("cost", "capacitated LP optimum on that seed")
    worst_gap_paper_clip: float = scalar("fraction", "paper iteration (cumulative clip), "
                                         "1 if infeasible")
    cap_cost_increase: float = scalar("fraction", "capacitated over uncapacitated LP optimum, "
                                      "smallest over seeds")
    lp_violation: float = scalar("fraction", "largest balance violation / Σs⁺ of the two HiGHS "
                                 "flows, or capacity violation / cap of the capacitated one")
    lp_cost_min: float = scalar("cost", "smallest HiGHS optimum over seeds and both problems")
    blind_gap: float = scalar("fraction", "worst-seed gap of the cost-blind flow F = s⁺ d⁻ᵀ on "
                              "the direct source-sink edges to the LP optimum")
    blind_gap_capacitated: float = scalar("fraction", "the same flow against the capacitated "
                                          "optimum, 1 if it breaks a cap")
    per_seed: Table | None = None
    capacitated: Table | None = None
    sweep: Table | None = None


def _gap(cost: float, opt: float, viol: float, cap_viol: float = 0.0,
         cap: float = math.inf) -> float:
    if viol > BALANCE_TOL or cap_viol > CAPACITY_TOL * cap:
        return INFEASIBLE
    return (cost - opt) / opt


_DEVIATIONS = (
    "make_layered draws supplies and demands uniformly in [0.5, 1.5] (normalised); the paper's "
    "uniform_WO json instances are not available offline",
    "ε-scaling (reg annealed from 0.256 to 1e-3) and the capacity clip from the unclipped "
    "kernel (issue 39); the paper's one-stage iteration with its cumulative clip is reported "
    "beside it in the capacitated table",
    "runs end with damped Newton steps on the dual potentials once the violation is "
    "<= 1e-2·Σs⁺ (issue 39: the scaling alone stalls above 1e-6 at n = 300), on the arcs "
    "that carry flow; with capacities semismooth (Levenberg-Marquardt) Newton through the "
    "remaining ε stages, its active arcs only growing within a stage (issue 73: the "
    "capacitated scaling stalled near 2e-4·Σs⁺ after 20000 iterations); each Newton step "
    "counts as one of the 20000 iterations though it costs an n x n Cholesky factorisation",
    "stop at balance violation <= 1e-6·Σs⁺ (the claim's tolerance), checked every 50 "
    "iterations; the official code checks the mean violation every 100 against 1e-8",
)


@experiment(
    quick=Layered(layer=20, seeds=(0,), reg=1e-3, iters=20000, cap_fraction=0.25,
                  sweep_regs=(1e-2, 1e-3), sweep_iters=1000, sweep_layers=(10, 20),
                  deviations=("smoke test: n = 60, one seed",) + _DEVIATIONS),
    full=Layered(layer=100, seeds=(0, 1, 2), reg=1e-3, iters=20000, cap_fraction=0.25,
                 sweep_regs=(1e-2, 3e-3, 1e-3), sweep_iters=5000, sweep_layers=(20, 60, 100),
                 deviations=("3 seeds at n = 300 (the paper goes to thousands of nodes on a "
                             "GPU): CPU budget",) + _DEVIATIONS),
    random=("layered instances: points and supplies",),
    cost=(1, 28),
)
def layered(setting: Layered, ctx: Context) -> LayeredEvidence:
    a = _solve_arms(setting, ctx)
    rows, crows, gaps, cgaps, pgaps = _seed_rows(setting, ctx, a)
    blind, blind_cap = _blind_gaps(a)
    sweep = _sweep_reg(setting, ctx, a) + _sweep_n(setting, ctx)
    w, wc = max(range(len(gaps)), key=gaps.__getitem__), max(range(len(cgaps)),
                                                           key=cgaps.__getitem__)
    return LayeredEvidence(
        worst_gap=gaps[w], worst_cost=float(a.ours["cost"][w]), worst_lp=float(a.lp["cost"][w]),
        worst_gap_capacitated=cgaps[wc], worst_cost_capacitated=float(a.ours_cap["cost"][wc]),
        worst_lp_capacitated=float(a.lp_cap["cost"][wc]), worst_gap_paper_clip=max(pgaps),
        cap_cost_increase=min(r[4] for r in crows),
        lp_violation=a.lp_violation, lp_cost_min=float(min(a.lp["cost"].min(),
                                                           a.lp_cap["cost"].min())),
        blind_gap=max(blind), blind_gap_capacitated=max(blind_cap),
        per_seed=Table("uncapacitated, per seed",
                       ("seed", "LP cost", "OFT cost", "gap", "balance viol / Σs⁺",
                        "iterations", "gap (1 if infeasible)"), rows),
        capacitated=Table("edge-capacitated, per seed: ours (ε-scaling, exact clip) and the "
                          "paper iteration (one stage, cumulative clip)",
                          ("seed", "arm", "cap", "LP cost", "LP over uncapacitated", "OFT cost",
                           "balance viol / Σs⁺", "cap viol", "iterations",
                           "gap (1 if infeasible)"), crows),
        sweep=Table("sweeps on the first seed",
                    ("sweep", "reg", "n", "iterations", "gap", "balance viol / Σs⁺"), sweep),
    )


@dataclass
class _Arms:
    """The instances, their exact optima and the three OFT-Sinkhorn arms' logs."""

    s: torch.Tensor  # (B, n) supplies
    C: torch.Tensor  # (B, n, n) costs
    mass: float  # largest Σs⁺
    caps: torch.Tensor  # (B,) uniform edge cap per instance
    lp: dict  # uncapacitated HiGHS optimum
    lp_cap: dict  # capacitated HiGHS optimum
    ours: dict  # OFT-Sinkhorn, uncapacitated
    ours_cap: dict  # EOFT-Sinkhorn, ε-scaling and exact clip
    paper_cap: dict  # the paper iteration: one stage, cumulative clip
    lp_violation: float  # the exact flows' worst balance (/ Σs⁺) or capacity (/ cap) violation


def _solve_arms(setting: Layered, ctx: Context) -> _Arms:
    """Draw the instances and solve them exactly and with each OFT arm."""
    m = setting.layer
    inst = [make_layered(m, m, m, seed=ctx.seed + k, device=ctx.device) for k in setting.seeds]
    s = torch.stack([i[0] for i in inst])
    C = torch.stack([i[1] for i in inst])
    mass = float(s.clamp_min(0).sum(-1).max())
    F0, lp = min_cost_flow(s, C, log=True)
    caps = setting.cap_fraction * F0.amax(dim=(-2, -1))
    F1, lp_cap = min_cost_flow(s, C, capacity=caps.view(-1, 1, 1), log=True)
    v0, v1 = flow_violations(F0, s), flow_violations(F1, s, capacity=caps.view(-1, 1, 1))
    lp_violation = float(torch.stack([v0["balance_violation"] / mass,
                                      v1["balance_violation"] / mass,
                                      v1["capacity_violation"] / caps]).max())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # non-convergence is in the evidence
        kw = {"numItermax": setting.iters, "stopThr": BALANCE_TOL, "log": True}
        _, lg = oft_sinkhorn(s, C, setting.reg, **kw)
        _, lgc = oft_sinkhorn(s, C, setting.reg, capacity=caps.view(-1, 1, 1), **kw)
        _, lgp = oft_sinkhorn(s, C, setting.reg, capacity=caps.view(-1, 1, 1),
                              epsilon_scaling=False, capacity_clip="paper", **kw)
    return _Arms(s, C, mass, caps, lp, lp_cap, lg, lgc, lgp, lp_violation)


def _blind_gaps(a: _Arms) -> tuple[list[float], list[float]]:
    """Per-seed gaps of the cost-blind flow: each source ships to each sink directly, in
    proportion to supply x demand (balanced by construction), against both LP optima."""
    sup, dem = a.s.clamp_min(0), (-a.s).clamp_min(0)
    F = sup[:, :, None] * dem[:, None, :] / sup.sum(-1)[:, None, None]
    cost = flow_cost(F, a.C)
    viol = flow_violations(F, a.s, capacity=a.caps.view(-1, 1, 1))
    blind = [_gap(float(c), float(o), float(v) / a.mass) for c, o, v in
             zip(cost, a.lp["cost"], viol["balance_violation"], strict=True)]
    blind_cap = [_gap(float(c), float(o), float(v) / a.mass, float(cv), float(cap))
                 for c, o, v, cv, cap in zip(cost, a.lp_cap["cost"], viol["balance_violation"],
                                             viol["capacity_violation"], a.caps, strict=True)]
    return blind, blind_cap


def _seed_rows(setting: Layered, ctx: Context, a: _Arms
               ) -> tuple[list, list, list[float], list[float], list[float]]:
    """Per-seed rows (uncapacitated, capacitated) and gaps (ours, ours capacitated, paper)."""
    lp, lp_cap, lg, lgc, lgp, mass = a.lp, a.lp_cap, a.ours, a.ours_cap, a.paper_cap, a.mass
    rows, crows, gaps, cgaps, pgaps = [], [], [], [], []
    for b, seed in enumerate(setting.seeds):
        g = _gap(float(lg["cost"][b]), float(lp["cost"][b]),
                 float(lg["balance_violation"][b]) / mass)
        gc, gp = (_gap(float(lgx["cost"][b]), float(lp_cap["cost"][b]),
                       float(lgx["balance_violation"][b]) / mass,
                       float(lgx["capacity_violation"][b]), float(a.caps[b]))
                  for lgx in (lgc, lgp))
        gaps.append(g)
        cgaps.append(gc)
        pgaps.append(gp)
        rows.append((ctx.seed + seed, float(lp["cost"][b]), float(lg["cost"][b]),
                     (float(lg["cost"][b]) - float(lp["cost"][b])) / float(lp["cost"][b]),
                     float(lg["balance_violation"][b]) / mass, int(lg["n_iter"][b]), g))
        for arm, lgx, gx in (("ours", lgc, gc), ("paper iteration", lgp, gp)):
            crows.append((ctx.seed + seed, arm, float(a.caps[b]), float(lp_cap["cost"][b]),
                          float(lp_cap["cost"][b]) / float(lp["cost"][b]) - 1,
                          float(lgx["cost"][b]), float(lgx["balance_violation"][b]) / mass,
                          float(lgx["capacity_violation"][b]), int(lgx["n_iter"][b]), gx))
    return rows, crows, gaps, cgaps, pgaps


def _sweep_reg(setting: Layered, ctx: Context, a: _Arms) -> list[tuple]:
    """Figure 1: the paper iteration's gap and balance violation vs iteration per reg."""
    fig = ctx.figure("gap_vs_iteration", figsize=(9, 3.5))
    ax1, ax2 = fig.subplots(1, 2)
    opt0 = float(a.lp["cost"][0])
    m = setting.layer
    sweep = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for reg in setting.sweep_regs:
            _, lr = oft_sinkhorn(a.s[0], a.C[0], reg, numItermax=setting.sweep_iters,
                                 stopThr=0.0, epsilon_scaling=False, newton=False, log=True)
            h = lr["history"]
            ax1.plot(h["iteration"], [abs(c - opt0) / opt0 for c in h["cost"]],
                     label=f"reg={reg:g}")
            ax2.plot(h["iteration"], h["violation"], label=f"reg={reg:g}")
            sweep.append(("reg", reg, 3 * m, h["iteration"][-1], (lr["cost"] - opt0) / opt0,
                          h["violation"][-1]))
    ax1.set(xlabel="iteration", ylabel="|cost − LP| / LP", yscale="log",
            title=f"n={3 * m}, seed {ctx.seed + setting.seeds[0]}")
    ax2.set(xlabel="iteration", ylabel="max balance violation / Σs⁺", yscale="log")
    ax2.axhline(BALANCE_TOL, color="k", ls=":", lw=1)
    ax1.legend()
    fig.tight_layout()
    return sweep


def _sweep_n(setting: Layered, ctx: Context) -> list[tuple]:
    """Figure 2: the gap vs n at the claim's reg, on the first seed."""
    fig2 = ctx.figure("gap_vs_n", figsize=(4.5, 3.5))
    ax = fig2.subplots()
    ns, gs, sweep = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for k in setting.sweep_layers:
            sk, Ck = make_layered(k, k, k, seed=ctx.seed + setting.seeds[0], device=ctx.device)
            _, lk = min_cost_flow(sk, Ck, log=True)
            _, lo = oft_sinkhorn(sk, Ck, setting.reg, numItermax=setting.iters,
                                 stopThr=BALANCE_TOL, log=True)
            gap = (lo["cost"] - lk["cost"]) / lk["cost"]
            ns.append(3 * k)
            gs.append(gap)
            sweep.append(("n", setting.reg, 3 * k, lo["n_iter"], gap,
                          lo["balance_violation"] / float(sk.clamp_min(0).sum())))
    ax.plot(ns, gs, "o-")
    ax.set(xlabel="nodes n", ylabel="relative gap to LP", title=f"reg={setting.reg:g}")
    fig2.tight_layout()
    return sweep


# Did the baseline "learn"? HiGHS is a solver, not a learner, and has no untrained self: what
# the claims need of it is an optimum to measure the gap against. So: its flows are feasible
# to the tolerances OFT's flows are held to (balance 1e-6·Σs⁺; caps 1e-6·cap, looser than
# OFT's 1e-9 since HiGHS's own feasibility tolerance is 1e-7) and its cost is finite and
# positive, so the relative gap is defined. A flow that ignores cost (the trivial arm) is how
# far an untrained "solver" lands.
_LP_TOL = BALANCE_TOL


def _lp_solved(ev: LayeredEvidence) -> bool:
    return ev.lp_violation <= _LP_TOL and math.isfinite(ev.lp_cost_min) and ev.lp_cost_min > 0


_LP_DOC = ("HiGHS solved every instance: its exact flows break balance (/ Σs⁺) and caps (/ cap) "
           "by at most 1e-6 and its optimum is finite and positive.")
_BLIND_DOC = ("the cost-blind flow s⁺d⁻ᵀ/Σs⁺ on the direct source-sink edges (balanced by "
              "construction) in OFT's place: its worst-seed gap")


@claim("oft.near_optimal", experiment=layered,
       sentence="OFT-Sinkhorn approximates the min-cost flow optimum while satisfying flow "
                "balance.",
       metric="worst-seed relative cost gap to the HiGHS optimum (1 if balance violation "
              "> 1e-6·Σs⁺), reg=1e-3, <= 20000 iterations",
       unit="fraction",
       paper_figure="\"approximate optimal solutions\", Table 1 (numbers unverified: checked "
                    "once, the stored text holds the abstract only)",
       threshold=0.02, direction="<=", baseline="HiGHS LP optimum",
       control=_lp_solved, control_doc=_LP_DOC,
       trivial=lambda ev: ev.blind_gap, trivial_doc=_BLIND_DOC)
def near_optimal(ev: LayeredEvidence) -> Comparison:
    return Comparison(ours=ev.worst_cost, baseline=ev.worst_lp, value=ev.worst_gap)


_BIND = 0.005  # the caps must raise the LP optimum by at least this fraction on every seed


@claim("oft.capacitated", experiment=layered,
       sentence="Capacity-constrained EOFT-Sinkhorn returns a flow within the edge capacities "
                "at near-optimal cost.",
       metric="worst-seed relative cost gap to the capacitated HiGHS optimum (1 if balance "
              "violation > 1e-6·Σs⁺ or capacity violation > 1e-9·cap); cap = 0.25 x largest "
              "exact uncapacitated edge flow",
       unit="fraction",
       paper_figure="Capacity-Constrained EOFT-Sinkhorn vs MCF, Table 1 (numbers unverified: "
                    "checked once, the stored text holds the abstract only)",
       threshold=0.02, direction="<=", baseline="capacitated HiGHS LP optimum",
       control=lambda ev: ev.cap_cost_increase >= _BIND and _lp_solved(ev),
       control_doc="The caps bind: on every seed they raise the exact (LP) optimum by at least "
                   "0.5% over the uncapacitated one; and " + _LP_DOC,
       trivial=lambda ev: ev.blind_gap_capacitated,
       trivial_doc=_BLIND_DOC + " against the capacitated optimum, 1 if it breaks a cap")
def capacitated(ev: LayeredEvidence) -> Comparison:
    return Comparison(ours=ev.worst_cost_capacitated, baseline=ev.worst_lp_capacitated,
                      value=ev.worst_gap_capacitated)
