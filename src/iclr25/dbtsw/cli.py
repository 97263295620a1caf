"""``iclr25 dbtsw distance A B [C ...]``: Db-TSW between point clouds stored in files."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import typer

from iclr25._cli import check_seed, output_path
from iclr25._cli import fail as _fail
from iclr25._io import read_matrix

#: ``iclr25.dbtsw.distance.DEFAULT_SEED``, spelt here so help imports no torch
DEFAULT_SEED = 0

CLOUD_SUFFIXES = (".npy", ".csv", ".txt", ".xyz")
"""Point-cloud files: arrays, comma or whitespace tables."""

app = typer.Typer(help="Db-TSW: distance-based tree-sliced Wasserstein distance (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


@app.callback()
def _main() -> None:
    """Db-TSW between point clouds."""


def _matrix_lines(names: list[str], D: Sequence[Sequence[float]]) -> list[str]:
    """The pairwise matrix for reading: a header line of the files' names over the columns,
    then a line per file, its name first; numbers in the project's format (``num``)."""
    from iclr25._format import num

    cells = [[num(float(v), 6) for v in row] for row in D]
    first = max(len(n) for n in names)
    width = [max(len(n), *(len(r[j]) for r in cells)) for j, n in enumerate(names)]
    lines = [" " * first + "".join(f"  {n:>{w}}" for n, w in zip(names, width, strict=True))]
    lines += [f"{n:<{first}}" + "".join(f"  {c:>{w}}" for c, w in zip(r, width, strict=True))
              for n, r in zip(names, cells, strict=True)]
    return lines


@app.command()
def distance(
    files: list[Path] = typer.Argument(..., help="Clouds (n x d): .npy, .csv, .txt or .xyz."),
    trees: int = typer.Option(250, "--trees", help="Number of trees."),
    lines: int = typer.Option(4, "--lines", help="Lines per tree."),
    delta: float = typer.Option(10.0, "--delta", help="Splitting sharpness (0: TSW-SL)."),
    p: float = typer.Option(1.0, "--p", help="Exponent (1: the paper's definition)."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", callback=check_seed,
                             help="Seed of the tree draw (>= 0); the API's default too."),
    out: Path = typer.Option(None, "--out", help="Write the pairwise matrix as .csv."),
) -> None:
    """Print Db-TSW of two clouds, or the pairwise matrix of three or more."""
    import numpy as np
    import torch

    from iclr25.dbtsw.distance import db_tsw

    if len(files) < 2:
        _fail("FILES: give at least two point clouds")
    output_path(out, suffixes=(".csv",))
    if trees < 1 or lines < 1:
        _fail("--trees and --lines must be >= 1")
    for option, value, low in (("--delta", delta, 0.0), ("--p", p, 1.0)):
        if not math.isfinite(value) or value < low:  # NaN compares False: named as such
            _fail(f"{option} must be a finite number >= {low:g}, got {value}")
    try:
        clouds = [torch.from_numpy(read_matrix(f, "FILES", suffixes=CLOUD_SUFFIXES)) for f in files]
    except ValueError as exc:
        _fail(str(exc))
    dims = {c.shape[1] for c in clouds}
    if len(dims) > 1:
        _fail(f"FILES: all clouds must have the same dimension d, got {sorted(dims)}")
    n = len(clouds)
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            D[i, j] = D[j, i] = float(db_tsw(clouds[i], clouds[j], n_trees=trees,
                                             n_lines=lines, delta=delta, p=p, seed=seed))
    if n == 2:
        # labelled as the other verbs' scalars (oft solve: "cost  ..."), the clouds named
        typer.echo(f"Db-TSW  {D[0, 1]:.10g}  ({files[0].name} to {files[1].name})")
    else:
        for line in _matrix_lines([f.name for f in files], D):
            typer.echo(line)
    if out is not None:
        np.savetxt(out, D, delimiter=",", header=",".join(f.name for f in files), comments="")
        typer.echo(f"wrote {out}")
