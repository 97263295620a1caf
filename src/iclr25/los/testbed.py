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

from iclr25._train import fit_minibatch, seeded_mlp
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
    center_scale: float = 0.35, test_per_class: int = 100, *, seed: int = 0,
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


class Stage1Net(nn.Module):
    """``d -> hidden -> hidden -> K`` ReLU MLP; ``features`` is the penultimate layer."""

    def __init__(self, net: nn.Sequential) -> None:
        super().__init__()
        self.body = net[:-1]
        self.fc = net[-1]

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.body(x))


def train_stage1(
    X: torch.Tensor, y: torch.Tensor, n_classes: int, *, hidden: int = 128, epochs: int = 60,
    lr: float = 0.05, momentum: float = 0.9, weight_decay: float = 5e-3, batch_size: int = 64,
    seed: int = 0,
) -> Stage1Net:
    """Stage 1: CE with strong weight decay, SGD + cosine, instance-balanced batches."""
    model = Stage1Net(seeded_mlp([X.shape[1], hidden, hidden, n_classes], seed=seed,
                                 device=X.device))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum,
                          weight_decay=weight_decay)
    fit_minibatch(model, F.cross_entropy, X, y, epochs=epochs, batch_size=batch_size,
                  optimizer=opt, seed=seed,
                  scheduler=torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs))
    return model.eval()
