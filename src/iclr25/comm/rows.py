"""Row-aligned modalities read from map-style Datasets (an on-disk table per modality, a
Dataset of tuples): what :meth:`CoMMEmbedder.fit` and :func:`pretrain` stream batch by batch,
and :meth:`CoMMEmbedder.transform` window by window, so that memory is bounded by the batch
(the window) and the tables' chunk caches, not by the data."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from iclr25.datasets.rows import flat_row, stack_rows, windows
from iclr25.datasets.rows import moments as row_moments

__all__ = ["Modalities", "Scaled", "is_streamed", "moments", "transform_windows"]


def is_streamed(Xs: object) -> bool:
    """Whether ``Xs`` (a fit's data) is read as a Dataset: a Dataset itself, or a list of
    modalities one of which is a Dataset (arrays alone keep the in-memory path)."""
    if isinstance(Xs, Dataset):
        return True
    return isinstance(Xs, (list, tuple)) and any(isinstance(x, Dataset) for x in Xs)


class Modalities(Dataset):
    """m row-aligned modalities as one Dataset whose item ``i`` is the m-tuple of row ``i``'s
    flat float32 rows ``(x_1 (d_1,), ..., x_m (d_m,))``.

    Args:
        Xs: a map-style Dataset whose items are m-tuples (or lists) of rows, or a list with one
            entry per modality: a map-style Dataset of rows (a
            :class:`~iclr25.datasets.files.TableRows`) or an (n, d_i) array. A row may have
            any shape and is flattened (an image); its width is the first row's.
        name: how messages name ``Xs`` (the argument).

    Every item read is checked: a row of another width than row 0's, a scalar, a tuple of
    another length is one ``ValueError`` naming ``name``, the modality and the row.

    Raises:
        ValueError: fewer than 2 modalities, modalities of different lengths, fewer than 2
            rows, a bad first item. TypeError: not a Dataset, not map-style (no ``__len__``).
    """

    def __init__(self, Xs: object, name: str = "Xs") -> None:
        self.name = name
        self.joint: Dataset | None = None
        self.parts: list[Any] = []
        if isinstance(Xs, Dataset):
            if not hasattr(Xs, "__len__"):
                raise TypeError(f"{name} must be a map-style Dataset (with __len__)")
            self.joint = Xs
            n = len(Xs)  # type: ignore[arg-type]
            first = Xs[0] if n else None
            if not isinstance(first, (tuple, list)) or len(first) < 2:
                raise ValueError(f"{name} items must be tuples of at least 2 modality rows "
                                 f"(x_1, ..., x_m), got {type(first).__name__}")
            self.m = len(first)
        else:
            if not isinstance(Xs, (list, tuple)) or len(Xs) < 2:
                raise ValueError(f"{name} must be a Dataset of modality tuples or a list of "
                                 f"at least 2 modalities")
            for i, x in enumerate(Xs):
                if isinstance(x, Dataset):
                    if not hasattr(x, "__len__"):
                        raise TypeError(f"{name}[{i}] must be a map-style Dataset (__len__)")
                    self.parts.append(x)
                else:
                    from iclr25._checks import as_tensor

                    self.parts.append(as_tensor(x, f"{name}[{i}]", ndim=2))
            lengths = {i: len(p) for i, p in enumerate(self.parts)}
            if len(set(lengths.values())) > 1:
                raise ValueError(f"{name}: modalities have different numbers of rows {lengths}")
            n = lengths[0]
            self.m = len(self.parts)
        if n < 2:
            raise ValueError(f"{name} needs at least 2 rows, got {n}")
        self.n = n
        self.widths: list[int] | None = None
        self.widths = [len(r) for r in self[0]]

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple[torch.Tensor, ...]:
        if self.joint is not None:
            item = self.joint[i]
            if not isinstance(item, (tuple, list)) or len(item) != self.m:
                raise ValueError(f"{self.name} item {i} must be a tuple of {self.m} modality "
                                 f"rows (as item 0), got {type(item).__name__}"
                                 f"{f' of {len(item)}' if isinstance(item, (tuple, list)) else ''}")
            vals = list(item)
        else:
            vals = [p[i] for p in self.parts]
        rows = tuple(flat_row(v, f"{self.name}[{j}] row {i}") for j, v in enumerate(vals))
        if self.widths is not None:
            for j, (r, d) in enumerate(zip(rows, self.widths, strict=True)):
                if len(r) != d:
                    raise ValueError(f"{self.name}[{j}] row {i} has {len(r)} values, row 0 "
                                     f"has {d}: a modality's rows must share one width")
        return rows

    @property
    def fingerprint(self) -> str | None:
        """The on-disk tables' identity (a checkpoint records it); None if a part has none."""
        srcs = [self.joint] if self.joint is not None else self.parts
        prints = [getattr(s, "fingerprint", None) for s in srcs]
        return None if any(p is None for p in prints) else "+".join(prints)

    def order(self, batch_size: int, seed: int) -> Callable[[int], list[torch.Tensor]] | None:
        """The streaming shuffle of the tables (:meth:`TableRows.batches`) when every
        modality is one, taken from the table whose cache holds the fewest rows (so each
        window of rows fits every cache); None: read in a uniform random permutation."""
        from iclr25.datasets.files import aligned_batches

        return aligned_batches(self.parts, batch_size, seed)   # no parts with a joint Dataset


def moments(data: Modalities, block: int = 4096
            ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Each modality's column means and standard deviations in ONE streaming pass
    (:func:`iclr25.datasets.rows.moments`); every row is checked on the way (width, NaN)."""
    return row_moments(data.__getitem__, len(data),
                       [f"{data.name}[{j}]" for j in range(data.m)], block)


class Scaled(Dataset):
    """``data`` standardised row by row: item ``i`` is ``((x_j - mean_j) / scale_j)_j``."""

    def __init__(self, data: Modalities, mean: Sequence[torch.Tensor],
                 scale: Sequence[torch.Tensor]) -> None:
        self.data, self.mean, self.scale = data, list(mean), list(scale)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, ...]:
        return tuple((x - m) / s for x, m, s in
                     zip(self.data[i], self.mean, self.scale, strict=True))

    @property
    def fingerprint(self) -> str | None:
        return self.data.fingerprint

    def order(self, batch_size: int, seed: int) -> Callable[[int], list[torch.Tensor]] | None:
        return self.data.order(batch_size, seed)


def transform_windows(Xs: object, name: str, widths: Sequence[int], multiple: int
                      ) -> Iterator[list[torch.Tensor | None]]:
    """The modalities a streamed ``transform`` reads, window by window
    (:func:`~iclr25.datasets.rows.windows`, ``multiple`` rows at a time or a multiple):
    each window a list of (rows, d_j) tensors, None for a missing modality.

    Args:
        Xs: a map-style Dataset of m-tuples of rows, or a list of m entries: a Dataset of
            rows, an (n, d_j) array (its rows sliced as they are), a memory-mapped one
            (:func:`~iclr25._io.npy_rows`: read as a Dataset of rows, never whole) or None
            (missing).
        name: how messages name ``Xs``. widths: the fitted widths d_j.

    A Dataset's (a memory-mapped array's) row is flattened (:func:`flat_row`) and checked:
    another width than ``widths[j]`` or NaN is one ``ValueError`` naming ``name``, the
    modality and the row, raised when its window is read.

    Raises:
        ValueError: another number of modalities, differing row counts, none present.
        TypeError: a Dataset without ``__len__``.
    """
    m = len(widths)
    joint = isinstance(Xs, Dataset)
    parts: list[Any] = [Xs] if joint else list(Xs) if isinstance(Xs, (list, tuple)) else []
    if not joint and len(parts) != m:
        raise ValueError(f"{name} must hold {m} modalities (as in fit), got {len(parts)}")
    for j, p in enumerate(parts):
        if isinstance(p, Dataset) and not hasattr(p, "__len__"):
            raise TypeError(f"{name}[{j}] must be a map-style Dataset (with __len__)")
        if p is not None and not isinstance(p, (Dataset, np.memmap)):
            from iclr25._checks import as_tensor

            parts[j] = as_tensor(p, f"{name}[{j}]", ndim=2)
    lengths = {j: len(p) for j, p in enumerate(parts) if p is not None}
    if not lengths:
        raise ValueError(f"{name}: every modality is absent (None); at least one is needed")
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{name}: modalities have different numbers of rows {lengths}")

    def row(j: int, value: Any, i: int) -> torch.Tensor:
        r = flat_row(value, f"{name}[{j}] row {i}")
        if len(r) != widths[j]:
            raise ValueError(f"{name}[{j}] row {i} has {len(r)} values, the model was fitted "
                             f"on {widths[j]}")
        return r

    def item(i: int) -> list[Any]:
        got = Xs[i]  # type: ignore[index]
        if not isinstance(got, (tuple, list)) or len(got) != m:
            raise ValueError(f"{name} item {i} must be a tuple of {m} modality rows")
        return list(got)

    present = [j for j in range(m) if joint or parts[j] is not None]
    rows_bytes = 4 * sum(widths[j] for j in present)
    for rows in windows(next(iter(lengths.values())), rows_bytes, multiple):
        if joint:
            got = {i: item(i) for i in rows}
            yield [stack_rows(lambda i, j=j, got=got: row(j, got[i][j], i), rows,
                              f"{name}[{j}]") for j in range(m)]
            continue
        yield [None if p is None else p[rows.start:rows.stop] if isinstance(p, torch.Tensor)
               else stack_rows(lambda i, j=j, p=p: row(j, p[i], i), rows, f"{name}[{j}]")
               for j, p in enumerate(parts)]
