"""Reconstruction metrics: volumetric IoU of occupancies and Chamfer-L1 of point sets."""

from __future__ import annotations

import numpy as np
import torch
from scipy.spatial import cKDTree

from iclr25._checks import ArrayLike, as_tensor
from iclr25._contract import checked


@checked
def iou(occ_pred: ArrayLike, occ_true: ArrayLike) -> float:
    """Intersection over union of two boolean occupancy vectors on the same query points.

    Args:
        occ_pred: (m,) bool (or 0/1) predicted inside/outside.
        occ_true: (m,) bool (or 0/1) true inside/outside.

    Returns:
        |pred ∧ true| / |pred ∨ true| in [0, 1] (1.0 when both are empty).

    Raises:
        ValueError: not 1-D, different lengths, values other than 0/1.
    """
    a = as_tensor(occ_pred, "occ_pred", ndim=1)
    b = as_tensor(occ_true, "occ_true", ndim=1, device=a.device)
    if len(a) != len(b):
        raise ValueError(f"occ_pred and occ_true must have the same length, got {len(a)} "
                         f"and {len(b)}")
    for t, name in ((a, "occ_pred"), (b, "occ_true")):
        if t.dtype != torch.bool and not bool(((t == 0) | (t == 1)).all()):
            raise ValueError(f"{name} must hold booleans (0/1)")
    a, b = a.bool(), b.bool()
    union = int((a | b).sum())
    return 1.0 if union == 0 else int((a & b).sum()) / union


@checked
def chamfer_l1(X: ArrayLike, Y: ArrayLike) -> float:
    """Symmetric Chamfer-L1 distance: ½ (mean_x min_y |x - y| + mean_y min_x |x - y|).

    The Occupancy-Networks convention (accuracy + completeness) / 2 with Euclidean nearest
    neighbours by ``scipy.spatial.cKDTree``.

    Args:
        X: (n, d) points, e.g. samples of the reconstructed mesh.
        Y: (m, d) points, e.g. samples of the true surface.

    Returns:
        The distance, in the units of the points.

    Raises:
        ValueError: wrong shapes, empty, NaN/inf.
    """
    a = as_tensor(X, "X", ndim=2)
    b = as_tensor(Y, "Y", ndim=2)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"X and Y must have the same number of columns, got {a.shape[1]} "
                         f"and {b.shape[1]}")
    an = a.detach().cpu().double().numpy()
    bn = b.detach().cpu().double().numpy()
    d_ab = cKDTree(bn).query(an)[0]
    d_ba = cKDTree(an).query(bn)[0]
    return float(0.5 * (np.mean(d_ab) + np.mean(d_ba)))
