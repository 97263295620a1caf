"""Input validation shared by every method: clear errors naming the argument, before any work.

Nothing here modifies its input; tensors are returned as given (or converted with
``torch.as_tensor``, which copies only when it must).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, Union, get_args

import numpy as np
import torch

if TYPE_CHECKING:
    import scipy.sparse

#: What an array argument accepts: a tensor, a numpy array or (nested) sequences of numbers,
#: converted once at the boundary (:func:`as_tensor`, :func:`check_tensor`).
ArrayLike: TypeAlias = torch.Tensor | np.ndarray | Sequence[Any]
#: What a matrix argument that may be sparse accepts: an :data:`ArrayLike`, a ``scipy.sparse``
#: matrix or array, or a sparse torch tensor (rows kept sparse where it is read).
ArrayOrSparse: TypeAlias = Union[ArrayLike, "scipy.sparse.spmatrix",  # noqa: UP007
                                 "scipy.sparse.sparray"]  # (quoted: scipy loads lazily)
#: What an image argument accepts: values in [0, 1], one (C, H, W) image or a (B, C, H, W)
#: batch, as a tensor, an array or nested sequences (:func:`check_image_batch`).
ImageBatch: TypeAlias = ArrayLike


def check_tensor(
    x: ArrayLike,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    finite: bool = True,
    nonempty: bool = True,
    floating: bool = False,
    integer: bool = False,
    min_ndim: int = 0,
) -> torch.Tensor:
    """Return ``x`` as a tensor, raising if it has the wrong rank, is empty or holds NaN/inf.

    ``floating`` refuses integer and bool tensors (a float is meant); ``min_ndim`` refuses
    tensors of fewer dimensions (a 0-d scalar where a batch is meant).

    Raises:
        TypeError: ``x`` cannot be read as a tensor, or has the wrong dtype kind.
        ValueError: wrong number of dimensions, empty, or non-finite entries.
    """
    if isinstance(x, np.ndarray) and not x.flags.writeable:
        x = x.copy()  # torch warns on (and would share) a read-only array: pandas' to_numpy()
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(x)
        except (TypeError, ValueError, RuntimeError) as exc:
            kind = type(x).__name__
            raise TypeError(f"{name} must be a tensor or array-like, got {kind}") from exc
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"{name} must be {want}, got shape {tuple(x.shape)}")
    if x.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), "
                         f"got shape {tuple(x.shape)}")
    if nonempty and x.numel() == 0:
        raise ValueError(f"{name} is empty (shape {tuple(x.shape)})")
    if floating and not (x.is_floating_point() or x.is_complex()):
        raise TypeError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if integer and (x.is_floating_point() or x.is_complex() or x.dtype == torch.bool):
        raise TypeError(f"{name} must be an integer tensor, got {x.dtype}")
    if finite and (x.is_floating_point() or x.is_complex()) and not bool(torch.isfinite(x).all()):
        bad = int((~torch.isfinite(x)).sum())
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s)")
    return x


def check_same_length(**arrays: object) -> int:
    """Raise unless all given arrays have the same first dimension; return it."""
    if not arrays:
        raise TypeError("check_same_length needs at least one array")
    lengths = {k: len(v) for k, v in arrays.items()}  # type: ignore[arg-type]
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"mismatched lengths: {desc}")
    return next(iter(lengths.values()))


def check_in_range(
    value: float, name: str, low: float | None = None, high: float | None = None,
    *, low_open: bool = False, high_open: bool = False,
) -> float:
    """Raise unless ``low <= value <= high`` (``<`` on an open side); NaN always fails."""
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a number, got {type(value).__name__}") from exc
    ok = v == v
    if ok and low is not None:
        ok = v > low if low_open else v >= low
    if ok and high is not None:
        ok = v < high if high_open else v <= high
    if not ok:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        left = "(" if low_open or low is None else "["
        right = ")" if high_open or high is None else "]"
        interval = f"{left}{lo}, {hi}{right}"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return v


# --- the API contract's helpers: every method validates through these -----------------------

def as_tensor(
    x: ArrayLike,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
    finite: bool = True,
    nonempty: bool = True,
    floating: bool = False,
    min_ndim: int = 0,
) -> torch.Tensor:
    """Convert ``x`` (tensor, numpy array, list) once at the boundary and check it.

    ``floating=True`` refuses integer and bool input where a float is meant (weights,
    targets, distances: a cast would hide a caller's mix-up), whatever ``dtype``.

    Floating input (float16/32/64, numpy's default float64 included) is accepted and cast to
    ``dtype`` when given; complex input is refused (its imaginary part would be lost).
    Integers and bools are accepted only when ``dtype`` is an integer type or ``None``.
    The input is never modified; a copy is made only when dtype or device change.

    Raises:
        TypeError: not array-like, complex, or not convertible to ``dtype``.
        ValueError: wrong rank, empty, or NaN/inf.
    """
    x = check_tensor(x, name, ndim=ndim, finite=False, nonempty=nonempty, min_ndim=min_ndim)
    if floating and not (x.is_floating_point() or x.is_complex()):
        raise TypeError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if x.is_complex():
        raise TypeError(f"{name} must be real, got complex dtype {x.dtype}")
    if dtype is not None:
        if dtype.is_floating_point and x.dtype == torch.bool:
            raise TypeError(f"{name} must be numeric, got {x.dtype}")
        if not dtype.is_floating_point and x.is_floating_point():
            raise TypeError(f"{name} must be an integer tensor, got {x.dtype}")
    if finite and x.is_floating_point() and not bool(torch.isfinite(x).all()):
        bad = int((~torch.isfinite(x)).sum())
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s)")
    return x.to(device=device if device is not None else x.device, dtype=dtype or x.dtype)


def check_labels(y: ArrayLike, name: str = "y", n_classes: int | None = None, *,
                 n: int | None = None, device: torch.device | str | None = None) -> torch.Tensor:
    """Labels as a 1-D int64 tensor with values in ``[0, n_classes)``.

    Any integer dtype (uint8, int16, int32, numpy int64) is converted to int64; float labels,
    an (n, 1) column, or values out of range are refused rather than broadcast or cast.

    Raises:
        TypeError: non-integer labels.
        ValueError: not 1-D, wrong length ``n``, negative or ``>= n_classes``.
    """
    t = check_tensor(y, name, ndim=1, finite=False)
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer class labels, got {t.dtype}")
    t = t.to(dtype=torch.int64, device=device if device is not None else t.device)
    if n is not None and len(t) != n:
        raise ValueError(f"{name} must have {n} labels (one per sample), got {len(t)}")
    if int(t.min()) < 0:
        raise ValueError(f"{name} must be >= 0, got minimum {int(t.min())}")
    if n_classes is not None and int(t.max()) >= n_classes:
        raise ValueError(f"{name} must be < n_classes={n_classes}, got maximum {int(t.max())}")
    return t


def like_input(out: Any, X: object) -> Any:
    """An estimator's output in its input's kind: a tensor (or a tuple of them) for tensor
    input, numpy arrays for numpy arrays and lists (scikit-learn's habit)."""
    if isinstance(X, torch.Tensor):
        return out
    if isinstance(out, tuple):
        return tuple(t.detach().cpu().numpy() for t in out)
    return out.detach().cpu().numpy()


#: columns whose root-mean-squares differ by more than this fold call for standardising first
#: (a gradient step is 1/L of the largest column; distances are the largest column's): the
#: one rule behind every "standardise" hint (LoCoDL's cap message, COX's matching warning)
SPREAD_HINT = 100.0


def column_spread(X: ArrayOrSparse) -> float:
    """Largest over smallest root-mean-square of X's (N, d) non-zero columns: a tensor (dense
    or sparse), an array or ``scipy.sparse``; 1.0 when no column is non-zero. Raw features in
    mixed units (breast cancer's: about 1e4) are far above :data:`SPREAD_HINT`, standardised
    ones at 1."""
    if isinstance(X, torch.Tensor):
        t = X.detach().to(torch.float64)
        t = t.to_sparse() if t.layout != torch.strided else t
        sq = (torch.sparse.sum(t * t, 0).to_dense() if t.is_sparse else t.square().sum(0))
        sq = (sq / max(len(t), 1)).cpu().numpy()
    elif hasattr(X, "multiply"):   # scipy.sparse: never densified
        sq = X.multiply(X).mean(axis=0)
    else:
        sq = np.mean(np.square(np.asarray(X, dtype=np.float64)), axis=0)
    rms = np.sqrt(np.asarray(sq, dtype=np.float64).ravel())
    rms = rms[rms > 0]
    return float(rms.max() / rms.min()) if rms.size else 1.0


def check_int(value: object, name: str, low: int | None = None,
              high: int | None = None) -> int:
    """An ``int`` (not bool, not float) in ``[low, high]``."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    v = value.__index__()  # type: ignore[attr-defined]
    if (low is not None and v < low) or (high is not None and v > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{name} must lie in [{lo}, {hi}], got {v}")
    return v


def check_range(value: ArrayLike, name: str, low: float | None = None,
                high: float | None = None, *, low_open: bool = False,
                high_open: bool = False) -> float:
    """A finite float in the given interval: NaN and +-inf always fail."""
    v = check_in_range(value, name, low, high, low_open=low_open, high_open=high_open)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def check_choice(value: object, name: str, choices: Iterable[object]) -> Any:
    """``value`` if it is one of ``choices`` (a ``Literal`` alias or any iterable)."""
    options = get_args(choices) or tuple(choices)  # type: ignore[arg-type]
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def resolve_seed(seed: int | torch.Generator | None, device: torch.device | str = "cpu",
                 name: str = "seed") -> torch.Generator:
    """A ``torch.Generator`` from ``seed``: an int seeds a new one, a Generator is used as is,
    ``None`` draws a fresh seed from the OS (never from the global RNG)."""
    if isinstance(seed, torch.Generator):
        return seed
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little") >> 1
    s = check_int(seed, name, 0, 2**64 - 1)  # torch's range; larger overflowed inside torch
    return torch.Generator(device=check_device(device)).manual_seed(s)


def check_writable_dir(path: str | os.PathLike, name: str) -> Path:
    """Create ``path`` if needed and make sure files can be written there, before any work.

    Raises:
        ValueError: ``path`` is a file, cannot be created, or is not writable.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ValueError(f"{name} must be a directory, but {p} is a file")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{name}: cannot create directory {p} ({exc.strerror})") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise ValueError(f"{name}: directory {p} is not writable")
    return p


# --- added for ies (and mother): dataset indices ----------------------------------------------

def check_indices(indices: ArrayLike, n: int, name: str = "indices", *,
                  unique: bool = False) -> torch.Tensor:
    """Indices into ``n`` samples as a 1-D int64 tensor with values in ``[0, n)``.

    Any integer dtype is converted to int64 (a uint8 tensor would otherwise index as a mask).

    Raises:
        TypeError: non-integer indices. ValueError: not 1-D, empty, out of range, or
            repeated when ``unique``.
    """
    idx = check_tensor(indices, name, ndim=1, integer=True).to(torch.int64)
    lo, hi = int(idx.min()), int(idx.max())
    if lo < 0 or hi >= n:
        raise ValueError(f"{name} must lie in [0, {n}), got {lo if lo < 0 else hi}")
    if unique and torch.unique(idx).numel() != idx.numel():
        raise ValueError(f"{name} must not repeat within one call")
    return idx


# --- added for issue 56: a caller's model, run on a caller's input -----------------------------

def run_model(model: Any, x: torch.Tensor, name: str = "X") -> Any:
    """``model(x)``; an input the model cannot take (another width, another dtype) is refused
    as a ValueError naming ``name`` and both shapes instead of torch's ``mat1 and mat2``
    RuntimeError. Out-of-memory errors pass through unchanged."""
    try:
        return model(x)
    except torch.OutOfMemoryError:
        raise
    except RuntimeError as exc:
        first = next(iter(model.parameters()), None) if hasattr(model, "parameters") else None
        want = "" if first is None else f" (its first parameter is {first.dtype} " \
            f"{tuple(first.shape)})"
        raise ValueError(f"{name} of shape {tuple(x.shape)} and dtype {x.dtype} does not fit "
                         f"the model{want}: {exc}") from None


def check_class_targets(y: ArrayLike, name: str, n: int, n_classes: int, *,
                        device: torch.device | str | None = None) -> torch.Tensor:
    """Cross-entropy targets for ``n`` samples of ``n_classes`` classes: (n,) integer labels
    in ``[0, n_classes)``, or (n, n_classes) floating class probabilities.

    Raises:
        TypeError: bool, or 1-D floating targets (labels that were cast to float).
        ValueError: wrong shape or length, labels out of range, NaN/inf probabilities.
    """
    t = check_tensor(y, name, finite=False, nonempty=False)
    if t.is_floating_point():
        if t.ndim != 2:
            raise TypeError(f"{name} must be integer labels (n,) or class probabilities "
                            f"(n, {n_classes}), got {t.dtype} of shape {tuple(t.shape)}")
        t = as_tensor(t, name, ndim=2, device=device)
        if tuple(t.shape) != (n, n_classes):
            raise ValueError(f"{name} must have shape ({n}, {n_classes}), got {tuple(t.shape)}")
        return t
    return check_labels(t, name, n_classes, n=n, device=device)


def check_batch(x: ArrayLike, name: str, *, ndim: int | Sequence[int] | None = None,
                width: int | None = None) -> torch.Tensor:
    """A module's forward input, checked from metadata only (no device sync per step): a
    floating tensor of ``ndim`` dimensions whose last one is ``width``. Values (NaN) are the
    entry points' to check, once, not every training step's.

    Raises:
        TypeError: not a tensor, or not floating. ValueError: wrong rank or width.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"{name} must be {want}, got shape {tuple(x.shape)}")
    if width is not None and (x.ndim == 0 or x.shape[-1] != width):
        raise ValueError(f"{name} must have {width} features (last dimension), got shape "
                         f"{tuple(x.shape)}")
    return x


def cat_batches(**named: tuple[object, int | None]) -> torch.Tensor:
    """A module's paired inputs (``obs=(obs, obs_dim), act=(act, act_dim)``) checked from
    metadata (see :func:`check_batch`: floating, 2-D, the given width) and for one row count,
    then joined on the last axis."""
    parts = [check_batch(x, name, ndim=2, width=w) for name, (x, w) in named.items()]
    rows = {name: len(x) for name, x in zip(named, parts, strict=True)}
    if len(set(rows.values())) > 1:
        raise ValueError("mismatched rows: " + ", ".join(f"{k} has {n}" for k, n in rows.items()))
    return torch.cat(parts, -1)


def check_image_batch(x: ArrayLike, name: str, channels: int | None = None, *,
                 ndim: int | Sequence[int] = 4) -> torch.Tensor:
    """A network's (B, C, H, W) image batch (or (C, H, W) with ``ndim=(3, 4)``), checked from
    metadata (see :func:`check_batch`)."""
    x = check_batch(x, name, ndim=ndim)
    if channels is not None and x.shape[-3] != channels:
        raise ValueError(f"{name} must have {channels} channels (B, {channels}, H, W), got "
                         f"shape {tuple(x.shape)}")
    return x


def check_device(device: object, name: str = "device") -> torch.device | None:
    """``device`` as a ``torch.device`` (None passes): an unknown name, or CUDA without a CUDA
    device, is a ValueError naming ``name`` rather than torch's RuntimeError."""
    if device is None:
        return None
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"{name} must be a str or torch.device, got {type(device).__name__}")
    try:
        dev = torch.device(device)
    except RuntimeError as exc:
        raise ValueError(f"{name}: {device!r} is not a device ({exc})") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{name}={device!r} but torch sees no CUDA device")
    return dev


def check_callback(callback: object, name: str = "callback") -> Any:
    """``callback`` if it is None or callable, else a TypeError naming ``name``."""
    if callback is not None and not callable(callback):
        raise TypeError(f"{name} must be callable or None, got {type(callback).__name__}")
    return callback


def user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning raised where this is called at the user's own
    line: the first frame outward that is in neither this package nor torch (whose
    ``no_grad`` decorator wraps some of the package's functions) nor scikit-learn (whose
    ``set_output`` wrapper wraps the estimators' ``transform``), not a site-packages path
    and a line of the library's source."""
    wrappers = [sys.modules[m] for m in ("torch", "sklearn") if m in sys.modules]
    inside = (str(Path(__file__).parent), *(str(Path(m.__file__).parent) for m in wrappers))
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(inside):
        frame, level = frame.f_back, level + 1
    return level
