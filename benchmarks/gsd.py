"""GSD vs style-coded BC, IG, IG+M, IG+M+SN on LaneReach; batched env vs SyncVectorEnv.

Same demos and seeds for every arm. Table: VL10 on interpolation {±0.4} and extrapolation
{±1.0} targets, success of the selected behaviours, training seconds, env steps/s.
Targets (issue 16): GSD VL10 <= 0.8x IG+M and <= 0.5x BC; batched env >= 50x SyncVectorEnv
steps/s at 1024 envs; time linear in envs x steps.

    python benchmarks/gsd.py --quick
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
import torch

from iclr25.gsd import GSDConfig, evaluate, recovery_error, style_coded_bc, train
from iclr25.gsd.testbed import LANE_REACH_ID, LaneReachVec, lane_demos

INTERP, EXTRAP = (-0.4, 0.4), (-1.0, 1.0)


def env_throughput(num_envs: int, steps: int) -> tuple[float, float]:
    """Steps/s of the torch-batched env and of gymnasium's SyncVectorEnv, random actions."""
    env = LaneReachVec(num_envs)
    env.reset(seed=0)
    a = torch.rand(num_envs, 2) * 2 - 1
    t = time.perf_counter()
    for i in range(steps):
        if env.t == env.horizon:
            env.reset(seed=i)
        env.step(a)
    batched = num_envs * steps / (time.perf_counter() - t)
    venv = gym.vector.SyncVectorEnv([lambda: gym.make(LANE_REACH_ID)] * num_envs)
    venv.reset(seed=0)
    an = a.numpy()
    t = time.perf_counter()
    for _ in range(steps):
        venv.step(an)
    sync = num_envs * steps / (time.perf_counter() - t)
    venv.close()
    return batched, sync


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    num_envs, iters, seeds = (32, 20, (0,)) if args.quick else (64, 120, (0, 1, 2))
    arms = {"IG": dict(regularizer="none", clip=0.0), "IG+M": dict(regularizer="none", clip=10.0),
            "IG+M+SN": dict(regularizer="spectral", clip=10.0),
            "GSD": dict(regularizer="gsd", clip=10.0)}
    rows: dict[str, list] = {k: [] for k in ("BC", *arms)}
    for seed in seeds:
        demos = lane_demos([-0.8, 0.0, 0.8], 20, seed=seed)
        t = time.perf_counter()
        bc = style_coded_bc(demos, 3, epochs=5 if args.quick else 30, seed=seed)
        sec = time.perf_counter() - t
        ev = evaluate(bc, LANE_REACH_ID, targets=INTERP, seed=seed + 1)
        rows["BC"].append((ev.vl[10], recovery_error(ev.factors, EXTRAP), ev.selected_success,
                           sec, 0.0))
        for name, kw in arms.items():
            cfg = GSDConfig(num_envs=num_envs, iterations=iters, **kw)
            t = time.perf_counter()
            res = train(LANE_REACH_ID, demos, cfg, seed=seed)
            sec = time.perf_counter() - t
            ev = evaluate(res.policy, LANE_REACH_ID, targets=INTERP, seed=seed + 1)
            rows[name].append((ev.vl[10], recovery_error(ev.factors, EXTRAP),
                               ev.selected_success, sec, num_envs * iters * 40 / sec))
    print(f"LaneReach, {len(seeds)} seed(s), {num_envs} envs x {iters} iterations x 40 steps")
    print(f"{'arm':8s} {'VL10 interp':>12s} {'VL10 extrap':>12s} {'sel. success':>12s} "
          f"{'train s':>8s} {'steps/s':>9s}")
    mean = {k: np.mean(np.array(v), 0) for k, v in rows.items()}
    for k, m in mean.items():
        print(f"{k:8s} {m[0]:12.4f} {m[1]:12.4f} {m[2]:12.3f} {m[3]:8.1f} {m[4]:9.0f}")
    r_igm = mean["GSD"][0] / mean["IG+M"][0]
    r_bc = mean["GSD"][0] / mean["BC"][0]
    print(f"GSD / IG+M VL10 = {r_igm:.3f} (target <= 0.8: {'met' if r_igm <= 0.8 else 'NOT met'})")
    print(f"GSD / BC   VL10 = {r_bc:.3f} (target <= 0.5: {'met' if r_bc <= 0.5 else 'NOT met'})")

    steps = 40 if args.quick else 200
    b, s = env_throughput(1024, steps)
    print(f"env 1024 envs x {steps} steps: batched {b:,.0f} steps/s, SyncVectorEnv {s:,.0f} "
          f"steps/s, ratio {b / s:.1f}x (target >= 50x: {'met' if b / s >= 50 else 'NOT met'})")
    print("training time vs envs x iterations (GSD, 1 seed):")
    demos = lane_demos([-0.8, 0.0, 0.8], 20, seed=0)
    base = None
    for n_env, it in ((16, 5), (32, 5), (32, 10), (64, 10)):
        t = time.perf_counter()
        train(LANE_REACH_ID, demos, GSDConfig(num_envs=n_env, iterations=it), seed=0)
        sec = time.perf_counter() - t
        per = sec / (n_env * it)
        base = base or per
        print(f"  {n_env:4d} envs x {it:3d} it: {sec:6.2f} s, {per * 1e3:.2f} ms per env-iteration"
              f" ({per / base:.2f}x the smallest)")


if __name__ == "__main__":
    main()
