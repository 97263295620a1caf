"""Graph checks the paper's guarantees are stated in: connectivity, sparsity, rigidity."""

from __future__ import annotations

import numpy as np
import torch
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from iclr25._checks import ArrayLike, as_tensor, check_int, check_range
from iclr25._contract import checked

__all__ = ["is_connected", "is_rigid", "num_undirected_edges", "rigidity_rank"]


def _edges(edge_index: ArrayLike, num_nodes: int) -> np.ndarray:
    ei = as_tensor(edge_index, "edge_index", ndim=2, nonempty=False)
    if ei.is_floating_point() or ei.dtype == torch.bool:
        raise TypeError(f"edge_index must be an integer tensor, got {ei.dtype}")
    if ei.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(ei.shape)}")
    e = ei.cpu().numpy().astype(np.int64)
    if e.size and (e.min() < 0 or e.max() >= num_nodes):
        raise ValueError(f"edge_index must index nodes 0..{num_nodes - 1}")
    e = np.sort(e, axis=0)
    e = e[:, e[0] != e[1]]
    return np.unique(e, axis=1) if e.size else e


@checked
def num_undirected_edges(edge_index: ArrayLike, num_nodes: int) -> int:
    """Number of distinct undirected edges (self-loops and both directions counted once)."""
    check_int(num_nodes, "num_nodes", 1)
    return int(_edges(edge_index, num_nodes).shape[1])


@checked
def is_connected(edge_index: ArrayLike, num_nodes: int) -> bool:
    """Whether the undirected graph on ``num_nodes`` nodes is connected (scipy csgraph)."""
    check_int(num_nodes, "num_nodes", 1)
    e = _edges(edge_index, num_nodes)
    adj = coo_matrix((np.ones(e.shape[1]), (e[0], e[1])), shape=(num_nodes, num_nodes))
    return connected_components(adj, directed=False)[0] == 1


@checked
def rigidity_rank(pos: ArrayLike, edge_index: ArrayLike, *, tol: float = 1e-8) -> int:
    """Rank of the rigidity matrix (rows ``p_i - p_j`` at i, ``p_j - p_i`` at j), by SVD.

    Singular values above ``tol`` times the largest count. A framework in 3-D with N >= 3
    non-collinear points is infinitesimally rigid iff the rank is ``3 N - 6``.
    """
    check_range(tol, "tol", 0.0, low_open=True)
    p = as_tensor(pos, "pos", ndim=2).detach().to("cpu", torch.float64)
    if p.shape[1] != 3:
        raise ValueError(f"pos must be (n, 3) coordinates, got shape {tuple(p.shape)}")
    n = len(p)
    e = torch.from_numpy(_edges(edge_index, n))
    if e.shape[1] == 0:
        return 0
    d = p[e[0]] - p[e[1]]
    m = torch.zeros(e.shape[1], n, 3, dtype=torch.float64)
    rows = torch.arange(e.shape[1])
    m[rows, e[0]] = d
    m[rows, e[1]] = -d
    s = torch.linalg.svdvals(m.reshape(e.shape[1], 3 * n))
    return int((s > tol * s[0]).sum())


@checked
def is_rigid(pos: ArrayLike, edge_index: ArrayLike, *, tol: float = 1e-8) -> bool:
    """Whether the framework is infinitesimally rigid: rigidity rank ``3 N - 6`` (N >= 3)."""
    n = len(as_tensor(pos, "pos", ndim=2))
    if n < 3:
        return num_undirected_edges(edge_index, n) == n * (n - 1) // 2
    return rigidity_rank(pos, edge_index, tol=tol) == 3 * n - 6
