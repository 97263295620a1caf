"""Input validation shared by every method: clear errors naming the argument, before any work.

Nothing here modifies its input; tensors are returned as given (or converted with
``torch.as_tensor``, which copies only when it must).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def check_tensor(
    x: object,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    finite: bool = True,
    nonempty: bool = True,
    floating: bool = False,
    integer: bool = False,
) -> torch.Tensor:
    """Return ``x`` as a tensor, raising if it has the wrong rank, is empty or holds NaN/inf.

    Raises:
        TypeError: ``x`` cannot be read as a tensor, or has the wrong dtype kind.
        ValueError: wrong number of dimensions, empty, or non-finite entries.
    """
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
