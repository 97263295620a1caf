"""Reading point clouds for the CLI: .npy, .csv, whitespace .txt/.xyz (n × d)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

SUFFIXES = (".npy", ".csv", ".txt", ".xyz")


def read_cloud(path: str | Path, name: str = "file") -> np.ndarray:
    """Read an (n, d) float64 point cloud from ``.npy``, ``.csv`` or whitespace ``.txt``/``.xyz``.

    Raises:
        ValueError: missing file, unknown suffix, unreadable or ragged rows, not 2-D, empty,
            or non-finite values; the message names ``name`` and the path.
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{name} {str(p)!r} does not exist")
    if p.suffix.lower() not in SUFFIXES:
        raise ValueError(f"{name} {str(p)!r} must end in {', '.join(SUFFIXES)}")
    try:
        if p.suffix.lower() == ".npy":
            arr = np.load(p, allow_pickle=False)
        else:
            delim = "," if p.suffix.lower() == ".csv" else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # empty file: reported below
                arr = np.loadtxt(p, delimiter=delim, ndmin=2, dtype=np.float64)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{name} {str(p)!r} cannot be read as an n x d array: {exc}") from None
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"{name} {str(p)!r} must hold a non-empty n x d array, got shape "
                         f"{arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} {str(p)!r} must hold real numbers, got {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} {str(p)!r} contains NaN or infinite values")
    return arr
