"""Classical (scikit-image) restorers per degradation, which :func:`restore` checks against."""

from __future__ import annotations

import math

import numpy as np
import torch

from iclr25._checks import check_choice
from iclr25._contract import Images, checked
from iclr25._guard import disk_psf, gaussian_psf, noise_sigma
from iclr25.datasets.images import KINDS, check_images

__all__ = ["CLASSICAL", "classical"]

#: The degradations that have a classical restorer here, and which one.
CLASSICAL: dict[str, str] = {
    "noise": "NL-means",
    "blur": "Richardson-Lucy",
    "defocus": "Richardson-Lucy",
    "motion_blur": "unsharp mask",
    "low_light": "gamma",
}


def _richardson_lucy(a: np.ndarray, psf: np.ndarray) -> np.ndarray:
    """15 Richardson-Lucy iterations per channel on a reflect-padded (H, W, 3) image (zero
    padding rings at the border, as the benchmark found)."""
    from skimage import restoration

    r = psf.shape[0] // 2
    p = np.pad(a, ((r, r), (r, r), (0, 0)), mode="reflect")
    out = np.stack([restoration.richardson_lucy(p[..., c], psf, num_iter=15)
                    for c in range(3)], -1)
    return out[r:-r, r:-r]


def _one(a: np.ndarray, kind: str, sigma: float) -> np.ndarray:
    from skimage import filters, restoration

    if kind == "noise":
        return restoration.denoise_nl_means(a, h=0.8 * sigma, sigma=sigma, fast_mode=True,
                                            patch_size=5, patch_distance=6, channel_axis=-1)
    if kind == "blur":
        return _richardson_lucy(a, gaussian_psf(2.0))
    if kind == "defocus":
        return _richardson_lucy(a, disk_psf(3.0))
    if kind == "motion_blur":
        # channel_axis=2, not -1: scikit-image 0.26 with -1 filters three rows and leaves the
        # rest of its output uninitialised (issue 68, h68post9)
        return filters.unsharp_mask(a, radius=2, amount=1, channel_axis=2)
    m = float(np.clip(a.mean(), 1e-4, 0.999))     # low_light
    return np.clip(a, 0, None) ** (math.log(0.5) / math.log(m))


@checked
def classical(images: Images, degradation: str) -> torch.Tensor:
    """Restore images with the classical scikit-image restorer for ``degradation``.

    =========== =====================================================================
    noise       ``denoise_nl_means`` (h = 0.8σ, 5-px patches, distance 6), σ by Donoho's
                wavelet estimate per image
    blur        Richardson-Lucy, 15 iterations, Gaussian PSF σ = 2 (the centre of
                :func:`~iclr25.datasets.images.degrade`'s 1.5-2.5), reflect-padded
    defocus     Richardson-Lucy, 15 iterations, disk PSF of radius 3 (centre of 2-4)
    motion_blur ``unsharp_mask`` (radius 2, amount 1): the blur's direction is unknown
    low_light   a per-image gamma bringing the mean to 0.5
    =========== =====================================================================

    Other kinds (jpeg, haze, rain, inpaint, mosaic) have no classical restorer here.

    Args:
        images: (3, H, W) or (B, 3, H, W) in [0, 1].
        degradation: a key of :data:`CLASSICAL`.

    Returns:
        Restored images clipped to [0, 1], the input's shape, dtype and device.

    Raises:
        ValueError: bad images, or ``degradation`` without a classical restorer.

    Examples:
        >>> x = torch.full((3, 16, 16), 0.1)
        >>> round(float(classical(x, "low_light").mean()), 3)
        0.5
    """
    check_choice(degradation, "degradation", KINDS)
    if degradation not in CLASSICAL:
        raise ValueError(f"degradation {degradation!r} has no classical restorer; those with "
                         f"one: {', '.join(CLASSICAL)}")
    x = check_images(images, "images")
    out = _classical(x[None] if x.ndim == 3 else x, degradation)
    return out[0] if x.ndim == 3 else out


def psfs(degradation: str) -> list[torch.Tensor]:
    """The blur kernel the classical restorer of ``degradation`` assumes, as a one-item list
    (Gaussian σ = 2, disk radius 3; [] for kinds without one)."""
    if degradation == "blur":
        return [torch.from_numpy(gaussian_psf(2.0))]
    if degradation == "defocus":
        return [torch.from_numpy(disk_psf(3.0))]
    return []


def _classical(b: torch.Tensor, degradation: str) -> torch.Tensor:
    """:func:`classical` on a (B, 3, H, W) batch, unchecked (values may leave [0, 1])."""
    sig = noise_sigma(b).tolist()
    outs = [_one(im.detach().cpu().double().permute(1, 2, 0).numpy(), degradation, s)
            for im, s in zip(b, sig, strict=True)]
    return torch.from_numpy(np.stack(outs)).permute(0, 3, 1, 2).clamp(0, 1).to(b)
