"""Training data read from disk in the field's formats, as map-style ``Dataset`` objects.

What a training verb (``iclr25 <method> fit | train | pretrain``) and a ``fit(Dataset)``
read, besides ``.npy``/``.csv``:

- :class:`TableRows`: a **Parquet** file or a folder of them (e.g. a Hugging Face hub
  download), or a **Hugging Face** ``datasets`` folder written by ``save_to_disk`` (a
  ``DatasetDict`` folder reads its ``split``). Both are read with ``pyarrow`` alone (the
  ``data`` extra; ``datasets`` itself is not needed: its folder is ``state.json`` naming Arrow
  stream files). Each item is one row as a float32 tensor; ``target=`` makes it ``(x, y)``.
- :class:`ImageFolder`: a folder of images (:data:`~iclr25.datasets.images.IMAGE_SUFFIXES`),
  each item one (3, H, W) float32 image in [0, 1], read when asked for.
- Minari offline-RL datasets are read by :meth:`iclr25.datasets.control.OfflineDataset.load`
  (a folder), beside D4RL-layout ``.hdf5``/``.npz`` files.

Memory is bounded by the batch, not the dataset: a table is indexed by its row groups (Parquet)
or record batches (Arrow) without reading them, and a row is served from its decoded chunk,
kept in a least-recently-used cache of ``cache_mb`` megabytes. Parquet chunks are read with
``pread`` into freed memory (no memory map), so resident memory stays near the cache's size
however large the file; a ``save_to_disk`` folder is memory-mapped as ``datasets`` does (its
touched pages are the kernel's page cache, shared and reclaimable). A random permutation of a
large table decodes one chunk per row; :meth:`TableRows.batches` gives the shuffle that
streaming loaders use instead (chunks in random order, rows shuffled within a window of chunks
that fits the cache), for ``fit_minibatch(..., batches=ds.batches(batch_size, seed))``.

:attr:`TableRows.fingerprint` / :attr:`ImageFolder.fingerprint` name the files, their sizes and
the columns: a checkpoint records it, and resuming on other data is refused naming the dataset.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from iclr25._checks import check_int, check_range

__all__ = ["FORMATS", "CsvRows", "ImageFolder", "TableRows", "open_dataset"]

#: What :func:`open_dataset` reads, as messages list it.
FORMATS = ("a .parquet file or a folder of them",
           "a Hugging Face datasets folder (save_to_disk)",
           "a folder of images (.png, .jpg, .jpeg, .tif, .tiff, .bmp)")


def _fingerprint(kind: str, files: Sequence[Path], root: Path, extra: object) -> str:
    """A short hash of the files (names under ``root`` and sizes) and ``extra``."""
    desc = [kind, [(str(f.relative_to(root)) if f != root else f.name, f.stat().st_size)
                   for f in files], extra]
    return hashlib.sha1(json.dumps(desc, default=str).encode()).hexdigest()[:16]


# -- tables -----------------------------------------------------------------------------------


def _column_values(col: Any, name: str, keep_int: bool = False) -> np.ndarray:
    """A pyarrow column (scalars or fixed-length nested lists) as (rows, *shape) float32
    (``keep_int``: an integer column as int64, e.g. class labels)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    rows, shape = len(arr), []
    while pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) \
            or pa.types.is_fixed_size_list(arr.type):
        lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
        if arr.null_count or (len(lengths) and (lengths != lengths[0]).any()):
            raise ValueError(f"column {name!r} holds lists of different lengths or nulls; "
                             f"a training table needs one shape per column")
        shape.append(int(lengths[0]) if len(lengths) else 0)
        arr = arr.flatten()
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)
            or pa.types.is_boolean(arr.type)):
        raise TypeError(f"column {name!r} holds {arr.type}, not numbers")
    if arr.null_count:
        raise ValueError(f"column {name!r} holds nulls")
    dtype = np.int64 if keep_int and pa.types.is_integer(arr.type) else np.float32
    return arr.to_numpy(zero_copy_only=False).astype(dtype).reshape(rows, *shape)


class _Parquet:
    """The row groups of Parquet files: counts from the footers, groups read on demand."""

    kind = "parquet"

    def __init__(self, files: list[Path]) -> None:
        import pyarrow.parquet as pq

        self.files = files
        self.chunks: list[tuple[int, int]] = []    # (file, row group)
        self.rows: list[int] = []
        for i, f in enumerate(files):
            meta = pq.ParquetFile(f).metadata
            for g in range(meta.num_row_groups):
                self.chunks.append((i, g))
                self.rows.append(meta.row_group(g).num_rows)
        self.schema = pq.ParquetFile(files[0]).schema_arrow

    def read(self, chunk: int, columns: list[str]) -> Any:
        import pyarrow.parquet as pq

        i, g = self.chunks[chunk]
        return pq.ParquetFile(self.files[i], memory_map=False).read_row_group(g, columns)


class _ArrowStreams:
    """The record batches of Arrow stream files (``save_to_disk``), memory-mapped."""

    kind = "hf"

    def __init__(self, files: list[Path]) -> None:
        import pyarrow as pa

        self.files = files
        self.batches: list[Any] = []
        for f in files:
            with pa.ipc.open_stream(pa.memory_map(str(f))) as reader:
                self.schema = reader.schema
                self.batches.extend(reader)          # zero-copy: nothing is read here
        self.rows = [b.num_rows for b in self.batches]

    def read(self, chunk: int, columns: list[str]) -> Any:
        return self.batches[chunk].select(columns)


def _hf_files(p: Path, split: str | None, name: str) -> list[Path]:
    """The Arrow files of a ``save_to_disk`` folder (a DatasetDict's ``split``)."""
    if (p / "dataset_dict.json").is_file():
        splits = json.loads((p / "dataset_dict.json").read_text()).get("splits", [])
        pick = split or ("train" if "train" in splits else (splits or [None])[0])
        if pick not in splits:
            raise ValueError(f"{name} {p} has splits {splits}, not {split!r}")
        p = p / pick
    state = json.loads((p / "state.json").read_text())
    files = [p / d["filename"] for d in state.get("_data_files", [])]
    missing = [f.name for f in files if not f.is_file()]
    if not files or missing:
        raise ValueError(f"{name} {p}: state.json names no data files or missing {missing}")
    return files


def _table_source(p: Path, split: str | None, name: str) -> _Parquet | _ArrowStreams:
    if p.is_file():
        return _Parquet([p])
    if (p / "state.json").is_file() or (p / "dataset_dict.json").is_file():
        return _ArrowStreams(_hf_files(p, split, name))
    return _Parquet(sorted(p.rglob("*.parquet")))


class TableRows(Dataset):
    """The rows of a Parquet file/folder or a Hugging Face ``save_to_disk`` folder.

    Args:
        path: a ``.parquet`` file, a folder of ``.parquet`` files (read recursively, in name
            order), or a ``save_to_disk`` folder (``state.json``; a ``DatasetDict`` folder).
        columns: the input columns, in this order (default: every column but ``target``).
            Each holds numbers or fixed-length (nested) lists of numbers.
        target: a column returned as the item's second part, or None.
        split: a ``DatasetDict``'s split (default ``"train"``, else its first).
        cache_mb: decoded chunks kept in memory, in megabytes.
        name: how messages name the path (the argument or option).

    An item is ``x`` (float32): one selected column's value in its shape (a scalar column as
    shape (1,)), or, with several columns, their values flattened and concatenated (d,); with
    ``target``, ``(x, y)``, ``y`` a tensor of the target's shape (a scalar: shape ()), int64
    for an integer column (class labels), else float32.

    Raises:
        ValueError: no such file or folder, no rows, a missing column, ragged lists.
        TypeError: a non-numeric column.
        ImportError: pyarrow missing (``pip install 'iclr25[data]'``).
    """

    def __init__(self, path: str | Path, columns: Sequence[str] | None = None,
                 target: str | None = None, *, split: str | None = None,
                 cache_mb: float = 256.0, name: str = "path") -> None:
        from iclr25._optional import require

        require("pyarrow", "data")
        self.path, self.name = Path(path), name
        check_range(cache_mb, "cache_mb", 0, low_open=True)
        self.src = _table_source(self.path, split, name)
        if not self.src.rows or sum(self.src.rows) == 0:
            raise ValueError(f"{name} {self.path} holds no rows")
        have = list(self.src.schema.names)
        cols = list(columns) if columns is not None else [c for c in have if c != target]
        missing = [c for c in [*cols, *([target] if target else [])] if c not in have]
        if missing or not cols:
            raise ValueError(f"{name} {self.path} lacks column(s) {missing or cols} "
                             f"(it has {have})")
        self.columns, self.target = cols, target
        self.offsets = np.cumsum([0, *self.src.rows])
        self._cache: OrderedDict[int, tuple[np.ndarray, np.ndarray | None]] = OrderedDict()
        self._budget = cache_mb * 2**20
        first = self._chunk(0)
        self.item_shape = tuple(first[0].shape[1:])
        self.fingerprint = _fingerprint(self.src.kind, self.src.files, self.path,
                                        [cols, target, len(self)])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def _decode(self, chunk: int) -> tuple[np.ndarray, np.ndarray | None]:
        table = self.src.read(chunk, [*self.columns, *([self.target] if self.target else [])])
        parts = [_column_values(table.column(c), c) for c in self.columns]
        if len(parts) == 1:
            x = parts[0] if parts[0].ndim > 1 else parts[0][:, None]
        else:
            x = np.concatenate([a.reshape(len(a), -1) for a in parts], axis=1)
        y = _column_values(table.column(self.target), self.target, True) if self.target else None
        return x, y

    def _chunk(self, chunk: int) -> tuple[np.ndarray, np.ndarray | None]:
        if chunk in self._cache:
            self._cache.move_to_end(chunk)
            return self._cache[chunk]
        out = self._decode(chunk)
        self._cache[chunk] = out
        used = sum(x.nbytes + (0 if y is None else y.nbytes) for x, y in self._cache.values())
        while used > self._budget and len(self._cache) > 1:
            x, y = self._cache.popitem(last=False)[1]
            used -= x.nbytes + (0 if y is None else y.nbytes)
        return out

    def __getitem__(self, i: int) -> Any:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"row {i} of {n}")
        i %= n
        chunk = int(np.searchsorted(self.offsets, i, side="right")) - 1
        x, y = self._chunk(chunk)
        r = i - int(self.offsets[chunk])
        xi = torch.from_numpy(np.array(x[r]))
        return xi if y is None else (xi, torch.from_numpy(np.array(y[r])))

    def numpy(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Every row at once, ``(X (n, *item_shape), y or None)``: for the estimators that
        read all rows (standardisation, neighbours, matching); memory grows with the data."""
        parts = [self._decode(c) for c in range(len(self.src.rows))]
        X = np.concatenate([p[0] for p in parts])
        return X, None if self.target is None else np.concatenate([p[1] for p in parts])

    @property
    def cache_rows(self) -> int:
        """How many decoded rows (inputs and target) the chunk cache holds."""
        x, y = self._chunk(0)
        per_row = (x.nbytes + (0 if y is None else y.nbytes)) / max(1, len(x))
        return max(1, math.floor(self._budget / per_row))

    def batches(self, batch_size: int, seed: int = 0) -> Callable[[int], list[torch.Tensor]]:
        """``epoch -> index batches``: the chunks in a random order, the rows of each window of
        chunks that fits the cache shuffled together, the same for the same seed and epoch
        (what a resumed run replays). Each chunk is decoded once per epoch.
        """
        check_int(batch_size, "batch_size", 1)
        x, y = self._chunk(0)    # decoded bytes per row (inputs and target): the window's
        per_row = (x.nbytes + (0 if y is None else y.nbytes)) / max(1, len(x))   # chunks
        window = max(1, math.floor(self._budget / per_row / max(self.src.rows)))  # all fit

        def order(epoch: int) -> list[torch.Tensor]:
            gen = torch.Generator().manual_seed(int(np.random.SeedSequence(
                [seed, epoch]).generate_state(1)[0]))
            chunks = torch.randperm(len(self.src.rows), generator=gen).tolist()
            idx = []
            for w in range(0, len(chunks), window):
                rows = torch.cat([torch.arange(int(self.offsets[c]), int(self.offsets[c + 1]))
                                  for c in chunks[w:w + window]])
                idx.append(rows[torch.randperm(len(rows), generator=gen)])
            return list(torch.cat(idx).split(batch_size))

        return order


# -- text tables ------------------------------------------------------------------------------


def _lines(fh: Any) -> Iterator[bytes]:
    """The lines of a binary file with their ends, as a text file reads them (universal
    newlines: ``\\r\\n``, ``\\n`` or a lone ``\\r`` ends a line)."""
    import re

    for raw in fh:
        if b"\r" in raw[:-2]:
            yield from (piece for piece in re.split(rb"(?<=\r)(?!\n)", raw) if piece)
        else:
            yield raw


class CsvRows(Dataset):
    """The rows of a ``.csv`` file, each read from disk when asked for (``os.pread`` of its
    bytes), through an index of the rows' byte offsets built in one pass.

    The pass checks every line as :func:`~iclr25._io.read_matrix` does (one vocabulary:
    :func:`~iclr25._io.line_values`): a header line (line 1 with no number) and blank lines
    skipped, a non-numeric cell (named by line and column), a ragged row, text that is not
    UTF-8, NaN or inf (naming the first 5 rows), no rows: the same one-line ``ValueError``
    as the whole read, raised before any work. It keeps 12 bytes a row (offset and length),
    never the values, so memory is bounded by the batch a reader asks for, not by the file.
    Random access costs one read of the row (a fit's uniform permutation draws rows as the
    arrays' fit draws them), where a streaming reader (``pyarrow.csv.open_csv``) could only
    serve rows in file order.

    Args:
        path: the ``.csv`` file. columns: the header's columns an item holds, in this order
            (default: every column); needs a header. name: how messages name the path.

    An item is a (d,) float32 tensor, the row's numbers parsed as ``float`` parses them (the
    whole read's float64 values cast to float32). :attr:`header` is the header's names
    (``csv.reader``'s, as :func:`~iclr25._io.read_table` reads them) or None.

    Raises:
        ValueError: as above; a missing file; a column not in the header.
    """

    def __init__(self, path: str | Path, columns: Sequence[str] | None = None, *,
                 name: str = "path") -> None:
        from iclr25._io import check_readable

        self.path, self.name = check_readable(Path(path), name), name
        self.header, starts, lengths, self.width = self._index()
        self.starts = np.frombuffer(starts, dtype=np.int64)
        self.lengths = np.frombuffer(lengths, dtype=np.int32)
        self.pick: np.ndarray | None = None
        self.columns = self.header or [f"x{j}" for j in range(self.width)]
        if columns is not None:
            self._select(list(columns))
        self._fd: int | None = None

    def _index(self) -> tuple[list[str] | None, Any, Any, int]:
        """One pass over the file: (header, row starts, row lengths, cells per row)."""
        import array
        import csv

        from iclr25._io import empty_error, line_values, nonfinite_error, not_utf8_error

        where = f"{self.name} {self.path}"
        starts, lengths, nonfinite = array.array("q"), array.array("i"), []
        header: list[str] | None = None
        width, pos = 0, 0
        with self.path.open("rb") as fh:
            for line, raw in enumerate(_lines(fh), start=1):
                start, pos = pos, pos + len(raw)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise not_utf8_error(where, start + exc.start) from None
                try:   # the common row, fast: float() strips each cell as line_values does
                    values = list(map(float, text.split(",")))
                    if width and len(values) != width:
                        raise ValueError
                except ValueError:
                    cells = [c.strip() for c in text.split(",")]
                    values = line_values(cells, line, width or None, where, header)
                    if values is None:
                        if line == 1 and any(cells):
                            header = [h.strip() for h in next(csv.reader([text]))]
                        continue
                width = width or len(values)
                total = sum(values)
                if total - total != 0 and not all(map(math.isfinite, values)):
                    nonfinite.append(len(starts))
                starts.append(start)
                lengths.append(len(raw))
        if not starts:
            raise empty_error(where, (0, 1))
        if nonfinite:
            raise nonfinite_error(where, nonfinite)
        return header, starts, lengths, width

    def _select(self, columns: list[str]) -> None:
        have = self.header or []
        missing = [c for c in columns if c not in have]
        if missing or not columns:
            raise ValueError(f"{self.name} {self.path} lacks column(s) {missing or columns} "
                             f"(its header has {have})")
        self.pick = np.array([have.index(c) for c in columns])
        self.columns = columns

    def select(self, columns: Sequence[str]) -> CsvRows:
        """The same rows holding only the header's ``columns`` (the index shared, not
        rebuilt: a second pass over a large file avoided)."""
        import copy

        out = copy.copy(self)
        out._fd = None
        out._select(list(columns))
        return out

    @property
    def item_shape(self) -> tuple[int]:
        """``(d,)``: an item's shape, d the columns it holds."""
        return (len(self.columns),)

    @property
    def fingerprint(self) -> str:
        return _fingerprint("csv", [self.path], self.path, [self.columns, len(self)])

    def __len__(self) -> int:
        return len(self.starts)

    def __getstate__(self) -> dict:
        return {**vars(self), "_fd": None}   # a process opens its own descriptor

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)

    def __getitem__(self, i: int) -> torch.Tensor:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"row {i} of {n}")
        i %= n
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        raw = os.pread(self._fd, int(self.lengths[i]), int(self.starts[i]))
        x = np.array(list(map(float, raw.split(b","))), dtype=np.float64)   # checked by _index
        return torch.from_numpy((x if self.pick is None else x[self.pick]).astype(np.float32))

    def numpy(self) -> tuple[np.ndarray, None]:
        """Every row at once, ``(X (n, d), None)`` float32: memory grows with the data."""
        return np.stack([self[i].numpy() for i in range(len(self))]), None


# -- images -----------------------------------------------------------------------------------


class ImageFolder(Dataset):
    """The images of a folder (not recursive, in name order), each read when asked for.

    Args:
        path: the folder. name: how messages name it.

    An item is a (3, H, W) float32 image in [0, 1] (grey images as three equal channels);
    :attr:`names` are the file names.

    Raises:
        ValueError: not a folder, or no image files in it.
        ImportError: Pillow missing (``pip install 'iclr25[image]'``).
    """

    def __init__(self, path: str | Path, *, name: str = "path") -> None:
        from iclr25.datasets.images import IMAGE_SUFFIXES

        self.path = Path(path)
        if not self.path.is_dir():
            raise ValueError(f"{name} {self.path} is not a folder")
        self.files = sorted(f for f in self.path.iterdir()
                            if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
        if not self.files:
            raise ValueError(f"{name} {self.path} holds no image files "
                             f"({', '.join(IMAGE_SUFFIXES)})")
        self.names = [f.name for f in self.files]
        self.fingerprint = _fingerprint("images", self.files, self.path, None)

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> torch.Tensor:
        from iclr25.datasets.images import load_folder

        return next(iter(load_folder(self.files[i]).values()))

    def numpy(self) -> tuple[np.ndarray, None]:
        """Every image flattened to a row, ``(X (n, 3 H W), None)``: all images must have
        one size (a modality of row-aligned samples)."""
        first = self[0]
        rows = np.empty((len(self), first.numel()), dtype=np.float32)
        for i in range(len(self)):
            x = self[i]
            if x.shape != first.shape:
                raise ValueError(f"{self.files[i].name} is {tuple(x.shape[1:])}, "
                                 f"{self.files[0].name} {tuple(first.shape[1:])}: the images "
                                 f"of a modality must share one size")
            rows[i] = x.reshape(-1).numpy()
        return rows, None


def _has_images(p: Path) -> bool:
    from iclr25.datasets.images import IMAGE_SUFFIXES

    return any(f.suffix.lower() in IMAGE_SUFFIXES for f in p.iterdir() if f.is_file())


def aligned_batches(sources: Sequence[object], batch_size: int, seed: int
                    ) -> Callable[[int], list[torch.Tensor]] | None:
    """The streaming shuffle (:meth:`TableRows.batches`) of row-aligned ``sources`` (one
    table's columns read as several, e.g. modalities or inputs and targets) when every one is
    a :class:`TableRows`: the one whose cache holds the fewest rows, so that each window of
    rows fits every cache. None otherwise (the caller reads a uniform random permutation)."""
    if not sources or not all(isinstance(t, TableRows) for t in sources):
        return None
    return min(sources, key=lambda t: t.cache_rows).batches(batch_size, seed)


def open_dataset(path: str | Path, name: str = "path", **table: Any) -> TableRows | ImageFolder:
    """The dataset at ``path`` by its format (:data:`FORMATS`, or a ``.csv`` file: a
    :class:`CsvRows`, given ``columns`` alone); ``table`` keywords go to :class:`TableRows`
    (``columns``, ``target``, ``split``, ``cache_mb``).

    Raises:
        ValueError: a missing path, or one in none of the formats: one line naming them.
    """
    p = Path(path)
    if not p.exists():
        raise ValueError(f"{name} {p} does not exist")
    if p.is_file() and p.suffix.lower() == ".csv":
        return CsvRows(p, table.get("columns"), name=name)   # rows read by offset: no cache
    if p.is_file() and p.suffix.lower() == ".parquet":
        return TableRows(p, name=name, **table)
    if p.is_dir():
        if (p / "state.json").is_file() or (p / "dataset_dict.json").is_file() \
                or any(p.rglob("*.parquet")):
            return TableRows(p, name=name, **table)
        if _has_images(p):
            return ImageFolder(p, name=name)
    raise ValueError(f"{name} {p} is not a dataset read here: give {', '.join(FORMATS[:-1])} "
                     f"or {FORMATS[-1]}")


def is_dataset_path(path: str | Path) -> bool:
    """Whether ``path`` is a folder or a ``.parquet`` file (what :func:`open_dataset` reads)."""
    p = Path(path)
    return p.is_dir() or p.suffix.lower() == ".parquet"


def is_streamed_path(path: str | Path, npy: bool = False) -> bool:
    """Whether a verb streams ``path`` (reads its rows batch by batch or window by window)
    rather than reading it whole: what :func:`open_dataset` reads (:func:`is_dataset_path`),
    a ``.csv`` file larger than :data:`~iclr25.datasets.rows.READ_WHOLE_BYTES` (a
    :class:`CsvRows`) and, with ``npy``, a ``.npy`` file that large (memory-mapped,
    :func:`~iclr25._io.npy_rows`). A smaller file is read whole, as arrays: its rows fit in
    one window anyway, and a fit keeps the arrays' outputs (a streamed fit's statistics,
    one float64 pass, differ from the arrays' float32 ones by rounding)."""
    from iclr25.datasets.rows import READ_WHOLE_BYTES

    p = Path(path)
    if is_dataset_path(p):
        return True
    kinds = (".csv", ".npy") if npy else (".csv",)
    return p.suffix.lower() in kinds and p.is_file() and p.stat().st_size > READ_WHOLE_BYTES


def open_rows(path: str | Path, name: str = "path", **table: Any) -> Dataset:
    """The Dataset a fit streams of a path :func:`is_streamed_path` (with ``npy``) accepts:
    a ``.npy`` memory-mapped (:func:`~iclr25._io.npy_rows`) as an
    :class:`~iclr25.datasets.rows.ArrayRows`, else :func:`open_dataset`'s."""
    if Path(path).suffix.lower() == ".npy":
        from iclr25._io import npy_rows
        from iclr25.datasets.rows import ArrayRows

        return ArrayRows(npy_rows(path, name))
    return open_dataset(path, name, **table)


def open_read(path: str | Path, name: str, read_whole: Callable[[Any], Any]
              ) -> tuple[Any, bool]:
    """What a reading verb (``predict``, ``embed``) reads of ``path``, and whether it reads
    it window by window (passing it to its model's ``_windows``): a ``.npy`` memory-mapped
    (:func:`~iclr25._io.npy_rows`) and what :func:`is_streamed_path` accepts
    (:func:`open_dataset`'s, a table's read cache :data:`~iclr25.datasets.rows.READ_CACHE_MB`:
    each row is read once, in order) are (True); any other file is ``read_whole(path)``'s
    array, read whole (False). ``path`` is passed on as given, so messages spell it so."""
    if Path(path).suffix.lower() == ".npy":
        from iclr25._io import npy_rows

        return npy_rows(path, name), True
    if is_streamed_path(path):
        from iclr25.datasets.rows import READ_CACHE_MB

        return open_dataset(path, name, cache_mb=READ_CACHE_MB), True
    return read_whole(path), False
