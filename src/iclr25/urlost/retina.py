"""A foveated "retina" sampler: sensors dense at the centre, sparse and blurrier at the
periphery (URLOST §4.1, foveated CIFAR-10). The result has neither a grid topology nor
stationarity; the sensor radius is the density weight of the density-adjusted Laplacian.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from iclr25._checks import ArrayLike, as_tensor, check_int
from iclr25._contract import checked

__all__ = ["foveate", "retina_sampler"]


@checked
def retina_sampler(image_size: int, n_rings: int = 20, n_angles: int = 24,
                   max_kernel: int = 7) -> tuple[torch.Tensor, torch.Tensor]:
    """Sensor positions and receptive-field radii of a foveated lattice.

    Ring i (0..n_rings-1) has radius (i / (n_rings-1))⁴ · image_size/2 about the centre and
    max(1, int(n_angles·i/(n_rings-1))) sensors evenly spaced in angle (the official
    sampler's layout); positions are rounded to pixels and duplicates dropped. A sensor's
    blur kernel is odd-sized, growing linearly with eccentricity from 1 to ``max_kernel``;
    its radius is half the kernel size.

    Args:
        image_size: side of the square image sampled.
        n_rings, n_angles: rings, and sensors on the outermost ring.
        max_kernel: the outermost kernel size (odd, >= 1).

    Returns:
        ``coords`` (S, 2) int64 (row, col) pixel positions; ``radii`` (S,) float32.
    """
    image_size = check_int(image_size, "image_size", 2)
    n_rings = check_int(n_rings, "n_rings", 2)
    n_angles = check_int(n_angles, "n_angles", 1)
    max_kernel = check_int(max_kernel, "max_kernel", 1)
    if max_kernel % 2 == 0:
        raise ValueError(f"max_kernel must be odd, got {max_kernel}")
    half = image_size / 2
    i = torch.arange(n_rings, dtype=torch.float64)
    rad = (i / (n_rings - 1)) ** 4 * half
    counts = (n_angles * i / (n_rings - 1)).long().clamp(min=1)
    ring = torch.repeat_interleave(torch.arange(n_rings), counts)
    k = torch.arange(len(ring)) - torch.repeat_interleave(torch.cumsum(counts, 0) - counts,
                                                          counts)
    theta = 2 * torch.pi * k / counts[ring]
    rows = (half - 0.5 + rad[ring] * torch.sin(theta)).round().clamp(0, image_size - 1)
    cols = (half - 0.5 + rad[ring] * torch.cos(theta)).round().clamp(0, image_size - 1)
    coords = torch.stack([rows, cols], 1).long()
    coords, first = _unique_rows(coords)
    ecc = rad[ring[first]] / half
    kernel = 1 + 2 * (ecc * (max_kernel - 1) / 2).round()
    return coords, (kernel / 2).float()


def _unique_rows(c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Unique rows in order of first appearance, and the index of that appearance."""
    key = c[:, 0] * (int(c[:, 1].max()) + 1) + c[:, 1]
    _, inv = torch.unique(key, return_inverse=True)
    first = torch.full((int(inv.max()) + 1,), len(c), dtype=torch.long)
    first = first.scatter_reduce(0, inv, torch.arange(len(c)), reduce="amin")
    first = first.sort().values
    return c[first], first


@checked
def foveate(images: ArrayLike, coords: ArrayLike, radii: ArrayLike) -> torch.Tensor:
    """Sample images through a retina: each sensor reads its pixel of the image blurred by
    a Gaussian of its kernel size (2·radius, σ = size/4); one convolution per kernel size.

    Args:
        images: (n, H, W) or (n, C, H, W).
        coords: (S, 2) int (row, col) positions inside the image.
        radii: (S,) receptive-field radii (kernel size = 2·radius, rounded to odd).

    Returns:
        (n, S) for (n, H, W) input, (n, C, S) for (n, C, H, W); on the images' device.
    """
    x = as_tensor(images, "images", ndim=(3, 4))
    if not x.is_floating_point():
        x = x.float()
    c = as_tensor(coords, "coords", ndim=2).long().to(x.device)
    r = as_tensor(radii, "radii", ndim=1).to(x.device, x.dtype)
    if c.shape[1] != 2 or len(c) != len(r):
        raise ValueError(f"coords must be (S, 2) with S = len(radii) = {len(r)}, got "
                         f"{tuple(c.shape)}")
    H, W = x.shape[-2:]
    if int(c.min()) < 0 or int(c[:, 0].max()) >= H or int(c[:, 1].max()) >= W:
        raise ValueError(f"coords must lie inside the {H}x{W} image")
    if bool((r <= 0).any()):
        raise ValueError("radii must be positive")
    gray = x.ndim == 3
    img = x[:, None] if gray else x
    n, C = img.shape[:2]
    flat = img.reshape(n * C, 1, H, W)
    size = (2 * (r / 2).round() + 1).long()  # odd kernel sizes
    out = torch.empty(n * C, len(r), dtype=x.dtype, device=x.device)
    for k in torch.unique(size).tolist():  # one convolution per kernel size
        sel = torch.nonzero(size == k).flatten()
        if k == 1:
            blurred = flat
        else:
            t = torch.arange(k, dtype=x.dtype, device=x.device) - (k - 1) / 2
            g = torch.exp(-t ** 2 / (2 * (k / 4) ** 2))
            g = g / g.sum()
            blurred = F.conv2d(flat, g.view(1, 1, 1, k), padding=(0, k // 2))
            blurred = F.conv2d(blurred, g.view(1, 1, k, 1), padding=(k // 2, 0))
        out[:, sel] = blurred[:, 0, c[sel, 0], c[sel, 1]]
    out = out.reshape(n, C, len(r))
    return out[:, 0] if gray else out
