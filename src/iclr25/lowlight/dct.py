"""Orthonormal 2-D DCT and the frequency bands of the illumination prior (notes §2.2)."""

from __future__ import annotations

import math

import torch

from iclr25._checks import as_tensor, resolve_seed

__all__ = ["dct_2d", "frequency_bands", "idct_2d"]


def _dct_matrix(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """(n, n) orthonormal DCT-II matrix C: ``C @ v`` = ``scipy.fft.dct(v, norm="ortho")``."""
    k = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(n, dtype=torch.float64)[None]
    c = torch.cos(math.pi * (2 * i + 1) * k / (2 * n)) * math.sqrt(2.0 / n)
    c[0] /= math.sqrt(2.0)
    return c.to(device=device, dtype=dtype)


def _float(x: object, name: str) -> torch.Tensor:
    t = as_tensor(x, name)
    if t.ndim < 2:
        raise ValueError(f"{name} must have at least 2 dims (..., H, W), got {tuple(t.shape)}")
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {t.dtype}")
    return t


def dct_2d(x: object) -> torch.Tensor:
    """Orthonormal DCT-II over the last two dims (``scipy.fft.dctn(norm="ortho", axes=(-2, -1))``).

    Args:
        x: (..., H, W) float tensor.

    Returns:
        (..., H, W) coefficients, same dtype and device.
    """
    t = _float(x, "x")
    ch = _dct_matrix(t.shape[-2], t.dtype, t.device)
    cw = _dct_matrix(t.shape[-1], t.dtype, t.device)
    return ch @ t @ cw.T


def idct_2d(X: object) -> torch.Tensor:
    """Inverse of :func:`dct_2d` (orthonormal DCT-III over the last two dims)."""
    t = _float(X, "X")
    ch = _dct_matrix(t.shape[-2], t.dtype, t.device)
    cw = _dct_matrix(t.shape[-1], t.dtype, t.device)
    return ch.T @ t @ cw


def frequency_bands(x: object, *, seed: int | torch.Generator | None = None) -> torch.Tensor:
    """The four DCT bands B1..B4 of the FIcoder prior, concatenated on the channel axis.

    With d = min(H, W) // 10 and u + v the anti-diagonal index of a DCT coefficient:
    B1 keeps u + v <= 3d; B2 keeps u + v <= d and permutes coefficients within each
    anti-diagonal (the permutation drawn from ``seed``, so inference is deterministic);
    B3 keeps 2d <= u + v <= 4d; B4 keeps u + v >= 5d (paper's dct_util, notes §2.2).

    Args:
        x: (B, C, H, W) float tensor.
        seed: the B2 shuffle; None = fresh entropy.

    Returns:
        (B, 4C, H, W): [B1, B2, B3, B4].
    """
    t = _float(x, "x")
    if t.ndim != 4:
        raise ValueError(f"x must have shape (B, C, H, W), got {tuple(t.shape)}")
    g = resolve_seed(seed)
    H, W = t.shape[-2:]
    d = min(H, W) // 10
    F = dct_2d(t)
    uv = (torch.arange(H, device=t.device)[:, None] + torch.arange(W, device=t.device)[None])
    b1 = idct_2d(F * (uv <= 3 * d))
    b3 = idct_2d(F * ((uv >= 2 * d) & (uv <= 4 * d)))
    b4 = idct_2d(F * (uv >= 5 * d))
    # B2: a permutation inside each anti-diagonal n = u + v <= d, vectorised by sorting
    flat = uv.flatten()
    idx = (flat <= d).nonzero().flatten()
    n = flat[idx].double()
    key = torch.rand(len(idx), generator=g, dtype=torch.float64).to(t.device)
    src = idx[torch.argsort(n + key * 0.5)]           # random order within each diagonal
    dst = idx[torch.argsort(n + idx.double() / (H * W + 1) * 0.5)]  # raster order within it
    Ff = F.flatten(-2)
    low = torch.zeros_like(Ff)
    low[..., dst] = Ff[..., src]
    b2 = idct_2d(low.reshape(F.shape))
    return torch.cat([b1, b2, b3, b4], dim=1)
