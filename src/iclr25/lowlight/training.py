"""Training on dark images (no references), inference, and a no-reference noise metric."""

# ruff: noqa: E741  (I is the paper's and the issue's name for the enhanced image)
from __future__ import annotations

import os
from typing import Literal

import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from torch import nn

from iclr25._checks import check_choice, check_int, check_range, resolve_seed
from iclr25._guard import Fallback, check_fallback, check_reference, guarded, noise_sigma
from iclr25._guard import RestorationWarning as _RestorationWarning
from iclr25._io import FittedIO
from iclr25._progress import progress_bar
from iclr25._train import seeded_init
from iclr25.datasets.images import _crops, check_images, load_folder
from iclr25.lowlight.baselines import clahe, gamma_nl_means, gamma_to_mean
from iclr25.lowlight.losses import zero_dce_terms, zero_reference_loss
from iclr25.lowlight.networks import RetinexEnhancer, ZeroDCE

__all__ = ["CLASSICAL", "RestorationWarning", "ZeroReferenceEnhancer", "enhance", "noise_to_signal",
           "train_enhancer"]

Method = Literal["retinex", "zero_dce"]


def _image_list(images: object, name: str = "images") -> list[torch.Tensor]:
    """Tensors, arrays, a (B, 3, H, W) batch, a list of (3, H, W) images or a folder path."""
    if isinstance(images, (str, os.PathLike)):
        return list(load_folder(images).values())
    if isinstance(images, (torch.Tensor, np.ndarray)):
        t = check_images(images, name)
        return [t] if t.ndim == 3 else list(t)
    if isinstance(images, (list, tuple)):
        if not images:
            raise ValueError(f"{name} is empty")
        out = []
        for i, im in enumerate(images):
            t = check_images(im, f"{name}[{i}]")
            out.extend([t] if t.ndim == 3 else list(t))
        return out
    raise TypeError(f"{name} must be a tensor, array, list of images or a folder path, "
                    f"got {type(images).__name__}")


def build_model(method: Method, width: int | None = None, *, seed: int = 0) -> nn.Module:
    """A freshly initialised network for ``method``, weights drawn from ``seed`` only."""
    check_choice(method, "method", ("retinex", "zero_dce"))
    with seeded_init(int(seed)):
        if method == "retinex":
            w = 64 if width is None else width
            return RetinexEnhancer(width=w, l_width=max(1, (3 * w) // 4),
                                   lc_width=max(1, w // 2))
        return ZeroDCE(width=32 if width is None else width)


def train_enhancer(model: nn.Module, images: object, *, steps: int = 600, crop: int = 128,
                   batch_size: int = 4, lr: float = 1e-4, pairing: bool = True,
                   patch: int | None = None, seed: int | torch.Generator | None = 0,
                   ) -> list[float]:
    """Train ``model`` in place on random crops of dark images with the zero-reference loss.

    :class:`RetinexEnhancer` uses :func:`zero_reference_loss` (``pairing=False`` is the
    ablation); :class:`ZeroDCE` uses the Zero-DCE terms only (loss4), as the paper's baseline.

    Args:
        model: the network (trained in place).
        images: dark images: (B, 3, H, W)/(3, H, W) tensors or arrays, a list, or a folder.
        steps, crop, batch_size, lr: Adam schedule and crop size (even).
        pairing: sub-image pairing and loss1 on (the paper) or off (ablation).
        patch: exposure patch; default min(48, crop // 4) on the sub-images of a Retinex
            model, min(48, crop // 2) for Zero-DCE.
        seed: crops, pairing draws and γ.

    Returns:
        The loss per step.

    Raises:
        ValueError: bad ``steps``/``lr``/``crop``, no images, an image smaller than ``crop``.
    """
    steps = check_int(steps, "steps", 1)
    lr = check_range(lr, "lr", 0, low_open=True)
    crop = check_int(crop, "crop", 4)
    if crop % 2:
        raise ValueError(f"crop must be even, got {crop}")
    batch_size = check_int(batch_size, "batch_size", 1)
    ims = _image_list(images)
    for i, im in enumerate(ims):
        if min(im.shape[-2:]) < crop:
            raise ValueError(f"images[{i}] of shape {tuple(im.shape)} is smaller than "
                             f"crop={crop}")
    retinex = isinstance(model, RetinexEnhancer)
    if patch is None:
        patch = min(48, crop // 4 if retinex else crop // 2)
    g = resolve_seed(seed)
    p0 = next(model.parameters())
    # foreach: the same update bit for bit, without a Python loop over the parameters
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), foreach=True)
    model.train()
    history = []
    with progress_bar(steps, "low-light training") as advance:
        for _ in range(steps):
            x = _crops(ims, batch_size, crop, g).to(p0)  # ims checked above
            if retinex:
                loss, _ = zero_reference_loss(model, x, seed=g, pairing=pairing, patch=patch)
            else:
                I = model(x).enhanced
                loss = zero_dce_terms(x, I, patch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            history.append(float(loss.detach()))
            advance(loss=history[-1])
    model.eval()
    return history


class RestorationWarning(_RestorationWarning):
    """:func:`enhance`'s output scored below the classical result or the input (both numbers
    in the message)."""


#: The classical pipelines :func:`enhance` checks itself against (``lowlight.baselines``).
CLASSICAL = {"gamma": gamma_to_mean, "CLAHE": clahe, "gamma + NL-means": gamma_nl_means}


@torch.no_grad()
def enhance(model: nn.Module, images: object, *, reference: object = None,
            fallback: Fallback = "none", check: bool = True, tile: int | None = None,
            batch_size: int = 4) -> torch.Tensor:
    """Enhance dark images with a trained model, checking it against the classical pipelines.

    Each output is scored beside the input and the best of the library's classical
    pipelines (:data:`CLASSICAL`: a gamma curve to mean 0.5, CLAHE, gamma then NL-means;
    the best by the same measure is "the classical result"). Where ours scores below
    either, a :class:`~iclr25.lowlight.RestorationWarning` gives the numbers, and
    ``fallback`` says what is returned. The measure (``iclr25._guard``): PSNR when a
    ``reference`` is given; otherwise NIQE (lower is better), the no-reference score
    low-light papers report on their unpaired sets (LIME, NPE, MEF, DICM). NIQE reads the
    luminance's local statistics: it sees noise, blotches and lost detail, but neither
    colour casts nor overall brightness; pass ``reference=`` where you have one. For the
    same reason NIQE can rank the dark input above a brighter output that PSNR ranks far
    above it (issue 55's walk: 2 of 3 photos), so without a reference prefer
    ``fallback="classical"`` to ``"input"``.

    Args:
        model: a :class:`RetinexEnhancer` or :class:`ZeroDCE`.
        images: (3, H, W) or (B, 3, H, W) in [0, 1].
        reference: well-lit image(s) of ``images``' shape: the check uses PSNR.
        fallback: where ours scores below the alternative: "none" (default) warns and
            returns ours; "classical" returns the classical result; "input" the input.
        check: False skips the comparison (the plain network output, as in the
            reproduction); ``fallback`` must then be "none".
        tile: process non-overlapping ``tile``×``tile`` pieces (bounds memory on large
            photos; the frequency prior then sees each tile alone).
        batch_size: images per forward pass.

    Returns:
        Enhanced images clamped to [0, 1], shape/dtype/device of the input.

    Raises:
        ValueError/TypeError: bad images, reference, fallback, tile or batch size, before
            any work.

    Warns:
        RestorationWarning: ours scores below the classical result or the input.

    Examples:
        >>> net = RetinexEnhancer(width=8, l_width=8, lc_width=8)
        >>> enhance(net, torch.full((3, 20, 30), 0.1), check=False).shape
        torch.Size([3, 20, 30])
    """
    t = check_images(images, "images")
    if tile is not None:
        tile = check_int(tile, "tile", 8)
    batch_size = check_int(batch_size, "batch_size", 1)
    ref = check_reference(reference, t)
    fallback = check_fallback(fallback, check)
    single = t.ndim == 3
    x = t[None] if single else t
    p0 = next(model.parameters())
    was = model.training
    model.eval()
    outs = []
    for b in x.split(batch_size):
        b = b.to(p0)
        if tile is None:
            outs.append(model(b).enhanced)
            continue
        H, W = b.shape[-2:]
        out = torch.empty_like(b)
        for i in range(0, H, tile):
            for j in range(0, W, tile):
                out[..., i:i + tile, j:j + tile] = model(b[..., i:i + tile, j:j + tile]).enhanced
        outs.append(out)
    model.train(was)
    y = torch.cat(outs).clamp(0, 1).to(device=t.device, dtype=t.dtype)
    if check:
        y = guarded(x, y, lambda b: b, CLASSICAL, fallback=fallback,
                    measure="niqe" if ref is None else "psnr",
                    reference=None if ref is None else (ref[None] if single else ref),
                    what="lowlight.enhance", category=RestorationWarning)
    return y[0] if single else y


def noise_to_signal(x: object, *, reduction: Literal["mean", "none"] = "mean"
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


class ZeroReferenceEnhancer(FittedIO, BaseEstimator, TransformerMixin):
    """scikit-learn-style estimator: ``fit`` on dark images (no references), ``transform``.

    Args:
        method: "retinex" (the paper's joint network) or "zero_dce" (the baseline).
        width: network width (None = paper: 64 for retinex, 32 for Zero-DCE).
        steps, crop, batch_size, lr: training schedule (Adam).
        seed: weights, crops and pairing draws (an int, a torch.Generator or None: fresh).
        pairing: False = the no-pairing ablation (retinex only).

    Attributes:
        model_: the trained network; history_: loss per step.

    Examples:
        >>> x = torch.rand(2, 3, 16, 16) * 0.1
        >>> est = ZeroReferenceEnhancer(width=8, steps=2, crop=8, batch_size=1).fit(x)
        >>> est.transform(x).shape
        torch.Size([2, 3, 16, 16])
    """

    def __init__(self, method: Method = "retinex", *, width: int | None = None, steps: int = 600,
                 crop: int = 128, batch_size: int = 4, lr: float = 1e-4,
                 seed: int | torch.Generator | None = 0, pairing: bool = True) -> None:
        self.method = method
        self.width = width
        self.steps = steps
        self.crop = crop
        self.batch_size = batch_size
        self.lr = lr
        self.seed = seed
        self.pairing = pairing

    def fit(self, images: object, y: object = None) -> ZeroReferenceEnhancer:
        check_choice(self.method, "method", ("retinex", "zero_dce"))
        if self.width is not None:
            check_int(self.width, "width", 1)
        check_int(self.steps, "steps", 1)
        check_range(self.lr, "lr", 0, low_open=True)
        ims = _image_list(images)
        # an int seed seeds the weights with itself
        model = build_model(self.method, self.width, seed=resolve_seed(self.seed).initial_seed())
        self.history_ = train_enhancer(model, ims, steps=self.steps, crop=self.crop,
                                       batch_size=self.batch_size, lr=self.lr,
                                       pairing=self.pairing, seed=self.seed)
        self.model_ = model
        return self

    def _check_fitted(self) -> None:
        check_is_fitted(self, "model_")

    def transform(self, images: object, *, reference: object = None,
                  fallback: Fallback = "none", check: bool = True,
                  tile: int | None = None) -> torch.Tensor:
        """:func:`enhance` with the fitted model (same check, warning and ``fallback``)."""
        self._check_fitted()
        return enhance(self.model_, images, reference=reference, fallback=fallback,
                       check=check, tile=tile)

    def _new_module(self, name: str) -> nn.Module:
        config = getattr(self, "config_", None)  # set by load_official: the file's sizes
        if config:
            return RetinexEnhancer(**config)
        return build_model(self.method, self.width, seed=resolve_seed(self.seed).initial_seed())


