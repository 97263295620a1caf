"""``iclr25 gsd demos | train | evaluate``: LaneReach demonstrations, GSD training, recovery."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from iclr25._cli import (
    EngineArgs,
    api_warnings,
    check_seed,
    max_episode_steps_option,
    output_path,
    threads_verb,
    training_verb,
)
from iclr25._cli import fail as _fail

#: the arms (``iclr25.gsd.training.Regularizer``, spelt here so help imports no torch)
Regularizer = Literal["gsd", "none", "spectral"]

app = typer.Typer(help="GSD: diverse policies that generalise beyond the demos (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


def _floats(text: str, name: str) -> list[float]:
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        vals = []
    if not vals:
        typer.echo(f"error: {name} must be comma-separated numbers, got {text!r}", err=True)
        raise typer.Exit(2)
    return vals


@app.command()
def demos(
    env: str = typer.Option("iclr25/LaneReach-v0", "--env", help="Environment id."),
    lanes: str = typer.Option("-0.8,0,0.8", "--lanes", help="Demonstrated lanes y*."),
    n_per_lane: int = typer.Option(20, "--n-per-lane", help="Episodes per lane."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    out: Path = typer.Option(..., "--out", help="Output .npz or .hdf5."),
) -> None:
    """Write seeded PD-expert demonstrations (D4RL layout)."""
    from iclr25.gsd.testbed import LANE_REACH_ID, lane_demos

    values = _floats(lanes, "--lanes")
    if env != LANE_REACH_ID:
        _fail(ValueError(f"--env: demos are generated for {LANE_REACH_ID} only, got {env!r}"))
    output_path(out, suffixes=(".npz", ".hdf5", ".h5"))
    try:
        data = lane_demos(values, n_per_lane, seed=seed)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    data.save(out)
    typer.echo(f"wrote {out}: {data.n_episodes} episodes, {len(data)} steps")


_GYM_HELP = ("LaneReach (iclr25/LaneReach-v0) is stepped as one torch tensor; any other "
             "gymnasium continuous-control env (e.g. Pendulum-v1) goes through "
             "gymnasium.vector, one Python step per env: much slower.")
# (num_envs, iterations) when not given: LaneReach's is the paper-scale setting of the
# reproduction; other envs get a CPU-sized budget
_BUDGET = {"lane": (256, 120), "gym": (16, 100)}


def _check_steps(env: str, steps: int | None) -> int | None:
    """--max-episode-steps, or exit 2 naming it where ENV keeps its horizon (LaneReach)."""
    from iclr25.gsd.gym import check_max_episode_steps

    try:
        return check_max_episode_steps(env, steps, "--max-episode-steps")
    except ValueError as exc:
        _fail(exc)


def _check_env(env: str) -> None:
    """Exit 2 naming --env, before any work, unless ENV is LaneReach or a continuous gym env."""
    from iclr25.gsd.gym import check_env_id
    from iclr25.gsd.testbed import LANE_REACH_ID

    if env != LANE_REACH_ID:
        try:
            check_env_id(env)
        except ValueError as exc:
            _fail(f"--env {str(exc).removeprefix('env_id: ')}")


@app.command("train")
@training_verb
def train_cmd(
    data: Path = typer.Argument(..., help="Demonstrations in D4RL layout (.npz or .hdf5: "
                                          "observations, actions, rewards, terminals, "
                                          "timeouts) or a Minari dataset folder, actions in "
                                          "the env's units."),
    env: str = typer.Option("iclr25/LaneReach-v0", "--env", help="Gymnasium env id. "
                            + _GYM_HELP),
    regularizer: Regularizer = typer.Option("gsd", "--regularizer", help="The arm: GSD, "
                                            "IG+M (none) or IG+M+SN (spectral)."),
    clip: float = typer.Option(10.0, "--clip", help="Discriminator bound c (0: unbounded)."),
    num_envs: int = typer.Option(None, "--num-envs", help="Episodes per iteration (default: "
                                 "256 on LaneReach, the reproduction's; 16 elsewhere)."),
    iterations: int = typer.Option(None, "--iterations", help="Default: 120 on LaneReach "
                                   "(the reproduction's: about 80 s of CPU on 60 demos); 100 "
                                   "elsewhere (a CPU budget: each iteration rolls out "
                                   "--num-envs episodes as long as the env's time limit or "
                                   "--max-episode-steps, so about 1 min of CPU on "
                                   "Pendulum-v1's 200 steps, 5-14 min on a 1000-step "
                                   "MuJoCo env such as Hopper-v5; the paper "
                                   "trains for far longer: raise --iterations)."),
    max_episode_steps: int = max_episode_steps_option(
        "Steps per training episode (default: the env's time limit; not on LaneReach). Demos "
        "shorter than the limit train at their longest episode's length in a fraction of the "
        "time (Hopper-v5: 1000 steps per episode otherwise). Recorded in OUT: `gsd evaluate` "
        "rolls out as long unless its own --max-episode-steps says otherwise."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    out: Path = typer.Option(..., "--out", help="Output .safetensors."),
    engine: EngineArgs = None,
) -> None:
    """Train a latent-conditioned policy on DATA (your own demonstrations, any env)."""
    from iclr25._progress import estimating
    from iclr25.datasets.control import OfflineDataset
    from iclr25.gsd.io import save
    from iclr25.gsd.testbed import LANE_REACH_ID
    from iclr25.gsd.training import GSDConfig, train

    output_path(out, suffixes=(".safetensors",))
    run = engine.for_(train, out, "gsd train")
    _check_env(env)
    steps = _check_steps(env, max_episode_steps)
    n_env, n_it = _BUDGET["lane" if env == LANE_REACH_ID else "gym"]
    try:
        cfg = GSDConfig(regularizer=regularizer, clip=clip,
                        num_envs=n_env if num_envs is None else num_envs,
                        iterations=n_it if iterations is None else iterations)
        demos_ = OfflineDataset.load(data)
        with estimating(), api_warnings(("max_episode_steps",)):   # before the training
            result = train(env, demos_, cfg, seed=seed, max_episode_steps=steps, **run)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    save(result, out)
    typer.echo(f"wrote {out}")


@app.command("evaluate")
@threads_verb
def evaluate_cmd(
    policy: Path = typer.Argument(..., help="A policy written by `gsd train`."),
    targets: str = typer.Option(None, "--targets", help="Held-out behaviour factors "
                                "(default on LaneReach: -0.4,0.4; elsewhere optional)."),
    env: str = typer.Option(None, "--env", help="Gymnasium env id (default: the one POLICY "
                            "was trained on, recorded in its file). " + _GYM_HELP),
    factor: str = typer.Option(None, "--factor", help="Behaviour statistic of each rollout, "
                               "needed off LaneReach (which has its own): obs:I or act:I, "
                               "optionally :mean (default), :last or :std, e.g. obs:0."),
    demos: Path = typer.Option(None, "--demos", help="The training demonstrations: prints "
                               "their VL (the closest demonstrated behaviour to each target) "
                               "and spread beside the policy's."),
    n_codes: int = typer.Option(None, "--n-codes", min=1, help="Default 300 on LaneReach, "
                                "50 elsewhere."),
    budget: int = typer.Option(10, "--budget", min=1, help="K of VL_K: the recovery "
                                "error with a budget of K codes (<= --n-codes)."),
    max_episode_steps: int = max_episode_steps_option(
        "Steps per rollout (default: the horizon POLICY was trained at, recorded by `gsd "
        "train --max-episode-steps`, else the env's time limit); the training data's longest "
        "episode compares returns over as many steps."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
) -> None:
    """Print VL_K (recovery error) beside the demonstrations' VL, and success (LaneReach), or
    returns and the spread of behaviours along --factor (any other env)."""
    from iclr25.gsd.evaluation import evaluate
    from iclr25.gsd.gym import evaluate_gym
    from iclr25.gsd.io import load
    from iclr25.gsd.testbed import LANE_REACH_ID

    if env is None:
        env = _trained_env(policy)
    lane = env == LANE_REACH_ID
    values = _floats(targets, "--targets") if targets is not None else \
        ([-0.4, 0.4] if lane else None)
    _check_env(env)
    _check_steps(env, max_episode_steps)
    fac, dims, limit = (None, None, None) if lane else _gym_factor(env, factor)
    try:
        result = load(policy)
        if result.env_id not in (None, env):
            typer.echo(f"note: POLICY was trained on {result.env_id}; evaluating on {env} "
                       f"as --env asks", err=True)
        max_episode_steps = _trained_horizon(result, env, max_episode_steps)
        demo = None if demos is None else _demo_factors(demos, fac)
        if lane:
            ev = evaluate(result.policy, env, targets=values,
                          n_codes=300 if n_codes is None else n_codes, budgets=(budget,),
                          seed=seed)
        else:
            if (result.policy.obs_dim, result.policy.act_dim) != dims:
                raise ValueError(f"policy: trained for obs/action dims {result.policy.obs_dim}"
                                 f"/{result.policy.act_dim}, but {env} has "
                                 f"{dims[0]}/{dims[1]}")
            ev = evaluate_gym(result.policy, env, factor=fac, targets=values,
                              n_codes=50 if n_codes is None else n_codes, budgets=(budget,),
                              seed=seed, max_episode_steps=max_episode_steps)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    _print_evaluation(ev, values, budget, demo, fac,
                      limit if max_episode_steps is None else max_episode_steps)


def _trained_horizon(result, env: str, steps: int | None) -> int | None:
    """The rollouts' horizon: --max-episode-steps, else the one POLICY was trained at on ENV
    (recorded in its file by `gsd train --max-episode-steps`; None: the env's limit), as
    ``evaluate_gym`` decides it for a training result (``trained_horizon``), with a note
    where it is the trained one."""
    from iclr25.gsd.gym import trained_horizon

    if steps is None and (steps := trained_horizon(result, env)) is not None:
        typer.echo(f"note: rolling out {steps} steps per episode, the horizon POLICY was "
                   f"trained at (--max-episode-steps to change it)", err=True)
    return steps


def _trained_env(policy: Path) -> str:
    """The env POLICY's file records; exit 2 when it is unreadable or records none."""
    from iclr25.gsd.io import env_of

    try:
        env = env_of(policy)
    except ValueError as exc:
        _fail(f"POLICY: {exc}")
    if env is None:
        _fail(f"POLICY {policy} does not record the env it was trained on (written by an "
              f"older version): pass --env ENV_ID")
    return env


def _gym_factor(env: str, factor: str | None):
    """The behaviour statistic --factor names on a gymnasium env, the env's (obs, action)
    dims and its time limit; exit 2 when the statistic is missing or does not fit the env."""
    from iclr25.gsd.gym import check_env_id, parse_factor

    if factor is None:
        _fail(f"--factor is needed on {env} (only LaneReach has a built-in behaviour "
              f"factor), e.g. --factor obs:0")
    obs_space, act_space, limit = check_env_id(env)
    try:
        fac = parse_factor(factor, obs_space.shape[0], act_space.shape[0])
    except ValueError as exc:
        _fail(f"--{exc}")
    return fac, (obs_space.shape[0], act_space.shape[0]), limit


def _demo_factors(demos: Path, fac):
    """((E,) behaviour of each demonstrated episode: ``fac`` of it, or its stored factor;
    (E,) its return; the longest episode's steps)."""
    from iclr25.datasets.control import OfflineDataset
    from iclr25.gsd.gym import demo_factors

    d = OfflineDataset.load(demos)
    if fac is not None:
        return demo_factors(d, fac), d.returns(), d.longest_episode
    if d.episode_factors is not None:
        return d.episode_factors, d.returns(), d.longest_episode
    raise ValueError("--demos has no episode_factors (write it with `gsd demos`)")


def _print_evaluation(ev, values, budget: int, demo, fac, horizon: int | None) -> None:
    """VL_K beside the demonstrations' VL; success on LaneReach (no ``fac``), else returns
    and the spread of behaviours; ``demo``: the demonstrations' (behaviours, returns, longest
    episode), whose length is warned of where the rollouts' ``horizon`` outlasts it."""
    import torch

    from iclr25.gsd.evaluation import recovery_error

    demo_f, demo_r, longest = demo if demo is not None else (None, None, None)
    if values is not None:
        vl = f"VL{budget} = {ev.vl[budget]:.4f}"
        if demo_f is not None:
            ref = recovery_error(demo_f, torch.tensor(values), len(demo_f))
            vl += f"  (demonstrations' VL = {ref:.4f}: their closest behaviour to each target)"
        typer.echo(vl + "  |behaviour - target|, lower is better")
    if fac is None:
        typer.echo(f"selected success = {ev.selected_success:.3f}  success (all codes) = "
                   f"{float(ev.success.float().mean()):.3f}")
        return
    r, f = ev.returns, ev.factors
    line = (f"return    mean {float(r.mean()):.4g}  std {float(r.std()):.4g}  "
            f"min {float(r.min()):.4g}  max {float(r.max()):.4g}  ({len(r)} codes)")
    if demo_r is not None:
        line += (f"  (demonstrations: mean {float(demo_r.mean()):.4g}  min "
                 f"{float(demo_r.min()):.4g}  max {float(demo_r.max()):.4g})")
    typer.echo(line)
    line = (f"behaviour {fac}: min {float(f.min()):.4g}  max {float(f.max()):.4g}  "
            f"std {float(f.std()):.4g}")
    if demo_f is not None:
        line += (f"  (demonstrations: min {float(demo_f.min()):.4g}  max "
                 f"{float(demo_f.max()):.4g}  std {float(demo_f.std()):.4g})")
    typer.echo(line)
    if demo_f is None:
        typer.echo("note: pass --demos to compare the policy's returns and behaviours with "
                   "the demonstrations'", err=True)
        return
    from iclr25.datasets.control import outlasting
    from iclr25.gsd.gym import beyond_the_demos

    for message in [*outlasting(longest, horizon, "--max-episode-steps ",
                                "returns and behaviours"), *beyond_the_demos(r, f, demo_f, demo_r)]:
        typer.echo(f"warning: {message}", err=True)
