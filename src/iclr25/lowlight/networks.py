"""The joint denoising/enhancement network (Retinex + frequency prior) and Zero-DCE.

``RetinexEnhancer``: X = NoiseNet(x); prior y = FrequencyPrior(X); L = IlluminationNet(X);
R = ReflectanceNet(X, y) (queries from the prior); α = CurveNet(L); enhanced = L^α ⊙ R
(paper §3, repo ``net/lformer.py``). ``ZeroDCE``: Guo et al.'s curve estimator (the baseline).
"""

# ruff: noqa: E741  (I is the paper's and the issue's name for the enhanced image)
from __future__ import annotations

import math
from typing import Literal, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import check_choice, check_image_batch, check_int
from iclr25._contract import Images4D, checked
from iclr25.lowlight.dct import frequency_bands

__all__ = [
    "CurveNet", "EnhanceOutput", "FrequencyPrior", "IlluminationNet", "NoiseNet",
    "ReflectanceNet", "RetinexEnhancer", "TransformerBlock", "ZeroDCE",
]


class EnhanceOutput(NamedTuple):
    """What :class:`RetinexEnhancer` returns; all (B, ·, H, W) except ``alpha`` (B, 1, 1, 1)."""

    enhanced: torch.Tensor
    illumination: torch.Tensor
    reflectance: torch.Tensor
    denoised: torch.Tensor
    alpha: torch.Tensor


class _LayerNorm(nn.Module):
    """Channel LayerNorm with bias (Restormer's ``WithBias_LayerNorm``), NCHW reference."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mu = x.mean(1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(1, keepdim=True)
        return xc * torch.rsqrt(var + 1e-5) * self.weight[:, None, None] + \
            self.bias[:, None, None]

    def nhwc(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, 1e-5)


def _pw(x: torch.Tensor, conv: nn.Conv2d) -> torch.Tensor:
    """A 1×1 convolution of an NHWC tensor: one GEMM over the pixels."""
    return F.linear(x, conv.weight.flatten(1), conv.bias)


def _dw(x: torch.Tensor, conv: nn.Conv2d) -> torch.Tensor:
    """A depthwise 3×3 convolution of an NHWC tensor, run on oneDNN's channels-last kernel
    (about 3× faster on CPU than the NCHW depthwise kernel, forward + backward)."""
    return conv(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)


def _conv(cin: int, cout: int, k: int = 1, groups: int = 1) -> nn.Conv2d:
    # every convolution in the official transformer blocks has bias=False
    return nn.Conv2d(cin, cout, k, padding=k // 2, groups=groups, bias=False)


class _Attention(nn.Module):
    """Transposed (channel) attention, one head: C×C attention map, cost O(C²·HW).

    ``cross``: queries are a 1×1 projection of the prior y (the official ``crossAttention``
    defines a depthwise conv for q but does not apply it), keys/values come from x.
    """

    def __init__(self, dim: int, cross: bool = False) -> None:
        super().__init__()
        self.cross = cross
        self.temperature = nn.Parameter(torch.ones(1))
        if cross:
            self.q = _conv(dim, dim)
        self.qkv = _conv(dim, 2 * dim if cross else 3 * dim)
        self.qkv_dw = _conv(self.qkv.out_channels, self.qkv.out_channels, 3,
                            self.qkv.out_channels)
        self.proj = _conv(dim, dim)

    def _attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """q, k, v: (B, C, N) → (B, C, N)."""
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        return (q @ k.transpose(-2, -1) * self.temperature).softmax(-1) @ v

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        B, C, H, W = x.shape
        h = self.qkv_dw(self.qkv(x)).flatten(2)
        q, k, v = (self.q(y).flatten(2), *h.chunk(2, 1)) if self.cross else h.chunk(3, 1)
        return self.proj(self._attend(q, k, v).reshape(B, C, H, W))

    def nhwc(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        B, H, W, C = x.shape
        h = _dw(_pw(x, self.qkv), self.qkv_dw).reshape(B, H * W, -1)
        if self.cross:
            q, (k, v) = _pw(y, self.q).reshape(B, H * W, C), h.chunk(2, -1)
        else:
            q, k, v = h.chunk(3, -1)
        # (B, N, C) throughout: the transposes fold into the batched GEMMs
        q, k = F.normalize(q, dim=1), F.normalize(k, dim=1)
        attn = (q.transpose(1, 2) @ k * self.temperature).softmax(-1)
        return _pw((v @ attn.transpose(1, 2)).reshape(B, H, W, C), self.proj)


class _GDFN(nn.Module):
    """Gated depthwise feed-forward (expansion 2.66)."""

    def __init__(self, dim: int, expansion: float = 2.66) -> None:
        super().__init__()
        h = int(dim * expansion)
        self.inp, self.dw, self.out = _conv(dim, 2 * h), _conv(2 * h, 2 * h, 3, 2 * h), \
            _conv(h, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.dw(self.inp(x)).chunk(2, 1)
        return self.out(F.gelu(a) * b)

    def nhwc(self, x: torch.Tensor) -> torch.Tensor:
        a, b = _dw(_pw(x, self.inp), self.dw).chunk(2, -1)
        return _pw(F.gelu(a) * b, self.out)


class TransformerBlock(nn.Module):
    """Restormer block (MDTA + GDFN, bias-free convs) with learnable per-channel skip scales;
    ``cross`` takes queries from a second feature map (the official ``crossTransformerBlock``).

    ``forward`` takes NCHW (the reference layout); ``nhwc`` computes the same function on
    channels-last (B, H, W, C) tensors, where the 1×1 convolutions are GEMMs and the
    LayerNorm is PyTorch's fused kernel (equal to ``forward`` to float32 rounding).
    """

    def __init__(self, dim: int, cross: bool = False) -> None:
        super().__init__()
        self.cross = cross
        self.n1, self.n2 = _LayerNorm(dim), _LayerNorm(dim)
        self.attn, self.ffn = _Attention(dim, cross), _GDFN(dim)
        self.s1 = nn.Parameter(torch.ones(1, dim, 1, 1))
        self.s2 = nn.Parameter(torch.ones(1, dim, 1, 1))

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        x = self.s1 * x + self.attn(self.n1(x), y)
        return self.s2 * x + self.ffn(self.n2(x))

    def nhwc(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        C = x.shape[-1]
        x = self.s1.view(C) * x + self.attn.nhwc(self.n1.nhwc(x), y)
        return self.s2.view(C) * x + self.ffn.nhwc(self.n2.nhwc(x))


class _Body(nn.Module):
    """Conv3×3 → transformer blocks → Conv3×3 → sigmoid, all bias-free as in the official
    ``N_net``/``L_net``/``R_net``: the untrained head outputs sigmoid(≈0) ≈ 0.5."""

    def __init__(self, cin: int, width: int, cout: int, cross: bool = False,
                 n_blocks: int = 2) -> None:
        super().__init__()
        self.fast = True
        self.head = _conv(cin, width, 3)
        self.blocks = nn.ModuleList([TransformerBlock(width, cross) for _ in range(n_blocks)])
        self.tail = _conv(width, cout, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        if not self.fast:
            h = self.head(x)
            for b in self.blocks:
                h = b(h, y)
            return torch.sigmoid(self.tail(h))
        cl = torch.channels_last
        h = self.head(x.contiguous(memory_format=cl)).permute(0, 2, 3, 1)
        y = None if y is None else y.permute(0, 2, 3, 1).contiguous()
        for b in self.blocks:
            h = b.nhwc(h, y)
        return torch.sigmoid(self.tail(h.permute(0, 3, 1, 2)))


@checked
class NoiseNet(nn.Module):
    """X = sigmoid(Conv(TB×2(Conv(x)))) + x: PairLIE's noise-removal projection."""

    def __init__(self, width: int = 64, n_blocks: int = 2) -> None:
        super().__init__()
        self.body = _Body(3, width, 3, n_blocks=n_blocks)

    def forward(self, x: Images4D) -> torch.Tensor:
        return self.body(x) + x


@checked
class IlluminationNet(nn.Module):
    """L = sigmoid(Conv(TB×2(Conv(X)))) + mean_c(X), one channel (batch-safe, unlike the repo)."""

    def __init__(self, width: int = 48, n_blocks: int = 2) -> None:
        super().__init__()
        self.body = _Body(3, width, 1, n_blocks=n_blocks)

    def forward(self, X: Images4D) -> torch.Tensor:
        return self.body(X) + X.mean(1, keepdim=True)


@checked
class FrequencyPrior(nn.Module):
    """FIcoder: [X, mean_c X, B1..B4] (16 ch) → 1×1 → grouped 5×5 → ``width`` prior features."""

    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.inp = nn.Conv2d(16, width, 1)
        self.dw = nn.Conv2d(width, width, 5, padding=2, groups=16 if width % 16 == 0 else 1)
        self.dct = "auto"

    def forward(self, X: Images4D, *, shuffle_seed: int = 0) -> torch.Tensor:
        bands = frequency_bands(X, seed=shuffle_seed, method=self.dct)
        return self.dw(self.inp(torch.cat([X, X.mean(1, keepdim=True), bands], 1)))


@checked
class ReflectanceNet(nn.Module):
    """R = sigmoid(Conv(crossTB×2(Conv(X), y))) + X; queries come from the prior y."""

    def __init__(self, width: int = 64, n_blocks: int = 2) -> None:
        super().__init__()
        self.body = _Body(3, width, 3, cross=True, n_blocks=n_blocks)

    def forward(self, X: Images4D, y: Images4D) -> torch.Tensor:
        return self.body(X, y) + X


@checked
class CurveNet(nn.Module):
    """α = softplus(MLP(GAP(3 × [pad, Conv3×3, ReLU](L)))) > 0: one exponent per image (LCnet).

    Deviation from the official ``L_enhance_net``, whose last activation is a ReLU: a ReLU α
    dies. With L ≈ max_c(x) and R ≈ x / max_c(x) (what loss2 asks for), I = L^α ⊙ R, so α is
    the only brightness knob; while I is darker than the exposure level the loss lowers α,
    Adam steps it past 0, and the ReLU then passes no gradient back: I = R for ever, mean
    0.72 against 0.365 clean (measured: α dead by step ~110 of the claim's 300). Softplus
    keeps the same sign constraint with a gradient everywhere (with it the claim's run ends
    at test means 0.49/0.40/0.33 against clean 0.45/0.39/0.26, seed 0). On identical weights
    and inputs the pre-activation z equals the official module's exactly (max difference
    0.0, float32, four random 40×56 maps); α differs from ReLU(z) by log(1 + e^(−|z|)).
    The last bias starts at log(e^0.5 − 1), so α starts near 0.5.

    ``activation="relu"`` is the official module exactly (for its released weights, see
    :func:`iclr25.lowlight.load_official`); ``hidden`` is the MLP's width (official
    ``width // 2``).
    """

    def __init__(self, width: int = 32, hidden: int = 16,
                 activation: Literal["softplus", "relu"] = "softplus") -> None:
        super().__init__()
        check_choice(activation, "activation", ("softplus", "relu"))
        self.activation = activation
        layers: list[nn.Module] = []
        cin = 1
        for _ in range(3):
            layers += [nn.ReflectionPad2d(1), nn.Conv2d(cin, width, 3), nn.ReLU()]
            cin = width
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Conv2d(width, hidden, 1), nn.ReLU(),
                                  nn.Conv2d(hidden, 1, 1))
        with torch.no_grad():
            self.head[2].bias.fill_(math.log(math.expm1(0.5)))

    def forward(self, L: Images4D) -> torch.Tensor:
        check_image_batch(L, "L", 1)
        z = self.head(self.features(L).mean((-2, -1), keepdim=True))
        return F.relu(z) if self.activation == "relu" else F.softplus(z)


@checked
class RetinexEnhancer(nn.Module):
    """The paper's joint denoising and low-light enhancement network.

    Args:
        width: NoiseNet, ReflectanceNet and prior width (paper 64).
        l_width: IlluminationNet width (paper 48).
        lc_width: CurveNet width (paper 32).
        n_blocks: transformer blocks per sub-network (paper 2).
        lc_hidden: CurveNet's MLP width (official ``lc_width // 2`` = 16).
        alpha: "softplus" (ours, see :class:`CurveNet`) or "relu" (the official α, which
            :func:`iclr25.lowlight.load_official` sets for the released weights).
        fast: True (default) runs the transformer blocks channels-last and the prior's DCT
            with ``method="auto"`` (matrix up to 64 px a side, FFT above); False runs the
            NCHW reference and dense DCT matrices (same function, equal to float32
            rounding). CPU time of a training step at width 16, batch 2, crop 64, one
            thread (shared 2-core VM, load ~12, medians of 5 interleaved steps): 0.293 s
            fast, 0.334 s reference, 0.303 s fast with the FFT DCT; pre-issue-35 main
            0.374 s (own process): 1.28x, not the issue's 3x.

    Initialisation as the official code: bias-free output convolutions, so each residual
    head starts at sigmoid(≈0) ≈ 0.5 (X ≈ x + 0.5, L ≈ mean_c X + 0.5, R ≈ X + 0.5). One
    deviation: α = softplus(·), not ReLU(·), so that it cannot die (see :class:`CurveNet`).

    ``forward(x, *, shuffle_seed=0)`` takes (B, 3, H, W) in [0, 1] (any H, W, run whole as
    the official ``eval.py`` does: no padding, so odd sizes agree with the official to
    float64 rounding, fixture ``lowlight_net``) and returns an :class:`EnhanceOutput`. The
    prior's B2 shuffle is fixed by ``shuffle_seed``, so inference is deterministic.

    Examples:
        >>> net = RetinexEnhancer(width=16, l_width=12, lc_width=16)
        >>> net(torch.rand(2, 3, 33, 40) * 0.2).enhanced.shape
        torch.Size([2, 3, 33, 40])
    """

    def __init__(self, width: int = 64, l_width: int = 48, lc_width: int = 32,
                 n_blocks: int = 2, fast: bool = True, lc_hidden: int = 16,
                 alpha: Literal["softplus", "relu"] = "softplus") -> None:
        super().__init__()
        self.width = check_int(width, "width", 1)
        self.l_width = check_int(l_width, "l_width", 1)
        self.lc_width = check_int(lc_width, "lc_width", 1)
        self.n_blocks = check_int(n_blocks, "n_blocks", 1)
        self.noise = NoiseNet(width, n_blocks)
        self.prior = FrequencyPrior(width)
        self.illumination = IlluminationNet(l_width, n_blocks)
        self.reflectance = ReflectanceNet(width, n_blocks)
        self.lc_hidden = check_int(lc_hidden, "lc_hidden", 1)
        self.curve = CurveNet(lc_width, lc_hidden, alpha)
        self.fast = fast

    @property
    def fast(self) -> bool:
        return self.noise.body.fast

    @fast.setter
    def fast(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"fast must be a bool, got {type(value).__name__}")
        for body in (self.noise.body, self.illumination.body, self.reflectance.body):
            body.fast = value
        self.prior.dct = "auto" if value else "matrix"

    def config(self) -> dict[str, int | str]:
        return {"width": self.width, "l_width": self.l_width, "lc_width": self.lc_width,
                "n_blocks": self.n_blocks, "lc_hidden": self.lc_hidden,
                "alpha": self.curve.activation}

    def forward(self, x: Images4D, *, shuffle_seed: int = 0) -> EnhanceOutput:
        H, W = x.shape[-2:]
        # any size runs whole, as the official eval.py; only a 1-px side, which the curve
        # net's reflection pad refuses (the official's too), is replicated to 2
        ph, pw = int(H == 1), int(W == 1)
        if ph or pw:
            x = F.pad(x, (0, pw, 0, ph), mode="replicate")
        X = self.noise(x)
        y = self.prior(X, shuffle_seed=shuffle_seed)
        L = self.illumination(X)
        R = self.reflectance(X, y)
        alpha = self.curve(L)
        I = L.clamp(min=1e-6) ** alpha * R
        outs = (I, L, R, X)
        if ph or pw:
            outs = tuple(o[..., :H, :W] for o in outs)
        return EnhanceOutput(*outs, alpha)


@checked
class ZeroDCE(nn.Module):
    """Zero-DCE (Guo et al., CVPR 2020): 7 conv layers with skips estimate ``iterations``
    pixel-wise curves A; LE(x) = x + A·x·(1 − x) applied iteratively.

    ``forward(x)`` returns an :class:`EnhanceOutput` (only ``enhanced`` is meaningful;
    ``alpha`` holds the mean |A|).
    """

    def __init__(self, width: int = 32, iterations: int = 8) -> None:
        super().__init__()
        self.width = check_int(width, "width", 1)
        self.iterations = check_int(iterations, "iterations", 1)
        w = width
        self.c1, self.c2 = nn.Conv2d(3, w, 3, padding=1), nn.Conv2d(w, w, 3, padding=1)
        self.c3, self.c4 = nn.Conv2d(w, w, 3, padding=1), nn.Conv2d(w, w, 3, padding=1)
        self.c5, self.c6 = nn.Conv2d(2 * w, w, 3, padding=1), nn.Conv2d(2 * w, w, 3, padding=1)
        self.c7 = nn.Conv2d(2 * w, 3 * iterations, 3, padding=1)

    def config(self) -> dict[str, int]:
        return {"width": self.width, "iterations": self.iterations}

    def forward(self, x: Images4D, *, shuffle_seed: int = 0) -> EnhanceOutput:
        check_image_batch(x, "x", 3)
        r = torch.relu
        x1 = r(self.c1(x))
        x2 = r(self.c2(x1))
        x3 = r(self.c3(x2))
        x4 = r(self.c4(x3))
        x5 = r(self.c5(torch.cat([x3, x4], 1)))
        x6 = r(self.c6(torch.cat([x2, x5], 1)))
        A = torch.tanh(self.c7(torch.cat([x1, x6], 1)))
        I = x
        for a in A.split(3, 1):
            I = I + a * I * (1 - I)
        alpha = A.abs().mean((1, 2, 3), keepdim=True)
        return EnhanceOutput(I, I.mean(1, keepdim=True), I, x, alpha)
