"""Reproduction of LSDT's central claim: one model for long- and short-range dependencies.

Setting (fixed before measuring, from issue 17 §5): hidden 32, 2 blocks, 2 heads, AdamW 1e-3,
warm-up 100, cosine, batch 32, K = 6. Arms on the same data and seeds: DT (ξ = 0), DC (ξ = 1,
static window-6 convs), LSDT (ξ = 0.5, dynamic conv, k = 11, HFM).

1. DelayedCue, T = K = 6: the cue sits 15 tokens before the decision; DC's convolutions reach
   ``receptive_field`` = 10 tokens, so DC is at chance by construction. The paper's claim is
   that LSDT *keeps* DT's long-range ability where DC loses it (issue 53), so the claim reads
   DT too: LSDT ≥ DT − 0.05 and LSDT − DC ≥ 0.3 (one figure, the smaller of the two margins);
   the gap to DC alone was met by DT as well (1.0), which said nothing about LSDT's mixing.
2. Pendulum-v1, 100 medium-replay episodes (50 random, 50 medium; Markovian): normalised
   return at the expert's return target; LSDT should match the better of DT and DC. Issue 38
   asks for a tier on which the baselines are not at the ceiling, chosen before measuring.
   Medium + expert gave DT 0.95-0.98, medium alone max(DT, DC) = 0.967 at full scale (control
   failed). The tier was then chosen from the baselines only, by a rule fixed before the probe:
   the first of (medium-replay, random) on which max(DT, DC), trained at the full setting on
   probe seed 3 (not a claim seed), lies in the control's [0.5, 0.95]. Medium-replay: DT 0.740,
   DC 0.791 -> medium-replay. LSDT was not run in the probe.

Full: 3 seeds, 1000 DelayedCue and 3000 Pendulum steps (the issue's); the 18 (task, arm,
seed) runs are spread over ``--threads`` one-thread workers. 512 CPU-s in all (measured at
load 7-14): at best about 4.3 min on an idle 2-core machine with ``--threads 2``, 8.5 min
with ``--threads 1``; over the issue's 4 min either way. Quick: 1 seed, 50 steps, smaller
Pendulum data (a smoke test, far from converged).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from iclr25._train import seeded_init
from iclr25.claims import Comparison, Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.datasets.control import OfflineDataset
from iclr25.lsdt.model import (
    LongShortDecisionTransformer,
    decision_convformer,
    decision_transformer,
    receptive_field,
)
from iclr25.lsdt.testbed import (
    DELAYED_CUE_ID,
    PENDULUM_EXPERT_RETURN,
    delayed_cue_dataset,
    normalized_score,
    pendulum_dataset,
)
from iclr25.lsdt.training import _normalise, evaluate, train

ARMS = ("DT", "DC", "LSDT")
MODEL = dict(hidden=32, n_blocks=2, n_heads=2, context=6)
OPT = dict(batch_size=32, lr=1e-3, warmup=100)
KEEP_MARGIN = 0.05  # LSDT may fall this far below DT on the cue (as markovian_parity's -0.05)
LEARNED = 0.3       # a baseline "learned": it beats its own untrained self by this much


def _make(arm: str, obs_dim: int, act_dim: int, device, seed: int = 0
          ) -> LongShortDecisionTransformer:
    with seeded_init(seed):
        return _build(arm, obs_dim, act_dim).to(device)


def _build(arm: str, obs_dim: int, act_dim: int) -> LongShortDecisionTransformer:
    if arm == "DT":
        m = decision_transformer(obs_dim, act_dim, **MODEL)
    elif arm == "DC":
        m = decision_convformer(obs_dim, act_dim, **MODEL)
    else:
        m = LongShortDecisionTransformer(obs_dim, act_dim, conv_ratio=0.5, conv="dynamic",
                                         kernel_size=11, **MODEL)
    return m


@dataclass(frozen=True)
class LongShort(Setting):
    # budget: gradient steps per arm and task
    budget_fields: ClassVar[tuple[str, ...]] = ("cue_steps", "pendulum_steps")
    seeds: tuple[int, ...]      # same seeds for all arms
    cue_steps: int              # issue: 1000 (pilot: LSDT at 1.0 from 600)
    pendulum_steps: int         # issue: 3000 (floor 2500 if over 5 min; it is not)
    cue_episodes: int = 400     # issue
    cue_tests: int = 200        # issue
    pendulum_tier: str = "medium-replay"  # issue 38: DT/DC not saturated (module doc)
    pendulum_episodes: int = 100  # issue 17: Pendulum episodes of that tier
    pendulum_tests: int = 20    # issue


@dataclass
class LongShortEvidence(Evidence):
    long_range_gap: float = scalar("success LSDT − DC")
    long_range: float = scalar("success", "min(LSDT − DC, 0.3 + LSDT − (DT − 0.05))")
    parity_gap: float = scalar("normalised return LSDT − max(DT, DC)")
    cue_success_dt: float = scalar("fraction")
    cue_success_dc: float = scalar("fraction")
    cue_success_lsdt: float = scalar("fraction")
    pendulum_dt: float = scalar("normalised return")
    pendulum_dc: float = scalar("normalised return")
    pendulum_lsdt: float = scalar("normalised return")
    pendulum_best_baseline: float = scalar("normalised return", "max(DT, DC)")
    cue_untrained_dt: float = scalar("fraction", "DT before training (step 0)")
    cue_untrained_lsdt: float = scalar("fraction", "LSDT before training (step 0)")
    pendulum_best_untrained: float = scalar("normalised return", "the better of DT and DC "
                                                                 "(by trained return), step 0")
    dc_receptive_field: int = scalar("tokens")
    cue_distance: int = scalar("tokens")
    per_seed: Table | None = None


def _data(setting: LongShort, seed: int) -> tuple[OfflineDataset, OfflineDataset]:
    """The seed's DelayedCue episodes and its Pendulum episodes of the setting's tier."""
    cue = delayed_cue_dataset(setting.cue_episodes, MODEL["context"], seed=seed)
    g = torch.Generator().manual_seed(seed)
    return cue, pendulum_dataset(setting.pendulum_tier, setting.pendulum_episodes, seed=g)


def _arm(setting: LongShort, task: str, arm: str, seed: int, data: OfflineDataset,
         device: str) -> tuple[float, float]:
    """Score one arm on one task before (step 0: its initialisation, normalised to the data)
    and after training: cue success, or Pendulum normalised return."""
    if task == "cue":
        m = _make(arm, 2, 1, device, seed)

        def score() -> float:
            return evaluate(m, DELAYED_CUE_ID, target_return=1.0,
                            n_episodes=setting.cue_tests, seed=seed + 10_000).mean_return

        _normalise(m, data, 1.0)
        before = score()
        train(m, data, steps=setting.cue_steps, rtg_scale=1.0, seed=seed, **OPT)
        return before, score()
    m = _make(arm, 3, 1, device, seed)

    def score() -> float:
        return normalized_score(evaluate(m, "Pendulum-v1", target_return=PENDULUM_EXPERT_RETURN,
                                         n_episodes=setting.pendulum_tests,
                                         seed=seed + 10_000).returns)

    _normalise(m, data, 1000.0)
    before = score()
    train(m, data, steps=setting.pendulum_steps, rtg_scale=1000.0, seed=seed, **OPT)
    return before, score()


_DEVIATIONS = (
    "generated data instead of D4RL (offline, CPU): a DelayedCue memory task for the "
    "non-Markovian side, Pendulum-v1 medium-replay for the Markovian side",
    "Pendulum tier medium-replay, not medium (issue 38 allows either): on medium the baselines "
    "saturated (max(DT, DC) 0.967 > 0.95 at full scale); chosen from DT and DC alone on probe "
    "seed 3 (0.740, 0.791), before LSDT ran on it",
    "hidden 32, 2 blocks, K = 6 (paper: 128, 3, K = 20): CPU budget, every arm alike",
    "lsdt.long_range reads DT as well (issue 53, fixed before measuring): LSDT must keep DT's "
    "cue success within 0.05 and beat DC by 0.3; every arm is also scored untrained (step 0, "
    "normalised to the data) so that the controls can ask whether the baseline learned",
)


@experiment(quick=LongShort(seeds=(0,), cue_steps=50, pendulum_steps=50, pendulum_episodes=8,
                            pendulum_tests=4, deviations=_DEVIATIONS + (
                                "smoke test: 1 seed, 50 steps per task, 8 Pendulum episodes",)),
            full=LongShort(seeds=(0, 1, 2), cue_steps=1000, pendulum_steps=3000,
                           deviations=_DEVIATIONS),
            cost=(16, 445))
def long_short(setting: LongShort, ctx: Context) -> LongShortEvidence:
    T = MODEL["context"]
    rf = receptive_field(_make("DC", 2, 1, "cpu"))
    distance = 3 * (T - 1)       # state token of t = 0 to the state token of t = T - 1
    assert rf < distance, "DelayedCue must put the cue beyond DC's reach"
    seeds = [ctx.seed * 1000 + s for s in setting.seeds]
    data = dict(zip(seeds, ctx.map_jobs(_data, [(setting, sd) for sd in seeds]), strict=True))
    # the longest jobs first, so that the last core is not left alone with a Pendulum run
    jobs = [(task, arm, sd) for task in ("pendulum", "cue") for sd in seeds for arm in ARMS]
    values = ctx.map_jobs(_arm, [(setting, task, arm, sd, data[sd][task == "pendulum"],
                                  str(ctx.device)) for task, arm, sd in jobs])
    got = {job: v[1] for job, v in zip(jobs, values, strict=True)}
    before = {job: v[0] for job, v in zip(jobs, values, strict=True)}
    cue = {a: [got["cue", a, sd] for sd in seeds] for a in ARMS}
    pend = {a: [got["pendulum", a, sd] for sd in seeds] for a in ARMS}
    rows = [(s, a, before["cue", a, sd], got["cue", a, sd], before["pendulum", a, sd],
             got["pendulum", a, sd]) for s, sd in zip(setting.seeds, seeds, strict=True)
            for a in ARMS]

    def mean(v: list[float]) -> float:
        return sum(v) / len(v)

    def untrained(task: str, arm: str) -> float:
        return mean([before[task, arm, sd] for sd in seeds])

    best_arm = max(("DT", "DC"), key=lambda a: mean(pend[a]))
    best = mean(pend[best_arm])
    lsdt, dt, dc = mean(cue["LSDT"]), mean(cue["DT"]), mean(cue["DC"])
    fig = ctx.figure("success_and_return", figsize=(8, 3))
    ax1, ax2 = fig.subplots(1, 2)
    for i, arm in enumerate(ARMS):
        ax1.scatter([i] * len(cue[arm]), cue[arm], color="k")
        ax2.scatter([i] * len(pend[arm]), pend[arm], color="k")
    for ax, title in ((ax1, "DelayedCue success"), (ax2, "Pendulum normalised return")):
        ax.set_xticks(range(len(ARMS)), ARMS)
        ax.set_title(title)
    return LongShortEvidence(
        long_range_gap=lsdt - dc, long_range=_long_range(lsdt, dt, dc),
        parity_gap=mean(pend["LSDT"]) - best, pendulum_best_baseline=best,
        cue_untrained_dt=untrained("cue", "DT"), cue_untrained_lsdt=untrained("cue", "LSDT"),
        pendulum_best_untrained=untrained("pendulum", best_arm),
        cue_success_dt=mean(cue["DT"]), cue_success_dc=mean(cue["DC"]),
        cue_success_lsdt=mean(cue["LSDT"]),
        pendulum_dt=mean(pend["DT"]), pendulum_dc=mean(pend["DC"]),
        pendulum_lsdt=mean(pend["LSDT"]),
        dc_receptive_field=rf, cue_distance=distance,
        per_seed=Table("per seed and arm, untrained (step 0) and trained",
                       ("seed", "arm", "cue success, step 0", "cue success",
                        "pendulum normalised return, step 0", "pendulum normalised return"),
                       rows),
    )


def _long_range(lsdt: float, dt: float, dc: float) -> float:
    """min(LSDT − DC, 0.3 + LSDT − (DT − KEEP_MARGIN)): at least 0.3 exactly when LSDT beats DC
    by 0.3 and keeps DT's success within KEEP_MARGIN."""
    return min(lsdt - dc, 0.3 + lsdt - (dt - KEEP_MARGIN))


@claim("lsdt.long_range", experiment=long_short,
       sentence="LSDT keeps DT's use of a cue beyond the convolutions' reach, where Decision "
                "ConvFormer loses it.",
       metric="min(LSDT − DC, 0.3 + LSDT − (DT − 0.05)), DelayedCue success, seed mean (cue 15 "
              "tokens back, DC reaches 10): ≥ 0.3 iff LSDT − DC ≥ 0.3 and LSDT ≥ DT − 0.05",
       unit="success",
       paper_figure="gains over DC on Maze2d-large and AntMaze (unverified)",
       threshold=0.3, direction=">=", baseline="DC",
       control=lambda ev: (ev.cue_success_dt >= 0.9
                           and ev.cue_success_dt - ev.cue_untrained_dt >= LEARNED),
       control_doc=f"DT (attention only) solves the cue task (success >= 0.9) and learned it: "
                   f"it beats its own untrained (step-0) self by >= {LEARNED} success",
       trivial=lambda ev: _long_range(ev.cue_untrained_lsdt, ev.cue_success_dt,
                                      ev.cue_success_dc),
       trivial_doc="LSDT untrained (step 0) in LSDT's place",
       competitors=lambda ev: {"DT": ev.cue_success_dt})
def long_range(ev: LongShortEvidence) -> Comparison:
    return Comparison(ours=ev.cue_success_lsdt, baseline=ev.cue_success_dc,
                      value=ev.long_range)


@claim("lsdt.markovian_parity", experiment=long_short,
       sentence="On Markovian data LSDT matches the better of DT and DC.",
       metric="Pendulum-v1 (medium-replay data) normalised return LSDT − max(DT, DC), seed mean",
       unit="normalised return",
       paper_figure="D4RL locomotion mean 82.0 (DC ≈ 82.2, DT 74.7) (unverified)",
       threshold=-0.05, direction=">=", baseline="max(DT, DC)",
       control=lambda ev: (0.5 <= ev.pendulum_best_baseline <= 0.95
                           and ev.pendulum_best_baseline - ev.pendulum_best_untrained >= LEARNED),
       control_doc=f"the better of DT and DC learned (normalised return >= 0.5, and >= {LEARNED} "
                   f"above its own untrained (step-0) self) and is not saturated (<= 0.95), so "
                   f"LSDT can fall behind it or keep up")
def markovian_parity(ev: LongShortEvidence) -> Comparison:
    return Comparison(ours=ev.pendulum_lsdt, baseline=ev.pendulum_best_baseline,
                      value=ev.parity_gap)
