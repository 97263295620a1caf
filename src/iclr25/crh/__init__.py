"""Canonical Representation / Polynomial Alignment Hypotheses: probe how a layer's
representations, weights and neuron gradients align (Ziyin et al., ICLR 2025)."""

from iclr25.claims import Paper
from iclr25.crh.alignment import (
    PowerLawFit,
    alignment_score,
    power_law_exponent,
    random_orthogonal,
    rotation_null,
)
from iclr25.crh.probe import POWER_LAWS, RELATIONS, AlignmentProbe, LayerAlignment

PAPER = Paper(
    number=4,
    short="crh",
    title="Formation of Representations in Neural Networks",
    authors="Liu Ziyin, Isaac Chuang, Tomer Galanti, Tomaso Poggio",
    arxiv="2410.03006",
    openreview="Njx1NjHIx4",
    code=None,  # no official repository found
)

__all__ = [
    "PAPER",
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
