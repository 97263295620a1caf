"""Analytic test shapes: area-uniform oriented samples with exact inside/outside.

A bumpy sphere (bumps of 20 % of the radius, so kernels differ), a thin torus and a union of
three spheres. Occupancy is analytic, so no mesh library (and no ``rtree``) is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch

from iclr25._checks import ArrayLike, as_tensor, check_choice, check_int, resolve_seed
from iclr25._contract import checked

ShapeName = Literal["bumpy_sphere", "torus", "spheres"]

BUMP_R0, BUMP_AMP, BUMP_FREQ = 0.3, 0.06, 6
TORUS_R, TORUS_r = 0.3, 0.05
BUMP_W_MAX = 0.70   # > max of dA / (sin θ dθ dφ) = 0.6542 (dense 3001² grid), for rejection
SPHERES = ((-0.15, 0.0, 0.0, 0.2), (0.17, 0.0, 0.0, 0.17), (0.0, 0.14, 0.08, 0.14))


def _bumpy_r(theta: torch.Tensor, phi: torch.Tensor) -> torch.Tensor:
    return BUMP_R0 + BUMP_AMP * torch.sin(BUMP_FREQ * theta) * torch.cos(BUMP_FREQ * phi)


def _bumpy_surface(theta: torch.Tensor, phi: torch.Tensor):
    """Point, (unnormalised) outward normal and area element / sin(theta) at (theta, phi)."""
    st, ct, sp, cp = theta.sin(), theta.cos(), phi.sin(), phi.cos()
    u = torch.stack([st * cp, st * sp, ct], 1)
    u_t = torch.stack([ct * cp, ct * sp, -st], 1)
    u_p = torch.stack([-sp, cp, torch.zeros_like(sp)], 1)      # d u / d phi, divided by sin t
    r = _bumpy_r(theta, phi)
    k = BUMP_AMP * BUMP_FREQ
    r_t = k * torch.cos(BUMP_FREQ * theta) * torch.cos(BUMP_FREQ * phi)
    r_p = -k * torch.sin(BUMP_FREQ * theta) * torch.sin(BUMP_FREQ * phi)
    p_t = r_t[:, None] * u + r[:, None] * u_t
    # p_phi / sin(theta): bounded, since r_p carries a factor sin(6 theta)
    p_p = (r_p / st.clamp_min(1e-12))[:, None] * u + r[:, None] * u_p
    nrm = torch.linalg.cross(p_t, p_p)
    return r[:, None] * u, nrm, nrm.norm(dim=1)


def _bumpy_inside(q: torch.Tensor) -> torch.Tensor:
    rho = q.norm(dim=1)
    theta = torch.acos((q[:, 2] / rho.clamp_min(1e-300)).clamp(-1, 1))
    phi = torch.atan2(q[:, 1], q[:, 0])
    return rho < _bumpy_r(theta, phi)


def _torus_inside(q: torch.Tensor) -> torch.Tensor:
    return (q[:, :2].norm(dim=1) - TORUS_R) ** 2 + q[:, 2] ** 2 < TORUS_r**2


def _spheres_inside(q: torch.Tensor) -> torch.Tensor:
    s = torch.tensor(SPHERES, dtype=q.dtype, device=q.device)
    return ((q[:, None, :] - s[None, :, :3]).norm(dim=2) < s[:, 3]).any(dim=1)


INSIDE = {"bumpy_sphere": _bumpy_inside, "torus": _torus_inside, "spheres": _spheres_inside}


def _sample(name: str, n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Rejection-sample n area-uniform points with unit outward normals (float64, CPU)."""
    pts, nrms, have = [], [], 0
    f64 = torch.float64
    while have < n:
        m = 4 * (n - have) + 64
        if name == "bumpy_sphere":
            z = torch.rand(m, generator=g, dtype=f64) * 2 - 1          # uniform on the sphere
            theta, phi = torch.acos(z), torch.rand(m, generator=g, dtype=f64) * 2 * torch.pi
            p, nr, w = _bumpy_surface(theta, phi)
            keep = torch.rand(m, generator=g, dtype=f64) * BUMP_W_MAX < w
            nr = nr / nr.norm(dim=1, keepdim=True)
        elif name == "torus":
            u = torch.rand(m, generator=g, dtype=f64) * 2 * torch.pi
            v = torch.rand(m, generator=g, dtype=f64) * 2 * torch.pi
            w = TORUS_R + TORUS_r * v.cos()
            keep = torch.rand(m, generator=g, dtype=f64) * (TORUS_R + TORUS_r) < w
            nr = torch.stack([v.cos() * u.cos(), v.cos() * u.sin(), v.sin()], 1)
            p = torch.stack([w * u.cos(), w * u.sin(), TORUS_r * v.sin()], 1)
        else:
            s = torch.tensor(SPHERES, dtype=f64)
            idx = torch.multinomial(s[:, 3] ** 2, m, replacement=True, generator=g)
            nr = torch.randn(m, 3, generator=g, dtype=f64)
            nr = nr / nr.norm(dim=1, keepdim=True)
            p = s[idx, :3] + s[idx, 3:] * nr
            d = (p[:, None, :] - s[None, :, :3]).norm(dim=2) < s[:, 3] - 1e-12
            keep = ~d.any(dim=1)            # drop points inside another sphere
        pts.append(p[keep])
        nrms.append(nr[keep])
        have += int(keep.sum())
    return torch.cat(pts)[:n], torch.cat(nrms)[:n]


@checked
def make_shape(
    name: ShapeName, n_points: int, *, seed: int | torch.Generator | None = None,
    dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, torch.Tensor, Callable[[object], torch.Tensor]]:
    """Area-uniform oriented samples of an analytic shape and its exact occupancy.

    Shapes: ``"bumpy_sphere"`` (r = 0.3 + 0.06 sin 6θ cos 6φ), ``"torus"`` (R = 0.3,
    r = 0.05), ``"spheres"`` (three overlapping spheres, unioned). All fit in [-0.4, 0.4]^3.

    Args:
        name: shape name.
        n_points: number of samples (>= 1).
        seed: int, ``torch.Generator`` or ``None``.
        dtype, device: of the returned tensors.

    Returns:
        ``(points, normals, inside)``: (n, 3) points, (n, 3) unit outward normals, and
        ``inside(Q) -> (m,) bool``, True strictly inside the shape.

    Examples:
        >>> pts, nrm, inside = make_shape("torus", 100, seed=0)
        >>> pts.shape, bool(inside([[0.3, 0.0, 0.0]])[0])
        (torch.Size([100, 3]), True)
    """
    check_choice(name, "name", ShapeName)
    n = check_int(n_points, "n_points", 1)
    g = resolve_seed(seed)
    p, nr = _sample(name, n, g)
    fn = INSIDE[name]

    def inside(Q: ArrayLike) -> torch.Tensor:
        q = as_tensor(Q, "Q", ndim=2)
        if q.shape[1] != 3:
            raise ValueError(f"Q must have 3 columns, got shape {tuple(q.shape)}")
        return fn(q.to(torch.float64))

    return p.to(device=device, dtype=dtype), nr.to(device=device, dtype=dtype), inside
