"""SCHull graph construction: the convex hull of the atoms' directions from the centroid.

Wang et al., "A Theoretically-Principled Sparse, Connected, and Rigid Graph Representation of
Molecules", ICLR 2025, §3.2.
The hull of points on the unit sphere has every point as a vertex, so its 1-skeleton spans
all atoms, is 3-connected (Balinski) with at most 3N - 6 edges (Euler) and, triangulated,
is rigid (Cauchy/Gluck).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import ConvexHull, cKDTree

from iclr25._checks import ArrayLike, as_tensor, check_batch, check_range
from iclr25._contract import checked

__all__ = ["SCHullGraph", "check_pos_batch", "schull_graph", "unit_directions"]


class SCHullGraph(NamedTuple):
    """The SCHull graph of one or more structures.

    Attributes:
        edge_index: (2, E) int64, both directions of every undirected edge, sorted by row then
            column.
        edge_attr: (E, 4) ``[|u_j - u_i|, u_j - u_i]`` with ``(i, j) = edge_index[:, e]`` and
            ``u`` the atom's unit direction from its structure's centroid (zero for atoms
            within ``tol`` of the centroid).
        radial: (N,) distance of each atom to its structure's centroid.
    """

    edge_index: torch.Tensor
    edge_attr: torch.Tensor
    radial: torch.Tensor


def check_pos_batch(pos: ArrayLike, batch: ArrayLike | None = None, *, name: str = "pos",
                    duplicates: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Validate ``pos`` (N, 3) float and ``batch`` (N,) sorted non-negative integers.

    Raises:
        TypeError: integer/bool ``pos``; non-integer ``batch``.
        ValueError: wrong shape, empty, NaN/inf, duplicate points in one structure (named by
            row), ``batch`` of the wrong length, negative or unsorted.
    """
    if isinstance(pos, torch.Tensor) or isinstance(pos, np.ndarray):
        kind = pos.dtype
        floating = (pos.is_floating_point() if isinstance(pos, torch.Tensor)
                    else np.issubdtype(pos.dtype, np.floating))
        if not floating:
            raise TypeError(f"{name} must hold floating-point coordinates, got {kind}")
    p = as_tensor(pos, name, ndim=2)
    if not p.is_floating_point():
        raise TypeError(f"{name} must hold floating-point coordinates, got {p.dtype}")
    if p.shape[1] != 3:
        raise ValueError(f"{name} must have shape (N, 3), got {tuple(p.shape)}")
    b = None
    if batch is not None:
        b = as_tensor(batch, "batch", ndim=1, nonempty=False)
        if b.is_floating_point() or b.dtype == torch.bool:
            raise TypeError(f"batch must be an integer tensor, got {b.dtype}")
        if len(b) != len(p):
            raise ValueError(f"batch must have one entry per row of {name} ({len(p)}), "
                             f"got {len(b)}")
        b = b.to(torch.int64)
        if int(b.min()) < 0:
            raise ValueError(f"batch must be >= 0, got minimum {int(b.min())}")
        if len(b) > 1 and bool((b[1:] < b[:-1]).any()):
            raise ValueError("batch must be sorted (non-decreasing), as torch-geometric makes it")
    if duplicates:
        x = p.detach().cpu().double().numpy()
        g = np.zeros(len(x)) if b is None else b.cpu().numpy().astype(np.float64)
        keys = np.column_stack([g, x])
        order = np.lexsort(keys.T[::-1])
        same = np.all(keys[order[1:]] == keys[order[:-1]], axis=1)
        if same.any():
            k = int(np.flatnonzero(same)[0])
            a, c = sorted((int(order[k]), int(order[k + 1])))
            raise ValueError(f"{name} has duplicate points: rows {a} and {c} are equal "
                             f"({int(same.sum())} duplicate pair(s) in all)")
    return p, b


@checked
def unit_directions(pos: torch.Tensor, batch: torch.Tensor | None = None, *,
                    tol: float = 1e-2) -> tuple[torch.Tensor, torch.Tensor]:
    """Unit direction ``u`` (N, 3) and distance ``r`` (N,) of each atom from its centroid.

    Differentiable in ``pos``; atoms within ``tol`` of the centroid get ``u = 0``.
    """
    check_batch(pos, "pos", ndim=2, width=3)
    if batch is None:
        centre = pos.mean(0, keepdim=True).expand_as(pos)
    else:
        n = int(batch.max()) + 1
        s = torch.zeros(n, 3, dtype=pos.dtype, device=pos.device).index_add_(0, batch, pos)
        c = torch.bincount(batch, minlength=n).clamp(min=1).to(pos.dtype)
        centre = (s / c[:, None])[batch]
    x = pos - centre
    r = x.norm(dim=1)
    far = r > tol
    u = torch.where(far[:, None], x / torch.where(far, r, torch.ones_like(r))[:, None],
                    torch.zeros_like(x))
    return u, r


def _edges_numpy(x: np.ndarray, batch: np.ndarray, tol: float, merge_tol: float) -> np.ndarray:
    """SCHull edges (2, E) as int64 numpy: both directions, sorted by row then column."""
    n = len(x)
    ng = int(batch[-1]) + 1
    cnt = np.bincount(batch, minlength=ng)
    cen = np.stack([np.bincount(batch, x[:, d], minlength=ng) for d in range(3)], 1)
    cen /= np.maximum(cnt, 1)[:, None]
    x = x - cen[batch]
    r = np.linalg.norm(x, axis=1)
    far = np.flatnonzero(r > tol)
    near = np.flatnonzero(r <= tol)
    pieces: list[np.ndarray] = []
    if len(far):  # one ray per direction; its outermost atom takes the hull edges
        u = x[far] / r[far, None]
        reps, pieces = _ray_representatives(u, r[far], far, batch, merge_tol)
        pieces += _hull_edges(far[reps], u[reps], batch, ng)
    # atoms on the centroid have no direction: link each to its three nearest atoms
    for a in near:
        ga = batch[a]
        lo = np.searchsorted(batch, ga)
        hi = np.searchsorted(batch, ga, side="right")
        d = np.linalg.norm(x[lo:hi] - x[a], axis=1)
        d[a - lo] = np.inf
        nb = np.argsort(d, kind="stable")[: min(3, hi - lo - 1)] + lo
        pieces.append(np.stack([np.full(len(nb), a), nb]))
    if not pieces:
        return np.zeros((2, 0), dtype=np.int64)
    e = np.concatenate(pieces, axis=1).astype(np.int64)
    e = e[:, e[0] != e[1]]
    key = np.sort(np.concatenate([e[0] * n + e[1], e[1] * n + e[0]]))
    if len(key):
        key = key[np.r_[True, key[1:] != key[:-1]]]
    return np.stack([key // n, key % n])


def _ray_representatives(u: np.ndarray, r: np.ndarray, far: np.ndarray, batch: np.ndarray,
                         merge_tol: float) -> tuple[np.ndarray, list[np.ndarray]]:
    """Positions in ``far`` of each ray's outermost atom, ordered by structure, and the edges
    chaining the atoms that share a ray by radius.

    A ray is the set of directions ``u`` within ``merge_tol`` of each other (structures are
    kept apart by shifting their directions by 4).
    """
    nf = len(far)
    keyed = u.copy()
    keyed[:, 0] += 4.0 * batch[far]
    pairs = cKDTree(keyed).query_pairs(merge_tol, output_type="ndarray")
    if len(pairs):
        adj = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(nf, nf))
        _, ray = connected_components(adj, directed=False)
    else:
        ray = np.arange(nf)
    # within a ray: chain atoms by radius; the outermost one takes the hull edges
    order = np.lexsort((-r, ray))
    same = ray[order[1:]] == ray[order[:-1]]
    chains = [np.stack([far[order[:-1][same]], far[order[1:][same]]])] if same.any() else []
    first = np.ones(nf, dtype=bool)
    first[1:] = ~same
    rep_local = order[first]
    return rep_local[np.argsort(batch[far[rep_local]], kind="stable")], chains


def _hull_edges(reps: np.ndarray, ur: np.ndarray, batch: np.ndarray,
                ng: int) -> list[np.ndarray]:
    """Edges between the ray representatives ``reps`` (atoms, sorted by structure) of each
    structure, from their unit directions ``ur``: one edge, a triangle or the convex hull."""
    pieces: list[np.ndarray] = []
    gb = batch[reps]
    m = np.bincount(gb, minlength=ng)
    start = np.concatenate([[0], np.cumsum(m)[:-1]])
    # two directions: one edge; three: a triangle; four or more: the hull (QJ: triangles)
    g2 = np.flatnonzero(m == 2)
    if len(g2):
        pieces.append(np.stack([reps[start[g2]], reps[start[g2] + 1]]))
    g3 = np.flatnonzero(m == 3)
    if len(g3):
        s = start[g3]
        pieces.append(np.stack([reps[np.r_[s, s, s + 1]], reps[np.r_[s + 1, s + 2, s + 2]]]))
    tris = []
    for g in np.flatnonzero(m >= 4):
        lo, k = start[g], m[g]
        simp = ConvexHull(ur[lo:lo + k], qhull_options="QJ").simplices
        tris.append(simp + lo)
    if tris:
        tl = np.concatenate(tris)
        t = reps[tl]
        pieces.append(np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [0, 2]]]).T)
        seen = np.bincount(tl.ravel(), minlength=len(reps)) > 0
        # a direction qhull left out (never seen on sphere points): its 3 nearest ones
        for v in np.flatnonzero(~seen & (m[gb] >= 4)):
            lo, k = start[gb[v]], m[gb[v]]
            d = np.linalg.norm(ur[lo:lo + k] - ur[v], axis=1)
            d[v - lo] = np.inf
            nb = np.argsort(d, kind="stable")[:3] + lo
            pieces.append(np.stack([np.full(len(nb), reps[v]), reps[nb]]))
    return pieces


@checked
def schull_graph(pos: ArrayLike, batch: ArrayLike | None = None, *, tol: float = 1e-2,
                 merge_tol: float = 1e-6) -> SCHullGraph:
    """Build the SCHull graph of a structure (or a batch of them) from atom positions.

    Steps (paper §3.2): centre each structure at its centroid, project the atoms to the unit
    sphere, merge directions closer than ``merge_tol``, take the convex hull of the
    directions (qhull with ``QJ``, so facets are triangles and planar input works; one to
    three directions are joined by hand) and map its edges back to the atoms.

    Deviations from the official code, so the graph always spans, connects and stays sparse:
    atoms sharing one ray are chained by radius and only the outermost takes the hull edges
    (the official all-to-all links can exceed 3N - 6); atoms within ``tol`` of the centroid
    are linked to their three nearest atoms (the official code drops them).

    Args:
        pos: (N, 3) float positions (tensor, numpy array or list).
        batch: optional (N,) sorted non-negative integers: the structure of each atom.
        tol: atoms closer than this to their centroid (units of ``pos``) have no direction.
        merge_tol: directions closer than this (chord on the unit sphere) share a ray.

    Returns:
        :class:`SCHullGraph` ``(edge_index (2, E) int64, edge_attr (E, 4), radial (N,))`` on
        ``pos``'s device; ``edge_attr`` and ``radial`` in ``pos``'s dtype, differentiable.
        Each structure has at most ``3 N - 6`` undirected edges (N >= 3) and is connected.

    Raises:
        TypeError: integer ``pos``; non-integer ``batch``.
        ValueError: ``pos`` not (N, 3), empty, NaN/inf or with duplicate points; ``batch`` of
            the wrong length, negative or unsorted; ``tol <= 0``; ``merge_tol < 0``.

    Examples:
        >>> import torch
        >>> octahedron = torch.tensor([[1., 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0],
        ...                            [0, 0, 1], [0, 0, -1]])
        >>> g = schull_graph(octahedron)
        >>> g.edge_index.shape    # 12 undirected edges, both directions
        torch.Size([2, 24])
    """
    check_range(tol, "tol", 0.0, low_open=True)
    check_range(merge_tol, "merge_tol", 0.0)
    p, b = check_pos_batch(pos, batch)
    x = p.detach().to("cpu", torch.float64).numpy()
    bn = np.zeros(len(x), dtype=np.int64) if b is None else b.cpu().numpy()
    edge_index = torch.from_numpy(_edges_numpy(x, bn, float(tol), float(merge_tol)))
    edge_index = edge_index.to(p.device)
    u, r = unit_directions(p, b, tol=float(tol))
    v = u[edge_index[1]] - u[edge_index[0]]
    edge_attr = torch.cat([v.norm(dim=1, keepdim=True), v], dim=1)
    return SCHullGraph(edge_index, edge_attr, r)
