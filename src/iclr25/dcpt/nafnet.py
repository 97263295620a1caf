"""NAFNet (Chen et al., ECCV 2022): the backbone of DCPT's released NAFNet checkpoints.

Built as DCPT's ``NAFNetBaseline`` (``basicsr/archs/nafnet_arch.py``; the 5D test config:
width 64, encoder blocks [1, 1, 1, 28], 1 middle block, decoder blocks [1, 1, 1, 1]), so
:func:`iclr25.dcpt.load_official` can fill it; also a DCPT backbone like :class:`UNet`
(``tap_layers`` are its decoder stages, fine to coarse).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from iclr25._checks import check_image_batch, check_int
from iclr25._contract import ImageTensor, checked
from iclr25.dcpt.networks import _LayerNorm2d, _pad_to  # LayerNorm eps 1e-6, as NAFNet's

__all__ = ["NAFBlock", "NAFNet"]


class NAFBlock(nn.Module):
    """Nonlinear-activation-free block: LN → 1×1 → depthwise 3×3 → SimpleGate → simplified
    channel attention → 1×1, scaled by ``beta``; then LN → 1×1 → SimpleGate → 1×1, scaled by
    ``gamma`` (both zero at init, so a new block is the identity)."""

    def __init__(self, c: int, dw_expand: int = 2, ffn_expand: int = 2) -> None:
        super().__init__()
        dw, ffn = c * dw_expand, c * ffn_expand
        self.norm1, self.norm2 = _LayerNorm2d(c), _LayerNorm2d(c)
        self.conv1 = nn.Conv2d(c, dw, 1)
        self.conv2 = nn.Conv2d(dw, dw, 3, padding=1, groups=dw)
        self.sca = nn.Conv2d(dw // 2, dw // 2, 1)
        self.conv3 = nn.Conv2d(dw // 2, c, 1)
        self.conv4 = nn.Conv2d(c, ffn, 1)
        self.conv5 = nn.Conv2d(ffn // 2, c, 1)
        self.beta = nn.Parameter(torch.zeros(1, c, 1, 1))
        self.gamma = nn.Parameter(torch.zeros(1, c, 1, 1))

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        a, b = self.conv2(self.conv1(self.norm1(inp))).chunk(2, 1)
        x = a * b
        x = self.conv3(x * self.sca(x.mean((-2, -1), keepdim=True)))
        y = inp + x * self.beta
        a, b = self.conv4(self.norm2(y)).chunk(2, 1)
        return y + self.conv5(a * b) * self.gamma


@checked
class NAFNet(nn.Module):
    """NAFNet restorer with a global residual: output = input + ending(decoder features).

    Args:
        width: channels at full resolution (DCPT's checkpoints: 64).
        enc_blocks: NAFBlocks per encoder level (each followed by a 2×2 stride-2 conv that
            doubles the channels); DCPT: (1, 1, 1, 28).
        middle_blocks: NAFBlocks at the coarsest level; DCPT: 1.
        dec_blocks: NAFBlocks per decoder level (each after a 1×1 conv + PixelShuffle(2)
            and the encoder skip added); DCPT: (1, 1, 1, 1). As many as ``enc_blocks``.

    Inputs of any size are mirror-padded to a multiple of ``2 ** len(enc_blocks)`` and
    cropped back (the official test pads to the config's ``window_size`` = 16 the same way).

    Attributes:
        tap_layers: the decoder stages, fine to coarse (DCPT's feature taps).
        feature_dims: their channel counts.

    Examples:
        >>> net = NAFNet(width=8, enc_blocks=(1, 1), middle_blocks=1, dec_blocks=(1, 1))
        >>> net(torch.rand(1, 3, 18, 20)).shape, net.tap_layers, net.feature_dims
        (torch.Size([1, 3, 18, 20]), ('decoders.1', 'decoders.0'), (8, 16))
    """

    def __init__(self, width: int = 64, enc_blocks: Sequence[int] = (1, 1, 1, 28),
                 middle_blocks: int = 1, dec_blocks: Sequence[int] = (1, 1, 1, 1)) -> None:
        super().__init__()
        self.width = check_int(width, "width", 1)
        self.enc_blocks = tuple(check_int(n, "enc_blocks", 0) for n in enc_blocks)
        self.middle_blocks = check_int(middle_blocks, "middle_blocks", 0)
        self.dec_blocks = tuple(check_int(n, "dec_blocks", 0) for n in dec_blocks)
        if len(self.dec_blocks) != len(self.enc_blocks):
            raise ValueError(f"dec_blocks must have as many levels as enc_blocks "
                             f"({len(self.enc_blocks)}), got {len(self.dec_blocks)}")
        self.intro = nn.Conv2d(3, width, 3, padding=1)
        self.ending = nn.Conv2d(width, 3, 3, padding=1)
        self.encoders, self.downs = nn.ModuleList(), nn.ModuleList()
        self.ups, self.decoders = nn.ModuleList(), nn.ModuleList()
        c = width
        for n in self.enc_blocks:
            self.encoders.append(nn.Sequential(*[NAFBlock(c) for _ in range(n)]))
            self.downs.append(nn.Conv2d(c, 2 * c, 2, stride=2))
            c *= 2
        self.middle = nn.Sequential(*[NAFBlock(c) for _ in range(self.middle_blocks)])
        dims = []
        for n in self.dec_blocks:
            self.ups.append(nn.Sequential(nn.Conv2d(c, 2 * c, 1, bias=False),
                                          nn.PixelShuffle(2)))
            c //= 2
            self.decoders.append(nn.Sequential(*[NAFBlock(c) for _ in range(n)]))
            dims.append(c)
        n_dec = len(self.dec_blocks)
        self.tap_layers = tuple(f"decoders.{i}" for i in reversed(range(n_dec)))
        self.feature_dims = tuple(reversed(dims))

    def config(self) -> dict[str, object]:
        return {"width": self.width, "enc_blocks": list(self.enc_blocks),
                "middle_blocks": self.middle_blocks, "dec_blocks": list(self.dec_blocks)}

    def forward(self, x: ImageTensor) -> torch.Tensor:
        check_image_batch(x, "x", 3, ndim=(3, 4))
        if x.ndim == 3:  # one image
            return self(x[None])[0]
        H, W = x.shape[-2:]
        inp = _pad_to(x, 2 ** len(self.enc_blocks))
        h = self.intro(inp)
        skips = []
        for enc, down in zip(self.encoders, self.downs, strict=True):
            h = enc(h)
            skips.append(h)
            h = down(h)
        h = self.middle(h)
        for up, dec, skip in zip(self.ups, self.decoders, reversed(skips), strict=True):
            h = dec(up(h) + skip)
        return (inp + self.ending(h))[..., :H, :W]
