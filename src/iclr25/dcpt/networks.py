"""The restorer (a small U-Net), feature taps on any backbone, and the degradation classifier.

DCPT (paper §3) treats the whole restoration network as the "encoder" and trains a light
classifier (the "decoder", ``PromptIR_NoImg_DC`` in the official code) that names the
degradation from the restorer's intermediate features alone, never from the input image.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import check_image_batch, check_int
from iclr25._contract import ImageTensor, checked
from iclr25._train import seeded_init

__all__ = ["DegradationClassifier", "FeatureTap", "UNet"]


class _Block(nn.Module):
    """conv3x3 → GELU → conv3x3 with an identity residual."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv2(F.gelu(self.conv1(x)))


@checked
class UNet(nn.Module):
    """A small all-in-one restorer: U-Net with a global residual (output = input + correction).

    ``depth`` resolution levels with widths ``width · 2^i``; the last conv starts small
    (truncated normal, std 0.02, zero bias: the official DCPT Restormer's ``_init_weights``),
    so an untrained network is close to the identity. Not zero: then ``E(gt) = gt`` exactly,
    DCPT's clean-image term ``L1(E(gt), gt)`` is 0 with a zero subgradient and the last conv
    never trains in pre-training (measured in both the official loop and ours: the term read
    0.0 at all 150 steps). Inputs of any size are mirror-padded to a multiple of
    ``2^(depth-1)`` and cropped back.

    ``seed`` initialises the weights (an int, a Generator's ``initial_seed``, or None: from
    a fresh seed), leaving the caller's random state as it was: ``UNet()`` twice is the same
    network, so :func:`~iclr25.dcpt.pretrain` from it is reproducible given its own seed.

    Attributes:
        tap_layers: names of the decoder stages, fine to coarse (``decoders.0`` at full
            resolution with ``width`` channels, ...), DCPT's default feature taps.
        feature_dims: their channel counts.

    Examples:
        >>> net = UNet(width=8, depth=3)
        >>> x = torch.rand(2, 3, 20, 20)
        >>> bool((net(x) - x).abs().mean() < 0.1), net.tap_layers, net.feature_dims
        (True, ('decoders.0', 'decoders.1', 'decoders.2'), (8, 16, 32))
    """

    def __init__(self, width: int = 16, depth: int = 3, *,
                 seed: int | torch.Generator | None = 0) -> None:
        super().__init__()
        self.width = check_int(width, "width", 1)
        self.depth = check_int(depth, "depth", 1, 8)
        with seeded_init(seed):
            self._build(width, depth)

    def _build(self, width: int, depth: int) -> None:
        w = [width * 2 ** i for i in range(depth)]
        self.intro = nn.Conv2d(3, w[0], 3, padding=1)
        self.encoders = nn.ModuleList(_Block(w[i]) for i in range(depth - 1))
        self.downs = nn.ModuleList(nn.Conv2d(w[i], w[i + 1], 2, stride=2)
                                   for i in range(depth - 1))
        self.middle = _Block(w[-1])
        self.decoders = nn.ModuleList(_Block(w[i]) for i in range(depth))
        self.ups = nn.ModuleList(nn.ConvTranspose2d(w[i + 1], w[i], 2, stride=2)
                                 for i in range(depth - 1))
        self.ending = nn.Conv2d(w[0], 3, 3, padding=1)
        nn.init.trunc_normal_(self.ending.weight, std=0.02)
        nn.init.zeros_(self.ending.bias)
        self.tap_layers = tuple(f"decoders.{i}" for i in range(depth))
        self.feature_dims = tuple(w)

    def forward(self, x: ImageTensor) -> torch.Tensor:
        check_image_batch(x, "x", 3, ndim=(3, 4))  # a batch or one image
        H, W = x.shape[-2:]
        if x.device.type == "cpu" and x.ndim == 4:  # oneDNN's NHWC kernels: ~15% less CPU
            x = x.contiguous(memory_format=torch.channels_last)
        inp = _pad_to(x, 2 ** (self.depth - 1))
        h = self.intro(inp)
        skips = []
        for enc, down in zip(self.encoders, self.downs, strict=True):
            h = enc(h)
            skips.append(h)
            h = down(h)
        h = self.decoders[-1](self.middle(h))
        for i in reversed(range(self.depth - 1)):
            h = self.decoders[i](self.ups[i](h) + skips[i])
        return (inp + self.ending(h))[..., :H, :W].contiguous()


@checked
class FeatureTap:
    """Record the outputs of named sub-modules of any network during its forward passes.

    Hooks go on the modules named in ``layers`` (names as in ``model.named_modules()``);
    after a forward pass, :attr:`features` holds their outputs in the order of ``layers``.
    Each output must be a 4-D (B, C, H, W) tensor (on CPU :class:`UNet`'s are channels-last
    in memory: ``reshape`` them, not ``view``). Use as a context manager or call
    :meth:`remove` to take the hooks off.

    Raises:
        ValueError: ``layers`` empty, repeated, or naming a module the model lacks (the error
            lists some names it has).
    """

    def __init__(self, model: nn.Module, layers: str | Sequence[str]) -> None:
        if isinstance(layers, str):
            layers = [layers]
        self.layers = tuple(layers)
        if not self.layers:
            raise ValueError("layers is empty: name the modules whose outputs to tap")
        if len(set(self.layers)) != len(self.layers):
            raise ValueError(f"layers has duplicates: {self.layers}")
        modules = dict(model.named_modules())
        missing = [n for n in self.layers if n not in modules or n == ""]
        if missing:
            names = [n for n in modules if n]
            shown = ", ".join(names[:30]) + (", ..." if len(names) > 30 else "")
            raise ValueError(f"layers {missing} are not modules of the model; it has: {shown}")
        self._out: dict[str, torch.Tensor] = {}
        self._handles = [modules[n].register_forward_hook(self._hook(n)) for n in self.layers]

    def _hook(self, name: str):
        def hook(module: nn.Module, args: object, output: object) -> None:
            if not isinstance(output, torch.Tensor) or output.ndim != 4:
                shape = tuple(output.shape) if isinstance(output, torch.Tensor) else \
                    type(output).__name__
                raise ValueError(f"layers: the output of {name!r} must be a 4-D (B, C, H, W) "
                                 f"tensor, got {shape}")
            self._out[name] = output
        return hook

    @property
    def features(self) -> list[torch.Tensor]:
        """The last forward pass's outputs, in the order of ``layers``."""
        missing = [n for n in self.layers if n not in self._out]
        if missing:
            raise RuntimeError(f"layers {missing} did not run in the last forward pass")
        return [self._out[n] for n in self.layers]

    def clear(self) -> None:
        self._out.clear()

    def remove(self) -> None:
        """Take the hooks off the model."""
        for h in self._handles:
            h.remove()
        self._handles = []
        self._out.clear()

    def __enter__(self) -> FeatureTap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _device_of(model: nn.Module) -> torch.device:
    """Where ``model``'s parameters live (CPU for a model without any)."""
    p = next(model.parameters(), None)
    return p.device if p is not None else torch.device("cpu")


def _pad_to(x: torch.Tensor, m: int) -> torch.Tensor:
    """(B, C, H, W) padded at the right and bottom to multiples of ``m``: reflected, or
    replicated where the image is no larger than the pad (reflect needs pad < size)."""
    H, W = x.shape[-2:]
    ph, pw = (-H) % m, (-W) % m
    if not (ph or pw):
        return x
    mode = "reflect" if max(ph, pw) < min(H, W) else "replicate"
    return F.pad(x, (0, pw, 0, ph), mode=mode)


class _LayerNorm2d(nn.Module):
    """LayerNorm over channels at each pixel (channels-first)."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(c))
        self.bias = nn.Parameter(torch.zeros(c))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.layer_norm(x.permute(0, 2, 3, 1), x.shape[1:2], self.weight, self.bias, 1e-6)
        return x.permute(0, 3, 1, 2)


class _Bottleneck(nn.Module):
    """detectron2-style bottleneck: 1×1 → 3×3 → 1×1 (width 2c), LayerNorm after each conv."""

    def __init__(self, c: int) -> None:
        super().__init__()
        m = 2 * c
        self.conv1, self.norm1 = nn.Conv2d(c, m, 1, bias=False), _LayerNorm2d(m)
        self.conv2, self.norm2 = nn.Conv2d(m, m, 3, padding=1, bias=False), _LayerNorm2d(m)
        self.conv3, self.norm3 = nn.Conv2d(m, c, 1, bias=False), _LayerNorm2d(c)
        for conv in (self.conv1, self.conv2, self.conv3):  # c2_msra_fill
            nn.init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.norm1(self.conv1(x)))
        h = F.relu(self.norm2(self.conv2(h)))
        return F.relu(x + self.norm3(self.conv3(h)))


@checked
class DegradationClassifier(nn.Module):
    """Names the degradation from a restorer's features alone (DCPT's decoder, §3.2).

    As ``PromptIR_NoImg_DC``: with learnable level weights ``softmax(w)`` (init equal),
    ``h = Bottlenecks_i(h + softmax(w)_i · F_i)`` from the finest feature map to the coarsest,
    after every level (the last included, as the official code) ``h = ReLU(MaxPool2(
    Conv1×1(h)))`` (bias-free conv) to the next level's channels and size, then a last stage
    of bottlenecks, global average pooling and a linear layer.
    The input image is never used.

    Args:
        feature_dims: channels of each tapped feature, fine to coarse.
        n_classes: number of degradation kinds (>= 2).
        num_res_blocks: bottlenecks per stage.

    Raises:
        ValueError: empty ``feature_dims``, non-positive dims, ``n_classes < 2``.
    """

    def __init__(self, feature_dims: Sequence[int], n_classes: int,
                 num_res_blocks: int = 2) -> None:
        super().__init__()
        if isinstance(feature_dims, int) or len(feature_dims) == 0:
            raise ValueError(f"feature_dims must be a non-empty sequence of channel counts, "
                             f"got {feature_dims!r}")
        self.feature_dims = tuple(check_int(d, "feature_dims", 1) for d in feature_dims)
        self.n_classes = check_int(n_classes, "n_classes", 2)
        self.num_res_blocks = check_int(num_res_blocks, "num_res_blocks", 0)
        d = self.feature_dims
        self.level_logits = nn.Parameter(torch.ones(len(d)))
        self.stages = nn.ModuleList(
            nn.Sequential(*[_Bottleneck(c) for _ in range(num_res_blocks)]) for c in d)
        self.transitions = nn.ModuleList(nn.Conv2d(d[i], d[min(i + 1, len(d) - 1)], 1, bias=False)
                                         for i in range(len(d)))
        self.last_stage = nn.Sequential(*[_Bottleneck(d[-1]) for _ in range(num_res_blocks)])
        self.head = nn.Linear(d[-1], n_classes)

    def forward(self, features: Sequence[torch.Tensor]) -> torch.Tensor:
        """Logits (B, n_classes) from the tapped features, fine to coarse."""
        if len(features) != len(self.feature_dims):
            raise ValueError(f"features must hold {len(self.feature_dims)} maps "
                             f"(feature_dims), got {len(features)}")
        w = torch.softmax(self.level_logits, 0)
        h: torch.Tensor | int = 0
        for i, f in enumerate(features):
            if f.ndim != 4 or f.shape[1] != self.feature_dims[i]:
                raise ValueError(f"features[{i}] must be (B, {self.feature_dims[i]}, H, W), "
                                 f"got {tuple(f.shape)}")
            if f.device.type == "cpu":  # oneDNN's NHWC kernels, LayerNorm without copies
                f = f.contiguous(memory_format=torch.channels_last)
            h = self.transitions[i](self.stages[i](h + w[i] * f))
            if i + 1 < len(features):
                h = F.relu(F.adaptive_max_pool2d(h, features[i + 1].shape[-2:]))
            else:   # the official last block; ceil_mode keeps a 1-pixel map alive
                h = F.relu(F.max_pool2d(h, 2, ceil_mode=True))
        h = self.last_stage(h)
        return self.head(h.mean((-2, -1)))
