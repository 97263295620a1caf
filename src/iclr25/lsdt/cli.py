"""``iclr25 lsdt data | train | evaluate``: offline data, (Long-Short) DT training, rollouts."""

from __future__ import annotations

from pathlib import Path

import typer

from iclr25._cli import fail as _fail

app = typer.Typer(help="LSDT: one decision transformer for long and short dependencies "
                       "(ICLR 2025).", no_args_is_help=True, add_completion=False)


@app.command()
def data(
    env: str = typer.Option("Pendulum-v1", "--env", help="Pendulum-v1 or iclr25/DelayedCue-v0."),
    quality: str = typer.Option("medium", "--quality",
                                help="Pendulum tier: expert | medium | random | medium-replay."),
    n_episodes: int = typer.Option(100, "--n-episodes"),
    horizon: int = typer.Option(6, "--horizon", help="DelayedCue episode length."),
    seed: int = typer.Option(0, "--seed"),
    out: Path = typer.Option(..., "--out", help="Output .npz or .hdf5."),
) -> None:
    """Write an offline dataset (D4RL layout)."""
    from iclr25.datasets.control import DELAYED_CUE_ID, delayed_cue_dataset, pendulum_dataset

    if out.suffix not in (".npz", ".hdf5", ".h5"):
        _fail(ValueError(f"--out must end in .npz or .hdf5, got {out.name!r}"))
    if env not in ("Pendulum-v1", DELAYED_CUE_ID):
        _fail(ValueError(f"--env must be Pendulum-v1 or {DELAYED_CUE_ID}, got {env!r}"))
    try:
        ds = (pendulum_dataset(quality, n_episodes, seed=seed) if env == "Pendulum-v1"
              else delayed_cue_dataset(n_episodes, horizon, seed=seed))
    except (ValueError, TypeError) as exc:
        _fail(exc)
    ds.save(out)
    typer.echo(f"wrote {out}: {ds.n_episodes} episodes, {len(ds)} steps")


@app.command("train")
def train_cmd(
    dataset: Path = typer.Argument(..., help="Offline data (.npz or .hdf5, D4RL layout)."),
    conv_ratio: float = typer.Option(0.5, "--conv-ratio", help="ξ: 0 = DT, 1 = conv only."),
    conv: str = typer.Option("dynamic", "--conv", help="dynamic | static"),
    hidden: int = typer.Option(128, "--hidden"),
    n_blocks: int = typer.Option(3, "--n-blocks"),
    context: int = typer.Option(20, "--context"),
    steps: int = typer.Option(1000, "--steps"),
    batch_size: int = typer.Option(64, "--batch-size"),
    lr: float = typer.Option(1e-4, "--lr"),
    warmup: int = typer.Option(1000, "--warmup"),
    rtg_scale: float = typer.Option(1000.0, "--rtg-scale"),
    seed: int = typer.Option(0, "--seed"),
    out: Path = typer.Option(..., "--out", help="Output .safetensors."),
) -> None:
    """Train a Long-Short Decision Transformer on DATASET."""
    import torch

    from iclr25.datasets.control import OfflineDataset
    from iclr25.lsdt.model import LongShortDecisionTransformer
    from iclr25.lsdt.train import save, train

    if out.suffix != ".safetensors":
        _fail(ValueError(f"--out must end in .safetensors, got {out.name!r}"))
    try:
        ds = OfflineDataset.load(dataset)
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            model = LongShortDecisionTransformer(ds.obs_dim, ds.act_dim, hidden=hidden,
                                                 n_blocks=n_blocks, context=context,
                                                 conv_ratio=conv_ratio, conv=conv)
        losses = train(model, ds, steps=steps, batch_size=batch_size, lr=lr, warmup=warmup,
                       rtg_scale=rtg_scale, seed=seed)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    save(model, out)
    typer.echo(f"wrote {out}: final loss {losses[-1]:.4f}")


@app.command("evaluate")
def evaluate_cmd(
    model_path: Path = typer.Argument(..., help="A model written by `lsdt train`."),
    env: str = typer.Option("Pendulum-v1", "--env"),
    target_return: float = typer.Option(..., "--target-return"),
    n_episodes: int = typer.Option(10, "--n-episodes"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Roll the model out and print the mean return."""
    from iclr25.lsdt.train import evaluate, load

    try:
        model = load(model_path)
        res = evaluate(model, env, target_return=target_return, n_episodes=n_episodes,
                       seed=seed)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    typer.echo(f"mean return {res.mean_return:.3f} over {n_episodes} episodes")
