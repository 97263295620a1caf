"""Long-tailed splits: the exponential class profile of CIFAR-LT (Cao et al. 2019)."""

from __future__ import annotations

import torch

from iclr25._checks import (
    as_tensor,
    check_int,
    check_labels,
    check_range,
    check_same_length,
    resolve_seed,
)
from iclr25._contract import checked


@checked
def long_tailed_counts(n_max: int, n_classes: int, imbalance_ratio: float) -> torch.Tensor:
    """Per-class counts ``n_k = int(n_max * (1/IR)^(k/(K-1)))``, k = 0..K-1 (head first).

    Args:
        n_max: count of the most frequent class (500 for CIFAR-100-LT).
        n_classes: K >= 2.
        imbalance_ratio: IR = n_0 / n_{K-1} >= 1 (10, 50 or 100 in the paper).

    Returns:
        (K,) int64 counts, non-increasing, ``counts[0] == n_max``.

    Raises:
        ValueError: n_max < 1, K < 2, IR < 1, or a profile whose tail class would be empty
            (``int(n_max / IR) == 0``).
    """
    n_max = check_int(n_max, "n_max", 1)
    n_classes = check_int(n_classes, "n_classes", 2)
    imbalance_ratio = check_range(imbalance_ratio, "imbalance_ratio", 1.0)
    k = torch.arange(n_classes, dtype=torch.float64)
    # float64 and truncation, as ``int(...)`` in the CIFAR-LT code
    counts = (n_max * (1.0 / imbalance_ratio) ** (k / (n_classes - 1))).floor().long()
    if int(counts[-1]) == 0:
        raise ValueError(
            f"imbalance_ratio={imbalance_ratio} with n_max={n_max} leaves the tail classes "
            f"empty; need n_max >= imbalance_ratio")
    return counts


@checked
def make_long_tailed(
    X: torch.Tensor, y: torch.Tensor, imbalance_ratio: float, *, n_max: int | None = None,
    seed: int | torch.Generator | None = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Subsample a (roughly balanced) labelled set to the long-tailed profile.

    Class k keeps ``n_k`` samples drawn at random without replacement, with the profile of
    :func:`long_tailed_counts` (class 0 is the head). The official code keeps the first
    n_k images of each class; a seeded random draw is the same thing on shuffled data.

    Args:
        X: (n, ...) samples.
        y: (n,) integer labels in [0, K), every class present.
        imbalance_ratio: IR >= 1.
        n_max: head count; defaults to the smallest class size in ``y``.
        seed: seed of the draw (int, CPU Generator, or None for a fresh one).

    Returns:
        X_lt, y_lt (sorted by class) and the (K,) counts.

    Raises:
        ValueError: a class of ``y`` is empty, or has fewer than ``n_k`` samples.
    """
    X = as_tensor(X, "X", finite=False)
    y = check_labels(y, "y")
    check_same_length(X=X, y=y)
    imbalance_ratio = check_range(imbalance_ratio, "imbalance_ratio", 1.0)
    if n_max is not None:
        n_max = check_int(n_max, "n_max", 1)
    g = resolve_seed(seed)
    have = torch.bincount(y.cpu())
    empty = (have == 0).nonzero().flatten().tolist()
    if empty:
        raise ValueError(f"y has no sample of class(es) {empty[:10]}")
    K = len(have)
    if n_max is None:
        n_max = int(have.min())
    counts = long_tailed_counts(n_max, K, imbalance_ratio)
    short = (have < counts).nonzero().flatten().tolist()
    if short:
        raise ValueError(f"classes {short[:10]} have fewer samples than the profile needs")
    # rank of each sample among its class after a random shuffle; keep ranks < n_k
    perm = torch.randperm(len(y), generator=g)
    y_perm = y.cpu()[perm]
    order = torch.argsort(y_perm, stable=True)
    sorted_y = y_perm[order]
    starts = torch.cumsum(have, 0) - have
    rank = torch.arange(len(y)) - starts[sorted_y]
    keep = perm[order[rank < counts[sorted_y]]].to(y.device)
    return X[keep], y[keep], counts
