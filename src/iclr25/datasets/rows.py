"""Rows of a map-style Dataset read for a ``fit`` that streams it (one row as a flat float32
tensor, column statistics in one pass with memory bounded by a block of rows) and for a
reading verb (``embed``, ``encode``, ``predict``) or a ``transform`` that streams it: the
windows of rows read in turn, memory bounded by the window."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

__all__ = ["READ_CACHE_MB", "READ_WHOLE_BYTES", "WINDOW_BYTES", "ArrayRows", "flat_row",
           "item_tensor", "moments", "read_row", "row_windows", "sample_rows", "stack_rows",
           "windows"]

WINDOW_BYTES = 64 * 2**20
"""Decoded input a streamed ``transform``/``predict`` (and its reading verb) holds at once."""

READ_WHOLE_BYTES = WINDOW_BYTES // 4
"""A ``.csv`` file (a fit's ``.npy``) of at most this many bytes is read whole by the verbs
that stream larger ones (:func:`~iclr25.datasets.files.is_streamed_path`): its decoded
float64 rows (8 B a cell, a cell >= 2 B of text) fit in one window."""

READ_CACHE_MB = 32.0
"""The chunk cache a reading verb opens a table with (``TableRows(cache_mb=)``): it reads the
rows once, in order, so one decoded chunk at a time is enough (a training's shuffle needs
more, 256 MB by default)."""


def item_tensor(value: Any) -> torch.Tensor:
    """A Dataset's item as a tensor; a read-only array (a row of a memory-mapped ``.npy``,
    :func:`~iclr25._io.npy_rows`) copied, which torch would warn about sharing."""
    if isinstance(value, torch.Tensor):
        return value
    a = np.asarray(value)
    return torch.as_tensor(a if a.flags.writeable else a.copy())


class ArrayRows(Dataset):
    """The rows of an (n, ...) array as a map-style Dataset (item ``i`` the tensor of
    ``X[i]``, :func:`item_tensor`): a memory-mapped ``.npy``
    (:func:`~iclr25._io.npy_rows`) given to a fit, which then streams it batch by batch as
    it streams a table, never reading it whole. :attr:`fingerprint` names the file and its
    size (a checkpoint records it), None for an array in memory."""

    def __init__(self, X: np.ndarray) -> None:
        self.X = X
        path = getattr(X, "filename", None)
        self.fingerprint = None if path is None else \
            f"npy:{Path(path).name}:{Path(path).stat().st_size}:{X.shape}"

    def __len__(self) -> int:
        return len(self.X)

    def __getitem__(self, i: int) -> torch.Tensor:
        return item_tensor(self.X[i])


def flat_row(value: Any, where: str) -> torch.Tensor:
    """A Dataset's item (or a modality's part of it) as a flat float32 row (an image
    (3, H, W) flattened); ``where`` names it in the error (``X row 7``)."""
    t = item_tensor(value)
    if t.ndim == 0 or t.dtype == torch.bool or t.is_complex() or \
            not (t.is_floating_point() or t.dtype in (torch.uint8, torch.int8, torch.int16,
                                                      torch.int32, torch.int64)):
        raise ValueError(f"{where} must be a numeric row (d,), got "
                         f"{'a scalar' if t.ndim == 0 else t.dtype}")
    return t.reshape(-1).to(torch.float32)


def sample_rows(n: int, limit: int, seed: int) -> torch.Tensor:
    """(min(n, limit),) sorted row indices for a whole-data step of a streamed fit: every row
    when ``n <= limit`` (then the step equals the arrays' bit for bit), else a uniform sample
    without replacement drawn from ``seed``, in row order (a table reads it chunk by chunk)."""
    if n <= limit:
        return torch.arange(n)
    gen = torch.Generator().manual_seed(seed % 2**64)
    return torch.randperm(n, generator=gen)[:limit].sort().values


def read_row(data: Any, i: int, name: str, width: int | None = None, *,
             fitted: bool = False) -> torch.Tensor:
    """Item ``i`` of a map-style Dataset of rows as a flat float32 row (:func:`flat_row`): a
    pair (a table read with a target) or another width than ``width`` (row 0's; with
    ``fitted``, the fitted model's) is one ``ValueError`` naming ``name`` and the row. The
    one check of a streamed row, for a fit (COX, URLOST) and a reading verb alike."""
    item = data[i]
    if isinstance(item, (tuple, list)):
        raise ValueError(f"{name} item {i} is a {type(item).__name__}: its items must be "
                         f"rows (d,) (a table read without a target)")
    x = flat_row(item, f"{name} row {i}")
    if width is not None and len(x) != width:
        raise ValueError(f"{name} row {i} has {len(x)} values, " + (
            f"the model was fitted on {width}" if fitted else
            f"row 0 has {width}: the rows must share one width"))
    return x


def moments(read: Callable[[int], Sequence[torch.Tensor]], n: int, names: Sequence[str],
            block: int = 4096) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Column means and standard deviations (unbiased, as ``Tensor.std``) of m parts of rows,
    in ONE streaming pass in row order, ``block`` rows at a time, accumulated in float64
    (Chan et al.'s pairwise merge of block means and sums of squared deviations) and
    returned in float32: what a ``fit`` on a Dataset standardises with, memory bounded by
    the block.

    Args:
        read: ``i -> (x_1 (d_1,), ..., x_m (d_m,))``, row ``i``'s parts as flat float32 rows
            (a reader that checks them raises its own errors). n: the number of rows.
        names: how messages name each part (``Xs[0]``, ``X``).

    Returns:
        (means, stds): lists of m (d_j,) float32 tensors on the CPU.

    Raises:
        ValueError: NaN or inf (naming the part and the first such row).
    """
    count = 0
    mean: list[torch.Tensor] = []
    m2: list[torch.Tensor] = []
    for s in range(0, n, block):
        rows = [read(i) for i in range(s, min(s + block, n))]
        b = len(rows)
        if not mean:
            mean = [torch.zeros(len(r), dtype=torch.float64) for r in rows[0]]
            m2 = [torch.zeros(len(r), dtype=torch.float64) for r in rows[0]]
        for j in range(len(names)):
            x = torch.stack([r[j] for r in rows]).double()
            if not torch.isfinite(x).all():
                bad = s + int((~torch.isfinite(x)).any(1).nonzero()[0])
                raise ValueError(f"{names[j]} holds NaN or inf (row {bad})")
            bm = x.mean(0)
            delta = bm - mean[j]
            mean[j] = mean[j] + delta * (b / (count + b))
            m2[j] = m2[j] + ((x - bm) ** 2).sum(0) + delta**2 * (count * b / (count + b))
        count += b
    stds = [(v / (count - 1)).sqrt().float() for v in m2]
    return [v.float() for v in mean], stds


def windows(n: int, row_bytes: int, multiple: int = 1) -> list[range]:
    """The consecutive row ranges a streamed ``transform`` reads in turn: about
    :data:`WINDOW_BYTES` of decoded input each (``row_bytes`` a row), a multiple of
    ``multiple`` rows (the estimator's own batch: the network then sees the arrays' batches
    and the result is theirs bit for bit), a remainder of fewer than 64 rows joined to the
    window before it (a matrix product over one or two rows takes another kernel, whose
    rounding differs from the whole array's)."""
    size = max(1, WINDOW_BYTES // max(1, row_bytes)) // multiple * multiple or multiple
    starts = list(range(0, n, size))
    if len(starts) > 1 and n - starts[-1] < 64:
        starts.pop()
    return [range(s, e) for s, e in zip(starts, [*starts[1:], n], strict=True)]


def stack_rows(read: Callable[[int], torch.Tensor], rows: Sequence[int], name: str
               ) -> torch.Tensor:
    """Rows ``read(i)`` for ``i`` in ``rows`` stacked, (m, ...); NaN or inf is one
    ``ValueError`` naming ``name`` and the first such row."""
    x = torch.stack([read(i) for i in rows])
    bad = ~torch.isfinite(x.reshape(len(x), -1)).all(1)
    if bool(bad.any()):
        raise ValueError(f"{name} holds NaN or inf (row {rows[int(bad.nonzero()[0])]})")
    return x


def row_windows(data: Any, name: str, width: int, multiple: int = 1
                ) -> Iterator[torch.Tensor]:
    """A map-style Dataset of rows read window by window (:func:`windows`) as (m, d) float32
    tensors, memory bounded by the window: each item flattened (:func:`flat_row`), a pair,
    another width than ``width`` (the fitted model's) or NaN refused naming ``name`` and the
    row (``X row 7``), raised when its window is read; no ``__len__`` or no rows is a
    ``ValueError`` at the call, before any window."""
    if not hasattr(data, "__len__") or len(data) == 0:
        raise ValueError(f"{name} must be a map-style Dataset holding rows")

    def row(i: int) -> torch.Tensor:
        return read_row(data, i, name, width, fitted=True)

    return (stack_rows(row, rows, name) for rows in windows(len(data), 4 * width, multiple))
