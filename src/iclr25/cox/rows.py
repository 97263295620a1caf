"""The rows of a map-style Dataset that :meth:`COX.fit` streams (the OOM inputs, an IM
modality's embeddings): read and checked item by item, indexed like a tensor, never held
whole; and the seeded bounded samples its whole-data steps read."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from iclr25.datasets.rows import read_row, sample_rows

__all__ = ["SAMPLE_ROWS", "Rows", "read_labels", "sample"]

SAMPLE_ROWS = 20_000
"""Rows of a Dataset that each whole-data step of a streamed :meth:`COX.fit` reads into memory
(a seeded uniform sample without replacement, in row order; every row when there are fewer,
then the step is the arrays' bit for bit): the IM embeddings' spread and the re-matching's IM
candidates (their VIB predictions, (SAMPLE_ROWS, D)), the OOM embedding's standardisation in
re-matching and the inputs' in class naming, the labelled rows that naming and the floor read
((SAMPLE_ROWS, d))."""


def sample(n: int, seed: int) -> torch.Tensor:
    """(min(n, SAMPLE_ROWS),) sorted row indices (:func:`~iclr25.datasets.rows.sample_rows`)."""
    return sample_rows(n, SAMPLE_ROWS, seed)


class Rows(Dataset):
    """A Dataset of rows (each flattened to (d,) float32) indexed like an (n, d) tensor:
    ``rows[idx]`` for a (k,) index tensor is the (k, d) stack of those rows, each distinct
    row read once, in row order (a table decodes each touched chunk once).

    Args:
        data: a map-style Dataset of rows (a :class:`~iclr25.datasets.files.TableRows`
            without a target). name: how messages name it (``X_oom``, ``im['a']``).

    A row of another width than row 0's, a scalar, a pair, a non-numeric value, NaN or inf:
    one ``ValueError`` naming ``name`` and the row (:meth:`check` reads every row).
    """

    dtype = torch.float32
    device = torch.device("cpu")

    def __init__(self, data: Dataset, name: str) -> None:
        if not hasattr(data, "__len__"):
            raise TypeError(f"{name} must be a map-style Dataset (with __len__)")
        self.data, self.name, self.n = data, name, len(data)  # type: ignore[arg-type]
        if self.n < 1:
            raise ValueError(f"{name} is empty (no rows)")
        self.width: int | None = None
        self.width = len(self.row(0))
        self.shape = (self.n, self.width)
        self.checked = False
        self.fingerprint = getattr(data, "fingerprint", None)

    def __len__(self) -> int:
        return self.n

    def row(self, i: int) -> torch.Tensor:
        x = read_row(self.data, i, self.name, self.width)
        if not bool(torch.isfinite(x).all()):
            raise ValueError(f"{self.name} holds NaN or inf (row {i})")
        return x

    def __getitem__(self, idx: Any) -> torch.Tensor:
        if not isinstance(idx, torch.Tensor) or idx.ndim == 0:
            return self.row(int(idx))
        if not len(idx):
            return torch.empty(0, self.shape[1])
        u, inv = torch.unique(idx.cpu(), return_inverse=True)
        return torch.stack([self.row(int(i)) for i in u])[inv]

    def check(self) -> None:
        """Read every row in order (a table: chunk by chunk): the check pass before work
        (once: a floor check's fits reuse the checked rows)."""
        for i in range(0 if self.checked else self.n):
            self.row(i)
        self.checked = True


def read_labels(data: Dataset, name: str) -> torch.Tensor:
    """A Dataset of integer labels (each item one value, e.g. a table's label column) as an
    (n,) int64 tensor, in one pass: the labels are the fit's per-row state (8 bytes a row).

    Raises:
        ValueError: an item that is not one integer (naming ``name`` and the row).
    """
    if not hasattr(data, "__len__"):
        raise TypeError(f"{name} must be a map-style Dataset (with __len__)")
    out = torch.empty(len(data), dtype=torch.long)  # type: ignore[arg-type]
    for i in range(len(out)):
        v = data[i]
        t = v if isinstance(v, torch.Tensor) else torch.as_tensor(np.asarray(v))
        bad = isinstance(v, (tuple, list)) or t.numel() != 1 or t.dtype == torch.bool \
            or t.is_complex()
        if not bad and t.is_floating_point():
            bad = not (bool(t.isfinite().all()) and bool((t == t.round()).all()))
        if bad:
            raise ValueError(f"{name} row {i} must be one integer label, got "
                             f"{type(v).__name__ if isinstance(v, (tuple, list)) else t}")
        out[i] = int(t.reshape(()))
    return out
