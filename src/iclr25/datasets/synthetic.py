"""Seeded synthetic classification tasks."""

from __future__ import annotations

import torch

from iclr25._checks import check_in_range, check_tensor
from iclr25._contract import checked


@checked
def gaussian_mixture(
    counts: torch.Tensor | list[int],
    dim: int,
    *,
    center_scale: float = 1.0,
    noise: float = 1.0,
    seed: int = 0,
    centers: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Isotropic Gaussian classes with ``counts[k]`` samples in class ``k``.

    Args:
        counts: (K,) non-negative sample counts per class.
        dim: feature dimension.
        center_scale: class centres are ``center_scale * N(0, I)``.
        noise: standard deviation around each centre.
        seed: seed of the draw.
        centers: (K, dim) fixed centres (e.g. to draw a test set from the same classes).

    Returns:
        X (n, dim) float32, y (n,) int64 sorted by class, centres (K, dim).
    """
    counts = check_tensor(counts, "counts", ndim=1, integer=True)
    if bool((counts < 0).any()):
        raise ValueError("counts must be non-negative")
    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    g = torch.Generator().manual_seed(seed)
    K = counts.numel()
    if centers is None:
        centers = center_scale * torch.randn(K, dim, generator=g)
    else:
        centers = check_tensor(centers, "centers", ndim=2, floating=True)
        if tuple(centers.shape) != (K, dim):
            raise ValueError(f"centers must have shape ({K}, {dim}), got {tuple(centers.shape)}")
    # draws come from a CPU generator (same numbers on every device), then move to the centres'
    y = torch.repeat_interleave(torch.arange(K), counts.cpu()).to(centers.device)
    eps = torch.randn(len(y), dim, generator=g).to(centers.device)
    X = centers[y] + noise * eps
    return X.float(), y, centers


@checked
def teacher_classification(
    n: int, dim: int = 32, n_classes: int = 10, hidden: int = 64, *, seed: int = 0,
    label_noise: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Labels from a random one-hidden-layer teacher: ``y = argmax(tanh(x A) B)``, ``x ~ N(0, I)``.

    Args:
        n: number of samples; dim: input dimension; n_classes: classes; hidden: teacher width.
        seed: seed of the teacher and the inputs.
        label_noise: fraction of labels replaced by uniformly random classes.

    Returns:
        X (n, dim) float32 and y (n,) int64.
    """
    if n < 1 or dim < 1 or n_classes < 2 or hidden < 1:
        raise ValueError("n, dim and hidden must be >= 1 and n_classes >= 2")
    check_in_range(label_noise, "label_noise", 0.0, 1.0)
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(dim, hidden, generator=g) / dim**0.5
    B = torch.randn(hidden, n_classes, generator=g)
    X = torch.randn(n, dim, generator=g)
    y = (torch.tanh(X @ A) @ B).argmax(1)
    flip = torch.rand(n, generator=g) < label_noise
    y = torch.where(flip, torch.randint(0, n_classes, (n,), generator=g), y)
    return X, y
