"""Training on dark images (no references): a fresh network per method, and the
zero-reference training loop."""

# ruff: noqa: E741  (I is the paper's and the issue's name for the enhanced image)
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Annotated, Any

import numpy as np
import torch
from torch import nn

from iclr25._checks import check_choice, check_int, check_range, resolve_seed
from iclr25._choices import LowLightMethod as Method
from iclr25._contract import Array, PathLike, Positive, PositiveInt, checked
from iclr25._engine import Engine, EngineOptions, Stream, Unpack, fingerprint
from iclr25._train import fit_minibatch, seeded_init
from iclr25.datasets.images import _crops, check_images, load_folder
from iclr25.lowlight.losses import _pairing_draws, _zero_reference_loss, zero_dce_terms
from iclr25.lowlight.networks import RetinexEnhancer, ZeroDCE

__all__ = ["build_model", "train_enhancer"]

#: Dark images to train on: a (B, 3, H, W) batch or one (3, H, W) image, a list of them
#: (each checked where it is read), or a folder of image files.
Images = Annotated[torch.Tensor | np.ndarray, Array("float", (3, 4))] | Sequence[Any] | PathLike


def _image_list(images: Images, name: str = "images") -> list[torch.Tensor]:
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


@checked
def train_enhancer(model: nn.Module, images: Images, *, steps: PositiveInt = 600,
                   crop: PositiveInt = 128, batch_size: PositiveInt = 4, lr: Positive = 1e-4,
                   pairing: bool = True,
                   patch: int | None = None, seed: int | torch.Generator | None = 0,
                   **engine: Unpack[EngineOptions]) -> list[float]:
    """Train ``model`` in place on random crops of dark images with the zero-reference loss.

    :class:`RetinexEnhancer` uses :func:`zero_reference_loss` (``pairing=False`` is the
    ablation); :class:`ZeroDCE` uses the Zero-DCE terms only (loss4), as the paper's baseline.
    The steps run on the package's training engine (:func:`iclr25._train.fit_minibatch`):
    each step's crops and pairing draws come from ``seed`` as one global batch (a
    :class:`iclr25._engine.Stream`), so under DDP every process draws the same batch and
    trains on its share of the crops, with their rows of the pairing draw.

    Args:
        model: the network (trained in place).
        images: dark images: (B, 3, H, W)/(3, H, W) tensors or arrays, a list, or a folder.
        steps, crop, batch_size, lr: Adam schedule and crop size (even); ``batch_size`` is
            the global batch.
        pairing: sub-image pairing and loss1 on (the paper) or off (ablation).
        patch: exposure patch; default min(48, crop // 4) on the sub-images of a Retinex
            model, min(48, crop // 2) for Zero-DCE.
        seed: crops, pairing draws and γ.
        **engine: how the loop runs (:class:`iclr25._engine.EngineOptions`: ``devices``,
            ``strategy``, ``precision``, ``checkpoint``, ``checkpoint_every``, ``resume``);
            a checkpoint records the images' fingerprint, so resuming on other images is
            refused.

    Returns:
        The loss per step.

    Raises:
        ValueError: bad ``steps``/``lr``/``crop``, no images, an image smaller than ``crop``;
            bad engine options, or a checkpoint that does not fit (named).
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
    p0 = next(model.parameters())
    Engine.of(engine, p0.device.type)
    retinex = isinstance(model, RetinexEnhancer)
    if patch is None:
        patch = min(48, crop // 4 if retinex else crop // 2)
    g = resolve_seed(seed)

    def batches(_: int) -> Iterator[tuple[tuple[Any, ...], None]]:
        for _ in range(steps):
            x = _crops(ims, batch_size, crop, g).to(p0)  # ims checked above
            yield ((x, *_pairing_draws(x.shape, g, pairing)) if retinex else (x,)), None

    # foreach: the same update bit for bit, without a Python loop over the parameters
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), foreach=True)
    history = fit_minibatch(
        _Objective(model, patch), lambda loss, _: loss,
        Stream(batches, len(ims), lambda: fingerprint(*ims)), None,
        epochs=1, batch_size=batch_size, optimizer=opt, seed=g, interval="step",
        progress="low-light training", steps=steps, **engine)
    model.eval()
    return history


class _Objective(nn.Module):
    """One step's loss on a batch of crops (with, for a Retinex model, their pairing draws:
    :func:`zero_reference_loss`; for Zero-DCE its terms alone), as the engine calls it."""

    def __init__(self, model: nn.Module, patch: int) -> None:
        super().__init__()
        self.model, self.patch = model, patch

    def forward(self, batch: tuple[Any, ...]) -> torch.Tensor:
        x = batch[0]
        if len(batch) > 1:
            return _zero_reference_loss(self.model, x, *batch[1:], self.patch)[0]
        return zero_dce_terms(x, self.model(x).enhanced, self.patch)
