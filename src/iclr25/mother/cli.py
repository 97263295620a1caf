"""``iclr25 mother recover DIR`` and ``iclr25 mother make-zoo OUT``.

The defaults of ``recover`` are those the reproduction (``mother.claim``) validated on Adam-
trained zoos: ``--direction pretrain`` (its ``DIRECTION``) and ``--lam 0.2`` (the λ its
full-scale run chose on the held-out trees); a test keeps them equal to ``mother.claim``.
The reproduction's trees and forest figure come from::

    iclr25 mother make-zoo zoo --trees 5 --fans 1,1,2,1,2 --root-steps 1500 \
        --finetune-steps 500 --hold-out 3 --seed 0
    iclr25 mother recover zoo --trees 5 --out forest.png
"""

from __future__ import annotations

from pathlib import Path

import typer

from iclr25._choices import Direction, Metric
from iclr25._cli import check_seed, choice, cli_words, fail, output_path

# what mother.claim validated, = mother.tree's API defaults (tests/mother/test_mother_cli.py
# checks all three); kept here, not imported, so that `iclr25 mother --help` imports no torch
DEFAULT_DIRECTION = "pretrain"
DEFAULT_LAM = 0.2

REPRODUCE = ("iclr25 mother make-zoo zoo --trees 5 --fans 1,1,2,1,2 --root-steps 1500 "
             "--finetune-steps 500 --hold-out 3 --seed 0; iclr25 mother recover zoo --trees 5 "
             "--out forest.png")

app = typer.Typer(help="MoTHer: recover model family trees from weights (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


@app.command(epilog=f"The reproduction's figures: {REPRODUCE}")
def recover(
    directory: Path = typer.Argument(..., help="Directory of models of one architecture: "
                                     ".safetensors / .pt / .pth / .bin files and/or Hugging "
                                     "Face model folders (model.safetensors or "
                                     "pytorch_model.bin, sharded with their *.index.json)."),
    direction: Direction = typer.Option(
        DEFAULT_DIRECTION, "--direction", parser=choice(Direction, "--direction"),
        help="Which way kurtosis moves parent->child, set by how the root was trained: "
             "'pretrain' = rises (models trained from scratch, then fine-tuned with "
             "Adam/AdamW: 0.65 of directed edges on 24 such zoos, 'finetune' 0.24; the "
             "paper's Stable Diffusion); 'finetune' = falls (fine-tunes of a large model "
             "pre-trained by others, the paper's ViT: with --lam 0.3); 'none' = distance "
             "only. Know one parent and child? The guide shows how to measure it."),
    trees: int = typer.Option(None, "--trees", help="Number of trees K (default: one tree)."),
    lam: float = typer.Option(DEFAULT_LAM, "--lam", help="Direction penalty weight, relative "
                              "to the mean distance (default: the λ the reproduction chose "
                              "on its held-out tree; paper: 0.3 for ViT fine-tunes)."),
    metric: Metric = typer.Option("rms", "--metric", parser=choice(Metric, "--metric"),
                                  help="'rms' (full fine-tuning), 'rank' (LoRA-merged "
                                  "models) or 'l1'."),
    layers: str = typer.Option(None, "--layers", help="Only the matrices whose name "
                               "contains this (default: every square one; with --any-shape "
                               "every 2-D one)."),
    any_shape: bool = typer.Option(False, "--any-shape", help="Read 2-D matrices of every "
                                   "shape (e.g. an MLP 64-32-10's), not only the square ones "
                                   "(the paper's choice: it skips heads and embeddings)."),
    out: Path = typer.Option(None, "--out", help="Write the forest: .dot, .json or .png."),
) -> None:
    """Recover who was fine-tuned from whom among the models in DIRECTORY.

    Small real input: the zoo of `iclr25 mother make-zoo` (3 trees, 30 models) takes seconds.
    """
    from iclr25._progress import progress_bar
    from iclr25.mother.sources import as_sources, check_architecture
    from iclr25.mother.tree import _check_options, recover_tree

    if out is not None and out.suffix not in (".dot", ".json", ".png"):
        fail(f"--out must end in .dot, .json or .png, got {out.name!r}")
    output_path(out)  # writable before the pass over the weights
    try:
        _check_options(direction, "binary", lam)
        sources = as_sources(directory)
        check_architecture(sources, "DIRECTORY")
        chosen, total = _layers(sources, layers, any_shape)
        with progress_bar(total, "layers") as advance:
            def tick(done: int, total: int, key: str) -> None:
                advance(1, layer=key)

            forest = recover_tree(sources, direction=direction, lam=lam, n_trees=trees,
                                  metric=metric, layers=chosen, progress=tick)
    except (ValueError, TypeError) as exc:
        fail(cli_words(exc, {"n_trees": "--trees", "lam": "--lam", "models": "DIRECTORY"}))
    for t, members in enumerate(forest.trees()):
        typer.echo(f"tree {t}:")
        for n in members:
            p = forest.parents[n]
            typer.echo(f"  {n}  <-  {p if p is not None else '(root)'}")
    if out is not None:
        forest.save(out)
        typer.echo(f"wrote {out}")


def _layers(sources: list, layers: str | None, any_shape: bool) -> tuple[object, int | None]:
    """The API's ``layers=`` for ``--layers``/``--any-shape`` and how many layers it selects
    (the progress bar's total), checked before the pass; a refusal in the CLI's words."""
    from iclr25.mother.distances import select_layers

    chosen = _any_shape(sources, layers) if any_shape else layers
    try:
        return chosen, len(select_layers(sources, chosen)) if len(sources) >= 2 else None
    except ValueError as exc:  # say it as the command line spells it
        fail(str(exc).replace(f"layers={chosen!r}", "--layers " + repr(layers) if layers
                              else "the default (square matrices only)").replace(
            "a list of names takes 2-D layers of any shape",
            "--any-shape reads 2-D matrices of any shape"))


def _any_shape(sources: list, layers: str | None) -> list[str]:
    """``--any-shape``: the first model's 2-D tensors whose name contains ``--layers`` (all
    without it), as the API's list of names (which takes any 2-D shape)."""
    names = [k for k, shape in sources[0].shapes.items()
             if len(shape) == 2 and (layers is None or layers in k)]
    if not names:
        fail(f"--any-shape: no 2-D matrix{f' whose name contains {layers!r}' if layers else ''}"
             f" in model {sources[0].name!r} (tensors: {list(sources[0].shapes)[:8]})")
    return names


@app.command("make-zoo")
def make_zoo_cmd(
    out: Path = typer.Argument(..., help="Directory for the .safetensors models + tree.json."),
    trees: int = typer.Option(3, "--trees", help="Number of trees (>= 1)."),
    children: int = typer.Option(3, "--children", help="Children per root (>= 0)."),
    grandchildren: int = typer.Option(2, "--grandchildren", help="Children per child (>= 0)."),
    fans: str = typer.Option(None, "--fans", help="Children per node, generation by "
                             "generation, e.g. 1,1,2,1,2 (the reproduction's shape); replaces "
                             "--children/--grandchildren."),
    root_steps: int = typer.Option(1500, "--root-steps", help="Adam steps training each root."),
    finetune_steps: int = typer.Option(500, "--finetune-steps", help="Adam steps fine-tuning "
                                       "each child."),
    hold_out: int = typer.Option(0, "--hold-out", help="Train this many more trees and save "
                                 "them in OUT/held-out (the reproduction chooses λ on 3)."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
) -> None:
    """Train a seeded zoo of MLP trees on sklearn digits (a test set with a known answer)."""
    from iclr25._checks import check_writable_dir

    for name, value, low in (("--trees", trees, 1), ("--children", children, 0),
                             ("--grandchildren", grandchildren, 0), ("--seed", seed, 0),
                             ("--hold-out", hold_out, 0),
                             ("--root-steps", root_steps, 1),
                             ("--finetune-steps", finetune_steps, 1)):
        if value < low:
            fail(f"{name} must be >= {low}, got {value}")
    fan_list = None
    if fans is not None:
        try:
            fan_list = tuple(int(f) for f in fans.split(","))
        except ValueError:
            fail(f"--fans must be comma-separated integers, e.g. 1,1,2, got {fans!r}")
        if not fan_list or min(fan_list) < 0:
            fail(f"--fans must be integers >= 0, got {fans!r}")
    try:
        check_writable_dir(out, "OUT")
    except ValueError as exc:
        fail(exc)
    from iclr25._progress import estimating
    from iclr25.mother.testbed import Zoo, make_zoo

    shape = dict(fans=fan_list) if fan_list else dict(n_children=children,
                                                      n_grandchildren=grandchildren)
    with estimating():  # the bar (on a terminal) prints its run-time estimate
        zoo = make_zoo(trees + hold_out, **shape, root_steps=root_steps,
                       finetune_steps=finetune_steps, seed=seed)
    held = [n for n in zoo.names if int(n.split("-")[0]) >= trees]
    keep = [n for n in zoo.names if n not in held]
    Zoo({n: zoo.models[n] for n in keep}, {n: zoo.parents[n] for n in keep}).save(out)
    if held:
        Zoo({n: zoo.models[n] for n in held},
            {n: zoo.parents[n] for n in held}).save(out / "held-out")
    typer.echo(f"wrote {len(keep)} models and tree.json to {out}"
               + (f" ({len(held)} held-out models in {out / 'held-out'})" if held else ""))
