"""Radius and k-nearest-neighbour graphs in plain torch (PyG's need torch-cluster/pyg-lib).

Same signatures and output convention as ``torch_geometric.nn.radius_graph``/``knn_graph``:
``edge_index[0]`` is the neighbour (source), ``edge_index[1]`` the centre (target).
"""

from __future__ import annotations

import torch

from iclr25._checks import ArrayLike, check_int, check_range
from iclr25._contract import checked
from iclr25.schull.graph import check_pos_batch

__all__ = ["knn_graph", "radius_graph"]


def _blocks(pos: torch.Tensor, batch: torch.Tensor | None, rows: int):
    """Yield (row slice, column slice, distances, same-structure mask) over row chunks.

    Columns are limited to the structures the chunk's rows belong to (``batch`` is sorted),
    so cost is near-linear for batches of small molecules and memory stays bounded.
    """
    n = len(pos)
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        if batch is None:
            c0, c1 = 0, n
        else:
            c0 = int(torch.searchsorted(batch, batch[lo], right=False))
            c1 = int(torch.searchsorted(batch, batch[hi - 1], right=True))
        d = torch.cdist(pos[lo:hi], pos[c0:c1])
        mask = torch.ones_like(d, dtype=torch.bool) if batch is None else (
            batch[lo:hi, None] == batch[None, c0:c1])
        yield lo, c0, d, mask


@checked
def radius_graph(pos: ArrayLike, r: float, batch: ArrayLike | None = None, loop: bool = False,
                 max_num_neighbors: int = 32) -> torch.Tensor:
    """Edges between atoms closer than ``r`` (same structure), like PyG's ``radius_graph``.

    Args:
        pos: (N, 3) float positions. batch: optional (N,) sorted structure index.
        r: cutoff (units of ``pos``), > 0. loop: keep self-loops.
        max_num_neighbors: at most this many (the nearest, ties by index) per centre atom.

    Returns:
        (2, E) int64 on ``pos``'s device, ``[neighbour, centre]``, sorted by centre.

    Raises:
        ValueError: ``r <= 0``, ``max_num_neighbors < 1``, bad ``pos``/``batch``.
    """
    r = check_range(r, "r", 0.0, low_open=True)
    check_int(max_num_neighbors, "max_num_neighbors", 1)
    p, b = check_pos_batch(pos, batch, duplicates=False)
    p = p.detach()
    out = []
    for lo, c0, d, mask in _blocks(p, b, 1024):
        rows_idx = torch.arange(lo, lo + len(d), device=p.device)
        cols_idx = torch.arange(c0, c0 + d.shape[1], device=p.device)
        mask = mask & (d <= r)
        if not loop:
            mask &= rows_idx[:, None] != cols_idx[None, :]
        dd = torch.where(mask, d, torch.full_like(d, float("inf")))
        k = min(max_num_neighbors, d.shape[1])
        val, idx = torch.topk(dd, k, dim=1, largest=False, sorted=True)
        keep = torch.isfinite(val)
        centre = rows_idx[:, None].expand_as(idx)[keep]
        nb = cols_idx[idx][keep]
        o = torch.argsort(centre * (len(p) + 1) + nb)  # deterministic order
        out.append(torch.stack([nb[o], centre[o]]))
    return torch.cat(out, dim=1)


@checked
def knn_graph(pos: ArrayLike, k: int, batch: ArrayLike | None = None, loop: bool = False,
              ) -> torch.Tensor:
    """Each atom's ``k`` nearest atoms in its structure, like PyG's ``knn_graph``.

    Returns:
        (2, E) int64 on ``pos``'s device, ``[neighbour, centre]``, sorted by centre; fewer
        than ``k`` neighbours where a structure is smaller.

    Raises:
        ValueError: ``k < 1``, bad ``pos``/``batch``.
    """
    check_int(k, "k", 1)
    p, b = check_pos_batch(pos, batch, duplicates=False)
    p = p.detach()
    out = []
    for lo, c0, d, mask in _blocks(p, b, 1024):
        rows_idx = torch.arange(lo, lo + len(d), device=p.device)
        cols_idx = torch.arange(c0, c0 + d.shape[1], device=p.device)
        if not loop:
            mask = mask & (rows_idx[:, None] != cols_idx[None, :])
        dd = torch.where(mask, d, torch.full_like(d, float("inf")))
        kk = min(k, d.shape[1])
        val, idx = torch.topk(dd, kk, dim=1, largest=False, sorted=True)
        keep = torch.isfinite(val)
        centre = rows_idx[:, None].expand_as(idx)[keep]
        nb = cols_idx[idx][keep]
        o = torch.argsort(centre * (len(p) + 1) + nb)
        out.append(torch.stack([nb[o], centre[o]]))
    return torch.cat(out, dim=1)
