"""``iclr25 toss fit DATA`` and ``iclr25 toss predict MODEL DATA``: heteroscedastic regression
from CSV (with a header), .npz (arrays X, Y), Parquet (a file or a folder) or Hugging Face
``save_to_disk`` folders (named scalar columns, as CSV)."""

from __future__ import annotations

from pathlib import Path

import typer

from iclr25._choices import DEFAULT_CENTER, Center
from iclr25._cli import (
    EngineArgs,
    api_warnings,
    check_seed,
    choice,
    cli_words,
    input_file,
    option_words,
    output_path,
    print_notes,
    threads_verb,
    training_verb,
)
from iclr25._cli import fail as _fail
from iclr25._io import read_npz, read_table

app = typer.Typer(help="ToSS: mean and input-dependent covariance of a vector target "
                       "(ICLR 2025).", no_args_is_help=True, add_completion=False)

LOSSES = ("toss", "nll", "beta-nll", "tic")
#: what ``toss fit``'s refusals and warnings spell as the API's keywords
_FIT_OPTIONS = ("center", "n_neighbors")


@app.callback()
def _group() -> None:
    """Heteroscedastic regression with the W2 bound and neighbourhood pseudo-labels."""


def _check_data(data: Path) -> bool:
    """Exit 2 unless DATA is .csv, .npz or a table (:mod:`iclr25.datasets.files`); whether
    it is a table with named columns (CSV or a dataset)."""
    from iclr25.datasets.files import is_dataset_path

    if is_dataset_path(data):
        if not data.exists():
            _fail(f"DATA {data} does not exist")
        return True
    if data.suffix not in (".csv", ".npz"):
        _fail(f"DATA must end in .csv or .npz, or be a .parquet file or folder or a Hugging "
              f"Face datasets folder, got {data.name}")
    input_file(data, "DATA")
    return data.suffix == ".csv"


def _open_table(data: Path):
    """DATA (a table, or a .csv over 16 MB) by :func:`~iclr25.datasets.files.open_dataset`,
    and whether it is a :class:`~iclr25.datasets.files.CsvRows` (read row by row), checked
    as :func:`~iclr25._io.read_table` checks a CSV read whole: a header of one name a column."""
    from iclr25.datasets.files import CsvRows, open_dataset

    ds = open_dataset(data, "DATA")
    csv = isinstance(ds, CsvRows)
    if csv and ds.header is None:
        raise ValueError(f"DATA {data} must start with a header row of column names")
    if csv and len(ds.header) != ds.width:
        raise ValueError(f"DATA {data}: rows have {ds.width} values but the header names "
                         f"{len(ds.header)} columns")
    return ds, csv


def _table_features(data: Path, feats: list[str] | None):
    """The feature columns ``feats`` (None: every column) of a table as a
    :class:`~iclr25.datasets.files.TableRows` of scalar columns, read chunk by chunk (a
    large .csv: a :class:`~iclr25.datasets.files.CsvRows`, read row by row)."""
    from iclr25.datasets.files import TableRows
    from iclr25.datasets.rows import READ_CACHE_MB

    ds, csv = _open_table(data)
    if not isinstance(ds, TableRows) and not csv:
        raise ValueError(f"DATA {data}: toss reads a table of scalar columns, not images")
    missing = [c for c in feats or [] if c not in ds.columns]
    if missing:
        raise ValueError(f"{data} lacks the feature column(s) {', '.join(missing)}")
    if csv:
        return ds.select(feats or ds.columns)
    X = TableRows(data, feats or ds.columns, name="DATA", cache_mb=READ_CACHE_MB)
    if X.item_shape != (len(X.columns),):
        raise ValueError(f"DATA {data}: toss reads a table of scalar columns, got items of "
                         f"shape {X.item_shape}")
    return X


def _table_xy(data: Path, targets: list[str]):
    """The feature and target columns of a table as two row-aligned
    :class:`~iclr25.datasets.files.TableRows` (read chunk by chunk; a large .csv: two
    :class:`~iclr25.datasets.files.CsvRows` sharing one index), and their names."""
    from iclr25.datasets.files import TableRows

    ds, csv = _open_table(data)
    if not csv and (not isinstance(ds, TableRows) or ds.item_shape != (len(ds.columns),)):
        raise ValueError(f"DATA {data}: toss reads a table of scalar columns, got items of "
                         f"shape {getattr(ds, 'item_shape', None)}")
    missing = [c for c in targets if c not in ds.columns]
    if missing:
        raise ValueError(f"--targets: {data} lacks column(s) {', '.join(missing)}")
    feats = [c for c in ds.columns if c not in targets]
    if not feats:
        raise ValueError(f"{data} has no feature columns besides the targets")
    if csv:
        return ds.select(feats), ds.select(targets), feats, list(targets)
    return (TableRows(data, feats, name="DATA"), TableRows(data, targets, name="DATA"),
            feats, list(targets))


def _load_xy(data: Path, targets: list[str] | None, features: list[str] | None):
    """X, Y, feature names, target names from .csv or .npz (read whole)."""
    import numpy as np

    if data.suffix == ".npz":
        arrays = read_npz(data, "DATA", ("X",), ("Y",))
        X = arrays["X"].astype(np.float64)
        Y = arrays["Y"].astype(np.float64) if "Y" in arrays else None
        if X.ndim != 2:
            raise ValueError(f"{data}: X must be 2-D, got shape {X.shape}")
        return X, Y, None, None
    header, arr = read_table(data, "DATA")
    if features is not None:
        missing = [c for c in features if c not in header]
        if missing:
            raise ValueError(f"{data} lacks the feature column(s) {', '.join(missing)}")
        X = arr[:, [header.index(c) for c in features]]
        return X, None, features, None
    missing = [c for c in targets or [] if c not in header]
    if missing:
        raise ValueError(f"--targets: {data} lacks column(s) {', '.join(missing)}")
    feats = [c for c in header if c not in targets]
    if not feats:
        raise ValueError(f"{data} has no feature columns besides the targets")
    X = arr[:, [header.index(c) for c in feats]]
    Y = arr[:, [header.index(c) for c in targets]]
    return X, Y, feats, list(targets)


@app.command()
@training_verb
def fit(
    data: Path = typer.Argument(..., help="Training data: .csv with a header, .npz (X, Y), "
                                "or a .parquet file/folder or Hugging Face datasets folder "
                                "of named columns."),
    targets: str = typer.Option(None, "--targets", help="Comma-separated target columns "
                                                        "(CSV); the other columns are inputs."),
    loss: str = typer.Option("toss", "--loss", help="toss, nll, beta-nll or tic."),
    epochs: int = typer.Option(40, "--epochs", help="Training epochs."),
    n_neighbors: int = typer.Option(64, "--n-neighbors", help="Pseudo-label neighbours."),
    center: Center = typer.Option(DEFAULT_CENTER, "--center",
                                  parser=choice(Center, "--center"),
                                  help="Pseudo-labels' centre: local_linear (a weighted "
                                  "local linear fit, so the mean's slope is not counted as "
                                  "noise; needs --n-neighbors > inputs + 1) or mean (the "
                                  "paper's Algorithm 1)."),
    seed: int = typer.Option(0, "--seed", callback=check_seed,
                             help="Initialisation and shuffling seed."),
    out: Path = typer.Option(Path("model.safetensors"), "--out",
                             help="Where to save the model (its folder is created)."),
    engine: EngineArgs = None,
) -> None:
    """Fit a HeteroscedasticRegressor and save it.

    A table and a .csv over 16 MB (its rows read by their offsets) are streamed batch by
    batch, memory bounded by the batch; a smaller .csv is read whole. A .npz is read whole:
    numpy cannot memory-map an archive's members, so X and Y cost their full size."""
    import torch

    from iclr25._progress import estimating
    from iclr25.datasets.files import is_streamed_path
    from iclr25.toss.model import HeteroscedasticRegressor

    named = _check_data(data)
    if loss not in LOSSES:
        _fail(f"--loss must be one of {', '.join(LOSSES)}, got {loss!r}")
    if epochs < 1:
        _fail(f"--epochs must be >= 1, got {epochs}")
    if n_neighbors < 2:
        _fail(f"--n-neighbors must be >= 2, got {n_neighbors}")
    if named and not targets:
        _fail("--targets is required for a CSV file or a table (comma-separated column names)")
    output_path(out)
    run = engine.for_(HeteroscedasticRegressor.fit, out, "toss fit")
    names = [t.strip() for t in targets.split(",")] if targets else None
    notes: list[str] = []
    try:
        if is_streamed_path(data):      # streamed: the table is never read whole
            X, Y, feats, tnames = _table_xy(data, names)
        else:
            X, Y, feats, tnames = _load_xy(data, names, None)
            if Y is None:
                raise ValueError(f"{data} must hold an array named Y")
            X, Y = torch.from_numpy(X), torch.from_numpy(Y)
        reg = HeteroscedasticRegressor(loss=loss, epochs=epochs, n_neighbors=n_neighbors,
                                       center=center, seed=seed)
        with estimating(), api_warnings(_FIT_OPTIONS, notes, name="toss fit"):
            reg.fit(X, Y, **run)
    except (ValueError, TypeError, ImportError) as exc:
        _fail(option_words(cli_words(exc, {"n_neighbors": "--n-neighbors"}), _FIT_OPTIONS))
    print_notes(notes)
    reg.feature_names_, reg.target_names_ = feats, tnames
    reg.save(out)
    typer.echo(f"fitted {loss} on {len(X)} rows ({reg.n_features_in_} inputs, "
               f"{reg.n_outputs_} targets); final loss {reg.history_[-1]:.4g}; saved {out}")


@app.command()
@threads_verb
def predict(
    model: Path = typer.Argument(..., help="A model written by `iclr25 toss fit`."),
    data: Path = typer.Argument(..., help="Inputs: .csv with the training feature columns, "
                                          ".npz (X), or a .parquet file/folder or Hugging "
                                          "Face datasets folder with those columns."),
    out: Path = typer.Option(Path("pred.csv"), "--out", help="CSV: mean_<t> and cov_<s>_<t> "
                                                             "(lower triangle) per row, named by "
                                                             "the training target columns (0, "
                                                             "1, ... for .npz): cov_b_a, not "
                                                             "cov_1_0."),
) -> None:
    """Predict means and covariances; write one CSV row per input row.

    A table (Parquet, Hugging Face folder) and a .csv over 16 MB (its rows read by their
    offsets) are read and the predictions written window by window, memory bounded by the
    window (:meth:`HeteroscedasticRegressor.predict` on a Dataset); a smaller .csv is read
    whole. A .npz is read whole: numpy decompresses (or reads) an archive's member in one
    piece and cannot memory-map it, so X costs its full size in memory (8 B a value after
    the float64 cast); give a large X as a table or a .csv."""
    import numpy as np
    import torch

    from iclr25._io import ArrayWriter
    from iclr25.datasets.files import is_streamed_path
    from iclr25.toss.model import HeteroscedasticRegressor

    output_path(out, suffixes=(".csv",))
    input_file(model, "MODEL")
    named = _check_data(data)
    try:
        reg = HeteroscedasticRegressor.load(model)
        if is_streamed_path(data):      # streamed: the table is never read whole
            X = _table_features(data, reg.feature_names_)
            parts = reg._windows(X, "DATA")
        else:
            feats = reg.feature_names_ if named else None
            if named and feats is None:
                feats = read_table(data, "DATA")[0]
            X = _load_xy(data, None, feats)[0]
            parts = iter([torch.from_numpy(X)])
        q = reg.n_outputs_
        tn = reg.target_names_ or [str(j) for j in range(q)]
        rows, cols = np.tril_indices(q)
        header = [f"mean_{t}" for t in tn]
        header += [f"cov_{tn[i]}_{tn[j]}" for i, j in zip(rows, cols, strict=True)]
        with ArrayWriter(out, len(X), header, fmt="%.8g") as sink:
            for x in parts:
                mean, cov = reg.predict(x).numpy(), reg.predict_cov(x).numpy()
                sink.write(np.concatenate([mean, cov[:, rows, cols]], axis=1))
    except (ValueError, TypeError, ImportError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {len(X)} predictions to {out}")
