"""The (x, y) rows of a map-style Dataset that :meth:`HeteroscedasticRegressor.fit` streams:
read and checked item by item, never held whole."""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import Dataset

from iclr25.datasets.rows import flat_row

__all__ = ["PSEUDO_ROWS", "Pairs", "Targets"]

PSEUDO_ROWS = 100_000
"""Rows of a Dataset that the toss loss's pseudo-labels take their neighbours and Cov(𝒳) from
(a seeded uniform sample without replacement; every row when there are fewer, then the labels
are the arrays'): the k-NN index needs them in memory, (PSEUDO_ROWS, d + q) float64."""


class Pairs(Dataset):
    """Row ``i`` of a fit's data as ``(x (d,), y (q,))`` float32, checked as it is read.

    Args:
        X: a map-style Dataset of input rows (each flattened), with ``Y`` a row-aligned
            Dataset (or array) of target rows (a scalar is a (1,) row); or, with ``Y`` None,
            a Dataset of ``(x, y)`` items (a :class:`~iclr25.datasets.files.TableRows` with
            a target).

    A row of another width than row 0's, a scalar input, a non-numeric value, an item that is
    not a pair: one ``ValueError`` naming ``X`` or ``Y`` and the row.
    """

    def __init__(self, X: Dataset, Y: Any = None) -> None:
        for name, d in (("X", X), ("Y", Y)):
            if d is not None and not hasattr(d, "__len__"):
                raise TypeError(f"{name} must be a map-style Dataset (with __len__)")
        self.X, self.Y = X, Y
        self.n = len(X)  # type: ignore[arg-type]
        if Y is not None and len(Y) != self.n:
            raise ValueError(f"X and Y must have the same number of rows, got {self.n} and "
                             f"{len(Y)}")
        if self.n < 2:
            raise ValueError(f"X needs at least 2 rows, got {self.n}")
        self.widths: tuple[int, int] | None = None
        x, y = self[0]
        self.widths = (len(x), len(y))
        prints = [getattr(d, "fingerprint", None) for d in (X, Y) if d is not None]
        self.fingerprint = None if None in prints else "+".join(prints)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self.Y is None:
            item = self.X[i]
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise ValueError(f"X item {i} must be a pair (x, y) when Y is None, got "
                                 f"{type(item).__name__}")
            xv, yv = item
        else:
            xv, yv = self.X[i], self.Y[i]
        yv = torch.as_tensor(yv)
        rows = (flat_row(xv, f"X row {i}"), flat_row(yv.reshape(-1), f"Y row {i}"))
        if self.widths is not None:
            for name, r, w in zip("XY", rows, self.widths, strict=True):
                if len(r) != w:
                    raise ValueError(f"{name} row {i} has {len(r)} values, row 0 has {w}: "
                                     f"the rows must share one width")
        return rows

    def block(self, start: int, stop: int) -> torch.Tensor:
        """Inputs of rows ``start..stop-1``, (m, d)."""
        return torch.stack([self[i][0] for i in range(start, stop)])


class Targets(Dataset):
    """The training items: ``((x - x_mean) / x_scale, target_i)`` with ``target_i`` the
    standardised y and, with labels, the flattened label root (q²,) of row ``i``."""

    def __init__(self, data: Pairs, x_stats: tuple[torch.Tensor, torch.Tensor],
                 y_stats: tuple[torch.Tensor, torch.Tensor], roots: torch.Tensor | None):
        self.data, self.x_stats, self.y_stats, self.roots = data, x_stats, y_stats, roots
        self.fingerprint = data.fingerprint

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        x, y = self.data[i]
        t = (y - self.y_stats[0]) / self.y_stats[1]
        if self.roots is not None:
            t = torch.cat([t, self.roots[i]])
        return (x - self.x_stats[0]) / self.x_stats[1], t
