"""Reproduction of GSD's central claim on LaneReach (the spec's CPU-scale domain).

Setting (fixed before measuring, issues 16, 38, 53 and 72): 20 noisy (0.1) PD demos per lane
y* ∈ {−1, 1}; z ∈ R²; PPO with MLP(64, 64), λ_I = 0.1, c = 10, the official
discriminator (offset b, BCE on D, lr 1e-3, penalty centred at 1, 5 steps per iteration);
GSD adds λ₀ = 100 and λ_C chosen on the training lanes (below). Arms on the same demos and
seeds: GSD, IG+M, IG+M+SN (the paper's baselines) and style-coded BC (what a user tries
first). Evaluation: 300 prior codes, one deterministic episode each; VL10 on held-out
interpolation targets {−0.5, 0, 0.5} (the claim) and extrapolation targets {±1.2} (evidence).

Testbed (issues 53 and 72): with lanes {−0.8, 0, 0.8} and targets {±0.4}, IG+M (0.090) already
matched experts on uniform lanes (0.092), so no arm could show a 20 % gain. Issue 53 chose
lanes ±0.8 (targets −0.4, 0, 0.4) on one held-apart seed; on the claim seeds its control
failed (experts 0.104 vs IG+M 0.101). Issue 72's pilot (:mod:`iclr25.gsd.pilot`, IG+M alone
on held-apart seeds 7, 8, 9, by a rule fixed before it ran) chose the wider gap, lanes ±1.0,
the only candidate whose control held on every pilot seed (rule, table and choice in the
deviations). The claim's control asks that experts on uniform lanes beat IG+M by the claim's
own margin and that IG+M learned.

λ_C is chosen by a separate experiment, :func:`select_relevance_scale`: GSD at λ_C ∈ {1e-2,
1e-1, 3e-1, 1}, 2 seeds (0, 1), VL10 on the *demonstrated* lanes only; its choice is written
by hand into :data:`RELEVANCE_SCALE` (with the figures it was chosen from) before the claim
runs on the held-out lanes with seeds 2–4. The selection is the procedure that fixed the
setting, not evidence for the paper: the former claim ``gsd.relevance_scale_selected``
(constant == selection's output) was retired (issue 74), its reason in the deviations.

Scale: 64 of the issue's 256 envs (measured on one thread: 0.21 CPU-s per GSD iteration at
64 envs, 0.58 at 256; the 64-env claim run took 233 CPU-s in all, at 256 it would take about
11 CPU-min, ~5.5 min on 2 idle cores, over the issue's 5, and the selection would be re-run).
The (arm, seed) runs are independent jobs of :meth:`iclr25.claims.Context.map_jobs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch

from iclr25.claims import Comparison, Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.gsd.evaluation import evaluate, recovery_error
from iclr25.gsd.networks import LatentPolicy
from iclr25.gsd.testbed import LANE_REACH_ID, LaneReachVec, lane_demos, lane_expert
from iclr25.gsd.training import GSDConfig, style_coded_bc, train

# the testbed chosen by issue 72's pilot (iclr25.gsd.pilot, _PILOT_RULE): demonstrated lanes
# ±1.0, three held-out lanes between them; extrapolation 0.2 beyond, as ±1.0 was beyond ±0.8
LANES = (-1.0, 1.0)
INTERP = (-0.5, 0.0, 0.5)
EXTRAP = (-1.2, 1.2)
BUDGETS = (10, 20, 30, 40, 50)
RL_ARMS = {"IG+M": dict(regularizer="none", clip=10.0),
           "IG+M+SN": dict(regularizer="spectral", clip=10.0),
           "GSD": dict(regularizer="gsd", clip=10.0)}
ARMS = (*RL_ARMS, "BC")
SCALES = (1e-2, 1e-1, 3e-1, 1.0)
DEFAULT_SCALE = GSDConfig().relevance_scale
CLAIM_RATIO = 0.8   # the claim's threshold (issue 16, unchanged)
LEARNED = 0.5       # IG+M learned: VL10 on its lanes <= this x its untrained self's

# λ_C for the held-out claim, chosen by ``gsd.select_relevance_scale`` at full scale (seeds
# 0-1, demonstrated lanes ±1.0 only, 2026-12-07, after issue 72's testbed change; 4 workers of
# one thread): seed-mean VL10 1e-2: 0.172 (constraint violated on 87% of transitions), 1e-1:
# 0.163, 3e-1: 0.160, 1: 0.173 -> 3e-1. (On lanes ±0.8 it chose 1, on -0.8, 0, 0.8 it chose
# 3e-1.) Written here by hand before the held-out claim (seeds 2-4) ran.
RELEVANCE_SCALE = 0.3


def separable(lanes_igm: float, lanes_untrained: float, igm: float, experts: float) -> bool:
    """Issue 53's testbed rule, and the claim's control: IG+M learned (its VL10 on the
    demonstrated lanes is at most ``LEARNED`` x its untrained self's) and experts on uniform
    lanes beat it on the held-out targets by the claim's margin (VL_K <= ``CLAIM_RATIO`` x
    IG+M's), so that the testbed leaves room for the claimed gain. Reads baselines only."""
    return lanes_igm <= LEARNED * lanes_untrained and experts <= CLAIM_RATIO * igm


def choose_testbed(pilot: list[tuple[str, float, float, float, float]]) -> str | None:
    """The first candidate, in the pilot's fixed order, that is :func:`separable`; rows are
    ``(name, lanes_igm, lanes_untrained, igm, experts)``. None: keep the current testbed."""
    return next((row[0] for row in pilot if separable(*row[1:])), None)


@dataclass(frozen=True)
class _Run:
    """One (arm, seed) run: a job of :func:`_run`."""

    arm: str                      # a key of RL_ARMS, or "BC"
    seed: int
    num_envs: int
    iterations: int
    relevance_scale: float        # λ_C (GSD only)
    bc_epochs: int                # BC only
    n_codes: int
    targets: tuple[float, ...]    # the lanes scored
    device: str
    lanes: tuple[float, ...] = LANES  # the demonstrated lanes (the pilot tries others)
    n_per_lane: int = 20              # demos per lane


def _run(job: _Run) -> dict:
    """Train one arm on the seed's demos; roll out ``n_codes`` prior codes; score on targets."""
    seed, device, n_codes, lanes = job.seed, job.device, job.n_codes, job.lanes
    demos = lane_demos(lanes, job.n_per_lane, noise=0.1, seed=seed, device=device)
    if job.arm == "BC":
        policy = style_coded_bc(demos, len(lanes), epochs=job.bc_epochs, seed=seed,
                                device=device)
        violated = math.nan
    else:
        cfg = GSDConfig(num_envs=job.num_envs, iterations=job.iterations,
                        relevance_scale=job.relevance_scale, **RL_ARMS[job.arm])
        out = train(LANE_REACH_ID, demos, cfg, seed=seed, device=device)
        policy, violated = out.policy, out.history[-1]["violated"]
    # the same initialisation as the trained policy (train seeds it with ``seed``), untrained
    untrained = LatentPolicy(policy.obs_dim, policy.act_dim, policy.z_dim, seed=seed).to(device)
    f0 = evaluate(untrained, LANE_REACH_ID, targets=lanes, n_codes=n_codes, seed=seed + 1)
    ev = evaluate(policy, LANE_REACH_ID, targets=job.targets, n_codes=n_codes, budgets=BUDGETS,
                  seed=seed + 1)
    f = ev.factors.cpu()
    return dict(vl={b: ev.vl[b] for b in BUDGETS}, extrap=recovery_error(f, EXTRAP, 10),
                lanes=recovery_error(f, lanes, 10), lanes_untrained=f0.vl[10],
                selected_success=ev.selected_success, factors=f,
                demo_lo=float(demos.episode_factors.min()),
                demo_hi=float(demos.episode_factors.max()), violated=violated)


# --- 1. λ_C chosen on the demonstrated lanes --------------------------------------------------

@dataclass(frozen=True)
class Selection(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("iterations",)  # PPO iterations
    scales: tuple[float, ...]  # λ_C grid (issue 38)
    seeds: tuple[int, ...]     # selection seeds; the claim uses others
    num_envs: int
    iterations: int
    n_codes: int = 300


@dataclass
class SelectionEvidence(Evidence):
    chosen_relevance_scale: float = scalar("λ_C", "argmin of the seed-mean VL10 on the "
                                                  "demonstrated lanes")
    used_relevance_scale: float = scalar("λ_C", "RELEVANCE_SCALE, used by the held-out claim")
    vl10_chosen: float = scalar("|f − target|")
    by_scale: Table | None = None


_TESTBED_DEV = (
    "testbed (issue 53): demonstrated lanes ±0.8 and held-out lanes -0.4, 0, 0.4 (was lanes "
    "-0.8, 0, 0.8, targets ±0.4, where IG+M's VL10 0.090 already matched experts on uniform "
    "lanes, 0.092). Chosen by a rule fixed before a pilot that trained IG+M ALONE on held-apart "
    "seed 7 (64 envs, 120 iterations, 300 codes): candidates in order (1) current, (2) wider "
    "gap with more held-out lanes between the demonstrated ones, (3) K = 3, (4) longer "
    "horizon; the first where IG+M learned (VL10 on its lanes <= 0.5 x its untrained self's) "
    "and experts on uniform lanes in [-1, 1] beat it by the claim's margin (VL_K(experts) <= "
    "0.8 x VL_K(IG+M) on the targets). Pilot, VL10: (1) IG+M on lanes 0.126 (untrained "
    "0.481), on targets 0.073, experts 0.090, ratio 1.22: fails; (2) IG+M on lanes 0.143 "
    "(untrained 0.718), on targets 0.127, experts 0.089, ratio 0.70: passes, chosen; (3) and "
    "(4) not needed",)
_PILOT_RULE = (
    "testbed (issue 72): issue 53's one-seed pilot did not transfer (on the claim seeds experts "
    "0.104 vs IG+M 0.101). Rule, fixed before a pilot (iclr25.gsd.pilot) that trains IG+M ALONE "
    "at the claim's full training on held-apart seeds 7, 8, 9: candidates in order (1) current "
    "(lanes ±0.8, targets -0.4, 0, 0.4), (2) the spec's targets ±0.4 on the same lanes, (3) "
    "wider gap (lanes ±1.0, targets -0.5, 0, 0.5), (4) 5 demos per lane; the first where the "
    "claim's control (IG+M learned; experts on uniform lanes <= 0.8 x IG+M's VL10 on the "
    "targets) holds on every pilot seed; with none, the one (IG+M learned on every seed) with "
    "the smallest seed-mean experts / IG+M ratio; changed demonstrations re-run the λ_C "
    "selection. Pilot, VL10 (seeds 7, 8, 9: IG+M on its lanes / untrained, IG+M and experts "
    "on the targets, ratio): (1) current 0.143/0.718, 0.127 vs 0.101 (0.79); 0.158/0.719, "
    "0.110 vs 0.095 (0.86); 0.173/0.717, 0.144 vs 0.107 (0.74): fails on seed 8; (2) spec "
    "targets 0.133 vs 0.095 (0.71), 0.107 vs 0.083 (0.77), 0.147 vs 0.120 (0.82): fails on "
    "seed 9; (3) wider gap 0.129/0.918, 0.130 vs 0.095 (0.74); 0.186/0.919, 0.134 vs 0.089 "
    "(0.67); 0.204/0.917, 0.167 vs 0.112 (0.67): passes on every seed, chosen (lanes ±1.0, "
    "targets -0.5, 0, 0.5, extrapolation ±1.2); (4) fewer demos 0.088 vs 0.101 (1.15), "
    "0.098 vs 0.095 (0.96), 0.127 vs 0.107 (0.84): fails",)
_RETIRED = ("λ_C = RELEVANCE_SCALE was chosen before the claim by gsd.select_relevance_scale "
            "(GSD at each λ_C on the demonstrated lanes, seeds 0-1). The former claim "
            "gsd.relevance_scale_selected, that this constant equals the selection's output, was "
            "retired (issue 74): it checked bookkeeping (a copied constant), not the method, "
            "and held whenever the copy was right",)
_SEL_DEV = ("64 of the issue's 256 envs: 256 cost 2.8x the CPU per iteration (0.58 vs 0.21 "
            "CPU-s), over the issue's 5 minutes on 2 cores", *_TESTBED_DEV, *_PILOT_RULE)


@experiment(quick=Selection(scales=SCALES, seeds=(0,), num_envs=32, iterations=2,
                            n_codes=100, deviations=_SEL_DEV + (
                                "smoke test: 1 seed, 2 iterations, 100 codes",)),
            full=Selection(scales=SCALES, seeds=(0, 1), num_envs=64, iterations=120,
                           deviations=_SEL_DEV + (
                               "8 runs x 120 iterations, the claim's training budget, so that "
                               "the choice transfers",)),
            random=(
                "demonstrations",
                "policy and discriminator initialisations",
                "environment resets",
                "evaluation codes",
            ),
            per_draw=("seeds",),
            cost=(2, 129))
def select_relevance_scale(setting: Selection, ctx: Context) -> SelectionEvidence:
    """GSD at each λ_C on the training lanes only: VL10 against the demonstrated lanes."""
    seeds = [ctx.seed * 1000 + s for s in setting.seeds]
    jobs = [_Run("GSD", sd, setting.num_envs, setting.iterations, lam, 0, setting.n_codes,
                 LANES, str(ctx.device)) for lam in setting.scales for sd in seeds]
    out = ctx.map_jobs(_run, [(j,) for j in jobs])
    rows, mean_vl = [], {}
    for lam in setting.scales:
        rs = [r for j, r in zip(jobs, out, strict=True) if j.relevance_scale == lam]
        mean_vl[lam] = sum(r["vl"][10] for r in rs) / len(rs)
        rows.append((lam, mean_vl[lam], sum(r["violated"] for r in rs) / len(rs),
                     sum(float(r["factors"].std()) for r in rs) / len(rs)))
    chosen = min(setting.scales, key=lambda lam: mean_vl[lam])
    return SelectionEvidence(
        chosen_relevance_scale=chosen, used_relevance_scale=RELEVANCE_SCALE,
        vl10_chosen=mean_vl[chosen],
        by_scale=Table("GSD on the demonstrated lanes, seed mean",
                       ("λ_C", f"VL10 on lanes {set(LANES)}", "violated fraction (last)",
                        "behaviour spread (sd)"), rows))


# --- 2. the claim on held-out lanes --------------------------------------------------------

@dataclass(frozen=True)
class LaneSetting(Setting):
    # budget: PPO iterations and the BC arms' epochs
    budget_fields: ClassVar[tuple[str, ...]] = ("iterations", "bc_epochs")
    num_envs: int              # PPO envs per iteration (issue: 256; 64, see the module doc)
    iterations: int            # PPO iterations, one 40-step episode per env each
    seeds: tuple[int, ...]     # same seeds for every arm; not the selection's seeds
    relevance_scale: float     # λ_C, from gsd.select_relevance_scale (RELEVANCE_SCALE)
    n_per_lane: int = 20       # demos per lane (issue)
    n_codes: int = 300         # prior codes at evaluation (issue)
    bc_epochs: int = 30        # style-coded BC epochs over the demos


@dataclass
class LaneEvidence(Evidence):
    vl10_ratio: float = scalar("VL10 GSD / IG+M")
    vl10_gsd: float = scalar("|f − target|")
    vl10_igm: float = scalar("|f − target|")
    vl10_igm_sn: float = scalar("|f − target|")
    vl10_bc: float = scalar("|f − target|", "style-coded BC")
    vl10_extrap_gsd: float = scalar("|f − target|")
    vl10_extrap_igm: float = scalar("|f − target|")
    selected_success_gsd: float = scalar("fraction")
    selected_success_igm: float = scalar("fraction")
    igm_mean_factor_lo: float = scalar("lane y", "lowest per-seed mean factor of IG+M's codes")
    igm_mean_factor_hi: float = scalar("lane y", "highest per-seed mean factor of IG+M's codes")
    vl10_lanes_igm: float = scalar("|f − target|", "IG+M on the demonstrated lanes")
    vl10_lanes_igm_untrained: float = scalar("|f − target|", "IG+M's initial policy (step 0) "
                                                             "on the demonstrated lanes")
    vl10_lanes_code_blind: float = scalar("|f − target|", "the best behaviour that ignores "
                                                          "its code, on the demonstrated lanes")
    demo_factor_lo: float = scalar("lane y", "lowest demonstrated factor")
    demo_factor_hi: float = scalar("lane y", "highest demonstrated factor")
    vl10_copy_lanes: float = scalar("|f − target|", "a policy that only copies the lanes")
    vl10_uniform_experts: float = scalar("|f − target|", "experts on uniform lanes")
    uniform_experts_success: float = scalar("fraction", "experts on uniform lanes reach x >= 1")
    per_seed: Table | None = None
    vl_by_budget: Table | None = None


def _code_blind_vl() -> float:
    """VL_K on the demonstrated lanes of a policy whose behaviour ignores its code: one
    factor c for every code, at best the lanes' median (|y − c| summed is least there)."""
    return min(sum(abs(y - c) for y in LANES) for c in LANES) / len(LANES)


def _reference_points(n_codes: int, seed: int, device, lanes: tuple[float, ...] = LANES,
                      targets: tuple[float, ...] = INTERP) -> tuple[float, float, float]:
    """VL10 on ``targets`` of copying the demo lanes and of experts on uniform lanes in
    [−1, 1], and those experts' success (x >= 1 at the end): what the testbed allows."""
    g = torch.Generator().manual_seed(seed)
    copy = torch.tensor(lanes)[torch.randint(len(lanes), (n_codes,), generator=g)]
    expert = lane_expert((torch.rand(n_codes, generator=g) * 2 - 1).to(device))
    env = LaneReachVec(n_codes, device=device)
    obs = env.reset(seed=g)
    for _ in range(env.horizon):
        obs, _, _, _, info = env.step(expert(obs))
    return (recovery_error(copy, targets, 10), recovery_error(info["factor"], targets, 10),
            float(info["success"].float().mean()))


_LANE_DEV = ("64 of the issue's 256 envs: 256 cost 2.8x the CPU per iteration (0.58 vs 0.21 "
             "CPU-s), ~11 CPU-min for the 9 runs, over the issue's 5 minutes on 2 cores",
             *_TESTBED_DEV, *_PILOT_RULE)


@experiment(quick=LaneSetting(num_envs=32, iterations=3, seeds=(2,),
                             relevance_scale=RELEVANCE_SCALE, n_codes=100, bc_epochs=2,
                             deviations=_LANE_DEV + _RETIRED + (
                                 "smoke test: 1 seed, 3 iterations, 100 codes",)),
            full=LaneSetting(num_envs=64, iterations=120, seeds=(2, 3, 4),
                             relevance_scale=RELEVANCE_SCALE, deviations=_LANE_DEV + _RETIRED),
            random=(
                "demonstrations",
                "policy and discriminator initialisations",
                "environment resets",
                "evaluation codes and reference points",
            ),
            per_draw=("seeds",),
            cost=(2.3, 121))
def lane_reach(setting: LaneSetting, ctx: Context) -> LaneEvidence:
    seeds = [ctx.seed * 1000 + s for s in setting.seeds]
    jobs = [_Run(arm, sd, setting.num_envs, setting.iterations, setting.relevance_scale,
                 setting.bc_epochs, setting.n_codes, INTERP, str(ctx.device),
                 n_per_lane=setting.n_per_lane)
            for sd in seeds for arm in ARMS]
    out = dict(zip([(j.arm, j.seed) for j in jobs],
                   ctx.map_jobs(_run, [(j,) for j in jobs]), strict=True))

    def mean(arm: str, key: str, budget: int | None = None) -> float:
        vals = [out[arm, sd][key] for sd in seeds]
        return sum(v[budget] if budget else v for v in vals) / len(vals)

    rows = [(s, arm, out[arm, sd]["vl"][10], out[arm, sd]["extrap"],
             out[arm, sd]["selected_success"], float(out[arm, sd]["factors"].mean()))
            for s, sd in zip(setting.seeds, seeds, strict=True) for arm in ARMS]
    igm_means = [float(out["IG+M", sd]["factors"].mean()) for sd in seeds]
    copy_vl, uniform_vl, uniform_succ = _reference_points(setting.n_codes, ctx.seed,
                                                          ctx.device)

    fig = ctx.figure("factor_histogram", figsize=(4 * len(ARMS), 3))
    for ax, arm in zip(fig.subplots(1, len(ARMS), sharey=True), ARMS, strict=True):
        ax.hist(torch.cat([out[arm, sd]["factors"] for sd in seeds]).numpy(), bins=40,
                range=(-1.5, 1.5), color="0.5")
        for y in LANES:
            ax.axvline(y, color="tab:blue", lw=1)
        for y in INTERP + EXTRAP:
            ax.axvline(y, color="tab:red", ls="--", lw=1)
        ax.set_title(f"{arm}: behaviour factor of prior codes")
        ax.set_xlabel("mean lane y (blue: demos, red: held-out)")
    fig2 = ctx.figure("vl_by_budget")
    ax = fig2.subplots()
    budget_rows = []
    for arm in ARMS:
        curve = [mean(arm, "vl", b) for b in BUDGETS]
        ax.plot(BUDGETS, curve, marker="o", label=arm)
        budget_rows += [(arm, b, v) for b, v in zip(BUDGETS, curve, strict=True)]
    ax.set_xlabel("budget K")
    ax.set_ylabel("VL_K, interpolation targets")
    ax.legend()

    return LaneEvidence(
        vl10_ratio=mean("GSD", "vl", 10) / max(mean("IG+M", "vl", 10), 1e-12),
        vl10_gsd=mean("GSD", "vl", 10), vl10_igm=mean("IG+M", "vl", 10),
        vl10_igm_sn=mean("IG+M+SN", "vl", 10), vl10_bc=mean("BC", "vl", 10),
        vl10_extrap_gsd=mean("GSD", "extrap"), vl10_extrap_igm=mean("IG+M", "extrap"),
        selected_success_gsd=mean("GSD", "selected_success"),
        selected_success_igm=mean("IG+M", "selected_success"),
        igm_mean_factor_lo=min(igm_means), igm_mean_factor_hi=max(igm_means),
        vl10_lanes_igm=mean("IG+M", "lanes"), vl10_lanes_code_blind=_code_blind_vl(),
        vl10_lanes_igm_untrained=mean("IG+M", "lanes_untrained"),
        demo_factor_lo=min(out["GSD", sd]["demo_lo"] for sd in seeds),
        demo_factor_hi=max(out["GSD", sd]["demo_hi"] for sd in seeds),
        vl10_copy_lanes=copy_vl, vl10_uniform_experts=uniform_vl,
        uniform_experts_success=uniform_succ,
        per_seed=Table("per seed and arm", ("seed", "arm", "VL10 interp", "VL10 extrap",
                                            "selected success", "mean factor"), rows),
        vl_by_budget=Table("VL_K on interpolation targets, seed mean", ("arm", "K", "VL_K"),
                           budget_rows),
    )


@claim("gsd.interpolation_recovery", experiment=lane_reach,
       sentence="GSD recovers held-out behaviour factors better than InfoGAIL with a bounded "
                "discriminator.",
       metric="VL10(GSD) / VL10(IG+M) on interpolation targets {−0.5, 0, 0.5}, seed mean",
       unit="ratio",
       paper_figure="≈21 % below the best baseline (abstract, VL50); VL10-all GSD vs IG+M in "
                    "the official repo's logs (workshop code, 5 seeds; spec §3.3): .101/.113 "
                    "pendulum, .226/.287 HalfCheetah, .046/.058 Fetch, ratios 0.79-0.89",
       threshold=CLAIM_RATIO, direction="<=", baseline="IG+M",
       # issue 53's control, fixed (with the testbed's rule) before the claim seeds ran
       control=lambda ev: separable(ev.vl10_lanes_igm, ev.vl10_lanes_igm_untrained,
                                    ev.vl10_igm, ev.vl10_uniform_experts),
       control_doc=f"IG+M learned (VL10 on the demonstrated lanes <= {LEARNED} x its untrained "
                   f"self's) and the testbed leaves room for the claimed gain: experts on "
                   f"uniform lanes in [-1, 1] reach VL10 <= {CLAIM_RATIO} x IG+M's on the "
                   f"held-out targets",
       competitors=lambda ev: {"IG+M+SN": ev.vl10_igm_sn, "BC": ev.vl10_bc})
def interpolation_recovery(ev: LaneEvidence) -> Comparison:
    return Comparison(ours=ev.vl10_gsd, baseline=ev.vl10_igm, value=ev.vl10_ratio)


@claim("gsd.selected_behaviours_succeed", experiment=lane_reach,
       sentence="Behaviours selected for held-out factors still do the task.",
       metric="success (x >= 1) of GSD's per-chunk argmin behaviours, interpolation targets",
       unit="fraction",
       paper_figure="RT-VL 900/1000 on InvertedPendulum (IG+M 870), repo logs",
       threshold=0.9, direction=">=",
       control=lambda ev: (ev.uniform_experts_success >= 0.9
                           and ev.vl10_lanes_igm <= LEARNED * ev.vl10_lanes_igm_untrained),
       control_doc=f"the testbed allows it (experts on uniform lanes in [-1, 1] reach x >= 1 in "
                   f">= 90 % of episodes) and IG+M learned (VL10 on the demonstrated lanes <= "
                   f"{LEARNED} x its untrained self's)",
       trivial=lambda ev: ev.selected_success_igm,
       trivial_doc="IG+M's selected behaviours in GSD's place")
def selected_behaviours_succeed(ev: LaneEvidence) -> float:
    return ev.selected_success_gsd
