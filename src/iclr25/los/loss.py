"""The Label Over-Smoothing (LOS) loss: cross-entropy against a heavily smoothed target."""

from __future__ import annotations

import torch

from iclr25._checks import check_in_range, check_same_length, check_tensor


def check_targets(targets: object, n_classes: int, name: str = "targets") -> torch.Tensor:
    """Return ``targets`` as a 1-D integer tensor, raising unless every entry lies in [0, K)."""
    targets = check_tensor(targets, name, ndim=1, integer=True)
    lo, hi = int(targets.min()), int(targets.max())
    if lo < 0 or hi >= n_classes:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{name} must lie in [0, {n_classes}), got a label {bad}")
    return targets


def class_counts(labels: object, n_classes: int, name: str = "labels") -> torch.Tensor:
    """(K,) counts of each class; ValueError naming the empty classes if any has none."""
    labels = check_targets(labels, n_classes, name)
    counts = torch.bincount(labels, minlength=n_classes)
    empty = (counts == 0).nonzero().flatten().tolist()
    if empty:
        raise ValueError(f"{name} has no sample of class(es) {empty[:10]}"
                         f"{' ...' if len(empty) > 10 else ''}; every class needs one")
    return counts


def smoothed_targets(targets: torch.Tensor, n_classes: int, smoothing: float,
                     dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The smoothed target distribution ``q = (1 - eps) * onehot(y) + eps / K``.

    Args:
        targets: (n,) integer labels in [0, K).
        n_classes: K.
        smoothing: eps in (0, 1).
        dtype: floating dtype of the result.

    Returns:
        (n, K) tensor whose rows sum to 1; the true class gets ``1 - eps + eps/K``,
        every other class ``eps/K``.
    """
    check_in_range(smoothing, "smoothing", 0.0, 1.0, low_open=True, high_open=True)
    targets = check_targets(targets, n_classes)
    q = torch.full((len(targets), n_classes), smoothing / n_classes, dtype=dtype,
                   device=targets.device)
    return q.scatter_add(1, targets[:, None], torch.full_like(q[:, :1], 1.0 - smoothing))


def label_over_smoothing_loss(
    logits: torch.Tensor, targets: torch.Tensor, smoothing: float = 0.98,
    reduction: str = "mean",
) -> torch.Tensor:
    """Cross-entropy between softmax(logits) and the over-smoothed target q (LOS, Sec. 4).

    With K classes the target is ``q = (1 - eps) * onehot(y) + eps / K``; the loss of a
    sample is ``-sum_j q_j log softmax(z)_j``. This is exactly what
    ``torch.nn.functional.cross_entropy(logits, targets, label_smoothing=eps)`` computes;
    LOS is the observation that re-training only the classifier with eps close to 1
    (0.98 by default, the paper's setting) balances a long-tailed classifier. For K=100 the
    true class then gets 0.0298 and every other class 0.0098 of the target mass.

    Args:
        logits: (n, K) floating logits.
        targets: (n,) integer labels in [0, K).
        smoothing: eps, in the open interval (0, 1). eps=0 is plain cross-entropy, which
            this function does not accept: use ``F.cross_entropy``.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (per-sample (n,) losses).

    Returns:
        A scalar tensor, or (n,) per-sample losses with ``reduction="none"``.

    Raises:
        ValueError: targets outside [0, K), smoothing outside (0, 1), mismatched lengths,
            non-finite logits, unknown reduction.
    """
    logits = check_tensor(logits, "logits", ndim=2, floating=True)
    targets = check_targets(targets, logits.shape[1])
    check_same_length(logits=logits, targets=targets)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    check_in_range(smoothing, "smoothing", 0.0, 1.0, low_open=True, high_open=True)
    per_sample = _los_per_sample(logits, targets, float(smoothing))
    if reduction == "none":
        return per_sample
    return per_sample.sum() if reduction == "sum" else per_sample.mean()


def _los_per_sample(logits: torch.Tensor, targets: torch.Tensor, smoothing: float) -> torch.Tensor:
    """Unchecked per-sample LOS loss, for training loops whose inputs were checked once.

    ``-sum_j q_j log p_j`` with ``q = (1-eps)·onehot + eps/K`` splits into
    ``(1-eps)·(-log p_y) + eps·mean_j(-log p_j)``, which never builds the (n, K) target.
    """
    logp = torch.log_softmax(logits, dim=1)
    nll = -logp.gather(1, targets[:, None]).squeeze(1)
    return (1.0 - smoothing) * nll - smoothing * logp.mean(1)
