"""Restormer (Zamir et al., CVPR 2022) as DCPT's ``basicsr/archs/restormer_arch.py:Restormer``,
the backbone of its released ``dcpt_restormer_5d.pth`` (its key map: :mod:`iclr25.dcpt.official`).

DCPT's variant differs from the original Restormer in three ways, all kept here: bias-free
LayerNorm with eps 1e-6, and attention weights ReLU(q̂·k̂ᵀ·τ) instead of a softmax. Four
levels (dims d, 2d, 4d, 8d), pixel-(un)shuffle resampling, a refinement stage at 2d, output
= input + conv(features).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import check_image_batch, check_int
from iclr25._contract import ImageTensor, checked
from iclr25.dcpt.networks import _pad_to

__all__ = ["Restormer"]


def _conv(cin: int, cout: int, k: int = 1, groups: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, k, padding=k // 2, groups=groups, bias=False)


class _BiasFreeLayerNorm(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(c))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        var = x.var(1, keepdim=True, unbiased=False)
        return x * torch.rsqrt(var + 1e-6) * self.weight[:, None, None]


class _Attention(nn.Module):
    """Multi-head transposed (channel) attention with ReLU weights, as DCPT's Restormer."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"heads ({heads}) must divide the level's channels ({dim})")
        self.heads = heads
        self.temperature = nn.Parameter(torch.ones(heads, 1, 1))
        self.qkv = _conv(dim, 3 * dim)
        self.qkv_dw = _conv(3 * dim, 3 * dim, 3, 3 * dim)
        self.proj = _conv(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        q, k, v = self.qkv_dw(self.qkv(x)).reshape(B, 3, self.heads, C // self.heads,
                                                    H * W).unbind(1)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        attn = F.relu(q @ k.transpose(-2, -1) * self.temperature)
        return self.proj((attn @ v).reshape(B, C, H, W))


class _FeedForward(nn.Module):
    def __init__(self, dim: int, expansion: float) -> None:
        super().__init__()
        h = int(dim * expansion)
        self.inp, self.dw, self.out = _conv(dim, 2 * h), _conv(2 * h, 2 * h, 3, 2 * h), \
            _conv(h, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.dw(self.inp(x)).chunk(2, 1)
        return self.out(F.gelu(a) * b)


class _Block(nn.Module):
    def __init__(self, dim: int, heads: int, expansion: float) -> None:
        super().__init__()
        self.norm1, self.norm2 = _BiasFreeLayerNorm(dim), _BiasFreeLayerNorm(dim)
        self.attn, self.ffn = _Attention(dim, heads), _FeedForward(dim, expansion)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


@checked
class Restormer(nn.Module):
    """DCPT's Restormer (defaults: its 5D checkpoint, 26.1 M parameters).

    Args:
        dim: channels at full resolution (48).
        num_blocks: transformer blocks at levels 1-3 (encoder and decoder alike) and in the
            latent level 4: (4, 6, 6, 8).
        num_refinement_blocks: blocks after the last decoder (4).
        heads: attention heads per level: (1, 2, 4, 8).
        ffn_expansion: feed-forward width factor (2.66).

    Inputs of any size are mirror-padded to a multiple of 8 and cropped back (the official
    test pads to the config's ``window_size`` = 8 the same way).

    Attributes:
        tap_layers: the decoder stages (``decoder_level1..3`` in the official code), fine to
            coarse: DCPT's feature taps; feature_dims: their channels (2d, 2d, 4d).

    Examples:
        >>> net = Restormer(dim=8, num_blocks=(1, 1, 1, 1), num_refinement_blocks=1,
        ...                 heads=(1, 1, 2, 2))
        >>> net(torch.rand(1, 3, 12, 20)).shape, net.feature_dims
        (torch.Size([1, 3, 12, 20]), (16, 16, 32))
    """

    def __init__(self, dim: int = 48, num_blocks: Sequence[int] = (4, 6, 6, 8),
                 num_refinement_blocks: int = 4, heads: Sequence[int] = (1, 2, 4, 8),
                 ffn_expansion: float = 2.66) -> None:
        super().__init__()
        self.dim = check_int(dim, "dim", 1)
        self.num_blocks = tuple(check_int(n, "num_blocks", 0) for n in num_blocks)
        self.heads = tuple(check_int(h, "heads", 1) for h in heads)
        if len(self.num_blocks) != 4 or len(self.heads) != 4:
            raise ValueError(f"num_blocks and heads must have 4 levels, got "
                             f"{self.num_blocks} and {self.heads}")
        self.num_refinement_blocks = check_int(num_refinement_blocks,
                                               "num_refinement_blocks", 0)
        self.ffn_expansion = float(ffn_expansion)

        def stage(c: int, level: int, n: int | None = None) -> nn.Sequential:
            n = self.num_blocks[level] if n is None else n
            return nn.Sequential(*[_Block(c, self.heads[level], self.ffn_expansion)
                                   for _ in range(n)])

        d = dim
        self.embed = _conv(3, d, 3)
        self.encoders = nn.ModuleList(stage(d * 2 ** i, i) for i in range(3))
        self.downs = nn.ModuleList(_conv(d * 2 ** i, d * 2 ** i // 2, 3) for i in range(3))
        self.latent = stage(8 * d, 3)
        self.ups = nn.ModuleList(_conv(d * 2 ** i, d * 2 ** i * 2, 3) for i in (1, 2, 3))
        self.reduces = nn.ModuleList(_conv(d * 2 ** i, d * 2 ** (i - 1)) for i in (2, 3))
        self.decoders = nn.ModuleList([stage(2 * d, 0), stage(2 * d, 1), stage(4 * d, 2)])
        self.refinement = stage(2 * d, 0, self.num_refinement_blocks)
        self.output = _conv(2 * d, 3, 3)
        for m in self.modules():   # the official _init_weights
            if isinstance(m, nn.Conv2d):
                nn.init.trunc_normal_(m.weight, std=0.02)
        self.tap_layers = ("decoders.0", "decoders.1", "decoders.2")
        self.feature_dims = (2 * d, 2 * d, 4 * d)

    def config(self) -> dict[str, object]:
        return {"dim": self.dim, "num_blocks": list(self.num_blocks),
                "num_refinement_blocks": self.num_refinement_blocks,
                "heads": list(self.heads), "ffn_expansion": self.ffn_expansion}

    def forward(self, x: ImageTensor) -> torch.Tensor:
        check_image_batch(x, "x", 3, ndim=(3, 4))
        if x.ndim == 3:  # one image
            return self(x[None])[0]
        if not len(x):  # torch's pixel_unshuffle returns an empty input unchanged
            return x.clone()
        H, W = x.shape[-2:]
        inp = _pad_to(x, 8)
        h = self.embed(inp)
        skips = []
        for enc, down in zip(self.encoders, self.downs, strict=True):
            h = enc(h)
            skips.append(h)
            h = F.pixel_unshuffle(down(h), 2)
        h = self.latent(h)
        for i in (2, 1):
            h = torch.cat([F.pixel_shuffle(self.ups[i](h), 2), skips[i]], -3)
            h = self.decoders[i](self.reduces[i - 1](h))
        h = torch.cat([F.pixel_shuffle(self.ups[0](h), 2), skips[0]], -3)
        h = self.refinement(self.decoders[0](h))
        return (inp + self.output(h))[..., :H, :W]
