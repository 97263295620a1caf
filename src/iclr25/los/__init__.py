"""Label Over-Smoothing (LOS): re-train a long-tailed classifier with eps ~ 1 label smoothing."""

from iclr25.claims import Paper
from iclr25.los.data import long_tailed_counts, make_long_tailed
from iclr25.los.loss import LabelOverSmoothingLoss, label_over_smoothing_loss, smoothed_targets
from iclr25.los.metrics import (
    balanced_accuracy,
    group_accuracy,
    logits_magnitude,
    per_class_accuracy,
    regularized_std,
    shot_groups,
)
from iclr25.los.training import (
    METHODS,
    RetrainedClassifier,
    class_balanced_weights,
    retrain_classifier,
)

PAPER = Paper(
    number=3,
    short="los",
    title="Rethinking Classifier Re-Training in Long-Tailed Recognition: "
          "Label Over-Smooth Can Balance",
    authors="Siyu Sun, Han Lu, Jiangtong Li, Yichen Xie, Tianjiao Li, Xiaokang Yang, "
            "Liqing Zhang, Junchi Yan",
    arxiv="2403.00250",
    openreview="OeKp3AdiVO",
    code="bilibili/LOS",
)

__all__ = [
    "METHODS",
    "PAPER",
    "LabelOverSmoothingLoss",
    "RetrainedClassifier",
    "balanced_accuracy",
    "class_balanced_weights",
    "group_accuracy",
    "label_over_smoothing_loss",
    "logits_magnitude",
    "long_tailed_counts",
    "make_long_tailed",
    "per_class_accuracy",
    "regularized_std",
    "retrain_classifier",
    "shot_groups",
    "smoothed_targets",
]
