"""A no-reference noise metric for enhanced images."""

from __future__ import annotations

from typing import Literal

import torch

from iclr25._checks import check_choice
from iclr25._contract import Images, checked
from iclr25._guard import noise_sigma
from iclr25.datasets.images import check_images

__all__ = ["noise_to_signal"]


@checked
def noise_to_signal(x: Images, *, reduction: Literal["mean", "none"] = "mean"
                    ) -> float | torch.Tensor:
    """No-reference noise level divided by mean brightness (brightness-invariant).

    σ is Donoho's wavelet estimate, median(|HH|)/0.6745 of the finest diagonal Haar
    sub-band per channel (as ``skimage.restoration.estimate_sigma``, which uses db2 and needs
    PyWavelets), averaged over channels, then divided by the image mean.

    Args:
        x: (3, H, W) or (B, 3, H, W) in [0, 1], at least 2×2.
        reduction: "mean" (float) or "none" ((B,) float64 tensor).
    """
    check_choice(reduction, "reduction", ("mean", "none"))
    t = check_images(x, "x").double()
    t = t[None] if t.ndim == 3 else t
    H, W = t.shape[-2:]
    if H < 2 or W < 2:
        raise ValueError(f"x must be at least 2×2, got {H}×{W}")
    v = noise_sigma(t) / t.mean((1, 2, 3)).clamp(min=1e-12)
    return float(v.mean()) if reduction == "mean" else v
