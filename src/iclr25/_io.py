"""One reader of numeric tables (.npy, .csv, whitespace text) for command lines and file
readers: the same checks and the same messages everywhere."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np


def check_readable(p: Path, name: str) -> Path:
    """Raise a ValueError naming ``name`` and the file when it is missing, not a file, or
    not readable: "permission denied", never "does not exist" or a traceback."""
    if not p.exists():
        raise ValueError(f"{name} {p} does not exist")
    if not p.is_file():
        raise ValueError(f"{name} {p} is not a file")
    if not os.access(p, os.R_OK):
        raise ValueError(f"{name} {p} is not readable (permission denied)")
    return p


@contextmanager
def atomic_write(path: str | Path, *, text: bool = False, perm: int = 0o666) -> Iterator[IO]:
    """``path`` opened for writing (bytes; ``text``: UTF-8 text) under a temporary name beside
    it, moved over ``path`` when the block ends without an error and removed otherwise: a
    write cut short (a full disk, Ctrl-C, a bad row found late in a stream) leaves ``path``
    as it was. ``perm``: the file's mode before the umask, as :func:`open`'s (0o600: the
    owner's only)."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.partial")   # unique: two writers

    def named(exc: OSError) -> OSError:   # the user's path, not the hidden temporary
        return OSError(exc.errno, exc.strerror, str(p))

    try:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, perm)
        except OSError as exc:   # a missing or read-only folder
            raise named(exc) from None
        with open(fd, "w" if text else "wb", **({"encoding": "utf-8"} if text else {})) as fh:
            yield fh
        try:
            os.replace(tmp, p)
        except OSError as exc:   # path a folder
            raise named(exc) from None
    finally:
        tmp.unlink(missing_ok=True)


# The messages every reader of numeric rows gives (the whole read here, the streamed
# :class:`~iclr25.datasets.files.CsvRows`): ``where`` is the name and the file.
def not_utf8_error(where: str, byte: int) -> ValueError:
    return ValueError(f"{where} is not a text table (byte {byte} is not UTF-8)")


def first_bad_byte(p: Path) -> int:
    """The file offset of ``p``'s first byte that is not UTF-8 (-1: none). A text stream's
    ``UnicodeDecodeError.start`` counts from its decoder's chunk (8 KiB), not the file."""
    import codecs

    dec, pos = codecs.getincrementaldecoder("utf-8")(), 0
    with p.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            pending = len(dec.getstate()[0])  # bytes of a split character held back
            try:
                dec.decode(chunk)
            except UnicodeDecodeError as exc:
                return pos - pending + exc.start
            pos += len(chunk)
    try:
        dec.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        return pos - len(dec.getstate()[0]) + exc.start
    return -1


def nonfinite_error(where: str, rows: Any) -> ValueError:
    """``rows``: the indices of the rows holding NaN or inf (the first 5 are named)."""
    return ValueError(f"{where} holds NaN or inf in rows {[int(i) for i in rows[:5]]}")


def empty_error(where: str, shape: tuple[int, ...]) -> ValueError:
    return ValueError(f"{where} must hold a non-empty n x d array, got shape {shape}")


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True



def line_values(cells: list[str], line: int, width: int | None, where: str,
                header: list[str] | None = None) -> list[float] | None:
    """The numbers of one text-table line's ``cells`` (already stripped), checked as
    :func:`read_matrix` checks them; None for a blank line or a header (line 1 with no number
    in it). ``width``: row 1's cell count (None for the first row); ``where``: the name and
    the file as messages begin; ``header``: the column names a message adds to a column.
    The one check of a text line, for the whole read and a streamed one
    (:class:`~iclr25.datasets.files.CsvRows`) alike.

    Raises:
        ValueError: a non-numeric cell (naming its line and column), a ragged row.
    """
    if not any(cells):
        return None
    if not all(map(_is_number, cells)):
        if line == 1 and not any(map(_is_number, cells)):
            return None  # header
        j, bad = next((j, c) for j, c in enumerate(cells) if not _is_number(c))
        named = f" ({header[j]!r})" if header is not None and j < len(header) else ""
        raise ValueError(f"{where} line {line}: non-numeric cell {bad!r} in column "
                         f"{j + 1}{named}")
    if width is not None and len(cells) != width:
        raise ValueError(f"{where} line {line}: {len(cells)} cells, expected {width}")
    return [float(c) for c in cells]


def _text_rows(p: Path, name: str, suffix: str) -> np.ndarray:
    """The numbers of a text table (a header line skipped), checked row by row."""
    rows: list[list[float]] = []
    header: list[str] | None = None
    with p.open(encoding="utf-8") as fh:
        for line, text in enumerate(fh, start=1):
            cells = [c.strip() for c in text.split(",")] if suffix == ".csv" else text.split()
            values = line_values(cells, line, len(rows[0]) if rows else None, f"{name} {p}",
                                 header)
            if values is None:
                header = cells if line == 1 and any(cells) else header
                continue
            rows.append(values)
    return np.asarray(rows, dtype=np.float64)


def _read_text_table(p: Path, name: str, suffix: str) -> np.ndarray:
    """:func:`_text_rows`, with a file that is not text named as such (not a decode error)."""
    try:
        return _text_rows(p, name, suffix)
    except UnicodeDecodeError:
        raise not_utf8_error(f"{name} {p}", first_bad_byte(p)) from None

def read_matrix(path: str | Path, name: str = "FILE", *,
                suffixes: tuple[str, ...] = (".npy", ".csv"), tables: bool = False
                ) -> np.ndarray:
    """An (n, d) float64 array from a ``.npy`` file or a text table, checked before any work.

    ``.csv`` is comma-separated, ``.txt``/``.xyz`` whitespace-separated; a first line with no
    number in it is a header and skipped. A 1-D array or a one-column table is a column (n, 1).

    Args:
        path: the file. name: how messages name it (the argument or option, e.g. ``--oom``).
        suffixes: the accepted suffixes, in the order messages list them.
        tables: also read what :func:`iclr25.datasets.files.open_dataset` reads (a Parquet
            file or folder, a Hugging Face ``save_to_disk`` folder, a folder of same-size
            images), each row flattened (the training verbs' data).

    Raises:
        ValueError: a wrong suffix, a missing or unreadable file, a non-numeric cell or a
            ragged row (naming its line), no rows, NaN or inf (naming the first rows).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if tables and (p.is_dir() or suffix == ".parquet"):
        return _read_dataset(p, name)
    if suffix not in suffixes and tables:
        formats = _dataset_formats()
        raise ValueError(f"{name} must end in {' or '.join(suffixes)}, or be "
                         f"{', '.join(formats[:-1])} or {formats[-1]}; got {p.name}")
    if suffix not in suffixes:
        raise ValueError(f"{name} must end in {' or '.join(suffixes)}, got {p.name}")
    check_readable(p, name)
    if suffix == ".npy":
        try:
            X = np.load(p, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(f"{name} {p} is not a readable .npy array ({exc})") from None
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{name} {p} must hold real numbers, got dtype {X.dtype}")
    else:
        X = _read_text_table(p, name, suffix)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.size == 0:
        raise empty_error(f"{name} {p}", X.shape)
    X = X.astype(np.float64)
    bad_rows = np.flatnonzero(~np.isfinite(X).all(1))
    if len(bad_rows):
        raise nonfinite_error(f"{name} {p}", bad_rows)
    return X


def _dataset_formats() -> tuple[str, ...]:
    from iclr25.datasets.files import FORMATS

    return FORMATS


def _read_dataset(p: Path, name: str) -> np.ndarray:
    """:func:`read_matrix` of a dataset path: every row of it, flattened, checked finite."""
    from iclr25.datasets.files import open_dataset

    try:
        X = open_dataset(p, name).numpy()[0]
    except (TypeError, ImportError) as exc:  # a text column, pyarrow missing: one line too
        raise ValueError(f"{name} {p}: {exc}") from None
    X = X.reshape(len(X), -1).astype(np.float64)
    bad_rows = np.flatnonzero(~np.isfinite(X).all(1))
    if len(bad_rows):
        raise nonfinite_error(f"{name} {p}", bad_rows)
    return X


def column_names(path: str | Path, d: int) -> list[str]:
    """The ``d`` column names of a file :func:`read_matrix` read: a ``.csv`` header's, else
    ``x0 .. x{d-1}`` (an array, or a table with no header row)."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        with p.open() as fh:
            first = next((line for line in fh if line.strip()), "")
        cells = [c.strip() for c in first.split(",")]
        if len(cells) == d and not any(map(_is_number, cells)):
            return cells
    return [f"x{j}" for j in range(d)]


#: the suffixes :func:`write_array` writes
ARRAY_OUTPUTS = (".npy", ".csv", ".txt")


def write_array(path: str | Path, A: np.ndarray, header: list[str],
                rows: list[str] | None = None) -> Path:
    """Write the (n, k) or (n,) array ``A`` as a verb's output, by ``path``'s suffix.

    ``.npy``: the array alone. ``.csv`` (comma-separated) and ``.txt`` (space-separated):
    a header line (``header``, one name per column, the row names' column first when
    ``rows`` is given), then one line per row, its name first; integers as such, reals to 10
    significant digits. :func:`read_matrix` reads the text forms back (the header skipped)
    when there are no row names. :class:`ArrayWriter` writes the same file window by window.
    """
    with ArrayWriter(path, len(A), header, rows) as out:
        out.write(A)
    return Path(path)


class ArrayWriter:
    """A verb's (n, ...) output written window by window, as :func:`write_array` writes it
    whole: a reading verb's memory is then bounded by its window, not by n.

    ``.npy``: numpy's ``lib.format`` header for ``(n, *window.shape[1:])`` and the first
    window's dtype, then each window's bytes appended (the same file as ``np.save``; no
    memory map, whose dirty pages would count in the process's memory); ``.csv``/``.txt``:
    one line per row as :func:`write_array` (``fmt``: rows written by ``np.savetxt`` with
    that format instead, the text a verb wrote with ``np.savetxt`` before; ``header`` None:
    no header line). The file is written under a temporary name beside ``path`` and renamed
    when the ``with`` block ends without an error: an error midway (a bad row found late in
    a streamed input) leaves ``path`` as it was.

    Examples:
        >>> import tempfile, numpy as np
        >>> p = Path(tempfile.mkdtemp()) / "z.npy"
        >>> with ArrayWriter(p, 3, ["z0"]) as out:
        ...     out.write(np.zeros((2, 1))); out.write(np.ones((1, 1)))
        >>> np.load(p)[:, 0].tolist()
        [0.0, 0.0, 1.0]
    """

    def __init__(self, path: str | Path, n: int, header: list[str] | None,
                 rows: list[str] | None = None, fmt: str | None = None) -> None:
        self.path, self.n, self.header, self.rows, self.fmt = Path(path), n, header, rows, fmt
        self.npy = self.path.suffix.lower() == ".npy"
        self.sep = "," if self.path.suffix.lower() == ".csv" else " "
        self.done = 0
        self.kind: tuple[np.dtype, tuple[int, ...]] | None = None   # .npy: dtype, row shape
        self._out: Any = None

    def __enter__(self) -> ArrayWriter:
        self._file = atomic_write(self.path, text=not self.npy)
        self._out = self._file.__enter__()
        if not self.npy and self.header is not None:
            self._out.write(self._line(self.header))
        return self

    def _line(self, cells: list[str]) -> str:
        return self.sep.join(c.replace(self.sep, "_") if self.sep == " " else c
                             for c in cells) + "\n"

    def write(self, A: np.ndarray) -> None:
        """Append the next rows (m, ...) of the output."""
        A = np.asarray(A)
        start, self.done = self.done, self.done + len(A)
        if self.done > self.n:
            raise ValueError(f"{self.path}: {self.done} rows written, {self.n} expected")
        if self.npy:
            if self.kind is None:
                self.kind = (A.dtype, A.shape[1:])
                head = np.lib.format.header_data_from_array_1_0(A)
                np.lib.format.write_array_header_1_0(self._out, {
                    **head, "fortran_order": False, "shape": (self.n, *A.shape[1:])})
            if (A.dtype, A.shape[1:]) != self.kind:
                raise ValueError(f"{self.path}: rows of {A.dtype} {A.shape[1:]} after rows "
                                 f"of {self.kind[0]} {self.kind[1]}")
            np.ascontiguousarray(A).tofile(self._out)
            return
        A = A.reshape(len(A), -1)
        if self.fmt is not None:
            np.savetxt(self._out, A, delimiter=self.sep, fmt=self.fmt)
            return
        cell = "{:d}" if A.dtype.kind in "biu" else "{:.10g}"
        for i, row in enumerate(A.tolist()):
            self._out.write(self._line(([self.rows[start + i]] if self.rows is not None
                                        else []) + [cell.format(v) for v in row]))

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if kind is None and self.done != self.n:   # then path is left as it was
            exc = ValueError(f"{self.path}: {self.done} rows written, {self.n} expected")
            self._file.__exit__(ValueError, exc, None)
            raise exc
        self._file.__exit__(kind, exc, tb)


def read_npy(path: str | Path, name: str = "FILE", *, mmap: bool = False) -> np.ndarray:
    """The array of a ``.npy`` file, read without pickles; errors name ``name`` and the file.
    ``mmap``: opened memory-mapped, read-only (``np.load(mmap_mode="r")``): nothing is read
    until indexed, so a reading verb reads it window by window (:func:`npy_rows`).

    Raises:
        ValueError: a missing file, or one that is not a numeric ``.npy`` array (numpy's own
            message advises ``allow_pickle``, which is never the fix for a user's data).
    """
    p = Path(path)
    check_readable(p, name)
    try:
        X = np.load(p, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (OSError, ValueError, EOFError):
        raise ValueError(f"{name} {p} is not a readable .npy array of numbers") from None
    if not isinstance(X, np.ndarray):  # an .npz archive under another name
        X.close()
        raise ValueError(f"{name} {p} is an .npz archive, not a .npy array")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} {p} must hold numbers, got dtype {X.dtype}")
    return X


def npy_rows(path: str | Path, name: str = "FILE") -> np.ndarray:
    """The (n, d) rows of a ``.npy`` file memory-mapped (:func:`read_npy` with ``mmap``; a
    1-D array a column, as :func:`read_matrix` reads it): a reading verb passes it to its
    model's ``_windows`` as it passes a table, so it is read window by window, each row cast
    to float32 as :func:`read_matrix`'s array is (the same values). NaN is found when its
    window is read.

    Raises:
        ValueError: what :func:`read_npy` raises, another shape than (n,) or (n, d), no rows.
    """
    X = read_npy(path, name, mmap=True)
    X = X[:, None] if X.ndim == 1 else X
    if X.ndim != 2 or X.size == 0:
        raise empty_error(f"{name} {path}", X.shape)
    return X


def read_npz(path: str | Path, name: str = "FILE", required: tuple[str, ...] = (),
             optional: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """``{key: array}`` of a ``.npz`` archive for the ``required`` and present ``optional``
    keys, read without pickles; errors name ``name``, the file and the missing keys."""
    import zipfile

    p = Path(path)
    check_readable(p, name)
    bad = ValueError(f"{name} {p} is not a readable .npz archive of numeric arrays")
    try:
        z = np.load(p, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        raise bad from None
    if not isinstance(z, np.lib.npyio.NpzFile):  # a .npy array under another name
        raise bad
    try:
        with z:
            missing = [k for k in required if k not in z.files]
            out = {k: np.asarray(z[k]) for k in (*required, *optional)
                   if k in z.files and not missing}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        raise bad from None
    if missing:
        raise ValueError(f"{name} {p} must hold arrays {', '.join(required)} (missing "
                         f"{', '.join(missing)})")
    kinds = [k for k, v in out.items() if v.dtype.kind not in "biuf"]
    if kinds:
        raise ValueError(f"{name} {p}: array {kinds[0]} must hold numbers, got dtype "
                         f"{out[kinds[0]].dtype}")
    return out


def read_json(path: str | Path, name: str = "FILE", required: tuple[str, ...] = ()) -> dict:
    """The JSON object of a file with the ``required`` keys; each way of failing has its own
    message naming ``name`` and the file: missing, not readable (permission denied), empty,
    not valid JSON (with the line and column), not an object, or missing a key.

    Raises:
        ValueError: as above.
    """
    p = check_readable(Path(path), name)
    try:
        text = p.read_text(encoding="utf-8")
    except PermissionError:
        raise ValueError(f"{name} {p} is not readable (permission denied)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{name} {p} cannot be read as UTF-8 text ({exc})") from None
    if not text.strip():
        raise ValueError(f"{name} {p} is empty, expected a JSON object")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name} {p} is not valid JSON (line {exc.lineno}, column "
                         f"{exc.colno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{name} {p} must hold a JSON object, got a {type(data).__name__}")
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{name} {p} has no key {', '.join(map(repr, missing))} (it holds "
                         f"{', '.join(map(repr, data)) or 'no keys'})")
    return data


def read_table(path: str | Path, name: str = "FILE") -> tuple[list[str], np.ndarray]:
    """``(column names, (n, columns) float64 array)`` of a ``.csv`` file with a header row: the
    same checks and messages as :func:`read_matrix`, plus a header of one name per column.

    Raises:
        ValueError: as :func:`read_matrix`; no header row, or rows that do not match it.
    """
    import csv

    p = Path(path)
    if p.suffix.lower() != ".csv":
        raise ValueError(f"{name} must end in .csv, got {p.name}")
    check_readable(p, name)
    try:
        with p.open(newline="", encoding="utf-8") as fh:
            header = [h.strip() for h in next(csv.reader(fh), [])]
    except UnicodeDecodeError:
        raise not_utf8_error(f"{name} {p}", first_bad_byte(p)) from None
    if not header or any(map(_is_number, header)):
        raise ValueError(f"{name} {p} must start with a header row of column names")
    X = read_matrix(p, name, suffixes=(".csv",))
    if X.shape[1] != len(header):
        raise ValueError(f"{name} {p}: rows have {X.shape[1]} values but the header names "
                         f"{len(header)} columns")
    return header, X


# --- fitted estimators ------------------------------------------------------------------------

FITTED_FORMAT = 1  # bumped when the layout below changes; newer files are refused by name


def save_safetensors(tensors: dict, path: str | Path, metadata: dict[str, str] | None = None
                     ) -> Path:
    """Write ``tensors`` ({name: CPU tensor}) and ``metadata`` to a .safetensors file, the
    metadata's keys in sorted order, so that two saves of the same model are byte-identical.

    safetensors (Rust) keeps the metadata in a hash map whose order changes from one map to
    the next (19 orders in 20 saves of five keys), so its header is rewritten here: the same
    JSON, compact as safetensors writes it, padded with spaces to 8 bytes; the tensor data
    (offsets relative to the header's end) is unchanged. Written to a temporary file beside
    ``path`` and moved over it, so a write cut short leaves ``path`` as it was. Every file
    the library writes with safetensors metadata is written here (``mother``'s testbed
    writes none: safetensors' own bytes are then the same).

    Returns:
        ``path`` as a :class:`Path`.
    """
    import struct

    from safetensors.torch import save

    blob = save(tensors, metadata=metadata)
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    if "__metadata__" in header:   # the same place (first), its keys sorted
        header["__metadata__"] = dict(sorted(header["__metadata__"].items()))
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    with atomic_write(path) as fh:   # whole or not at all, as safetensors' save_file
        fh.write(struct.pack("<Q", len(text)))
        fh.write(text)
        fh.write(memoryview(blob)[8 + n:])
    return Path(path)


def save_fitted(path: str | Path, kind: str, params: dict, tensors: dict,
                state: dict | None = None) -> Path:
    """Write a fitted estimator to one ``.safetensors`` file: tensors, and JSON in its header.

    Args:
        path: the file to write (its folder must exist).
        kind: what is saved, e.g. ``"matern.KernelSurface"``; :func:`load_fitted` checks it.
        params: the constructor parameters (``get_params()``), JSON-ready.
        tensors: ``{name: tensor}`` of fitted arrays (moved to the CPU, made contiguous).
        state: other JSON-ready fitted values (counts, names, scalars).

    Returns:
        ``path`` as a :class:`Path`.

    Raises:
        ValueError: ``params``/``state`` are not JSON-ready, or the folder is missing.
    """
    import json

    import torch

    p = Path(path)
    if not p.parent.is_dir():
        raise ValueError(f"path: folder {p.parent} does not exist")
    def plain(o: object) -> object:  # numpy scalars (np.int64 from a grid search) as Python's
        if isinstance(o, np.generic):
            return o.item()
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")

    try:
        header = json.dumps({"format": FITTED_FORMAT, "kind": kind, "params": params,
                             "state": state or {}}, default=plain)
    except TypeError as exc:
        raise ValueError(f"{kind}: parameters must be JSON-ready to be saved ({exc})") from None
    # clone: tensors that share memory (a module's buffer and an attribute) are refused
    return save_safetensors({k: v.detach().to("cpu").contiguous().clone()
                             for k, v in tensors.items() if isinstance(v, torch.Tensor)},
                            p, {"iclr25": header})


def written_by(meta: dict[str, str]) -> str | None:
    """What an iclr25 ``.safetensors`` file holds, from its header's metadata, in a user's
    words (``"a DCPT checkpoint (written by `dcpt pretrain`, `finetune` or `convert`)"``,
    ``"a fitted lowlight.ZeroReferenceEnhancer"``); None where no iclr25 writer marked it. A
    loader handed another verb's file names what the file is (issue 68, walk 13: a DCPT
    checkpoint given to `lowlight enhance` was "not written by iclr25", to `lsdt evaluate`
    "not a saved LSDT model ('config')")."""
    if "iclr25.dcpt" in meta:
        return "a DCPT checkpoint (written by `dcpt pretrain`, `finetune` or `convert`)"
    if "iclr25" in meta:
        try:
            return f"a fitted {json.loads(meta['iclr25'])['kind']}"
        except (KeyError, TypeError, ValueError):
            return None
    return {"gsd": "a GSD policy (written by `gsd train`)",
            "lsdt": "an LSDT model (written by `lsdt train`)"}.get(meta.get("method", ""))


def load_fitted(path: str | Path, kind: str, device: object = "cpu",
                ) -> tuple[dict, dict, dict]:
    """Read ``(params, tensors, state)`` written by :func:`save_fitted` for ``kind``.

    Raises:
        ValueError: naming the file, when it is missing, unreadable, truncated or corrupt, not
            an iclr25 file, holds another kind, or was written by a newer format.
    """
    import json

    from safetensors import SafetensorError
    from safetensors.torch import load_file

    p = Path(path)
    what = f"cannot load a fitted {kind} from {p}"
    if not p.exists():
        raise ValueError(f"path: {what}: no such file")
    if not p.is_file():
        raise ValueError(f"path: {what}: not a file")
    if not os.access(p, os.R_OK):
        raise ValueError(f"path: {what}: permission denied")
    try:
        from safetensors import safe_open

        with safe_open(str(p), framework="pt") as f:
            meta = f.metadata() or {}
        tensors = load_file(str(p), device=str(device))
    except PermissionError:
        raise ValueError(f"path: {what}: permission denied") from None
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise ValueError(f"path: {what}: not a safetensors file, or truncated ({exc})") from None
    try:
        header = json.loads(meta["iclr25"])
        found, version = header["kind"], int(header["format"])
    except (KeyError, TypeError, ValueError):
        held = written_by(meta)
        raise ValueError(f"path: {what}: " + (f"it is {held}" if held else
                                              "not written by iclr25")) from None
    if found != kind:
        raise ValueError(f"path: {what}: it holds a {found}")
    if version > FITTED_FORMAT:
        raise ValueError(f"path: {what}: written by a newer iclr25 (format {version}, this "
                         f"version reads up to {FITTED_FORMAT}); upgrade iclr25")
    return header["params"], tensors, header.get("state", {})


class FittedIO:
    """``save(path)`` / ``load(path, device=None)`` for an estimator, through
    :func:`save_fitted` / :func:`load_fitted`: one file format and one set of error messages.

    What is saved: ``get_params()`` (arrays among them as tensors), and every public attribute
    ending in ``_`` — tensors, numpy arrays, lists of tensors, JSON-ready values and
    ``nn.Module`` weights. A class with modules rebuilds each from its restored attributes in
    ``_new_module(name)``; attributes named in ``_unsaved`` are not written (set to None);
    private attributes named in ``_private`` (a stream's buffers) are written too. A
    ``torch.device`` attribute becomes the device loaded onto; tensors named in ``_on_cpu``
    (records ``fit`` keeps on the CPU) stay there whatever the device.
    """

    _unsaved: tuple[str, ...] = ()
    _private: tuple[str, ...] = ()
    _on_cpu: tuple[str, ...] = ()

    def _new_module(self, name: str) -> object:
        raise NotImplementedError(f"{type(self).__name__} cannot rebuild its {name}")

    @classmethod
    def _kind(cls) -> str:
        return f"{cls.__module__.split('.')[1]}.{cls.__name__}"

    def save(self, path: str | Path) -> Path:
        """Write the fitted estimator to ``path`` (one safetensors file); returns the path.

        Raises:
            NotFittedError: before ``fit``. ValueError: the folder of ``path`` is missing.
        """
        import torch
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        tensors: dict = {}
        state: dict = {"numpy": [], "tuples": [], "lists": {}, "modules": [], "params": {},
                       "devices": [], "tuple_lists": []}
        params = {}
        for k, v in self.get_params(deep=False).items():
            if isinstance(v, (np.ndarray, torch.Tensor)):
                tensors[f"param.{k}"] = torch.as_tensor(v)
                state["params"][k] = "numpy" if isinstance(v, np.ndarray) else "tensor"
            else:  # a Generator or a start module is a way to begin, not a setting: the
                # fitted weights are saved
                params[k] = None if isinstance(v, (torch.Generator, torch.nn.Module)) else v
        for k, v in vars(self).items():
            public = k.endswith("_") and not k.startswith("_") and k not in self._unsaved
            if not (public or k in self._private):
                continue
            if isinstance(v, torch.device):
                state["devices"].append(k)
            elif isinstance(v, torch.nn.Module):
                tensors.update({f"{k}.{n}": t for n, t in v.state_dict().items()})
                state["modules"].append(k)
            elif isinstance(v, torch.Tensor):
                tensors[k] = v
            elif isinstance(v, np.ndarray) and v.dtype.kind in "biuf":
                tensors[k] = torch.from_numpy(np.ascontiguousarray(v))
                state["numpy"].append(k)
            elif isinstance(v, list) and v and all(isinstance(t, torch.Tensor) for t in v):
                tensors.update({f"{k}.{i}": t for i, t in enumerate(v)})
                state["lists"][k] = len(v)
            else:
                if isinstance(v, tuple):
                    state["tuples"].append(k)
                elif isinstance(v, list) and v and all(isinstance(e, tuple) for e in v):
                    state["tuple_lists"].append(k)  # a log of tuples stays one
                state[k] = v.tolist() if isinstance(v, np.ndarray) else v
        return save_fitted(path, self._kind(), params, tensors, state)

    @classmethod
    def load(cls, path: str | Path, device: object = None) -> FittedIO:
        """An estimator written by :meth:`save`, its tensors on ``device`` (default CPU).

        Raises:
            ValueError: naming the file, when it is missing, unreadable, truncated, not
                written by iclr25, holds another estimator, or comes from a newer version.
        """
        import inspect

        import torch

        dev = torch.device(device or "cpu")
        params, tensors, state = load_fitted(path, cls._kind(), dev)
        defaults = inspect.signature(cls).parameters
        for k, v in params.items():
            if k in defaults and isinstance(defaults[k].default, tuple) and v is not None:
                params[k] = tuple(v)
        for k, how in state.pop("params").items():
            t = tensors.pop(f"param.{k}")
            params[k] = t.cpu().numpy() if how == "numpy" else t
        if device is not None and "device" in params:
            params["device"] = str(dev)
        est = cls(**params)
        meta = {k: state.pop(k, []) for k in ("numpy", "tuples", "lists", "modules", "devices",
                                                "tuple_lists")}
        for k, v in state.items():
            if k in meta["tuple_lists"]:
                v = [tuple(e) for e in v]
            setattr(est, k, tuple(v) if k in meta["tuples"] else v)
        for k, n in meta["lists"].items():
            setattr(est, k, [tensors.pop(f"{k}.{i}") for i in range(n)])
        for k in cls._unsaved:
            setattr(est, k, None)
        for k in meta["devices"]:
            setattr(est, k, dev)
        plain = {k: v for k, v in tensors.items() if "." not in k}
        for k, v in plain.items():
            setattr(est, k, v.cpu().numpy() if k in meta["numpy"] else
                    v.cpu() if k in cls._on_cpu else v)
        for name in meta["modules"]:
            weights = {k[len(name) + 1:]: v for k, v in tensors.items()
                       if k.startswith(f"{name}.")}
            module = est._new_module(name)
            dtype = next((v.dtype for v in weights.values() if v.is_floating_point()), None)
            module = module.to(device=dev, dtype=dtype) if dtype is not None else module.to(dev)
            try:
                module.load_state_dict(weights)
            except RuntimeError as exc:
                raise ValueError(f"path: cannot load a fitted {cls._kind()} from {path}: its "
                                 f"{name} weights do not fit the saved parameters "
                                 f"({str(exc).splitlines()[0]})") from None
            setattr(est, name, module.eval())
        return est
