"""Orthonormal 2-D DCT and the frequency bands of the illumination prior (notes §2.2)."""

from __future__ import annotations

import math

import torch

from iclr25._checks import ArrayLike, as_tensor, check_choice, resolve_seed
from iclr25._contract import FloatArray, checked

__all__ = ["dct_2d", "frequency_bands", "idct_2d"]


def _dct_matrix(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """(n, n) orthonormal DCT-II matrix C: ``C @ v`` = ``scipy.fft.dct(v, norm="ortho")``."""
    k = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(n, dtype=torch.float64)[None]
    c = torch.cos(math.pi * (2 * i + 1) * k / (2 * n)) * math.sqrt(2.0 / n)
    c[0] /= math.sqrt(2.0)
    return c.to(device=device, dtype=dtype)


def _float(x: ArrayLike, name: str) -> torch.Tensor:
    t = as_tensor(x, name)
    if t.ndim < 2:
        raise ValueError(f"{name} must have at least 2 dims (..., H, W), got {tuple(t.shape)}")
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {t.dtype}")
    return t


def _dct_last(x: torch.Tensor) -> torch.Tensor:
    """Orthonormal DCT-II along the last dim by one FFT of length N (Makhoul 1980)."""
    n = x.shape[-1]
    v = torch.cat([x[..., ::2], x[..., 1::2].flip(-1)], -1)
    k = torch.arange(n, device=x.device, dtype=x.dtype)
    tw = torch.polar(torch.ones_like(k), -math.pi * k / (2 * n))
    scale = torch.full_like(k, math.sqrt(2.0 / n))
    scale[0] = math.sqrt(1.0 / n)
    return (torch.fft.fft(v) * tw).real * scale


def _idct_last(X: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`_dct_last` (orthonormal DCT-III) by one inverse FFT of length N."""
    n = X.shape[-1]
    k = torch.arange(n, device=X.device, dtype=X.dtype)
    scale = torch.full_like(k, math.sqrt(n / 2.0))
    scale[0] = math.sqrt(float(n))
    y = X * scale
    # V_k = e^{iπk/2N} (y_k − i·y_{N−k}), y_N = 0; v = Re(ifft V); undo the even/odd split
    y_rev = torch.cat([torch.zeros_like(y[..., :1]), y[..., 1:].flip(-1)], -1)
    V = torch.complex(y, -y_rev) * torch.polar(torch.ones_like(k), math.pi * k / (2 * n))
    v = torch.fft.ifft(V).real
    x = torch.empty_like(v)
    x[..., ::2] = v[..., : (n + 1) // 2]
    x[..., 1::2] = v[..., (n + 1) // 2:].flip(-1)
    return x


#: "auto" uses the dense matrices up to this side and the FFT above it. One CPU thread,
#: (2, 3, n, n): 0.58 vs 0.71 ms at 64², 10.5 vs 1.9 ms at 128², 31 vs 23 ms at 256²
#: (matrix vs FFT, benchmarks/lowlight.py, load 4); a training step at crop 64 (32- and
#: 64-px maps) costs 0.293 s with the matrix DCT and 0.303 s with the FFT.
AUTO_MATRIX_SIDE = 64


def _method(method: str, t: torch.Tensor) -> str:
    check_choice(method, "method", ("auto", "fft", "matrix"))
    if method == "auto":
        return "matrix" if max(t.shape[-2:]) <= AUTO_MATRIX_SIDE else "fft"
    return method


@checked
def dct_2d(x: FloatArray, *, method: str = "auto") -> torch.Tensor:
    """Orthonormal DCT-II over the last two dims (``scipy.fft.dctn(norm="ortho", axes=(-2, -1))``).

    Args:
        x: (..., H, W) float tensor.
        method: "fft" (one length-N FFT per row and per column, cost O(HW log(HW))),
            "matrix" (dense DCT matrices, cost O(HW(H + W)); the reference) or "auto"
            (default: matrix up to :data:`AUTO_MATRIX_SIDE` px a side, FFT above).

    Returns:
        (..., H, W) coefficients, same dtype and device.
    """
    t = _float(x, "x")
    if _method(method, t) == "fft":
        return _dct_last(_dct_last(t).transpose(-1, -2)).transpose(-1, -2)
    ch = _dct_matrix(t.shape[-2], t.dtype, t.device)
    cw = _dct_matrix(t.shape[-1], t.dtype, t.device)
    return ch @ t @ cw.T


@checked
def idct_2d(X: FloatArray, *, method: str = "auto") -> torch.Tensor:
    """Inverse of :func:`dct_2d` (orthonormal DCT-III over the last two dims)."""
    t = _float(X, "X")
    if _method(method, t) == "fft":
        return _idct_last(_idct_last(t).transpose(-1, -2)).transpose(-1, -2)
    ch = _dct_matrix(t.shape[-2], t.dtype, t.device)
    cw = _dct_matrix(t.shape[-1], t.dtype, t.device)
    return ch.T @ t @ cw


@checked
def frequency_bands(x: FloatArray, *, seed: int | torch.Generator | None = None,
                    method: str = "auto") -> torch.Tensor:
    """The four DCT bands B1..B4 of the FIcoder prior, concatenated on the channel axis.

    With d = min(H, W) // 10 and u + v the anti-diagonal index of a DCT coefficient:
    B1 keeps u + v <= 3d; B2 keeps u + v <= d and permutes coefficients within each
    anti-diagonal (the permutation drawn from ``seed``, so inference is deterministic);
    B3 keeps 2d <= u + v <= 4d; B4 keeps u + v >= 5d (paper's dct_util, notes §2.2).

    Args:
        x: (B, C, H, W) float tensor.
        seed: the B2 shuffle; None = fresh entropy.
        method: the DCT's path, "auto", "fft" or "matrix" (see :func:`dct_2d`).

    Returns:
        (B, 4C, H, W): [B1, B2, B3, B4].
    """
    t = _float(x, "x")
    if t.ndim != 4:
        raise ValueError(f"x must have shape (B, C, H, W), got {tuple(t.shape)}")
    check_choice(method, "method", ("auto", "fft", "matrix"))
    g = resolve_seed(seed)
    B, C, H, W = t.shape
    d = min(H, W) // 10
    F = dct_2d(t, method=method)
    uv = (torch.arange(H, device=t.device)[:, None] + torch.arange(W, device=t.device)[None])
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
    masks = torch.stack([uv <= 3 * d, (uv >= 2 * d) & (uv <= 4 * d), uv >= 5 * d])
    masks = masks[:, None].to(t.dtype)
    coeffs = torch.cat([F[:, None] * masks[:1], low.reshape(B, 1, C, H, W),
                        F[:, None] * masks[1:]], 1)            # (B, 4, C, H, W): B1..B4
    return idct_2d(coeffs, method=method).reshape(B, 4 * C, H, W)
