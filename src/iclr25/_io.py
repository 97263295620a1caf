"""One reader of numeric tables (.npy, .csv, whitespace text) for command lines and file
readers: the same checks and the same messages everywhere."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def read_matrix(path: str | Path, name: str = "FILE", *,
                suffixes: tuple[str, ...] = (".npy", ".csv")) -> np.ndarray:
    """An (n, d) float64 array from a ``.npy`` file or a text table, checked before any work.

    ``.csv`` is comma-separated, ``.txt``/``.xyz`` whitespace-separated; a first line with no
    number in it is a header and skipped. A 1-D array or a one-column table is a column (n, 1).

    Args:
        path: the file. name: how messages name it (the argument or option, e.g. ``--oom``).
        suffixes: the accepted suffixes, in the order messages list them.

    Raises:
        ValueError: a wrong suffix, a missing or unreadable file, a non-numeric cell or a
            ragged row (naming its line), no rows, NaN or inf (naming the first rows).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in suffixes:
        raise ValueError(f"{name} must end in {' or '.join(suffixes)}, got {p.name}")
    if not p.is_file():
        raise ValueError(f"{name} {p} does not exist")
    if suffix == ".npy":
        try:
            X = np.load(p, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(f"{name} {p} is not a readable .npy array ({exc})") from None
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{name} {p} must hold real numbers, got dtype {X.dtype}")
    else:
        rows: list[list[float]] = []
        with p.open() as fh:
            for line, text in enumerate(fh, start=1):
                cells = [c.strip() for c in text.split(",")] if suffix == ".csv" else text.split()
                if not any(cells):
                    continue
                if not all(map(_is_number, cells)):
                    if line == 1 and not any(map(_is_number, cells)):
                        continue  # header
                    bad = next(c for c in cells if not _is_number(c))
                    raise ValueError(f"{name} {p} line {line}: non-numeric cell {bad!r}")
                rows.append([float(c) for c in cells])
                if len(rows[-1]) != len(rows[0]):
                    raise ValueError(f"{name} {p} line {line}: {len(rows[-1])} cells, expected "
                                     f"{len(rows[0])}")
        X = np.asarray(rows, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.size == 0:
        raise ValueError(f"{name} {p} must hold a non-empty n x d array, got shape {X.shape}")
    X = X.astype(np.float64)
    bad_rows = np.flatnonzero(~np.isfinite(X).all(1))
    if len(bad_rows):
        raise ValueError(f"{name} {p} holds NaN or inf in rows {bad_rows[:5].tolist()}")
    return X
