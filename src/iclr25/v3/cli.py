"""``iclr25 v3 fit SEQS.npy --codes 10 --out m.safetensors`` and
``iclr25 v3 encode m.safetensors SEQS.npy --codes-out c.npy``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer

from iclr25._cli import EngineArgs, check_seed, output_path, threads_verb, training_verb
from iclr25._cli import fail as _fail
from iclr25._io import ARRAY_OUTPUTS, read_npy

app = typer.Typer(help="V3: content codebook and style vectors of sequences (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


def _read(path: Path, tables: bool = False, mmap: bool = False) -> np.ndarray:
    """A finite float (B, N, F) or (B, N, C, H, W) array from a .npy file (``tables``: the
    error also names the tables ``fit`` streams; ``mmap``: memory-mapped, as it is, read
    window by window and its NaN found there)."""
    if not path.is_file() or path.suffix != ".npy":
        _fail(f"{path}: expected an existing .npy file" + (
            ", a .parquet file or folder, or a Hugging Face datasets folder" if tables else ""))
    try:
        X = read_npy(path, "SEQS", mmap=mmap)
    except ValueError as exc:
        _fail(exc)
    if X.dtype.kind != "f":
        _fail(f"{path}: expected a float array, got dtype {X.dtype}")
    if X.ndim not in (3, 5) or X.shape[0] < 1 or X.shape[1] < 1:
        _fail(f"{path}: expected shape (B, N, F) or (B, N, C, H, W), got {X.shape}"
              + (_four_d_hint(X.shape) if X.ndim == 4 else ""))
    if mmap:
        return X
    if not np.isfinite(X).all():
        _fail(f"{path}: holds NaN or inf")
    return X.astype(np.float32)


def _four_d_hint(shape: tuple[int, ...]) -> str:
    """The two readings of a (B, N, a, b) array: grey images, or vectors with a spare axis
    (a (B, N, 1, F) array of signals first, as it is one flatten from (B, N, F))."""
    B, N, a, b = shape
    images = f"grey images: add the channel, X[:, :, None] of shape {(B, N, 1, a, b)}"
    vectors = f"vectors: flatten, X.reshape({B}, {N}, -1) of shape {(B, N, a * b)}"
    return f" ({vectors}; {images})" if a == 1 else f" ({images}; {vectors})"


@app.command()
@training_verb
def fit(
    seqs: Path = typer.Argument(..., help="Float .npy of shape (B, N, F) or (B, N, C, H, W), "
                                "or a .parquet file/folder or Hugging Face datasets folder "
                                "with one column of (N, F) or (N, C, H, W) nested lists."),
    out: Path = typer.Option(..., "--out", help="Where to write the model (.safetensors)."),
    codes: int = typer.Option(10, "--codes", help="Codebook size K (>= 2)."),
    epochs: int = typer.Option(40, "--epochs", help="Training epochs (>= 1)."),
    batch_size: int = typer.Option(32, "--batch-size", help="Sequences per batch (>= 2)."),
    bundle: str = typer.Option("repo", "--bundle", help="'repo' or 'paper' settings."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    engine: EngineArgs = None,
) -> None:
    """Train V3 on the sequences, save the model, print its loss and codebook usage.

    Small real input: 64 digit sequences of 10 fragments (8x8) train in seconds."""
    import torch

    from iclr25._progress import estimating
    from iclr25.datasets.files import is_dataset_path, open_dataset
    from iclr25.v3.model import BUNDLES, V3, _Sequences

    if codes < 2:
        _fail(f"--codes must be >= 2, got {codes}")
    if epochs < 1 or batch_size < 2 or seed < 0:
        _fail("--epochs must be >= 1, --batch-size >= 2 and --seed >= 0")
    if bundle not in BUNDLES:
        _fail(f"--bundle must be one of {sorted(BUNDLES)}, got {bundle!r}")
    output_path(out)
    run = engine.for_(V3.fit, out, "v3 fit")
    if is_dataset_path(seqs):    # streamed: sequences read batch by batch, errors name SEQS
        try:
            data = _Sequences(open_dataset(seqs, "SEQS"), "SEQS")
        except (ValueError, TypeError, ImportError) as exc:
            _fail(exc)
        blocks = (torch.stack([data.sequence(i) for i in range(s, min(s + 256, len(data)))])
                  for s in range(0, len(data), 256))
    else:
        X = _read(seqs, tables=True)
        if X.shape[0] < 2 or X.shape[1] < 2:
            _fail(f"{seqs}: fit needs B >= 2 sequences of N >= 2 fragments, got {X.shape}")
        data = torch.from_numpy(X)
        blocks = iter([data])
    model = V3(n_codes=codes, epochs=epochs, batch_size=batch_size, bundle=bundle, seed=seed)
    try:
        with estimating():  # the bar (on a terminal) prints its run-time estimate
            model.fit(data, **run)
    except (ValueError, TypeError) as exc:
        _fail(exc)
    model.save(out)
    last = model.history_[-1]
    used = sum(torch.bincount(model.predict(b).flatten(), minlength=codes).double()
               for b in blocks)
    p = used / used.sum()
    perplexity = float(torch.exp(-(p[p > 0] * p[p > 0].log()).sum()))
    typer.echo(f"final epoch loss: {last['loss']:.4g} (reconstruction {last['recon']:.4g}, "
               f"V3 {last['v3']:.4g}, commitment {last['commit']:.4g}); first epoch "
               f"{model.history_[0]['loss']:.4g}")
    typer.echo(f"codebook usage on SEQS: {int((used > 0).sum())} of {codes} codes "
               f"(perplexity {perplexity:.2f}; {codes} = all used equally)")
    typer.echo(f"wrote {out}")


@app.command()
@threads_verb
def encode(
    model_path: Path = typer.Argument(..., help="A model written by 'iclr25 v3 fit'."),
    seqs: Path = typer.Argument(..., help="Float .npy with the model's fragment shape, or a "
                                ".parquet file/folder or Hugging Face datasets folder (as fit "
                                "reads)."),
    codes_out: Path = typer.Option(..., "--codes-out", help="Where to write the codes (B, N): "
                                   ".npy, or .csv/.txt (a line per sequence, columns n0, n1, "
                                   "...)."),
    style_out: Path = typer.Option(None, "--style-out", help="Optional z_s (B, N, d_s) .npy."),
) -> None:
    """Write the content code of every fragment (and optionally the style vectors).

    A table (Parquet, Hugging Face folder) is read and both outputs written window by window,
    memory bounded by the window (:meth:`V3.predict` on a Dataset); so is a .npy, opened
    memory-mapped."""
    from contextlib import nullcontext

    from iclr25._io import ArrayWriter
    from iclr25.datasets.files import is_dataset_path, open_dataset
    from iclr25.datasets.rows import READ_CACHE_MB
    from iclr25.v3.model import V3

    output_path(codes_out, "--codes-out", suffixes=ARRAY_OUTPUTS)
    output_path(style_out, "--style-out", suffixes=(".npy",))
    if not model_path.is_file():
        _fail(f"{model_path}: no such model file")
    X = None if is_dataset_path(seqs) else _read(seqs, mmap=True)
    try:
        model = V3.load(model_path)
    except ValueError as exc:
        _fail(str(exc))
    if X is not None and tuple(X.shape[2:]) != model.fragment_shape_:
        _fail(f"{seqs}: fragments of shape {X.shape[2:]}, model expects "
              f"{model.fragment_shape_}")
    try:
        data = open_dataset(seqs, "SEQS", cache_mb=READ_CACHE_MB) if X is None else X
        parts = model._windows(data, "SEQS")
        n, width = len(data), len(data[0])       # N: item 0 checked above
        with ArrayWriter(codes_out, n, [f"n{j}" for j in range(width)]) as codes, \
                (ArrayWriter(style_out, n, None) if style_out else nullcontext()) as style:
            for x in parts:
                codes.write(model.predict(x).numpy())
                if style is not None:
                    style.write(model.transform(x)[1].numpy())
    except (ValueError, TypeError, ImportError) as exc:
        _fail(exc)
    typer.echo(f"wrote {codes_out}")
    if style_out is not None:
        typer.echo(f"wrote {style_out}")
