"""Enhancing with a trained network: :func:`enhance`, each output checked against the input
and the classical pipelines (:mod:`iclr25._guard`).

Without a reference the check reads a PSNR estimated from what an enhanced photo can be
judged by alone (``iclr25._guard.lowlight_psnr``, the measure DCPT's ``restore`` uses for
``degradation="low_light"``): its tones against a well-exposed photo's (exposure, contrast,
burnt highlights), its colour cast against the input's balance (a grey photo must stay
grey) and its noise. It does not score detail, and it takes a well-lit photo to have the
tones of typical photos (mean 0.46), so it judges only photos that may be under-exposed
typical ones: a photo whose highlights already reach middle grey, a low-key scene (a
night sky, objects on black) or one mostly below its noise floor (an all-black frame:
``iclr25._guard.not_underexposed``) gets no verdict and the default keeps it; pass
``reference=`` where you have one.
By default (``fallback=None``: "input", ``margin=None``: 1 dB without a reference, 0 with
one, :data:`iclr25._guard.MARGINS`) the network's output is returned only where the check
scores it at least the margin above the input; otherwise the input, unchanged.
"""

from __future__ import annotations

import torch
from torch import nn

from iclr25._checks import check_int
from iclr25._contract import Images, checked
from iclr25._guard import (
    Fallback,
    check_fallback,
    check_margin,
    check_reference,
    choose_measure,
    guarded,
)
from iclr25._guard import RestorationWarning as _RestorationWarning
from iclr25.datasets.images import check_images
from iclr25.lowlight.baselines import clahe, gamma_nl_means, gamma_to_mean

__all__ = ["CLASSICAL", "RestorationWarning", "enhance"]


class RestorationWarning(_RestorationWarning):
    """:func:`enhance`'s output scored below the classical result or the input (both numbers
    in the message)."""


#: The classical pipelines :func:`enhance` checks itself against (``lowlight.baselines``).
CLASSICAL = {"gamma": gamma_to_mean, "CLAHE": clahe, "gamma + NL-means": gamma_nl_means}


@torch.no_grad()
@checked
def enhance(model: nn.Module, images: Images, *, reference: Images | None = None,
            fallback: Fallback | None = None, margin: float | None = None,
            check: bool = True, tile: int | None = None, batch_size: int = 4) -> torch.Tensor:
    """Enhance dark images with a trained model, checking it against the classical pipelines.

    Each output is scored beside the input and the best of the library's classical
    pipelines (:data:`CLASSICAL`: a gamma curve to mean 0.5, CLAHE, gamma then NL-means;
    the best by the same measure is "the classical result"). Where ours scores below it or
    does not beat the input by ``margin``, a :class:`~iclr25.lowlight.RestorationWarning`
    gives the numbers, and ``fallback`` says what is returned. At the defaults: **the
    network's output only where the check scores it at least the margin above the input
    (1 dB without a reference, 0 with one); otherwise the input, unchanged** (exact with a
    reference; without one as good as the check). Without a reference a photo that is not
    an under-exposed typical one (its highlights at middle grey or above, a low-key
    scene: a night sky, objects on black, or most of it below its noise floor;
    ``iclr25._guard.not_underexposed``) is not
    judged: the warning says why and the default returns it unchanged (on a held-out set
    3.4% of outputs came back worse than their input, 29.9% before this rule, at the cost
    of false alarms: agreement with the reference 61.4%; ``iclr25._guard``'s docstring).
    The measure (``iclr25._guard``): PSNR when a ``reference`` is given; otherwise a PSNR
    estimated from tones, colour cast and noise (see :mod:`iclr25.lowlight.enhancement`).

    Args:
        model: a :class:`RetinexEnhancer` or :class:`ZeroDCE`.
        images: (3, H, W) or (B, 3, H, W) in [0, 1].
        reference: well-lit image(s) of ``images``' shape: the check uses PSNR.
        fallback: where ours scores below the classical result or does not beat the input
            by ``margin``: "input" returns the input unchanged; "classical" returns the
            classical result where it scores above ours and beats the input by ``margin``
            in a photo the check judges, else as "input"; "none" warns and returns ours.
            None (default): :data:`~iclr25._guard.DEFAULT_FALLBACK` ("input", as
            ``iclr25 lowlight enhance`` and DCPT's ``restore``), so no output the check
            scores below its input is returned; "none" with ``check=False``.
        margin: how much ours must beat the input by (dB), a number >= 0; None (default):
            :data:`~iclr25._guard.MARGINS` (1 dB without a reference, 0 with one).
        check: False skips the comparison (the plain network output, as in the
            reproduction); ``fallback`` must then be "none" or None.
        tile: process non-overlapping ``tile``×``tile`` pieces (bounds memory on large
            photos; the frequency prior then sees each tile alone).
        batch_size: images per forward pass.

    Returns:
        Enhanced images clamped to [0, 1], shape/dtype/device of the input.

    Raises:
        ValueError/TypeError: bad images, reference, fallback, margin (negative, not finite,
            or with ``check=False``), tile or batch size, before any work.

    Warns:
        RestorationWarning: ours scores below the classical result or does not beat the
            input by the margin; or, without a reference, the image returned is tinted
            (its colour cast against the input above ``iclr25._guard.TINT_CAST``, one
            8-bit level: a grey photo came out coloured), with what returns one that is
            not (what is returned is the check's decision either way).

    Examples:
        >>> from iclr25.lowlight.networks import RetinexEnhancer
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
    margin = check_margin(margin, check)
    single = t.ndim == 3
    x = t[None] if single else t
    was = model.training
    model.eval()
    y = _forward(model, x, tile, batch_size).clamp(0, 1).to(device=t.device, dtype=t.dtype)
    model.train(was)
    if check:
        ref = ref[None] if ref is not None and single else ref
        y = guarded(x, y, lambda b: b, CLASSICAL, measure=choose_measure(ref, "low_light"),
                    fallback=fallback, reference=ref, what="lowlight.enhance",
                    margin=margin, category=RestorationWarning)
    return y[0] if single else y


def _forward(model: nn.Module, x: torch.Tensor, tile: int | None, batch_size: int
             ) -> torch.Tensor:
    """The enhanced (B, 3, H, W) batch ``x``, ``batch_size`` images per pass, each in
    non-overlapping ``tile``×``tile`` pieces if ``tile`` is given (on the model's device)."""
    p0 = next(model.parameters())
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
    return torch.cat(outs)
