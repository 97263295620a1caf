"""The Label Over-Smoothing (LOS) loss: cross-entropy against a heavily smoothed target."""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_choice,
    check_labels,
    check_range,
    check_same_length,
)
from iclr25._contract import FloatDtype, checked

Reduction = Literal["mean", "sum", "none"]


def check_smoothing(smoothing: object) -> float:
    """``smoothing`` as a float in the open interval (0, 1)."""
    return check_range(smoothing, "smoothing", 0.0, 1.0, low_open=True, high_open=True)


def class_counts(y: ArrayLike, n_classes: int, name: str = "y") -> torch.Tensor:
    """(K,) counts of each class; ValueError naming the empty classes if any has none."""
    y = check_labels(y, name, n_classes)
    counts = torch.bincount(y, minlength=n_classes)
    empty = (counts == 0).nonzero().flatten().tolist()
    if empty:
        raise ValueError(f"{name} has no sample of class(es) {empty[:10]}"
                         f"{' ...' if len(empty) > 10 else ''}; every class needs one")
    return counts


@checked
def smoothed_targets(y: ArrayLike, n_classes: int, smoothing: float,
                     dtype: FloatDtype = torch.float32) -> torch.Tensor:
    """The smoothed target distribution ``q = (1 - eps) * onehot(y) + eps / K``.

    Args:
        y: (n,) integer labels in [0, K) (any integer dtype).
        n_classes: K.
        smoothing: eps in (0, 1).
        dtype: floating dtype of the result.

    Returns:
        (n, K) tensor whose rows sum to 1; the true class gets ``1 - eps + eps/K``,
        every other class ``eps/K``.
    """
    smoothing = check_smoothing(smoothing)
    y = check_labels(y, "y", n_classes)
    q = torch.full((len(y), n_classes), smoothing / n_classes, dtype=dtype, device=y.device)
    return q.scatter_add(1, y[:, None], torch.full_like(q[:, :1], 1.0 - smoothing))


@checked
def label_over_smoothing_loss(
    logits: torch.Tensor, y: torch.Tensor, smoothing: float = 0.98,
    reduction: Reduction = "mean",
) -> torch.Tensor:
    """Cross-entropy between softmax(logits) and the over-smoothed target q (LOS, Sec. 4).

    With K classes the target is ``q = (1 - eps) * onehot(y) + eps / K``; the loss of a
    sample is ``-sum_j q_j log softmax(z)_j``. This is exactly what
    ``torch.nn.functional.cross_entropy(logits, y, label_smoothing=eps)`` computes;
    LOS is the observation that re-training only the classifier with eps close to 1
    (0.98 by default, the paper's setting) balances a long-tailed classifier. For K=100 the
    true class then gets 0.0298 and every other class 0.0098 of the target mass.

    Args:
        logits: (n, K) real floating logits.
        y: (n,) integer labels in [0, K) (uint8/int16/int32/int64 are all accepted).
        smoothing: eps, in the open interval (0, 1). eps=0 is plain cross-entropy, which
            this function does not accept: use ``F.cross_entropy``.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (per-sample (n,) losses).

    Returns:
        A scalar tensor, or (n,) per-sample losses with ``reduction="none"``, in the dtype
        of ``logits``.

    Raises:
        ValueError: labels outside [0, K), smoothing outside (0, 1), mismatched lengths,
            non-finite logits, unknown reduction.
        TypeError: non-integer labels, integer or complex logits.

    Examples:
        >>> import torch
        >>> z, y = torch.zeros(2, 4), torch.tensor([0, 3])
        >>> round(float(label_over_smoothing_loss(z, y)), 4)  # uniform logits: log K
        1.3863
    """
    logits = as_tensor(logits, "logits", ndim=2)
    if not logits.is_floating_point():
        raise TypeError(f"logits must be a floating-point tensor, got {logits.dtype}")
    y = check_labels(y, "y", logits.shape[1], device=logits.device)
    check_same_length(logits=logits, y=y)
    check_choice(reduction, "reduction", Reduction)
    per_sample = los_per_sample(logits, y, check_smoothing(smoothing))
    if reduction == "none":
        return per_sample
    return per_sample.sum() if reduction == "sum" else per_sample.mean()


def los_per_sample(logits: torch.Tensor, y: torch.Tensor, smoothing: float) -> torch.Tensor:
    """Unchecked per-sample LOS loss, for training loops whose inputs were checked once.

    ``-sum_j q_j log p_j`` with ``q = (1-eps)·onehot + eps/K`` splits into
    ``(1-eps)·(-log p_y) + eps·mean_j(-log p_j)``, which never builds the (n, K) target.
    ``y`` must already be int64 on the logits' device.
    """
    logp = torch.log_softmax(logits, dim=1)
    nll = -logp.gather(1, y[:, None]).squeeze(1)
    return (1.0 - smoothing) * nll - smoothing * logp.mean(1)


@checked
class LabelOverSmoothingLoss(nn.Module):
    """``nn.Module`` twin of :func:`label_over_smoothing_loss` (for training loops).

    Args:
        smoothing: eps in (0, 1); 0.98 is the paper's setting.
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.

    Raises:
        ValueError: smoothing outside (0, 1) or unknown reduction, at construction.

    Examples:
        >>> import torch
        >>> loss = LabelOverSmoothingLoss(0.98)
        >>> float(loss(torch.zeros(3, 5), torch.tensor([0, 1, 4]))) > 0
        True
    """

    def __init__(self, smoothing: float = 0.98, reduction: Reduction = "mean") -> None:
        super().__init__()
        self.smoothing = check_smoothing(smoothing)
        self.reduction = check_choice(reduction, "reduction", Reduction)

    def forward(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return label_over_smoothing_loss(logits, y, self.smoothing, self.reduction)

    def extra_repr(self) -> str:
        return f"smoothing={self.smoothing}, reduction={self.reduction!r}"
