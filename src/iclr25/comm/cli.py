"""``iclr25 comm fit A.npy B.npy --out m.pt`` and ``iclr25 comm embed m.pt A.npy - --out Z.npy``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer

from iclr25._cli import EngineArgs, check_seed, input_file, output_path, threads_verb, training_verb
from iclr25._cli import fail as _fail
from iclr25._io import ARRAY_OUTPUTS, read_matrix

app = typer.Typer(help="CoMM: multimodal contrastive embeddings (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


def _read(path: str) -> np.ndarray:
    """A (n, d) float32 array from .npy, .csv, a Parquet file or folder, a Hugging Face
    ``save_to_disk`` folder or a folder of same-size images (one row each, flattened)."""
    try:
        return read_matrix(path, "FILES", tables=True).astype(np.float32)
    except ValueError as exc:
        _fail(exc)


def _open(path: str, read: bool = False) -> object:
    """``-``: a missing modality (None). With ``read`` (``embed``):
    :func:`~iclr25.datasets.files.open_read`'s (a .npy memory-mapped, a table, an image
    folder or a .csv over :data:`~iclr25.datasets.rows.READ_WHOLE_BYTES` read window by
    window, else an array, :func:`_read`). For ``fit``: what
    :func:`~iclr25.datasets.files.is_streamed_path` (with ``npy``) streams as
    :func:`~iclr25.datasets.files.open_rows`' Dataset (rows read batch by batch, an image
    flattened, a .npy as a :class:`~iclr25.datasets.rows.ArrayRows`), other .npy/.csv
    files as an array (:func:`_read`)."""
    from iclr25.datasets.files import is_streamed_path, open_read, open_rows

    if path == "-":
        return None
    try:
        if read:
            return open_read(path, "FILES", _read)[0]
        if is_streamed_path(path, npy=True):
            return open_rows(path, "FILES")
    except (ValueError, TypeError, ImportError) as exc:
        _fail(exc)
    return _read(path)


def _read_all(files: list[str], read: bool = False) -> list:
    Xs = [_open(f, read) for f in files]
    rows = {f: len(X) for f, X in zip(files, Xs, strict=True) if X is not None}
    if len(set(rows.values())) > 1:
        _fail(f"modalities have different row counts: {rows}")
    return Xs


@app.command()
@training_verb
def fit(
    files: list[str] = typer.Argument(..., help="One per modality, rows aligned: .npy, .csv, "
                                      ".parquet (file or folder), a Hugging Face datasets "
                                      "folder, or a folder of same-size images."),
    out: Path = typer.Option(..., "--out", help="Where to write the model (.safetensors)."),
    dim: int = typer.Option(64, "--dim", help="Embedding width."),
    epochs: int = typer.Option(100, "--epochs", help="Training epochs."),
    batch_size: int = typer.Option(128, "--batch-size", help="Batch size (>= 2)."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    engine: EngineArgs = None,
) -> None:
    """Train a CoMM embedder on row-aligned modalities and save it.

    Tables, image folders, and .npy (memory-mapped) and .csv (each row read by its offset)
    files over 16 MB are streamed batch by batch, memory bounded by the batch and the
    tables' caches; a smaller .npy/.csv is read whole (the arrays' fit, as before)."""
    from iclr25._progress import estimating
    from iclr25.comm.embedder import CoMMEmbedder
    from iclr25.comm.rows import Modalities, is_streamed

    if len(files) < 2:
        _fail(f"fit needs at least 2 modality files, got {len(files)}")
    if "-" in files:
        _fail("fit needs every modality ('-' is only for embed)")
    for name, v, low in (("--dim", dim, 1), ("--epochs", epochs, 1),
                         ("--batch-size", batch_size, 2), ("--seed", seed, 0)):
        if v < low:
            _fail(f"{name} must be >= {low}, got {v}")
    output_path(out)
    run = engine.for_(CoMMEmbedder.fit, out, "comm fit")
    Xs = _read_all(files)
    try:
        with estimating():
            data = Modalities(Xs, "FILES") if is_streamed(Xs) else Xs  # errors name FILES
            emb = CoMMEmbedder(dim=dim, epochs=epochs, batch_size=batch_size,
                               seed=seed).fit(data, **run)
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    emb.save(out)
    typer.echo(f"wrote {out} (final loss {emb.history_[-1]:.4f})")


@app.command()
@threads_verb
def embed(
    model: Path = typer.Argument(..., help="A model written by `iclr25 comm fit`."),
    files: list[str] = typer.Argument(..., help="One file per modality; '-' = missing."),
    out: Path = typer.Option(..., "--out", help="Where to write the embeddings: .npy, or .csv/"
                             ".txt (a header z0, z1, ..., then a line per row)."),
) -> None:
    """Embed row-aligned modalities (some may be missing) with a fitted model.

    Tables (Parquet, Hugging Face folders), image folders, .npy files (memory-mapped) and
    .csv files over 16 MB (each row read by its offset) are read and the embeddings written
    window by window, memory bounded by the window (:meth:`CoMMEmbedder.transform` on
    Datasets); a smaller .csv is read whole."""
    from iclr25._io import ArrayWriter
    from iclr25.comm.embedder import CoMMEmbedder
    from iclr25.comm.rows import is_streamed

    output_path(out, suffixes=ARRAY_OUTPUTS)       # as urlost embed and v3 encode
    input_file(model, "MODEL")
    try:
        emb = CoMMEmbedder.load(model)
    except ValueError as exc:
        _fail(str(exc))
    Xs = _read_all(files, read=True)
    n = next((len(X) for X in Xs if X is not None), 0)
    try:
        streamed = is_streamed(Xs) or any(isinstance(X, np.memmap) for X in Xs)
        parts = emb._windows(Xs, "FILES") if streamed else iter([Xs])
        header = [f"z{j}" for j in range(emb.dim)]         # as urlost embed names them
        with ArrayWriter(out, n, header, fmt="%.18e") as sink:   # np.savetxt's default
            for xs in parts:
                sink.write(emb.transform(xs))
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {out} {(n, emb.dim)}")
