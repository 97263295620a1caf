"""``iclr25 urlost cluster|fit|embed``: self-organized tokens and URLOST on .npy/.csv data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer

from iclr25._cli import (
    EngineArgs,
    api_warnings,
    check_seed,
    cli_words,
    output_path,
    print_notes,
    threads_verb,
    training_verb,
)
from iclr25._io import ARRAY_OUTPUTS, column_names, read_matrix, write_array

app = typer.Typer(help="URLOST: tokens and representations for data with no known topology "
                       "(ICLR 2025).", no_args_is_help=True, add_completion=False)


def _read(path: Path) -> np.ndarray:
    """Rows of .npy, .csv, a Parquet file or folder or a Hugging Face datasets folder."""
    X = read_matrix(path, "FILE", tables=True).astype(np.float32)
    if X.shape[1] < 2:  # a 1-D array reads as one column: say so, not "--clusters in [2, 1]"
        _fail(ValueError(f"FILE {path.name} has 1 column; URLOST groups the columns "
                         "(dimensions) into tokens, so it needs at least 2 (one sample per "
                         "row, one dimension per column)"))
    return X


def _fail(exc: Exception) -> None:
    msg = str(exc).replace("n_clusters", "--clusters").replace("n_neighbors", "--neighbors")
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(2) from None


def _fit_echoing_warnings(model, X, **run) -> None:
    """``model.fit(X)``, each warning (e.g. the dropped constant columns) one stderr line,
    printed once it returns (:func:`~iclr25._cli.api_warnings`)."""
    notes: list[str] = []
    with api_warnings((), notes):
        model.fit(X, **run)
    print_notes(notes)


@app.command()
def cluster(
    file: Path = typer.Argument(..., help="Samples as rows, dimensions as columns: .npy, "
                                          ".csv, .parquet (file or folder) or a Hugging Face "
                                          "datasets folder."),
    clusters: int = typer.Option(16, "--clusters", help="Number of tokens (clusters)."),
    neighbors: int = typer.Option(10, "--neighbors", help="k of the kNN dependence graph."),
    dependence: str = typer.Option("corr", "--dependence", help="corr or mi."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    out: Path = typer.Option(..., "--out", help="Labels of the columns: .npy (int64), or "
                                                 ".csv/.txt (a line per column: its name, "
                                                 "its token)."),
) -> None:
    """Cluster FILE's columns into tokens; write one label per column (-1: a constant
    column, dropped with a warning).

    The dependence between columns reads every row it is given at once (whole-data): a
    table (Parquet, Hugging Face folder) gives it the rows ``urlost fit`` clusters on, all
    of them up to 20,000 (then the labels are those of the same rows as an array), else a
    seeded sample of 20,000, read chunk by chunk (the table is never read whole); a column
    constant in that sample is dropped. So does a .csv over 16 MB (its rows read by their
    offsets); .npy files and smaller .csv files are read whole.

    Small real input: 2,694 digit images of 16x16 (256 columns) take a few seconds."""
    import torch

    from iclr25.datasets.files import is_streamed_path, open_dataset
    from iclr25.urlost.mae import _cluster_sample, _Rows
    from iclr25.urlost.organize import SelfOrganizingClusters

    try:
        output_path(out, suffixes=ARRAY_OUTPUTS)
        if is_streamed_path(file):
            X = _cluster_sample(_Rows(open_dataset(file, "FILE"), "FILE"), seed)
        else:
            X = torch.as_tensor(_read(file))
        soc = SelfOrganizingClusters(clusters, n_neighbors=neighbors, dependence=dependence,
                                     seed=seed)
        _fit_echoing_warnings(soc, X)
    except (ValueError, TypeError, ImportError) as exc:
        _fail(exc)
    labels = soc.labels_
    write_array(out, labels, ["column", "token"], rows=column_names(file, X.shape[1]))
    sizes = np.bincount(labels[labels >= 0])
    typer.echo(f"columns: {X.shape[1]} ({len(soc.dropped_columns_)} constant, dropped)  "
               f"clusters: {soc.n_clusters_}  sizes: {sizes.min()}..{sizes.max()}")
    typer.echo(f"wrote {out}")


@app.command()
@training_verb
def fit(
    file: Path = typer.Argument(..., help="Training samples: .npy, .csv, .parquet (file or "
                                          "folder) or a Hugging Face datasets folder."),
    clusters: int = typer.Option(16, "--clusters", help="Number of tokens (clusters)."),
    neighbors: int = typer.Option(10, "--neighbors", help="k of the kNN dependence graph."),
    epochs: int = typer.Option(20, "--epochs", help="Training epochs of the masked "
                                "autoencoder."),
    dim: int = typer.Option(64, "--dim", help="Embedding width."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    out: Path = typer.Option(..., "--out", help="Model file (.safetensors)."),
    engine: EngineArgs = None,
) -> None:
    """Fit URLOST (clusters + masked autoencoder) on FILE; save the model.

    A table, and a .npy (memory-mapped) or a .csv (its rows read by their offsets) over
    16 MB are streamed batch by batch, memory bounded by the batch; a smaller .npy/.csv is
    read whole."""
    import torch

    from iclr25._progress import estimating
    from iclr25.datasets.files import is_streamed_path, open_rows
    from iclr25.urlost.mae import URLOST, _Rows

    try:
        output_path(out, suffixes=(".safetensors",))
        run = engine.for_(URLOST.fit, out, "urlost fit")
        if is_streamed_path(file, npy=True):   # rows read batch by batch, errors name FILE
            X = _Rows(open_rows(file, "FILE"), "FILE")
            width = X.width
        else:
            X = torch.as_tensor(_read(file))
            width = X.shape[1]
        model = URLOST(n_clusters=clusters, n_neighbors=neighbors, epochs=epochs, dim=dim,
                       seed=seed)
        model._check_params(width)
        with estimating():  # the bar (on a terminal) prints its run-time estimate
            _fit_echoing_warnings(model, X, **run)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    model.save(out)
    typer.echo(f"tokens: {len(model.groups_)}  final loss: {model.loss_curve_[-1]:.4g}")
    typer.echo(f"wrote {out}")


@app.command()
@threads_verb
def embed(
    model_file: Path = typer.Argument(..., help="A model written by `urlost fit` (.safetensors)."),
    file: Path = typer.Argument(..., help="Samples to embed: .npy, .csv, .parquet (file or "
                                          "folder) or a Hugging Face datasets folder."),
    out: Path = typer.Option(..., "--out", help="Embeddings, one row per sample: .npy, "
                                                 ".csv or .txt (columns z0, z1, ...)."),
) -> None:
    """Embed FILE's rows with a fitted URLOST model (mean-pooled token features).

    A table (Parquet, Hugging Face folder), a .npy (memory-mapped) and a .csv over 16 MB
    (its rows read by their offsets) are read and written window by window, memory bounded
    by the window (:meth:`URLOST.transform` on a Dataset); a smaller .csv is read whole.
    """
    import torch

    from iclr25._io import ArrayWriter
    from iclr25.datasets.files import open_read
    from iclr25.urlost.mae import URLOST

    try:
        output_path(out, suffixes=ARRAY_OUTPUTS)
        model = URLOST.load(model_file)
        data, streamed = open_read(file, "FILE", _read)
        parts = model._windows(data, "FILE") if streamed else iter([torch.as_tensor(data)])
        with ArrayWriter(out, len(data), [f"z{j}" for j in range(model.dim)]) as sink:
            for x in parts:
                sink.write(model.transform(x).numpy())
    except (ValueError, TypeError, ImportError) as exc:
        _fail(cli_words(exc, {"X": "FILE"}))   # transform's X is the command line's FILE
    typer.echo(f"embedded {len(data)} rows into {model.dim} dimensions; wrote {out}")
