"""``iclr25 mother recover DIR`` and ``iclr25 mother make-zoo OUT``."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="MoTHer: recover model family trees from weights (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


def _unwritable(path: Path) -> str | None:
    """Why ``path`` cannot be written as a file (None if it can), without creating it."""
    import os

    if path.is_dir():
        return f"{path} is a directory, expected a file name"
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        return f"directory {parent} does not exist"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"directory {parent} is not writable"
    if path.exists() and not os.access(path, os.W_OK):
        return f"{path} is not writable"
    return None


@app.command()
def recover(
    directory: Path = typer.Argument(..., help="Directory of .safetensors / .pt / .pth models."),
    direction: str = typer.Option(
        "finetune", "--direction",
        help="Training regime: 'finetune' = kurtosis decreases parent->child (paper's ViT "
             "fine-tuning); 'pretrain' = kurtosis increases parent->child (paper's Stable "
             "Diffusion; Adam on small MLPs); 'none' = distance only."),
    trees: int = typer.Option(None, "--trees", help="Number of trees K (default: one tree)."),
    lam: float = typer.Option(0.3, "--lam", help="Direction penalty weight (paper: 0.3)."),
    metric: str = typer.Option("rms", "--metric", help="'rms' (full fine-tuning) or 'rank' "
                               "(LoRA-merged models)."),
    layers: str = typer.Option(None, "--layers", help="Only square matrices whose name "
                               "contains this (default: all square matrices)."),
    out: Path = typer.Option(None, "--out", help="Write the forest: .dot, .json or .png."),
) -> None:
    """Recover who was fine-tuned from whom among the models in DIRECTORY."""
    from rich.console import Console
    from rich.progress import Progress

    from iclr25.mother.tree import recover_tree

    if out is not None and out.suffix not in (".dot", ".json", ".png"):
        typer.echo(f"error: --out must end in .dot, .json or .png, got {out.name!r}", err=True)
        raise typer.Exit(2)
    if out is not None:  # the file must be writable before the pass over the weights
        problem = _unwritable(out)
        if problem:
            typer.echo(f"error: --out {problem}", err=True)
            raise typer.Exit(2)
    console = Console(stderr=True)
    try:
        with Progress(console=console, disable=not console.is_terminal, transient=True) as bar:
            task = bar.add_task("layers", total=None)

            def tick(done: int, total: int, key: str) -> None:
                bar.update(task, completed=done, total=total, description=key)

            forest = recover_tree(directory, direction=direction, lam=lam, n_trees=trees,
                                  metric=metric, layers=layers, progress=tick)
    except (ValueError, TypeError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for t, members in enumerate(forest.trees()):
        typer.echo(f"tree {t}:")
        for n in members:
            p = forest.parents[n]
            typer.echo(f"  {n}  <-  {p if p is not None else '(root)'}")
    if out is not None:
        forest.save(out)
        typer.echo(f"wrote {out}")


@app.command("make-zoo")
def make_zoo_cmd(
    out: Path = typer.Argument(..., help="Directory for the .safetensors models + tree.json."),
    trees: int = typer.Option(3, "--trees", help="Number of trees (>= 1)."),
    children: int = typer.Option(3, "--children", help="Children per root (>= 0)."),
    grandchildren: int = typer.Option(2, "--grandchildren", help="Children per child (>= 0)."),
    seed: int = typer.Option(0, "--seed", help="Seed (>= 0)."),
) -> None:
    """Train a seeded zoo of MLP trees on sklearn digits (a test set with a known answer)."""
    from iclr25._checks import check_writable_dir
    from iclr25.mother.testbed import make_zoo

    for name, value, low in (("--trees", trees, 1), ("--children", children, 0),
                             ("--grandchildren", grandchildren, 0), ("--seed", seed, 0)):
        if value < low:
            typer.echo(f"error: {name} must be >= {low}, got {value}", err=True)
            raise typer.Exit(2)
    try:
        check_writable_dir(out, "OUT")
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    zoo = make_zoo(trees, children, grandchildren, out_dir=out, seed=seed)
    typer.echo(f"wrote {len(zoo.models)} models and tree.json to {out}")
