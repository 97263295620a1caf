"""Canonical Representation Hypothesis / Polynomial Alignment Hypothesis probes (ICLR 2025).

Ziyin, Chuang, Galanti, Poggio, "Formation of Representations in Neural Networks"
(arXiv 2410.03006): representations, weights and neuron gradients of a layer align.
"""

from iclr25.crh.alignment import (
    PowerLawFit,
    alignment_score,
    power_law_exponent,
    random_orthogonal,
    rotation_null,
)
from iclr25.crh.probe import POWER_LAWS, RELATIONS, AlignmentProbe, LayerAlignment

__all__ = [
    "POWER_LAWS",
    "RELATIONS",
    "AlignmentProbe",
    "LayerAlignment",
    "PowerLawFit",
    "alignment_score",
    "power_law_exponent",
    "random_orthogonal",
    "rotation_null",
]
