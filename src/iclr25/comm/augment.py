"""Seeded, label-preserving augmentations for CoMM's multimodal views.

Each returns a new tensor (the input is never modified) and draws from the ``seed`` given
at call time (int, Generator or None), never from the global RNG. Random numbers are drawn
on the CPU generator and moved to the input's device, so a seed gives the same view on
every device.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from iclr25._checks import ArrayLike, as_tensor, check_int, check_range, resolve_seed
from iclr25._contract import checked

__all__ = ["BrightnessContrast", "ColorJitter", "Compose", "GaussianNoise", "RandomDrop",
           "RandomShift", "ResizedCropFlip"]


def _floating(x: ArrayLike, name: str = "x", ndim: tuple[int, ...] | None = None) -> torch.Tensor:
    t = as_tensor(x, name, ndim=ndim)
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {t.dtype}")
    return t


@checked
class GaussianNoise:
    """``x + N(0, std^2)``, element-wise (MultiBench's ``noise``; std 0.1 by default)."""

    def __init__(self, std: float = 0.1) -> None:
        self.std = check_range(std, "std", 0.0)

    def __call__(self, x: torch.Tensor, *, seed: int | torch.Generator | None = None
                 ) -> torch.Tensor:
        x = _floating(x)
        g = resolve_seed(seed)
        return x + self.std * torch.randn(x.shape, generator=g, dtype=x.dtype).to(x.device)

    def __repr__(self) -> str:
        return f"GaussianNoise(std={self.std})"


@checked
class RandomDrop:
    """Zero a random fraction, drawn uniformly in ``[0, max_fraction]`` per sample, of the
    entries along the last axis (MultiBench's ``drop``: features or time steps)."""

    def __init__(self, max_fraction: float = 0.8) -> None:
        self.max_fraction = check_range(max_fraction, "max_fraction", 0.0, 1.0)

    def __call__(self, x: torch.Tensor, *, seed: int | torch.Generator | None = None
                 ) -> torch.Tensor:
        x = _floating(x, ndim=None)
        if x.ndim < 2:
            raise ValueError(f"x must be at least 2-D (samples in rows), got shape "
                             f"{tuple(x.shape)}")
        g = resolve_seed(seed)
        frac = torch.rand(len(x), generator=g) * self.max_fraction
        u = torch.rand(len(x), x.shape[-1], generator=g)
        keep = (u >= frac[:, None]).to(device=x.device, dtype=x.dtype)
        return x * keep.reshape(len(x), *([1] * (x.ndim - 2)), x.shape[-1])

    def __repr__(self) -> str:
        return f"RandomDrop(max_fraction={self.max_fraction})"


@checked
class RandomShift:
    """Shift (n, C, H, W) images by integers in ``[-max_shift, max_shift]`` on each axis,
    zero-filled (the "random crop after padding" of SimCLR on small images)."""

    def __init__(self, max_shift: int = 2) -> None:
        self.max_shift = check_int(max_shift, "max_shift", 0)

    def __call__(self, x: torch.Tensor, *, seed: int | torch.Generator | None = None
                 ) -> torch.Tensor:
        x = _floating(x, ndim=(4,))
        s = self.max_shift
        g = resolve_seed(seed)
        n, c, H, W = x.shape
        shifts = torch.randint(-s, s + 1, (n, 2), generator=g).to(x.device)
        padded = F.pad(x, (s, s, s, s))
        # two gathers (rows, then columns): a few times faster than one 4-index lookup
        rows = torch.arange(H, device=x.device)[None, :] + s - shifts[:, :1]
        cols = torch.arange(W, device=x.device)[None, :] + s - shifts[:, 1:]
        out = padded.gather(2, rows[:, None, :, None].expand(n, c, H, W + 2 * s))
        return out.gather(3, cols[:, None, None, :].expand(n, c, H, W))

    def __repr__(self) -> str:
        return f"RandomShift(max_shift={self.max_shift})"


@checked
class BrightnessContrast:
    """Per-image brightness and contrast jitter, hue untouched (ColorJitter's first two
    factors): ``x * b``, then ``(x - mean) * c + mean`` with ``b ~ U[1 - brightness,
    1 + brightness]``, ``c ~ U[1 - contrast, 1 + contrast]``, clamped to [0, 1]."""

    def __init__(self, brightness: float = 0.4, contrast: float = 0.4) -> None:
        self.brightness = check_range(brightness, "brightness", 0.0, 1.0)
        self.contrast = check_range(contrast, "contrast", 0.0, 1.0)

    def __call__(self, x: torch.Tensor, *, seed: int | torch.Generator | None = None
                 ) -> torch.Tensor:
        x = _floating(x, ndim=(4,))
        g = resolve_seed(seed)
        n = len(x)
        b = 1 + self.brightness * (2 * torch.rand(n, generator=g) - 1)
        c = 1 + self.contrast * (2 * torch.rand(n, generator=g) - 1)
        b, c = (t.to(device=x.device, dtype=x.dtype)[:, None, None, None] for t in (b, c))
        y = x * b
        mean = y.mean(dim=(1, 2, 3), keepdim=True)
        return ((y - mean) * c + mean).clamp(0, 1)

    def __repr__(self) -> str:
        return f"BrightnessContrast(brightness={self.brightness}, contrast={self.contrast})"


@checked
class Compose:
    """Apply augmentations in order, all drawing from one generator."""

    def __init__(self, *augmentations: object) -> None:
        for i, a in enumerate(augmentations):
            if not callable(a):
                raise TypeError(f"augmentations[{i}] must be callable, got {type(a).__name__}")
        self.augmentations = augmentations

    def __call__(self, x: torch.Tensor, *, seed: int | torch.Generator | None = None
                 ) -> torch.Tensor:
        g = resolve_seed(seed)
        for a in self.augmentations:
            x = a(x, seed=g)
        return x

    def __repr__(self) -> str:
        return f"Compose({', '.join(map(repr, self.augmentations))})"


@checked
class ResizedCropFlip:
    """SimCLR's ``RandomResizedCrop`` and ``RandomHorizontalFlip`` on (n, C, H, W) images,
    vectorised: each image gets a crop of area fraction in ``scale`` and aspect ratio
    (log-uniform) in ``ratio``, resampled bilinearly back to (H, W), mirrored with
    probability 1/2 when ``flip``."""

    def __init__(self, scale: tuple[float, float] = (0.08, 1.0),
                 ratio: tuple[float, float] = (3 / 4, 4 / 3), flip: bool = True) -> None:
        lo = check_range(scale[0], "scale", 0.0, 1.0, low_open=True)
        hi = check_range(scale[1], "scale", lo, 1.0)
        r0 = check_range(ratio[0], "ratio", 0.0, low_open=True)
        r1 = check_range(ratio[1], "ratio", r0)
        self.scale, self.ratio, self.flip = (lo, hi), (r0, r1), bool(flip)

    def __call__(self, x: torch.Tensor, *, seed: int | torch.Generator | None = None
                 ) -> torch.Tensor:
        x = _floating(x, ndim=(4,))
        g = resolve_seed(seed)
        n = len(x)
        area = self.scale[0] + (self.scale[1] - self.scale[0]) * torch.rand(n, generator=g)
        lr = torch.tensor(self.ratio).log()
        ar = (lr[0] + (lr[1] - lr[0]) * torch.rand(n, generator=g)).exp()
        w = (area * ar).sqrt().clamp(max=1.0)  # crop sides as fractions of the image
        h = (area / ar).sqrt().clamp(max=1.0)
        cx = (1 - w) * (2 * torch.rand(n, generator=g) - 1)  # centres in [-1, 1] units
        cy = (1 - h) * (2 * torch.rand(n, generator=g) - 1)
        sign = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0) if self.flip else (
            torch.ones(n))
        theta = torch.zeros(n, 2, 3)
        theta[:, 0, 0], theta[:, 0, 2] = w * sign, cx
        theta[:, 1, 1], theta[:, 1, 2] = h, cy
        grid = F.affine_grid(theta.to(x.device, x.dtype), list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="border",
                             align_corners=False)

    def __repr__(self) -> str:
        return f"ResizedCropFlip(scale={self.scale}, ratio={self.ratio}, flip={self.flip})"


_YIQ = torch.tensor([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]])


@checked
class ColorJitter:
    """SimCLR's colour distortion on (n, 3, H, W) RGB images in [0, 1], vectorised:
    with probability ``p`` brightness, contrast, saturation (factors uniform in ``1 +- x``)
    and hue (a rotation of the chroma by ``hue`` turns at most, in YIQ space), then
    grayscale with probability ``grayscale``; clamped to [0, 1] after each step. The official
    pipeline is ``RandomApply([ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8)`` then
    ``RandomGrayscale(0.2)``; torchvision shuffles the four jitters, here they run in order.
    """

    def __init__(self, brightness: float = 0.4, contrast: float = 0.4, saturation: float = 0.4,
                 hue: float = 0.1, *, p: float = 0.8, grayscale: float = 0.2) -> None:
        self.brightness = check_range(brightness, "brightness", 0.0, 1.0)
        self.contrast = check_range(contrast, "contrast", 0.0, 1.0)
        self.saturation = check_range(saturation, "saturation", 0.0, 1.0)
        self.hue = check_range(hue, "hue", 0.0, 0.5)
        self.p = check_range(p, "p", 0.0, 1.0)
        self.grayscale = check_range(grayscale, "grayscale", 0.0, 1.0)

    def __call__(self, x: torch.Tensor, *, seed: int | torch.Generator | None = None
                 ) -> torch.Tensor:
        x = _floating(x, ndim=(4,))
        if x.shape[1] != 3:
            raise ValueError(f"x must be RGB images (n, 3, H, W), got {tuple(x.shape)}")
        g = resolve_seed(seed)
        n = len(x)
        u = torch.rand(n, 6, generator=g)
        on = u[:, 0] < self.p
        b = torch.where(on, 1 + self.brightness * (2 * u[:, 1] - 1), 1.0)
        c = torch.where(on, 1 + self.contrast * (2 * u[:, 2] - 1), 1.0)
        s = torch.where(on, 1 + self.saturation * (2 * u[:, 3] - 1), 1.0)
        turn = torch.where(on, self.hue * (2 * u[:, 4] - 1), 0.0) * 2 * torch.pi
        gray = u[:, 5] < self.grayscale
        dev, dt = x.device, x.dtype
        col = lambda t: t.to(dev, dt)[:, None, None, None]  # noqa: E731
        lum = _YIQ[0].to(dev, dt)[None, :, None, None]
        y = (x * col(b)).clamp(0, 1)
        mean = (y * lum).sum(1, keepdim=True).mean(dim=(2, 3), keepdim=True)
        y = ((y - mean) * col(c) + mean).clamp(0, 1)
        grey = (y * lum).sum(1, keepdim=True)
        y = ((y - grey) * col(s) + grey).clamp(0, 1)
        # hue: rotate (I, Q) by the drawn angle, Y kept: rgb -> yiq -> rotate -> rgb
        cos, sin = turn.cos(), turn.sin()
        rot = torch.zeros(n, 3, 3)
        rot[:, 0, 0], rot[:, 1, 1], rot[:, 2, 2] = 1.0, cos, cos
        rot[:, 1, 2], rot[:, 2, 1] = -sin, sin
        M = torch.linalg.inv(_YIQ) @ rot @ _YIQ  # (n, 3, 3)
        y = torch.einsum("nij,njhw->nihw", M.to(dev, dt), y).clamp(0, 1)
        grey = (y * lum).sum(1, keepdim=True).expand_as(y)
        return torch.where(col(gray.float()) > 0, grey, y)

    def __repr__(self) -> str:
        return (f"ColorJitter(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue}, p={self.p}, "
                f"grayscale={self.grayscale})")
