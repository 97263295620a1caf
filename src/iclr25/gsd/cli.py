"""``iclr25 gsd demos | train | evaluate``: LaneReach demonstrations, GSD training, recovery."""

from __future__ import annotations

from pathlib import Path

import typer

from iclr25._cli import fail as _fail

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
    seed: int = typer.Option(0, "--seed"),
    out: Path = typer.Option(..., "--out", help="Output .npz or .hdf5."),
) -> None:
    """Write seeded PD-expert demonstrations (D4RL layout)."""
    from iclr25.datasets.control import LANE_REACH_ID, lane_demos

    values = _floats(lanes, "--lanes")
    if env != LANE_REACH_ID:
        _fail(ValueError(f"--env: demos are generated for {LANE_REACH_ID} only, got {env!r}"))
    if out.suffix not in (".npz", ".hdf5", ".h5"):
        _fail(ValueError(f"--out must end in .npz or .hdf5, got {out.name!r}"))
    try:
        data = lane_demos(values, n_per_lane, seed=seed)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    data.save(out)
    typer.echo(f"wrote {out}: {data.n_episodes} episodes, {len(data)} steps")


@app.command("train")
def train_cmd(
    data: Path = typer.Argument(..., help="Demonstrations (.npz or .hdf5)."),
    env: str = typer.Option("iclr25/LaneReach-v0", "--env"),
    regularizer: str = typer.Option("gsd", "--regularizer", help="gsd | none | spectral"),
    clip: float = typer.Option(10.0, "--clip", help="Discriminator bound c (0: unbounded)."),
    num_envs: int = typer.Option(256, "--num-envs"),
    iterations: int = typer.Option(120, "--iterations"),
    seed: int = typer.Option(0, "--seed"),
    out: Path = typer.Option(..., "--out", help="Output .safetensors."),
) -> None:
    """Train a latent-conditioned policy on DATA."""
    from iclr25.datasets.control import OfflineDataset
    from iclr25.gsd.io import save
    from iclr25.gsd.train import GSDConfig, train

    if out.suffix != ".safetensors":
        _fail(ValueError(f"--out must end in .safetensors, got {out.name!r}"))
    try:
        cfg = GSDConfig(regularizer=regularizer, clip=clip, num_envs=num_envs,
                        iterations=iterations)
        demos_ = OfflineDataset.load(data)
        result = train(env, demos_, cfg, seed=seed)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    save(result, out)
    typer.echo(f"wrote {out}")


@app.command("evaluate")
def evaluate_cmd(
    policy: Path = typer.Argument(..., help="A policy written by `gsd train`."),
    targets: str = typer.Option("-0.4,0.4", "--targets", help="Held-out behaviour factors."),
    env: str = typer.Option("iclr25/LaneReach-v0", "--env"),
    n_codes: int = typer.Option(300, "--n-codes"),
    budget: int = typer.Option(10, "--budget"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Print VL_K (recovery error) and the success of the selected behaviours."""
    from iclr25.gsd.evaluation import evaluate
    from iclr25.gsd.io import load

    values = _floats(targets, "--targets")
    try:
        result = load(policy)
        ev = evaluate(result.policy, env, targets=values, n_codes=n_codes, budgets=(budget,),
                      seed=seed)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    typer.echo(f"VL{budget} = {ev.vl[budget]:.4f}  selected success = {ev.selected_success:.3f}"
               f"  success (all codes) = {float(ev.success.float().mean()):.3f}")
