"""Matérn kernels and the arc-cosine kernel of Neural Splines, as dense torch Gram matrices.

Both are closed forms in plain torch, so they run on CPU or GPU without KeOps or CuPy.
Distances come from ``torch.cdist``; the Matérn kernel depends on ``r = ||x - y||`` only.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import torch

from iclr25._checks import ArrayLike, as_tensor, check_choice, check_range
from iclr25._contract import checked

Nu = Literal[0.5, 1.5, 2.5, "inf"]
NUS = (0.5, 1.5, 2.5, math.inf)


def check_nu(nu: object) -> float:
    """``nu`` as a float in {0.5, 1.5, 2.5, inf}; ``"inf"`` is accepted for infinity."""
    if isinstance(nu, str) and nu.strip().lower() in ("inf", "infinity", "gaussian"):
        return math.inf
    if isinstance(nu, bool) or not isinstance(nu, (int, float)):
        raise TypeError(f"nu must be one of 0.5, 1.5, 2.5, inf; got {type(nu).__name__}")
    return float(check_choice(float(nu), "nu", NUS))


def _points(x: ArrayLike, name: str, dtype: torch.dtype | None = None,
            device: torch.device | None = None) -> torch.Tensor:
    t = as_tensor(x, name, ndim=2, device=device)
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating-point array, got {t.dtype}")
    return t.to(dtype=dtype or t.dtype)


def _pair(X: ArrayLike, Y: ArrayLike | None) -> tuple[torch.Tensor, torch.Tensor]:
    X = _points(X, "X")
    Y = X if Y is None else _points(Y, "Y", X.dtype, X.device)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must have the same number of columns, got "
                         f"{X.shape[1]} and {Y.shape[1]}")
    return X, Y


def matern_from_distance(r: torch.Tensor, nu: float, length_scale: float) -> torch.Tensor:
    """Matérn kernel of a distance tensor ``r``; overwrites ``r`` (a temporary) in place."""
    if nu == 0.5:
        return torch.exp(r.mul_(-1.0 / length_scale))
    if nu == 1.5:
        r.mul_(-math.sqrt(3.0) / length_scale)          # r <- -s
        k = torch.exp(r)
        return k.mul_(r.sub_(1.0).neg_())               # (1 + s) e^{-s}
    if nu == 2.5:
        r.mul_(math.sqrt(5.0) / length_scale)           # r <- s
        k = torch.exp(-r)
        poly = r.square().div_(3.0).add_(r).add_(1.0)   # 1 + s + s^2/3
        return k.mul_(poly)
    return torch.exp(r.square_().mul_(-0.5 / length_scale**2))


# Kernel entries per CPU evaluation block: two float64 buffers stay in L2/L3 (2 x 2 MB).
_CACHE_BLOCK = 2**18
_U32, _U64 = 2.0**-24, 2.0**-53          # unit roundoffs
# sup_s |k'(s)| and sup_s s |k'(s)| of each kernel in its scaled distance s (the error bound's
# slopes; a test checks them numerically). For inf, k(s) = exp(-s^2) with s = r / (sqrt 2 h).
_SLOPES = {0.5: (1.0, 1 / math.e), 1.5: (1 / math.e, 4 / math.e**2),
           2.5: (0.28, 0.6044), math.inf: (math.sqrt(2 / math.e), 2 / math.e)}


def _scale(nu: float, length_scale: float) -> float:
    """Factor taking coordinates to the kernel's scaled distance s (s^2 for nu = inf)."""
    return 1.0 / (math.sqrt(2.0) * length_scale) if nu == math.inf else (
        math.sqrt(2.0 * nu) / length_scale)


def single_error_bound(Q: torch.Tensor, C: torch.Tensor, alpha: torch.Tensor, nu: float,
                       length_scale: float) -> float:
    """Bound on ``|matern_apply(..., precision="single") - exact|`` at every query of Q.

    With u = 2^-24, rho the largest absolute scaled coordinate (``_scale * |Q|, |C|``) and d
    columns: rounding the scaled coordinates to float32 and forming differences, squares, sum
    and square root moves s by at most ``u (2 sqrt(d) rho + 4 s)`` (first order in u); the
    kernel then moves by at most ``L1 |ds|`` with the slope bounds ``L1 = sup |k'|`` and
    ``L2 = sup s |k'|`` (``_SLOPES``), and exp and the polynomial round by <= 8u. The float64
    product with alpha adds ``1.01 M 2^-53 sum|alpha|`` (each kernel value <= 1). So

        |error| <= (u (2 sqrt(d) rho L1 + 4 L2 + 8) + 1.01 M 2^-53) * sum_i |alpha_i|.

    Smooth kernels have large, cancelling alpha (sum|alpha| ~ 1e4-1e8 for a 1000-point cloud
    at nu >= 3/2, h = 0.5), so the bound decides where float32 is usable: mostly nu = 1/2.
    """
    rho = _scale(nu, length_scale) * max(float(Q.abs().max()), float(C.abs().max()))
    l1, l2 = _SLOPES[nu]
    eps_k = _U32 * (2.0 * math.sqrt(Q.shape[1]) * rho * l1 + 4.0 * l2 + 8.0)
    return (eps_k + 1.01 * len(C) * _U64) * float(alpha.abs().sum())


def _kernel_of_s2(r: torch.Tensor, e: torch.Tensor, nu: float) -> torch.Tensor:
    """e <- k from r = s^2 >= 0 (or r^2 / 2h^2 for nu = inf); r is overwritten."""
    if nu == math.inf:
        return torch.exp(r.neg_(), out=e)
    torch.exp(r.sqrt_().neg_(), out=e)                          # r <- -s, e = e^{-s}
    if nu == 1.5:
        e.addcmul_(e, r, value=-1.0)                            # (1 + s) e^{-s}
    elif nu == 2.5:
        e.mul_(r.div(3.0).sub_(1.0).mul_(r).add_(1.0))          # (1 + s + s^2/3) e^{-s}
    return e


_POOLS: dict[int, ThreadPoolExecutor] = {}
os.register_at_fork(after_in_child=_POOLS.clear)  # a forked child has none of their threads


def _split_rows(n: int, work: Callable[[int, int], None]) -> None:
    """work(lo, hi) over rows [0, n): split across torch's intra-op threads, each running
    single-threaded ops (no per-operation barriers, which spin under load)."""
    threads = torch.get_num_threads()
    if threads == 1 or n < 2 * threads:
        work(0, n)
        return
    cuts = [n * i // threads for i in range(threads + 1)]
    if threads not in _POOLS:   # kept: a fresh thread's first torch calls cost ~10 ms
        _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="matern")
    torch.set_num_threads(1)
    try:
        list(_POOLS[threads].map(work, cuts[:-1], cuts[1:]))
    finally:
        torch.set_num_threads(threads)


def matern_apply(Q: torch.Tensor, C: torch.Tensor, alpha: torch.Tensor, nu: float,
                 length_scale: float, max_rows: int, *,
                 precision: str = "double") -> torch.Tensor:
    """``matern_kernel(Q, C) @ alpha`` without the (m, M) matrix: distance, kernel and product
    fused block by block over query rows, in reused buffers. On CPU the rows are split across
    torch's threads (``torch.get_num_threads()``), a block holds ~2^18 entries
    (cache-resident: ~3x faster than 2^24-entry blocks); on other devices ``max_rows`` rows.

    ``precision="double"``: distances use cdist's own Gram form ``[-2q, |q|^2, 1] . [c, 1,
    |c|^2]`` (one product with 5 columns), on coordinates pre-scaled by ``sqrt(2 nu) / h`` so
    the product gives ``s^2`` directly; entries where it cancels (s^2 < 1e-4 of the largest
    squared norm, e.g. a query on a centre) are recomputed from differences, so they are
    exact, unlike cdist's.

    ``precision="single"`` (CPU): distances from float32 coordinate differences, the kernel
    in float32, the product with the (float64) alpha accumulated in alpha's dtype; about 2x
    faster, with ``|error| <= single_error_bound(Q, C, alpha, nu, length_scale)`` (see there).

    Args:
        Q: (m, d) validated queries. C: (M, d) centres. alpha: (M,) weights, same dtype.
        nu: one of 0.5, 1.5, 2.5, inf. length_scale: h > 0. max_rows: rows per block cap.
        precision: ``"double"`` or ``"single"``.

    Returns:
        (m,) tensor.
    """
    M = len(C)
    scale = _scale(nu, length_scale)
    q, c = Q * scale, C * scale
    cpu = Q.device.type == "cpu"
    rows = min(max_rows if not cpu else min(max_rows, max(1, _CACHE_BLOCK // M)), len(Q))
    out = torch.empty(len(Q), dtype=alpha.dtype, device=alpha.device)
    if precision == "single":
        work = _single_blocks(q.float(), c.float().T.contiguous(), alpha, nu, rows, out)
    else:
        work = _double_blocks(q, c, alpha, nu, rows, out)
    if cpu:
        _split_rows(len(Q), work)
    else:
        work(0, len(Q))
    return out


def _double_blocks(q: torch.Tensor, c: torch.Tensor, alpha: torch.Tensor, nu: float, rows: int,
                   out: torch.Tensor) -> Callable[[int, int], None]:
    """work(lo, hi): float64 (input dtype) Gram-form evaluation of rows [lo, hi) into out."""
    M = len(c)
    qa = torch.cat([-2.0 * q, (q * q).sum(1, keepdim=True), torch.ones_like(q[:, :1])], 1)
    ca = torch.cat([c, torch.ones_like(c[:, :1]), (c * c).sum(1, keepdim=True)], 1).T
    # Below this the Gram form has cancelled away digits (error ~eps (|q|^2 + |c|^2)):
    # such entries (a query on a centre) are recomputed from differences. Every other
    # entry is >= tiny > 0, so no clamp is needed before the square root.
    tiny = 1e-4 * float(qa[:, -2].max() + ca[-1].max())

    def work(lo: int, hi: int) -> None:
        buf = torch.empty(2, rows * M, dtype=q.dtype, device=q.device)
        for s in range(lo, hi, rows):
            b = min(rows, hi - s)
            r, e = buf[0, :b * M].view(b, M), buf[1, :b * M].view(b, M)
            torch.mm(qa[s:s + b], ca, out=r)            # s^2 (or r^2 / 2h^2 for inf)
            near = r.amin(1)
            if float(near.min()) < tiny:  # few rows (a query on a centre): search only them
                hit = (near < tiny).nonzero()[:, 0]
                i, j = (r[hit] < tiny).nonzero(as_tuple=True)
                i = hit[i]
                r[i, j] = (q[s + i] - c[j]).square().sum(1)
            torch.mv(_kernel_of_s2(r, e, nu), alpha, out=out[s:s + b])
    return work


def _single_blocks(q: torch.Tensor, ct: torch.Tensor, alpha: torch.Tensor, nu: float,
                   rows: int, out: torch.Tensor) -> Callable[[int, int], None]:
    """work(lo, hi): float32 evaluation of rows [lo, hi) of (m, d) q against (d, M) ct."""
    M = ct.shape[1]

    def work(lo: int, hi: int) -> None:
        buf = torch.empty(2, rows * M, dtype=torch.float32, device=q.device)
        wide = torch.empty(rows * M, dtype=alpha.dtype, device=q.device)
        for s in range(lo, hi, rows):
            b = min(rows, hi - s)
            r, t = buf[0, :b * M].view(b, M), buf[1, :b * M].view(b, M)
            torch.sub(q[s:s + b, :1], ct[:1], out=r).square_()
            for k in range(1, len(ct)):
                r.addcmul_(torch.sub(q[s:s + b, k:k + 1], ct[k:k + 1], out=t), t)
            w = wide[:b * M].view(b, M)
            torch.mv(w.copy_(_kernel_of_s2(r, t, nu)), alpha, out=out[s:s + b])
    return work


@checked
def matern_kernel(X: ArrayLike, Y: ArrayLike | None = None, *, nu: float | str = 1.5,
                  length_scale: float = 0.5) -> torch.Tensor:
    """Matérn Gram matrix ``k(x_i, y_j)`` of bandwidth ``h = length_scale``.

    With ``r = ||x - y||`` and ``s = sqrt(2 nu) r / h``: nu = 1/2 gives ``exp(-r/h)``
    (Laplace), 3/2 gives ``(1 + s) exp(-s)``, 5/2 gives ``(1 + s + s^2/3) exp(-s)`` and
    inf gives ``exp(-r^2 / (2 h^2))`` (Gaussian). Identical to scikit-learn's
    ``Matern(length_scale=h, nu=nu)`` (Weiherer & Egger 2025, §3, Eq. 4).

    Args:
        X: (n, d) points.
        Y: (m, d) points; ``None`` means ``X``.
        nu: smoothness, one of 0.5, 1.5, 2.5, ``inf`` (or ``"inf"``).
        length_scale: bandwidth h > 0; smaller keeps finer detail.

    Returns:
        (n, m) tensor on X's device and dtype.

    Raises:
        TypeError: integer/bool points.
        ValueError: wrong shapes, NaN/inf, unknown nu, length_scale <= 0.

    Examples:
        >>> import torch
        >>> K = matern_kernel(torch.zeros(2, 3, dtype=torch.float64), nu=1.5)
        >>> K.tolist()
        [[1.0, 1.0], [1.0, 1.0]]
    """
    nu = check_nu(nu)
    h = check_range(length_scale, "length_scale", 0.0, low_open=True)
    X, Y = _pair(X, Y)
    return matern_from_distance(torch.cdist(X, Y), nu, h)


def _homogeneous_units(X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``[x, 1] / |[x, 1]|`` and ``|[x, 1]|`` (as a column) of each row."""
    Xh = torch.cat([X, torch.ones_like(X[:, :1])], dim=1)
    nx = Xh.norm(dim=1, keepdim=True)
    return Xh / nx, nx


def _arccos_of_units(ux: torch.Tensor, nx: torch.Tensor, uy: torch.Tensor, neg_uy: torch.Tensor,
                     ny_row: torch.Tensor, variance: float) -> torch.Tensor:
    # theta = 2 atan2(| |y|x - |x|y |, | |y|x + |x|y |) = 2 atan2(a, b), a = |ux - uy|,
    # b = |ux + uy|; then cos theta = (b² - a²) / (a² + b²) and sin theta = 2ab / (a² + b²)
    # (no cos/sin calls: they were 40% of the evaluation)
    a, b = torch.cdist(ux, uy), torch.cdist(ux, neg_uy)
    pi_minus = torch.atan2(a, b).mul_(-2.0).add_(torch.pi)          # pi - theta
    sin2 = a * b                                                    # (sin theta) (a² + b²) / 2
    a.square_()
    b.square_()
    inv = (a + b).reciprocal_()
    k = b.sub_(a).mul_(inv).mul_(pi_minus).mul_(1.0 + variance)     # (pi - theta) cos theta ...
    k.add_(sin2.mul_(inv).mul_(2.0)).mul_(nx * ny_row).div_(torch.pi)
    return k


def arccos_from_points(X: torch.Tensor, Y: torch.Tensor, variance: float) -> torch.Tensor:
    """Arc-cosine kernel of already validated (n, d) and (m, d) tensors."""
    ux, nx = _homogeneous_units(X)
    uy, ny = _homogeneous_units(Y)
    return _arccos_of_units(ux, nx, uy, -uy, ny.T, variance)


def arccos_apply(Q: torch.Tensor, C: torch.Tensor, alpha: torch.Tensor, variance: float,
                 max_rows: int) -> torch.Tensor:
    """``arccos_from_points(Q, C, variance) @ alpha`` in blocks of query rows: on CPU of
    ~2^18 entries (cache-resident; the (m, M) temporaries of one big block stream through
    memory seven times), elsewhere of ``max_rows`` rows. The centres' units are made once.
    Each entry's value does not depend on the block (up to cdist's product and the vectorised
    loops' tails, ~1e-16 relative)."""
    M = len(C)
    cpu = Q.device.type == "cpu"
    rows = max(1, min(max_rows, _CACHE_BLOCK // M)) if cpu else max_rows
    uy, ny = _homogeneous_units(C)
    neg_uy, ny_row = -uy, ny.T
    out = torch.empty(len(Q), dtype=alpha.dtype, device=alpha.device)
    for s in range(0, len(Q), rows):
        ux, nx = _homogeneous_units(Q[s:s + rows])
        torch.mv(_arccos_of_units(ux, nx, uy, neg_uy, ny_row, variance), alpha,
                 out=out[s:s + rows])
    return out


@checked
def arccos_kernel(X: ArrayLike, Y: ArrayLike | None = None, *, variance: float = 1.0,
                  ) -> torch.Tensor:
    """First-order arc-cosine kernel of Neural Splines (Williams et al., CVPR 2021).

    On homogeneous inputs ``x~ = [x, 1]``, with the angle computed stably as
    ``theta = 2 atan2(|(|y~| x~ - |x~| y~)|, |(|y~| x~ + |x~| y~)|)``:
    ``k = |x~| |y~| (sin theta + (1 + variance) (pi - theta) cos theta) / pi``.
    The official version is a CUDA-only CuPy kernel; this one is torch and runs anywhere.

    Args:
        X: (n, d) points.
        Y: (m, d) points; ``None`` means ``X``.
        variance: the outer-layer variance sigma^2 > 0 (1.0 as in the Matérn paper's code).

    Returns:
        (n, m) tensor on X's device and dtype.

    Raises:
        TypeError: integer/bool points.
        ValueError: wrong shapes, NaN/inf, variance <= 0.
    """
    v = check_range(variance, "variance", 0.0, low_open=True)
    X, Y = _pair(X, Y)
    return arccos_from_points(X, Y, v)
