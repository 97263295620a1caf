"""Targets and starting clouds of the gradient-flow reproduction (official ``core/utils_GF``).

Only :mod:`iclr25.dbtsw.claim` and the tests use these.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def gaussian_20d(n: int, seed: int, *, dim: int = 20, dtype: torch.dtype = torch.float32,
                 device: torch.device | str = "cpu") -> Tensor:
    """The official ``gaussian_20d_small_v`` target: ``n`` points, mean ~ U[0, 1]^dim, identity
    covariance, centred on that mean (the sample mean is exactly the drawn mean)."""
    g = torch.Generator().manual_seed(seed)
    mean = torch.rand(dim, generator=g, dtype=torch.float64)
    z = torch.randn(n, dim, generator=g, dtype=torch.float64)
    return (z - z.mean(0) + mean).to(device=device, dtype=dtype)


def gaussians_25(n: int, seed: int, *, dtype: torch.dtype = torch.float32,
                 device: torch.device | str = "cpu") -> Tensor:
    """The official ``25gaussians`` target: a 5x5 grid of modes spaced 2, noise std 0.05,
    divided by 2.828 (so the grid spans [-1.41, 1.41]^2)."""
    g = torch.Generator().manual_seed(seed)
    grid = torch.arange(-4.0, 5.0, 2.0, dtype=torch.float64)
    modes = torch.cartesian_prod(grid, grid)
    idx = torch.randint(0, 25, (n,), generator=g)
    x = modes[idx] + 0.05 * torch.randn(n, 2, generator=g, dtype=torch.float64)
    return (x / 2.828).to(device=device, dtype=dtype)


def start_cloud(n: int, dim: int, seed: int, *, std: float = 0.25,
                dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu") -> Tensor:
    """The flow's starting cloud ``N(0, std² I)`` (official ``Y₀``)."""
    g = torch.Generator().manual_seed(10_000 + seed)
    return (std * torch.randn(n, dim, generator=g, dtype=torch.float64)).to(device=device,
                                                                            dtype=dtype)


def log10_w2sq(Y: Tensor, X: Tensor) -> float:
    """``log10 W2²`` between two uniform clouds: ``ot.emd2`` with squared Euclidean cost."""
    import ot

    M = ot.dist(Y.detach().double().cpu().numpy(), X.detach().double().cpu().numpy())
    return math.log10(max(float(ot.emd2([], [], M, numItermax=1_000_000)), 1e-300))
