"""The official released weights (``huaqlili/unsupervised-light-enhance-ICLR2025``) in our
:class:`RetinexEnhancer`, behind our API: ``enhance``, tiling, the CLI and save/load.

The README of that repository links three files on Google Drive (``LOLv1_test.pth``,
``LOLv2_test.pth``, ``SICE_test.pth``), each the ``state_dict()`` of its ``net/lformer.py:net``
(widths 64/48/64, 2 transformer blocks per sub-network, LCnet width 32).

Agreement with the official module: the official ``net`` (its ``net/lformer.py`` and
``dct_util.py`` run on the CPU in a scratch folder, ``.cuda()`` calls removed) with
random weights (its init + N(0, 0.05²), α's last bias 0.7), saved and read back by
``load_official``, on random 1×3×64×96 and 1×3×80×80 images in [0, 0.3], with the B2
shuffle set to the identity in both (the official draws a fresh permutation on every
call; ours fixes it by ``shuffle_seed``): max |difference| 6.0e-7 for the enhanced
image (values up to 1.8), 3.6e-7 for L, 4.8e-7 for R, 2.4e-7 for X (float32; the same
with ``fast=False``). With the shuffles drawn (1×3×80×96), ours differs from an official
call by 9.8e-6, as two official calls differ from each other (1.1e-5).

Odd sizes (issue 68): the official ``eval.py`` runs the whole image, no padding, and so
does ours (it used to reflect-pad an odd side by one pixel, which differed from the
official by up to 0.35 at the edges of a 51×71 image with the released weights, about 1e-3
inside). Against the official ``net`` at the paper's sizes (widths 64/48/32, random
weights through ``load_official``, B2 shuffle the identity in both; fixture
``lowlight_net``, ``tools/fidelity/lowlight_net.py``), float64: max |difference| 8.9e-16
for the enhanced image and 4.4e-16 for R at 51×71 and at 48×64 (before: 0.121 and 0.064
at the edges of 51×71, 1.8e-3 two pixels in; 48×64 the same).

Differences left: the official ``L_net`` adds ``mean(x, dim=1)`` of shape (B, H, W) to
(B, 1, H, W), which broadcasts to (B, B, H, W) for B > 1 (ours is per image; equal for
B = 1); a side of 1 px, which the official's reflection pad refuses, is replicated to 2.
"""

from __future__ import annotations

from pathlib import Path

import torch

from iclr25._contract import PathLike, checked
from iclr25._official import count, need, read_state_dict, renamer
from iclr25._official import load_official as _fit
from iclr25.lowlight.estimator import ZeroReferenceEnhancer
from iclr25.lowlight.networks import RetinexEnhancer

__all__ = ["load_official"]

# our key -> the official key (regex substitutions, applied in order)
_OFFICIAL_NAME = renamer([
    (r"^noise\.", "N_net."), (r"^illumination\.", "L_net."), (r"^reflectance\.", "R_net."),
    (r"^prior\.inp\.", "illp.conv1."), (r"^prior\.dw\.", "illp.depth_conv."),
    (r"^curve\.features\.", "L_enhance_net.head."), (r"^curve\.head\.", "L_enhance_net.tail."),
    (r"\.body\.head\.", ".patch_embed.proj."), (r"\.body\.tail\.", ".output."),
    (r"\.body\.blocks\.", ".encoder."),
    (r"\.n1\.", ".norm1.body."), (r"\.n2\.", ".norm2.body."),
    (r"\.s1$", ".skip_scale"), (r"\.s2$", ".skip_scale2"),
    (r"^(R_net\..*\.attn\.)qkv_dw\.", r"\1kv_dwconv."), (r"^(R_net\..*\.attn\.)qkv\.", r"\1kv."),
    (r"\.attn\.qkv_dw\.", ".attn.qkv_dwconv."), (r"\.attn\.proj\.", ".attn.project_out."),
    (r"\.ffn\.inp\.", ".ffn.project_in."), (r"\.ffn\.dw\.", ".ffn.dwconv."),
    (r"\.ffn\.out\.", ".ffn.project_out."),
])

# weights the official forward never reads: crossAttention's q depthwise conv, the prior's
# 3-channel illu_map head, and LCnet's transformer layers (defined, unused: its issue #7)
_UNUSED = (r"R_net\.encoder\.\d+\.attn\.q_dwconv\.weight|illp\.conv2\.(weight|bias)|"
           r"L_enhance_net\.(patch_embed|encoder)\..*")


@checked
def load_official(path: PathLike, *, key: str | None = None,
                  device: torch.device | str = "cpu") -> ZeroReferenceEnhancer:
    """A fitted :class:`ZeroReferenceEnhancer` holding the official network's weights.

    The official ``net`` is our :class:`RetinexEnhancer` with ``alpha="relu"`` (the
    official LCnet's last activation; ours trains with softplus) and the sizes read from
    the file. Keys are renamed (``N_net`` -> ``noise``, ``L_net`` -> ``illumination``,
    ``R_net`` -> ``reflectance``, ``illp`` -> ``prior``, ``L_enhance_net`` -> ``curve``) and
    every shape is checked; the four weights the official forward never reads are dropped
    (``R_net.encoder.*.attn.q_dwconv``, ``illp.conv2``, ``L_enhance_net.patch_embed`` and
    ``.encoder``).

    Args:
        path: the official ``.pth`` (e.g. ``LOLv1_test.pth``) or a ``.safetensors`` of the
            same state dict; ``params``/``state_dict``/``model`` wrappers and ``module.``
            prefixes are handled.
        key: the wrapper to read (default: the first of params_ema, params, state_dict,
            model, net, network present).
        device: where the model lives.

    Returns:
        A fitted estimator: ``transform(images, tile=...)``, ``save(path)`` (a file that
        ``ZeroReferenceEnhancer.load`` and ``iclr25 lowlight enhance`` read).

    Raises:
        ValueError: an unreadable file, or one whose first non-fitting key (unexpected,
            missing or of the wrong shape) the message names.

    Examples:
        >>> est = load_official("LOLv1_test.pth")          # doctest: +SKIP
        >>> bright = est.transform(dark_image)             # doctest: +SKIP
    """
    p = Path(path)
    state = read_state_dict(p, key=key)
    what = f"official low-light checkpoint {p.name}"
    width = need(state, "N_net.patch_embed.proj.weight", what).shape[0]
    config = {
        "width": width,
        "l_width": need(state, "L_net.patch_embed.proj.weight", what).shape[0],
        "lc_width": need(state, "L_enhance_net.head.1.weight", what).shape[0],
        "lc_hidden": need(state, "L_enhance_net.tail.0.weight", what).shape[0],
        "n_blocks": max(1, count(state, "N_net.encoder")),
        "alpha": "relu",
    }
    if width % 16:
        raise ValueError(f"{what}: key 'N_net.patch_embed.proj.weight' has {width} output "
                         f"channels; the official prior's grouped convolution needs a "
                         f"multiple of 16")
    net = RetinexEnhancer(**config)
    _fit(net, state, _OFFICIAL_NAME, unused=_UNUSED, what=what)
    est = ZeroReferenceEnhancer(method="retinex", width=width)
    est.model_ = net.to(device).eval()
    est.config_ = net.config()
    est.history_ = []
    return est
