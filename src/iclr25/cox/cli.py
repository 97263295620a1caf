"""``iclr25 cox fit --oom X.npy --im A.npy --im-labels ya.csv [--pairs p.csv --labels y.csv]
--out m.pt`` and ``iclr25 cox predict m.pt X.npy``.

``fit`` passes a table (a Parquet file or folder, a Hugging Face ``save_to_disk`` folder) to
:meth:`COX.fit` unread, as a :class:`~iclr25.datasets.files.TableRows` that the fit streams;
a table of labels is read in one pass into the fit's per-row labels."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import typer

from iclr25._cli import (
    EngineArgs,
    api_warnings,
    check_seed,
    input_file,
    output_path,
    print_notes,
    threads_verb,
    training_verb,
)
from iclr25._cli import fail as _fail
from iclr25._io import read_matrix

app = typer.Typer(help="COX: out-of-modal generalisation from few or no pairs (ICLR 2025).",
                  no_args_is_help=True, add_completion=False)


def _read(path: Path, what: str, *, integer: bool = False) -> np.ndarray:
    """A float32 (or, with ``integer``, int64) array from .npy, .csv, a Parquet file or
    folder or a Hugging Face ``save_to_disk`` folder, checked before work."""
    try:
        X = read_matrix(path, what, tables=True)
    except ValueError as exc:
        _fail(exc)
    if integer:
        if not np.array_equal(X, np.round(X)):
            _fail(f"{what}: {path} must hold integers")
        return X.astype(np.int64)
    return X.astype(np.float32)


def _rows(path: Path, what: str) -> object:
    """A table, or a .npy (memory-mapped) or .csv over 16 MB, as an unread Dataset (what
    :func:`~iclr25.datasets.files.is_streamed_path` streams), else a float32 array
    (:func:`_read`)."""
    from iclr25.datasets.files import is_streamed_path, open_rows

    if not is_streamed_path(path, npy=True):
        return _read(path, what)
    try:
        return open_rows(path, what)
    except (ValueError, TypeError, ImportError) as exc:
        _fail(str(exc))


def _labels(path: Path, what: str) -> np.ndarray:
    """(n,) int64 labels of a file or a table (read item by item, never whole)."""
    from iclr25.cox.rows import read_labels
    from iclr25.datasets.files import is_dataset_path

    if not is_dataset_path(path):
        return _read(path, what, integer=True).reshape(-1)
    try:
        return read_labels(_rows(path, what), what).numpy()
    except (ValueError, TypeError) as exc:
        _fail(str(exc))


#: the fit's warnings name the API's arguments; the command line's options instead
_WORDS = ((r"^COX\.fit: ", ""), (r"raise steps\.", "raise --steps."),
          (r"min_pairs=(\d+)", r"\1 (5 per class)"),
          (r"Standardise X_oom", "Standardise the --oom columns"),
          (r"\(pairs=\.\.\.\)", "(--pairs)"), (r"\(y_oom=\.\.\.\)", "(--labels)"),
          (r"; floor_used_ is True \(floor='off' keeps COX's head\)", " (--pairs, --labels)"))


def _cli_words(message: object) -> str:
    """A warning of :meth:`COX.fit` in the command line's words (:data:`_WORDS`)."""
    text = str(message)
    for api, cli in _WORDS:
        text = re.sub(api, cli, text)
    return text


@app.command()
@training_verb
def fit(
    oom: Path = typer.Option(..., "--oom", help="OOM inputs (n, d): .npy, .csv, .parquet (file "
                             "or folder) or a Hugging Face datasets folder; so are the others."),
    im: list[Path] = typer.Option(..., "--im", help="IM embeddings (m, D); repeat per modality."),
    im_labels: list[Path] = typer.Option(..., "--im-labels",
                                         help="IM labels (m,): once, or once per --im."),
    pairs: Path = typer.Option(None, "--pairs", help="2-column int CSV (im_row, oom_row)."),
    labels: Path = typer.Option(None, "--labels", help="OOM labels (n,), -1 = unlabelled."),
    out: Path = typer.Option(..., "--out", help="Where to write the model (.safetensors)."),
    n_classes: int = typer.Option(None, "--n-classes", help="Classes (default: max label + 1)."),
    steps: int = typer.Option(800, "--steps", help="Optimisation steps."),
    seed: int = typer.Option(0, "--seed", callback=check_seed, help="Seed (>= 0)."),
    engine: EngineArgs = None,
) -> None:
    """Fit COX and save it.

    Tables, and .npy (memory-mapped) and .csv (their rows read by their offsets) files over
    16 MB, given to --oom and --im are streamed, memory bounded by the batch (the arrays'
    fit, bit for bit); smaller .npy/.csv files are read whole. Labels and pairs are read in
    one pass (8 B a row)."""
    from iclr25._progress import estimating
    from iclr25.cox.model import COX

    if len(im_labels) not in (1, len(im)):
        _fail(f"--im-labels: give it once or once per --im ({len(im)}), got {len(im_labels)}")
    if steps < 1 or seed < 0:
        _fail("--steps must be >= 1 and --seed >= 0")
    output_path(out)
    run = engine.for_(COX.fit, out, "cox fit")
    X = _rows(oom, "--oom")
    Zs = [_rows(p, "--im") for p in im]
    Ys = [_labels(p, "--im-labels") for p in im_labels]
    Ys = Ys * len(Zs) if len(Ys) == 1 else Ys
    P = _read(pairs, "--pairs", integer=True) if pairs is not None else None
    if P is not None and (P.ndim != 2 or P.shape[1] != 2):
        _fail(f"--pairs: expected 2 columns, got shape {P.shape}")
    y = _labels(labels, "--labels") if labels is not None else None
    C = n_classes if n_classes is not None else int(max(
        [int(v.max()) for v in Ys] + ([int(y.max())] if y is not None else []))) + 1
    names = [f"im{i}" for i in range(len(Zs))]
    notes: list[str] = []
    try:   # the bar (on a terminal) prints its run-time estimate
        with estimating(), api_warnings((), notes, words=_cli_words):
            model = COX(C, steps=steps, seed=seed).fit(
                X, dict(zip(names, Zs, strict=True)), dict(zip(names, Ys, strict=True)),
                pairs=P, y_oom=y, **run)
    except (ValueError, TypeError, ImportError) as exc:
        _fail(str(exc))
    print_notes(notes)
    model.save(out)
    typer.echo(f"wrote {out} ({len(model.correspondences_)} correspondences)")


@app.command()
@threads_verb
def predict(
    model: Path = typer.Argument(..., help="A model written by `iclr25 cox fit`."),
    X: Path = typer.Argument(..., help="OOM inputs (n, d): .npy, .csv, .parquet (file or "
                                       "folder) or a Hugging Face datasets folder."),
    out: Path = typer.Option(None, "--out", help="Write labels here (.npy/.csv); else stdout."),
) -> None:
    """Predict OOM labels with a fitted model.

    A table (Parquet, Hugging Face folder), a .npy (memory-mapped) and a .csv over 16 MB (its
    rows read by their offsets) are read and the labels written window by window, memory
    bounded by the window (:meth:`COX.predict` on a Dataset); a smaller .csv is read
    whole."""
    import torch

    from iclr25._io import ArrayWriter
    from iclr25.cox.model import COX
    from iclr25.datasets.files import open_read

    output_path(out, suffixes=(".npy", ".csv"))
    input_file(model, "MODEL")
    try:
        m = COX.load(model)
    except ValueError as exc:
        _fail(str(exc))
    try:
        data, streamed = open_read(X, "X", lambda p: _read(p, "X"))
        parts = m._windows(data, "X") if streamed else iter([torch.from_numpy(data)])
        n = len(data)
        if out is None:   # labels (n,) int64 gathered for stdout, never X
            y = torch.cat([m.predict(x).cpu() for x in parts]).numpy()
            typer.echo("\n".join(map(str, y.tolist())))
            return
        # a .csv gets a header line, as the labels files fit reads (a headerless one lost
        # its first label to pandas.read_csv's header); .npy is np.save's file
        with ArrayWriter(out, n, ["label"], fmt="%d") as sink:
            for x in parts:
                sink.write(m.predict(x).cpu().numpy())
    except (ValueError, TypeError, ImportError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {out} ({n} labels)")
