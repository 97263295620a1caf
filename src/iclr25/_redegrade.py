"""Re-degradation: a blur restorer scored by its own round trip one level down (issue 68,
h68redeg).

The noise check scores the restorer ``f``, not its output, by re-running ``f`` on a
re-corrupted input (``iclr25._guard.r2r_psnr``). This is the analogue for blurs whose
kernel is read from the photo ``y`` (the likeliest Gaussian or disk of
``iclr25._guard._Posterior``, the likeliest line of
``iclr25._motion_posterior.MotionPosterior``): a pseudo pair ``(ỹ, ŷ)`` is made from ``y``
alone whose relation is the photo's own degradation, and ``f`` is scored by
``PSNR(f(ỹ), ŷ)``; the identity (the input's arm) scores ``PSNR(ỹ, ŷ)``.

The pair is a scale-space one, so that a blind restorer, which aims at the sharp image, is
not charged for removing ``y``'s own blur: ``ŷ`` is ``y`` averaged over ``s × s`` blocks
(area downsampling), whose residual blur is the photo's ``σ/s`` in its pixels, and ``ỹ``
is ``ŷ`` blurred by the read kernel, either at its full width (``how="full"``: ``ỹ``'s blur
is ``σ √(1 + 1/s²)``, a little wider than the photo's) or at ``√(1 − 1/s²)`` of it
(``how="matched"``: second moments add under convolution, so ``ỹ``'s blur has the photo's
second moment, ``σ``; exact for Gaussians, the variance's match for a disk or a line). At
``s = 1`` (``ŷ = y``; only ``"full"``) a non-blind restorer with the photo's kernel maps
``ỹ = k * y`` back to ``y`` exactly where it is right.

What it cannot see: the photo's noise is averaged down by ``s`` in ``ŷ`` and ``ỹ``, and
the scene one scale down is not the scene: detail finer than ``s`` pixels is gone from the
pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F

#: How ``ỹ`` is blurred: by the read kernel at its full width, or at √(1 − 1/s²) of it.
How = Literal["full", "matched"]
HOWS: tuple[How, ...] = ("full", "matched")

Restorer = Callable[[torch.Tensor], torch.Tensor]


def width_factor(scale: int, how: How) -> float:
    """The factor on the read kernel's width that blurs ``ŷ`` into ``ỹ`` (module docstring):
    1 for ``"full"``, √(1 − 1/s²) for ``"matched"`` (``scale`` > 1)."""
    _check_scale(scale)
    if how not in HOWS:
        raise ValueError(f"how must be one of {HOWS}, got {how!r}")
    if how == "full":
        return 1.0
    if scale == 1:
        raise ValueError("how='matched' needs scale > 1 (at scale 1 the width is 0)")
    return math.sqrt(1 - 1 / scale ** 2)


def _check_scale(scale: object) -> None:
    if isinstance(scale, bool) or not isinstance(scale, int) or scale < 1:
        raise ValueError(f"scale must be an integer >= 1, got {scale!r}")


def downsample(y: torch.Tensor, scale: int) -> torch.Tensor:
    """``y`` (B, C, H, W) averaged over ``scale × scale`` blocks (area downsampling; the
    last ``H mod s`` rows and ``W mod s`` columns dropped): (B, C, H // s, W // s) float64."""
    _check_scale(scale)
    t = y.detach().cpu().double()
    return t if scale == 1 else F.avg_pool2d(t, scale)


def redegrade_pair(y: torch.Tensor, scale: int, kernel: np.ndarray | torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """The pseudo pair of one photo: ``ŷ`` = ``y`` (1, C, H, W) downsampled by ``scale``
    (:func:`downsample`), ``ỹ`` = ``ŷ`` convolved with ``kernel`` (k, k) (mirrored edges,
    ``iclr25._guard.reblur``), clamped to [0, 1]. Returns ``(ỹ, ŷ)``, each (1, C, H // s,
    W // s) float64."""
    from iclr25._guard import reblur

    if y.ndim != 4 or len(y) != 1:
        raise ValueError(f"y must be one image as (1, C, H, W), got {tuple(y.shape)}")
    k = torch.as_tensor(np.asarray(kernel, dtype=np.float64))
    if k.ndim != 2 or k.shape[0] != k.shape[1] or k.shape[0] % 2 == 0:
        raise ValueError(f"kernel must be (k, k) with k odd, got {tuple(k.shape)}")
    hat = downsample(y, scale)
    return reblur(hat, k, fft=True).clamp(0, 1), hat


def unpaired(y: torch.Tensor, kernels: Sequence[np.ndarray | None], scale: int
             ) -> list[str | None]:
    """Per image of ``y`` (B, C, H, W): why it has no pseudo pair at ``scale`` under
    ``kernels[i]`` (k, k) (:func:`redegrade_pair`), None where it has one: no kernel was read
    (None), ``ŷ`` is narrower than the kernel (the photo is too small), or ``ŷ`` is flat
    (nothing to restore). The phrases complete "is not judged, ..." in the check's warning."""
    if len(kernels) != len(y):
        raise ValueError(f"kernels must have one kernel per image ({len(y)}), got "
                         f"{len(kernels)}")
    _check_scale(scale)
    h, w = (n // scale for n in y.shape[-2:])
    out: list[str | None] = []
    for i, k in enumerate(kernels):
        if k is None:
            out.append("no blur kernel was read from it")
        elif min(h, w) < np.shape(k)[0]:
            out.append(f"it is too small for the restorer's round trip: {scale}x smaller "
                       f"({h} x {w} px) it is narrower than the {np.shape(k)[0]} px kernel "
                       f"read from it")
        elif float(np.ptp(downsample(y[i:i + 1], scale).numpy())) == 0:
            out.append("it is flat: the restorer's round trip has nothing to restore")
        else:
            out.append(None)
    return out


def pair_psnr(f: Restorer, tilde: torch.Tensor, hat: torch.Tensor, like: torch.Tensor
              ) -> torch.Tensor:
    """``PSNR(f(ỹ), ŷ)`` (dB, peak 1) of each of ``n`` pseudo pairs ``tilde``, ``hat`` (n, C,
    h, w): the round trips' score of a restorer (this module's and
    :func:`iclr25._rejpeg.rejpeg_score`). ``f`` is called once, on ``tilde`` on ``like``'s
    device and in its dtype, as ``f(y)`` is called, and must keep its shape. +inf where
    ``f(ỹ)`` is ``ŷ`` exactly; NaN (it clears no margin) where ``f``'s output holds a NaN.
    Returns (n,) float64."""
    with torch.no_grad():
        z = f(tilde.to(like)).detach().cpu().double()
    if z.shape != tilde.shape:
        raise ValueError(f"f must return its input's shape {tuple(tilde.shape)}, got "
                         f"{tuple(z.shape)}")
    return -10 * torch.log10(((z - hat) ** 2).flatten(1).mean(1))


#: Each image's pseudo pair ``(ỹ, ŷ)`` (:func:`redegrade_pair`), None where it has none.
Pairs = list[tuple[torch.Tensor, torch.Tensor] | None]


def pseudo_pairs(y: torch.Tensor, kernels: Sequence[np.ndarray | None], scale: int
                 ) -> tuple[Pairs, list[str | None]]:
    """Each image of ``y`` (B, C, H, W)'s pseudo pair under ``kernels[i]`` (k, k), the
    kernel ``ỹ`` is blurred by (the read kernel at the width of :func:`width_factor`), and
    why an image has none (:func:`unpaired`; None where it has one): built once per check,
    for every arm."""
    whys = unpaired(y, kernels, scale)
    return [None if why is not None else redegrade_pair(y[i:i + 1], scale, k)
            for i, (k, why) in enumerate(zip(kernels, whys, strict=True))], whys


def redegrade_score(f: Restorer, pairs: Pairs, like: torch.Tensor) -> torch.Tensor:
    """:func:`pair_psnr` of ``f`` on each image's pair of :func:`pseudo_pairs` (one call of
    ``f`` per pair: the images' sizes may differ), NaN where it has none. Returns (B,)
    float64."""
    return torch.tensor([math.nan if p is None else float(pair_psnr(f, *p, like)[0])
                         for p in pairs], dtype=torch.float64)


def redegrade_psnr(f: Restorer, y: torch.Tensor, kernels: Sequence[np.ndarray | None],
                   scale: int) -> torch.Tensor:
    """``PSNR(f(ỹ), ŷ)`` (dB, peak 1) of each image of ``y`` (B, C, H, W), ``(ỹ, ŷ)`` its
    pseudo pair (:func:`redegrade_pair`) under ``kernels[i]`` (k, k), the kernel ``ỹ`` is
    blurred by (the read kernel at the width of :func:`width_factor`). ``f`` maps a
    (1, C, h, w) batch (on ``y``'s device, in its dtype) to one of its shape; the identity
    (clamped) scores ``PSNR(ỹ, ŷ)``. NaN (it clears no margin) where the photo has no pair
    (:func:`unpaired`: no kernel read, ``ŷ`` smaller than the kernel, or flat) or ``f``'s
    output holds a NaN (:func:`pair_psnr`). Returns (B,) float64."""
    return redegrade_score(f, pseudo_pairs(y, kernels, scale)[0], y)
