"""Offline data shared by several methods: bundled loaders and seeded generators."""

from iclr25.datasets.bundled import Split, digits
from iclr25.datasets.synthetic import gaussian_mixture, teacher_classification

__all__ = ["Split", "digits", "gaussian_mixture", "teacher_classification"]
