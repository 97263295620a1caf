"""DCPT's losses: focal loss for degradation classification and the pre-training objective."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import as_tensor, check_labels, check_range
from iclr25._contract import Floats2D, Images, Ints1D, NonNegative, checked
from iclr25.datasets.images import check_images
from iclr25.dcpt.networks import DegradationClassifier, FeatureTap

__all__ = ["FocalLoss", "dcpt_loss", "focal_loss"]


@checked
def focal_loss(logits: Floats2D, y: Ints1D, gamma: NonNegative = 0.0) -> torch.Tensor:
    """Focal loss (Lin et al. 2017), batch mean: mean_i (1 − p_i)^γ · (−log p_i), p_i = p(y_i).

    ``gamma = 0`` is cross-entropy (the official code's default ``FocalLoss``).

    Args:
        logits: (B, K) scores.
        y: (B,) int64 labels in [0, K).
        gamma: focusing exponent, >= 0.

    Returns:
        Scalar tensor (differentiable).

    Raises:
        ValueError: shapes, labels out of range or wrong length, ``gamma < 0``.
    """
    z = as_tensor(logits, "logits", ndim=2)
    if not z.is_floating_point():
        raise TypeError(f"logits must be floating point, got {z.dtype}")
    gamma = check_range(gamma, "gamma", 0)
    t = check_labels(y, "y", z.shape[1], n=z.shape[0], device=z.device)
    logp = F.log_softmax(z, 1).gather(1, t[:, None])[:, 0]
    if gamma == 0:
        return -logp.mean()
    return -((1 - logp.exp()).clamp(min=0) ** gamma * logp).mean()


@checked
class FocalLoss(nn.Module):
    """Module twin of :func:`focal_loss`."""

    def __init__(self, gamma: NonNegative = 0.0) -> None:
        super().__init__()
        self.gamma = check_range(gamma, "gamma", 0)

    def forward(self, logits: Floats2D, y: Ints1D) -> torch.Tensor:
        return focal_loss(logits, y, self.gamma)


def _dcpt_step(model: nn.Module, classifier: nn.Module, tap: FeatureTap, lq: torch.Tensor,
               gt: torch.Tensor, y: torch.Tensor, gamma: float
               ) -> tuple[torch.Tensor, dict[str, float]]:
    """The unchecked objective: L1(E(gt), gt) + focal(C(feats(E(lq))), y)."""
    pixel = F.l1_loss(model(gt), gt)
    tap.clear()
    model(lq)
    logits = classifier(tap.features)
    cls = focal_loss(logits, y, gamma)
    acc = (logits.argmax(1) == y).float().mean()
    parts = {"pixel": float(pixel.detach()), "cls": float(cls.detach()), "accuracy": float(acc)}
    return pixel + cls, parts


@checked
def dcpt_loss(model: nn.Module, classifier: DegradationClassifier, lq: Images, gt: Images,
              y: Ints1D, *, layers: str | Sequence[str], focal_gamma: NonNegative = 0.0
              ) -> tuple[torch.Tensor, dict[str, float]]:
    """The DCPT pre-training objective (paper Eq. 3-5; ``DCPTModel.optimize_parameters``).

    L = L1(E(gt), gt) + Focal(C(features of E(lq)), y): the clean-image term keeps the
    network generating images, the classification term makes its features name the
    degradation. E is ``model``, C the ``classifier``, features are tapped at ``layers``.

    Args:
        model: any image-to-image network (B, 3, H, W) -> (B, 3, H, W).
        classifier: a :class:`DegradationClassifier` whose ``feature_dims`` match the taps.
        lq, gt: (B, 3, H, W) degraded and clean images in [0, 1].
        y: (B,) int64 degradation labels.
        layers: module names to tap, fine to coarse.
        focal_gamma: focal exponent (0 = cross-entropy).

    Returns:
        ``(loss, parts)``: the differentiable scalar and ``{"pixel", "cls", "accuracy"}``.

    Raises:
        ValueError/TypeError: bad images, labels, ``focal_gamma < 0``, unknown layers,
            ``len(layers) != len(classifier.feature_dims)``.
    """
    lq_t = check_images(lq, "lq")
    gt_t = check_images(gt, "gt")
    if lq_t.ndim != 4 or lq_t.shape != gt_t.shape:
        raise ValueError(f"lq and gt must be (B, 3, H, W) batches of one shape, got "
                         f"{tuple(lq_t.shape)} and {tuple(gt_t.shape)}")
    n_classes = getattr(classifier, "n_classes", None)
    y_t = check_labels(y, "y", n_classes, n=lq_t.shape[0], device=lq_t.device)
    gamma = check_range(focal_gamma, "focal_gamma", 0)
    _check_layers(classifier, layers)
    with FeatureTap(model, layers) as tap:
        return _dcpt_step(model, classifier, tap, lq_t, gt_t, y_t, gamma)


def _check_layers(classifier: nn.Module, layers: Sequence[str]) -> None:
    dims = getattr(classifier, "feature_dims", None)
    if isinstance(layers, str):
        raise TypeError("layers must be a sequence of module names, got a single string")
    if dims is not None and len(dims) != len(layers):
        raise ValueError(f"feature_dims has {len(dims)} entries but layers has {len(layers)}; "
                         f"one channel count per tapped layer")
