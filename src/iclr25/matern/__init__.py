"""Matérn: watertight implicit surfaces from oriented point clouds by Matérn kernel regression.

Weiherer & Egger, "Matérn Kernels for Tunable Implicit Surface Reconstruction", ICLR 2025.
"""

from iclr25.claims import Paper
from iclr25.matern.io import read_point_cloud, write_mesh
from iclr25.matern.kernels import arccos_kernel, matern_kernel
from iclr25.matern.metrics import chamfer_l1, iou
from iclr25.matern.shapes import make_shape
from iclr25.matern.surface import KernelSurface, farthest_point_sampling

PAPER = Paper(
    number=8,
    short="matern",
    title="Matérn Kernels for Tunable Implicit Surface Reconstruction",
    authors="Maximilian Weiherer, Bernhard Egger",
    arxiv="2409.15466",
    code="mweiherer/matern-surface-reconstruction",
)

__all__ = [
    "PAPER",
    "KernelSurface",
    "arccos_kernel",
    "chamfer_l1",
    "farthest_point_sampling",
    "iou",
    "make_shape",
    "matern_kernel",
    "read_point_cloud",
    "write_mesh",
]
