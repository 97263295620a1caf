"""Classical enhancement pipelines (scikit-image) that a user would try first."""

from __future__ import annotations

import math

import numpy as np
import torch

from iclr25._checks import ArrayLike
from iclr25._optional import require
from iclr25.datasets.images import check_images
from iclr25.lowlight.metrics import noise_to_signal

__all__ = ["clahe", "gamma_to_mean", "gamma_nl_means"]


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().double().permute(1, 2, 0).numpy()


def _back(a: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a)).permute(2, 0, 1).to(like).clamp(0, 1)


def clahe(x: ArrayLike, *, clip_limit: float = 0.01) -> torch.Tensor:
    """CLAHE per image (``skimage.exposure.equalize_adapthist``); (3, H, W) or (B, 3, H, W)."""
    exposure = require("skimage.exposure", "image")
    t = check_images(x, "x")
    b = t[None] if t.ndim == 3 else t
    out = torch.stack([_back(exposure.equalize_adapthist(_np(im), clip_limit=clip_limit), im)
                       for im in b])
    return out[0] if t.ndim == 3 else out


def gamma_to_mean(x: ArrayLike, *, target: float = 0.5) -> torch.Tensor:
    """Per-image gamma x^γ with γ = log(target)/log(mean x), so the mean is near ``target``."""
    t = check_images(x, "x")
    b = t[None] if t.ndim == 3 else t
    m = b.mean((1, 2, 3), keepdim=True).clamp(1e-4, 0.999)
    gam = math.log(target) / torch.log(m)
    out = b.clamp(min=0) ** gam
    return out[0] if t.ndim == 3 else out


def gamma_nl_means(x: ArrayLike, *, target: float = 0.5) -> torch.Tensor:
    """:func:`gamma_to_mean` then ``denoise_nl_means`` with σ from ``estimate_sigma``-style MAD."""
    restoration = require("skimage.restoration", "image")
    t = gamma_to_mean(x, target=target)
    b = t[None] if t.ndim == 3 else t
    outs = []
    for im in b:
        sigma = noise_to_signal(im) * float(im.mean())
        a = restoration.denoise_nl_means(_np(im), h=0.8 * sigma, sigma=sigma, fast_mode=True,
                                         patch_size=5, patch_distance=6, channel_axis=-1)
        outs.append(_back(a, im))
    out = torch.stack(outs)
    return out[0] if t.ndim == 3 else out
