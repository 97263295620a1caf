"""Capacities: edge and node bounds checked and laid out on the arcs, and their clips.

The edge clip ``K = min(K₀, cap / (u vᵀ))`` is the exact dual update of the capacity
multipliers when it starts from the unclipped kernel ``K₀`` at every step (the default), and
the paper's cumulative clip when ``K₀`` is the working kernel itself. The node clip bounds a
node's throughput ``q`` (its real out-flow): out-flow ``x = q + d``, in-flow ``y = x - s``.
"""

from __future__ import annotations

import torch

from iclr25._checks import as_tensor
from iclr25.oft.arcs import Arcs

WARMUP = 20  # iterations before capacities are clipped (the paper's warm-up)


def _real(x: object, name: str) -> torch.Tensor:
    """``x`` as a real tensor (bool and complex refused), without NaN; inf is left to callers.
    A torch sparse ``x`` gives its stored values."""
    if isinstance(x, torch.Tensor) and x.is_sparse:
        x = x.coalesce().values()
    t = as_tensor(x, name, finite=False)
    if t.dtype == torch.bool:
        raise TypeError(f"{name} must be numeric, got {t.dtype}")
    if t.is_floating_point() and bool(torch.isnan(t).any()):
        raise ValueError(f"{name} contains {int(torch.isnan(t).sum())} NaN value(s)")
    return t


def _tensor(value: object, name: str, dev: torch.device) -> torch.Tensor:
    return _real(value, name).to(device=dev, dtype=torch.float64)


def _broadcast(t: torch.Tensor, name: str, shape: tuple[int, ...], doc: str) -> torch.Tensor:
    if t.ndim > len(shape):
        raise ValueError(f"{name} must be a scalar or {doc}, got shape {tuple(t.shape)}")
    try:
        return torch.broadcast_to(t, shape)
    except RuntimeError as exc:
        raise ValueError(f"{name} must broadcast to {shape}, got shape "
                         f"{tuple(t.shape)}") from exc


def _nonnegative(t: torch.Tensor, name: str) -> torch.Tensor:
    if bool((t < 0).any()):
        raise ValueError(f"{name} must be >= 0, got minimum {float(t.min()):g}")
    return t


def edge_capacity(capacity: object, arcs: Arcs, dev: torch.device) -> torch.Tensor | None:
    """``capacity`` (scalar, broadcastable to (B, n, n), or torch sparse holding every arc)
    checked >= 0, float64, in the arcs' layout; None without capacities."""
    if capacity is None:
        return None
    shape = (arcs.B, arcs.n, arcs.n)
    if isinstance(capacity, torch.Tensor) and capacity.is_sparse:
        if not arcs.sparse:
            raise ValueError("capacity may be sparse only when C is sparse")
        vals = _tensor(capacity, "capacity", dev)
        return _nonnegative(_sparse_on_arcs(capacity, vals, arcs), "capacity")
    t = _broadcast(_tensor(capacity, "capacity", dev), "capacity", shape, "(…, n, n)")
    return _nonnegative(arcs.gather(t), "capacity")


def _sparse_on_arcs(capacity: torch.Tensor, vals: torch.Tensor, arcs: Arcs) -> torch.Tensor:
    """A sparse capacity's values at the arcs (each arc must have an entry)."""
    if capacity.ndim not in (2, 3) or tuple(capacity.shape[-2:]) != (arcs.n, arcs.n):
        raise ValueError(f"capacity must be (n, n) or (B, n, n) like C, got shape "
                         f"{tuple(capacity.shape)}")
    idx = capacity.coalesce().indices().to(arcs.idx.device)
    n = arcs.n
    if idx.shape[0] == 2:  # one pattern for every instance
        key, want = idx[0] * n + idx[1], arcs.idx[1] * n + arcs.idx[2]
    else:
        if capacity.shape[0] not in (1, arcs.B):
            raise ValueError(f"capacity has batch size {capacity.shape[0]}, expected {arcs.B}")
        b = idx[0] if capacity.shape[0] == arcs.B else torch.zeros_like(idx[0])
        key = (b * n + idx[1]) * n + idx[2]
        want = (arcs.idx[0] * n + arcs.idx[1]) * n + arcs.idx[2]
        if capacity.shape[0] == 1:
            want = arcs.idx[1] * n + arcs.idx[2]
    pos = torch.searchsorted(key, want).clamp_max(max(key.numel() - 1, 0))
    if key.numel() == 0 or not bool((key[pos] == want).all()):
        raise ValueError("capacity: a sparse capacity must hold an entry for every arc of C")
    return vals[pos]


def node_capacity_of(node_capacity: object, s: torch.Tensor, dev: torch.device
                     ) -> torch.Tensor | None:
    """(B, n) node throughput bounds checked >= 0 and >= every supply; None without."""
    if node_capacity is None:
        return None
    ncap = _nonnegative(_broadcast(_tensor(node_capacity, "node_capacity", dev),
                                   "node_capacity", tuple(s.shape), "(…, n)"), "node_capacity")
    short = s > ncap * (1 + 1e-12)
    if bool(short.any()):
        b, i = (int(v) for v in short.nonzero()[0])
        raise ValueError(f"node_capacity[{i}] = {float(ncap[b, i]):g} is below the supply "
                         f"{float(s[b, i]):g} that node {i} must send out (instance {b})")
    return ncap


def clip_node(x: torch.Tensor, y: torch.Tensor, s: torch.Tensor, d: torch.Tensor,
              ncap: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Throughput bound ``q <= ncap``: out-flow ``x = q + d``, in-flow ``y = x - s``."""
    lim = ncap + d
    clip = x > lim
    return torch.where(clip, lim, x), torch.where(clip, lim - s, y)


def log_clip_node(lx: torch.Tensor, ly: torch.Tensor, s: torch.Tensor, d: torch.Tensor,
                  ncap: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`clip_node` on ``log x, log y``."""
    lim = ncap + d
    clip = lx > torch.log(lim)
    return (torch.where(clip, torch.log(lim), lx),
            torch.where(clip, torch.log((lim - s).clamp_min(1e-300)), ly))
