"""Per-class logit statistics (LoMa, RSD) and long-tailed accuracy summaries.

The paper (Sec. 3) analyses a re-trained classifier with two per-class numbers:

* **Logits Magnitude** (LoMa): how far the logits of a class's positives sit above its
  negatives;
* **Regularized Standard Deviation** (RSD): the spread of those logits divided by LoMa,
  a scale-free measure of how well the class is separated.

The official code contains no implementation of either, and the exact formulas could not be
checked against the paper's text, so both readings are offered (``variant``) and all three
spreads (``spread``). The defaults are the reading we consider the paper's primary one:
column-wise logits of class k, positives ``y = k`` vs negatives ``y != k``.
"""

from __future__ import annotations

from typing import Literal

import torch

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_choice,
    check_int,
    check_labels,
    check_same_length,
)
from iclr25._contract import checked
from iclr25.los.loss import class_counts

Variant = Literal["class", "sample"]
Spread = Literal["positive", "negative", "pooled"]


def _check_logits(logits: ArrayLike) -> torch.Tensor:
    logits = as_tensor(logits, "logits", ndim=2)
    if not logits.is_floating_point():
        raise TypeError(f"logits must be a floating-point tensor, got {logits.dtype}")
    return logits


def _pos_neg_moments(
    logits: torch.Tensor, y: torch.Tensor, variant: str,
) -> tuple[torch.Tensor, ...]:
    """Per-class mean and (population) variance of the positive and negative logit entries."""
    logits = _check_logits(logits)
    K = logits.shape[1]
    if K < 2:
        raise ValueError(f"logits must have at least 2 classes, got {K}")
    y = check_labels(y, "y", K, device=logits.device)
    check_same_length(logits=logits, y=y)
    check_choice(variant, "variant", Variant)
    z = logits.double()
    pos = torch.zeros_like(z).scatter_(1, y[:, None], 1.0)
    neg = 1.0 - pos
    n_pos_cls = pos.sum(0)
    empty = (n_pos_cls == 0).nonzero().flatten().tolist()
    if empty:
        raise ValueError(f"y has no sample of class(es) {empty[:10]}: LoMa is undefined")

    if variant == "class":
        # entries of column k: rows with y = k are positives, all other rows negatives
        def per_class(m: torch.Tensor) -> torch.Tensor:
            return m.sum(0)
        if bool((neg.sum(0) == 0).any()):
            raise ValueError("every sample has the same class: class-k negatives are empty")
    else:
        # entries of rows with y = k: the true-class logit vs the K-1 other logits of that row
        def per_class(m: torch.Tensor) -> torch.Tensor:
            return torch.zeros(K, dtype=m.dtype, device=m.device).index_add_(0, y, m.sum(1))

    n_p, n_n = per_class(pos), per_class(neg)
    mu_p, mu_n = per_class(z * pos) / n_p, per_class(z * neg) / n_n
    # two-pass variance, centred on the class's own mean
    centre_p = mu_p[None, :] if variant == "class" else mu_p[y][:, None]
    centre_n = mu_n[None, :] if variant == "class" else mu_n[y][:, None]
    var_p = per_class((z - centre_p) ** 2 * pos) / n_p
    var_n = per_class((z - centre_n) ** 2 * neg) / n_n
    return mu_p, mu_n, var_p, var_n


@checked
def logits_magnitude(
    logits: torch.Tensor, y: torch.Tensor, *, variant: Variant = "class",
) -> torch.Tensor:
    """Logits Magnitude per class: mean positive logit minus mean negative logit (Sec. 3).

    * ``variant="class"`` (default): ``LoMa_k = mean_{i: y_i = k} z_ik - mean_{i: y_i != k} z_ik``,
      i.e. how much higher the classifier's k-th output is on class-k samples than on the
      rest. This is the reading of the paper's definition we consider primary.
    * ``variant="sample"``: ``LoMa_k = mean_{i: y_i = k} [z_{i,k} - mean_{j != k} z_ij]``, the
      mean margin of the true logit over the other logits of the same sample.

    The paper's wording (positive vs negative samples of a class) does not fix which logits
    are averaged. Both readings scale linearly with the logits. ``"class"`` ignores the
    classifier's bias (a per-class shift cancels), ``"sample"`` ignores per-sample shifts.

    Args:
        logits: (n, K) floating logits, typically on a balanced test set.
        y: (n,) integer labels in [0, K) (any integer dtype); every class must occur.
        variant: ``"class"`` or ``"sample"``.

    Returns:
        (K,) float64 tensor of LoMa values.

    Raises:
        ValueError: labels outside [0, K), a class with no sample (or, for ``"class"``, no
            negative), unknown variant.
        TypeError: non-integer labels, integer or complex logits.

    Examples:
        >>> import torch
        >>> z = torch.tensor([[3.0, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 4.0]])
        >>> logits_magnitude(z, torch.tensor([0, 0, 1, 1])).tolist()
        [1.0, 2.5]
    """
    mu_p, mu_n, _, _ = _pos_neg_moments(logits, y, variant)
    return mu_p - mu_n


@checked
def regularized_std(
    logits: torch.Tensor, y: torch.Tensor, *, variant: Variant = "class",
    spread: Spread = "pooled",
) -> torch.Tensor:
    """Regularized Standard Deviation per class: logit spread divided by LoMa (Sec. 3).

    ``RSD_k = sigma_k / LoMa_k`` with the same positive/negative entries as
    :func:`logits_magnitude` and ``sigma_k`` the population standard deviation of

    * ``spread="positive"``: the positive entries,
    * ``spread="negative"``: the negative entries,
    * ``spread="pooled"`` (default): ``sqrt((var_pos + var_neg) / 2)``, positives and
      negatives weighted equally (so the many negatives do not swamp the positives).

    The paper does not say which spread it divides; RSD is invariant to rescaling the
    logits in every choice, which is the property the paper uses (RSD stays roughly the
    same across re-training methods, so a smaller LoMa means less error). RSD is negative
    when LoMa is, and infinite when LoMa is zero.

    Args:
        logits: (n, K) floating logits; y: (n,) labels in [0, K), every class present.
        variant: ``"class"`` or ``"sample"`` (see :func:`logits_magnitude`).
        spread: ``"positive"``, ``"negative"`` or ``"pooled"``.

    Returns:
        (K,) float64 tensor of RSD values.
    """
    check_choice(spread, "spread", Spread)
    mu_p, mu_n, var_p, var_n = _pos_neg_moments(logits, y, variant)
    var = {"positive": var_p, "negative": var_n, "pooled": 0.5 * (var_p + var_n)}[spread]
    return var.sqrt() / (mu_p - mu_n)


@checked
def per_class_accuracy(y_pred: ArrayLike, y: ArrayLike, n_classes: int) -> torch.Tensor:
    """Recall of each class, as (K,) float64 fractions in [0, 1].

    Args:
        y_pred: (n,) predicted labels; y: (n,) true labels, both integers in [0, K).
        n_classes: K; every class must occur in ``y``.

    Raises:
        ValueError: a class absent from ``y``, labels out of range, mismatched lengths.
    """
    n_classes = check_int(n_classes, "n_classes", 1)
    y = check_labels(y, "y", n_classes)
    y_pred = check_labels(y_pred, "y_pred", n_classes, n=len(y), device=y.device)
    total = class_counts(y, n_classes, "y")
    hit = torch.bincount(y[y_pred == y], minlength=n_classes)
    return hit.double() / total.double()


@checked
def balanced_accuracy(y_pred: ArrayLike, y: ArrayLike, n_classes: int) -> float:
    """Mean per-class recall as a fraction in [0, 1] (``sklearn.metrics.balanced_accuracy_score``
    with the arguments in the order ``(y_pred, y)``)."""
    return float(per_class_accuracy(y_pred, y, n_classes).mean())


@checked
def shot_groups(train_counts: ArrayLike, many: int = 100,
                few: int = 20) -> dict[str, torch.Tensor]:
    """Boolean (K,) masks of many-shot (> many), medium ([few, many]), few-shot (< few) classes.

    The CIFAR-100-LT convention of the paper: many > 100, medium 20-100, few < 20 training
    samples.
    """
    c = check_labels(train_counts, "train_counts")
    many, few = check_int(many, "many", 0), check_int(few, "few", 0)
    if few > many:
        raise ValueError(f"few ({few}) must not exceed many ({many})")
    return {"many": c > many, "medium": (c >= few) & (c <= many), "few": c < few}


@checked
def group_accuracy(
    y_pred: ArrayLike, y: ArrayLike, train_counts: ArrayLike, many: int = 100, few: int = 20,
) -> dict[str, float]:
    """Balanced accuracy overall and over many/medium/few-shot classes, as fractions.

    Args:
        y_pred, y: (n,) predicted and true labels of a test set covering all K classes.
        train_counts: (K,) training samples per class.

    Returns:
        ``{"all", "many", "medium", "few"}`` mean per-class accuracies in [0, 1] (NaN for an
        empty group).
    """
    train_counts = check_labels(train_counts, "train_counts")
    acc = per_class_accuracy(y_pred, y, len(train_counts)).cpu()
    out = {"all": float(acc.mean())}
    for name, mask in shot_groups(train_counts.cpu(), many, few).items():
        out[name] = float(acc[mask].mean()) if bool(mask.any()) else float("nan")
    return out
