"""The small two-stage long-tailed pipeline used by the reproduction and the benchmark.

Stage 1 learns a representation with plain CE and strong weight decay on the long-tailed
training set (the paper's "simple regularization" stage-1); stage 2 re-trains only the
linear head on the frozen penultimate features with :func:`retrain_classifier`.
Data: a K-class isotropic Gaussian mixture with a CIFAR-LT count profile, standing in for
CIFAR-100-LT (no 100-class image set is available offline).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from iclr25.datasets import gaussian_mixture
from iclr25.los.data import long_tailed_counts


@dataclass
class LongTailedTask:
    """Long-tailed train split and balanced test split of a Gaussian mixture."""

    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    train_counts: torch.Tensor

    @property
    def n_classes(self) -> int:
        return len(self.train_counts)


def long_tailed_mixture(
    n_classes: int = 100, n_max: int = 500, imbalance_ratio: float = 100.0, dim: int = 64,
    center_scale: float = 0.35, test_per_class: int = 100, seed: int = 0,
) -> LongTailedTask:
    """K Gaussian classes, counts ``n_max -> n_max/IR`` for training, a balanced test set.

    Defaults are the spec's pilot: K=100, d=64, centres 0.35·N(0, I), unit noise, IR=100
    (500 -> 5, 10,847 training samples) and 100 test samples per class.
    """
    counts = long_tailed_counts(n_max, n_classes, imbalance_ratio)
    X, y, centres = gaussian_mixture(counts, dim, center_scale=center_scale, seed=seed)
    Xt, yt, _ = gaussian_mixture([test_per_class] * n_classes, dim, centers=centres,
                                 seed=seed + 10_000)
    return LongTailedTask(X, y, Xt, yt, counts)


class MLP(nn.Module):
    """``d -> hidden -> hidden -> K`` ReLU network; ``features`` is the penultimate layer."""

    def __init__(self, dim: int, n_classes: int, hidden: int = 128) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())
        self.fc = nn.Linear(hidden, n_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.body(x))


def train_stage1(
    X: torch.Tensor, y: torch.Tensor, n_classes: int, *, hidden: int = 128, epochs: int = 60,
    lr: float = 0.05, momentum: float = 0.9, weight_decay: float = 5e-3, batch_size: int = 64,
    seed: int = 0,
) -> MLP:
    """Stage 1: CE with strong weight decay, SGD + cosine, instance-balanced batches."""
    with torch.random.fork_rng(devices=[]):  # seeded init, caller's global RNG untouched
        torch.manual_seed(seed)
        model = MLP(X.shape[1], n_classes, hidden).to(X.device)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum,
                          weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    n = len(y)
    for _ in range(epochs):
        order = torch.randperm(n, generator=g).to(X.device)
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            loss = F.cross_entropy(model(X[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sched.step()
    return model.eval()
