"""Label Over-Smoothing (LOS): re-train a long-tailed classifier with eps ~ 1 label smoothing.

Sun et al., "Rethinking Classifier Re-Training in Long-Tailed Recognition: Label Over-Smooth
Can Balance", ICLR 2025.
"""

from iclr25.los.data import long_tailed_counts, make_long_tailed
from iclr25.los.loss import label_over_smoothing_loss, smoothed_targets
from iclr25.los.metrics import (
    balanced_accuracy,
    group_accuracy,
    logits_magnitude,
    per_class_accuracy,
    regularized_std,
    shot_groups,
)
from iclr25.los.retrain import (
    METHODS,
    RetrainedClassifier,
    class_balanced_weights,
    retrain_classifier,
)

__all__ = [
    "METHODS",
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
