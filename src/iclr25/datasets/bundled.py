"""Data sets that ship inside PyPI packages, as seeded torch train/test splits."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from iclr25._checks import check_in_range
from iclr25._contract import checked


class Split(NamedTuple):
    """A train/test split. ``X_*``: (n, d) float; ``y_*``: (n,) int64."""

    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor


@checked
def digits(
    test_size: float = 0.25,
    seed: int = 0,
    *,
    standardize: bool = True,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Split:
    """scikit-learn's bundled 8x8 digits (1,797 images, 10 classes), split with a stratified seed.

    Args:
        test_size: fraction of samples held out, in (0, 1).
        seed: seed of the split.
        standardize: scale features with the train split's mean and std (else pixels / 16).

    Returns:
        Split with ``X_*`` of shape (n, 64) and ``y_*`` of shape (n,).
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    check_in_range(test_size, "test_size", 0, 1, low_open=True, high_open=True)
    X, y = load_digits(return_X_y=True)
    X = X.astype(np.float64) / 16.0
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test_size, random_state=seed, stratify=y)
    if standardize:
        mu, sd = Xtr.mean(0), Xtr.std(0) + 1e-6
        Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    to_x = lambda a: torch.as_tensor(a, dtype=dtype, device=device)  # noqa: E731
    to_y = lambda a: torch.as_tensor(a, dtype=torch.long, device=device)  # noqa: E731
    return Split(to_x(Xtr), to_y(ytr), to_x(Xte), to_y(yte))
