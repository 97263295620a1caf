"""SCHull edge features: chord, angles and torsions on the unit sphere, radii (paper §3.3)."""

from __future__ import annotations

import numpy as np
import torch

from iclr25._checks import ArrayLike, as_tensor, check_range
from iclr25._contract import checked
from iclr25.schull.graph import check_pos_batch, unit_directions

__all__ = ["reference_neighbours", "schull_features"]


def reference_neighbours(edge_index: torch.Tensor, chord: torch.Tensor,
                         num_nodes: int) -> torch.Tensor:
    """The three nearest neighbours of each node by chord length, ties by index; -1 pads.

    Returns:
        (N, 3) int64 on ``edge_index``'s device.
    """
    row = edge_index[0].cpu().numpy()
    col = edge_index[1].cpu().numpy()
    d = chord.detach().cpu().double().numpy()
    order = np.lexsort((col, d, row))
    r = row[order]
    first = np.searchsorted(r, np.arange(num_nodes))
    rank = np.arange(len(r)) - first[r]
    keep = rank < 3
    out = np.full((num_nodes, 3), -1, dtype=np.int64)
    out[r[keep], rank[keep]] = col[order][keep]
    return torch.from_numpy(out).to(edge_index.device)


def _other_two(k: torch.Tensor, exclude: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The first two of each row of ``k`` (E, 3) that differ from ``exclude`` (E,)."""
    hit0 = k[:, 0] == exclude
    hit1 = k[:, 1] == exclude
    a = torch.where(hit0, k[:, 1], k[:, 0])
    b = torch.where(hit0 | hit1, k[:, 2], k[:, 1])
    return a, b


def _angle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    cr = torch.linalg.cross(a, b)
    s = cr.pow(2).sum(-1).clamp(min=1e-30).sqrt()
    return torch.atan2(s, (a * b).sum(-1))


def _dihedral(axis: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Signed angle about ``axis`` from the plane (axis, a) to the plane (axis, b)."""
    n1 = torch.linalg.cross(axis, a)
    n2 = torch.linalg.cross(axis, b)
    ax = axis / axis.pow(2).sum(-1, keepdim=True).clamp(min=1e-30).sqrt()
    y = (torch.linalg.cross(n1, n2) * ax).sum(-1)
    x = (n1 * n2).sum(-1)
    bad = (x.abs() + y.abs()) < 1e-15
    return torch.where(bad, torch.zeros_like(x),
                       torch.atan2(torch.where(bad, torch.zeros_like(y), y),
                                   torch.where(bad, torch.ones_like(x), x)))


@checked
def schull_features(pos: ArrayLike, edge_index: ArrayLike, batch: ArrayLike | None = None, *,
                    tol: float = 1e-2) -> torch.Tensor:
    """Invariant features of SCHull edges: ``[chord, θ, φ, τ0, τ1, r_i, r_j]`` (E, 7).

    For edge ``(i, j) = edge_index[:, e]``, with ``u`` the unit directions from the centroid
    and ``v = u_j - u_i``: ``chord = |v|``; ``θ`` the angle between ``v`` and ``u_a - u_i``;
    ``φ`` the torsion about ``v`` from ``u_a - u_i`` to ``u_b - u_i``; ``τ0`` (``τ1``) the
    torsion about ``v`` from ``u_c - u_j`` to ``u_a - u_i`` (``u_d - u_j`` to ``u_b - u_i``),
    where ``a, b`` (``c, d``) are the two nearest graph neighbours of ``i`` (``j``) other
    than ``j`` (``i``) by chord, ties by index (paper §3.3; the official code's
    ``get_angle_torsion``). Torsions are signed, in (-π, π]; a missing reference gives 0.
    ``r_i, r_j`` are distances to the centroid. Everything is invariant to rotation and
    translation (chord and angles also to scaling) and differentiable in ``pos``, so forces
    flow through the hull features by autograd.

    Args:
        pos: (N, 3) float positions.
        edge_index: (2, E) int64 graph (usually :func:`schull_graph`'s).
        batch: optional (N,) sorted structure index of each atom.
        tol: atoms this close to the centroid have no direction (``u = 0``).

    Returns:
        (E, 7) tensor in ``pos``'s dtype and device.

    Raises:
        TypeError, ValueError: bad ``pos``, ``batch`` or ``edge_index`` (named).
    """
    check_range(tol, "tol", 0.0, low_open=True)
    p, b = check_pos_batch(pos, batch, duplicates=False)
    ei = as_tensor(edge_index, "edge_index", ndim=2, nonempty=False)
    if ei.is_floating_point() or ei.dtype == torch.bool:
        raise TypeError(f"edge_index must be an integer tensor, got {ei.dtype}")
    if ei.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(ei.shape)}")
    ei = ei.to(device=p.device, dtype=torch.int64)
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= len(p)):
        raise ValueError(f"edge_index must index rows of pos (0..{len(p) - 1})")
    u, r = unit_directions(p, b, tol=float(tol))
    i, j = ei[0], ei[1]
    v = u[j] - u[i]
    chord = v.norm(dim=1)
    k = reference_neighbours(ei, chord, len(p))
    a, bb = _other_two(k[i], j)
    c, d = _other_two(k[j], i)

    def rel(ref: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
        return u[ref.clamp(min=0)] - u[base]

    wa, wb, wc, wd = rel(a, i), rel(bb, i), rel(c, j), rel(d, j)
    zero = torch.zeros_like(chord)
    theta = torch.where(a >= 0, _angle(v, wa), zero)
    phi = torch.where((a >= 0) & (bb >= 0), _dihedral(v, wa, wb), zero)
    tau0 = torch.where((a >= 0) & (c >= 0), _dihedral(v, wc, wa), zero)
    tau1 = torch.where((bb >= 0) & (d >= 0), _dihedral(v, wd, wb), zero)
    return torch.stack([chord, theta, phi, tau0, tau1, r[i], r[j]], dim=1)
