"""Offline images for restoration: scikit-image's bundled photos, crops, synthetic degradations.

Shared by the image-restoration methods (``dcpt``, ``lowlight``); not imported by
``iclr25.datasets`` so that the rest of the library does not need the ``image`` extra.

* :func:`load_image` reads one of scikit-image's bundled images (no network) as a (3, H, W)
  float32 tensor in [0, 1]; :data:`RGB_IMAGES`, :data:`GRAY_IMAGES`, :data:`TEST_IMAGES`.
* :func:`random_crops` cuts seeded crops with flips and right-angle rotations.
* :func:`degrade` applies one of :data:`KINDS` to a batch, vectorised in torch on the input's
  device (JPEG goes through Pillow on the CPU); :class:`AllInOnePairs` streams seeded
  ``(lq, gt, y)`` batches of mixed degradations for all-in-one restoration.
* :func:`psnr`, :func:`ssim`: the usual full-reference metrics (agree with
  ``skimage.metrics``), batched in torch.
* :func:`load_folder`, :func:`save_image`: PNG/JPEG/TIFF/BMP files through Pillow.

Every random draw comes from a generator built from ``seed`` (never the global RNG), so the
same seed gives the same images on the same device.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F

from iclr25._checks import ArrayLike, as_tensor, check_choice, check_int, check_range, resolve_seed
from iclr25._choices import KINDS, Kind  # the degradations degrade() knows, in label order
from iclr25._contract import RealImages, checked
from iclr25._optional import require

__all__ = [
    "GRAY_IMAGES", "IMAGE_SUFFIXES", "KINDS", "RGB_IMAGES", "TEST_IMAGES", "AllInOnePairs",
    "Kind", "check_images", "degrade", "load_folder", "load_image", "psnr", "random_crops",
    "save_image", "ssim",
]

#: Bundled natural and synthetic RGB images (``motorcycle_left/right`` are the stereo pair).
RGB_IMAGES = ("astronaut", "chelsea", "coffee", "rocket", "motorcycle_left", "motorcycle_right",
              "hubble_deep_field", "immunohistochemistry", "retina", "colorwheel", "logo")
#: Bundled grayscale images (loaded as three equal channels).
GRAY_IMAGES = ("camera", "coins", "moon", "page", "text", "brick", "grass", "gravel", "cell")
#: Whole images held out for testing (DCPT's CPU-scale protocol).
TEST_IMAGES = ("chelsea", "coffee", "rocket")
#: File suffixes :func:`load_folder` reads and :func:`save_image` writes.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")


# Defaults per kind: a number is fixed, a (low, high) pair is drawn uniformly per image.
_DEFAULTS: dict[str, dict[str, Any]] = {
    "noise": {"sigma": 25 / 255},
    "blur": {"sigma": (1.5, 2.5)},
    "motion_blur": {"length": (7.0, 13.0), "angle": (0.0, 180.0)},
    "defocus": {"radius": (2.0, 4.0)},
    "jpeg": {"quality": (8, 15)},
    "haze": {"beta": (0.6, 1.2), "airlight": (0.8, 1.0)},
    "low_light": {"k": (0.08, 0.2), "gamma": (1.5, 2.2), "lam": 300.0, "read_sigma": 0.01},
    "rain": {"density": (0.004, 0.01), "length": (9.0, 17.0), "angle": (60.0, 120.0),
             "intensity": (0.6, 0.9)},
    "inpaint": {"n_lines": (4, 8), "thickness": (2.0, 4.0)},
    "mosaic": {},
}


def _skimage():
    return require("skimage", "image")


@lru_cache(maxsize=32)
def _load_uint8(name: str) -> np.ndarray:
    data = _skimage().data
    if name in ("motorcycle_left", "motorcycle_right"):
        left, right, _ = data.stereo_motorcycle()
        return left if name == "motorcycle_left" else right
    return getattr(data, name)()


def load_image(name: str, *, max_side: int | None = None) -> torch.Tensor:
    """One of scikit-image's bundled images as a (3, H, W) float32 tensor in [0, 1].

    Grayscale images are repeated to three channels; RGBA (``logo``) is composited on white.

    Args:
        name: one of :data:`RGB_IMAGES` or :data:`GRAY_IMAGES`.
        max_side: if given, shrink (antialiased bilinear) so that ``max(H, W) <= max_side``.

    Returns:
        A new (3, H, W) float32 tensor on the CPU.

    Raises:
        ValueError: unknown ``name`` or ``max_side < 8``.

    Examples:
        >>> x = load_image("chelsea", max_side=128)
        >>> x.shape, x.dtype
        (torch.Size([3, 85, 128]), torch.float32)
    """
    check_choice(name, "name", RGB_IMAGES + GRAY_IMAGES)
    if max_side is not None:
        max_side = check_int(max_side, "max_side", 8)
    a = torch.from_numpy(np.ascontiguousarray(_load_uint8(name))).float() / 255.0
    if a.ndim == 2:
        a = a[..., None].expand(-1, -1, 3)
    elif a.shape[-1] == 4:
        alpha = a[..., 3:]
        a = a[..., :3] * alpha + (1 - alpha)
    x = a.permute(2, 0, 1).contiguous()
    if max_side is not None and max(x.shape[1:]) > max_side:
        s = max_side / max(x.shape[1:])
        size = (max(1, round(x.shape[1] * s)), max(1, round(x.shape[2] * s)))
        x = F.interpolate(x[None], size=size, mode="bilinear", antialias=True,
                          align_corners=False)[0].clamp_(0, 1)
    return x


def check_images(x: ArrayLike, name: str = "x") -> torch.Tensor:
    """Validate a (3, H, W) or (B, 3, H, W) float image batch in [0, 1]; return it as a tensor.

    Raises:
        TypeError: integer/bool dtype or not array-like.
        ValueError: wrong shape, empty, NaN/inf, or values outside [0, 1].
    """
    t = as_tensor(x, name, ndim=(3, 4))
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating-point image in [0, 1], got {t.dtype} "
                        f"(divide 8-bit images by 255)")
    if t.shape[-3] != 3:
        raise ValueError(f"{name} must have shape (3, H, W) or (B, 3, H, W), got "
                         f"{tuple(t.shape)}")
    lo, hi = float(t.min()), float(t.max())
    if lo < 0 or hi > 1:
        raise ValueError(f"{name} must hold values in [0, 1], got range [{lo:.3g}, {hi:.3g}]")
    return t


def random_crops(images: Sequence[torch.Tensor] | torch.Tensor, n: int, size: int, *,
                 seed: int | torch.Generator | None = None, augment: bool = True
                 ) -> torch.Tensor:
    """``n`` random ``size``×``size`` crops from a list of (3, H, W) images.

    Each crop picks an image uniformly, a uniform position, and (``augment``) one of the 8
    flips/right-angle rotations. Crops are on the first image's device and dtype.

    Returns:
        (n, 3, size, size) tensor (a copy; the images are not modified).

    Raises:
        ValueError: no images, an image smaller than ``size``, bad ``n``/``size``.
    """
    if isinstance(images, torch.Tensor) and images.ndim == 3:
        images = [images]
    images = [check_images(im, f"images[{i}]") for i, im in enumerate(images)]
    if not images:
        raise ValueError("images is empty")
    for i, im in enumerate(images):
        if im.ndim != 3:
            raise ValueError(f"images[{i}] must be one (3, H, W) image, got {tuple(im.shape)}")
    n = check_int(n, "n", 1)
    size = check_int(size, "size", 1)
    for i, im in enumerate(images):
        if min(im.shape[1:]) < size:
            raise ValueError(f"images[{i}] of shape {tuple(im.shape)} is smaller than "
                             f"size={size}")
    return _crops(images, n, size, resolve_seed(seed), augment)


def _crops(images: Sequence[torch.Tensor], n: int, size: int, g: torch.Generator,
           augment: bool = True) -> torch.Tensor:
    """:func:`random_crops` on images already checked (training loops check them once,
    not at every step: the [0, 1] and NaN checks of every source image cost more than the
    crops)."""
    which = torch.randint(len(images), (n,), generator=g)
    u = torch.rand(n, 2, generator=g)
    aug = torch.randint(8, (n,), generator=g) if augment else torch.zeros(n, dtype=torch.long)
    out = images[0].new_empty((n, 3, size, size))
    for j in range(len(images)):  # a loop over source images; the crops are gathered in bulk
        idx = (which == j).nonzero().flatten()
        if len(idx) == 0:
            continue
        im = images[j].to(out)
        H, W = im.shape[1:]
        top = (u[idx, 0] * (H - size + 1)).long().clamp_(max=H - size)
        left = (u[idx, 1] * (W - size + 1)).long().clamp_(max=W - size)
        ar = torch.arange(size)
        rows = (top[:, None] + ar).to(im.device)          # (m, size)
        cols = (left[:, None] + ar).to(im.device)
        crops = im[:, rows[:, :, None], cols[:, None, :]].permute(1, 0, 2, 3)
        out[idx.to(out.device)] = crops
    if augment:
        for a in range(1, 8):  # 8 dihedral transforms, each applied to its crops at once
            idx = (aug == a).nonzero().flatten().to(out.device)
            if len(idx):
                c = out[idx]
                if a >= 4:
                    c = c.flip(-1)
                out[idx] = torch.rot90(c, a % 4, dims=(-2, -1))
    return out


# --- degradations ---------------------------------------------------------------------------

def _draw(spec: Any, name: str, n: int, g: torch.Generator, integer: bool = False
          ) -> torch.Tensor:
    """(n,) float64 values: ``spec`` fixed, or uniform in a (low, high) pair."""
    if isinstance(spec, (tuple, list)):
        if len(spec) != 2:
            raise ValueError(f"{name} must be a number or a (low, high) pair, got {spec!r}")
        lo, hi = (check_range(s, name) for s in spec)
        if lo > hi:
            raise ValueError(f"{name} must have low <= high, got {spec!r}")
        if integer:
            return torch.randint(int(lo), int(hi) + 1, (n,), generator=g).double()
        return lo + (hi - lo) * torch.rand(n, generator=g, dtype=torch.float64)
    v = check_range(spec, name)
    return torch.full((n,), v, dtype=torch.float64)


def _params(kind: str, params: Mapping[str, Any]) -> dict[str, Any]:
    allowed = _DEFAULTS[kind]
    unknown = set(params) - set(allowed)
    if unknown:
        raise ValueError(f"params {sorted(unknown)} are not parameters of kind {kind!r}; "
                         f"it takes {sorted(allowed) or 'none'}")
    return {**allowed, **params}


def _depthwise(x: torch.Tensor, kernels: torch.Tensor) -> torch.Tensor:
    """Convolve each image of (B, C, H, W) with its own (B, k, k) kernel, mirror padding."""
    B, C, H, W = x.shape
    k = kernels.shape[-1]
    r = k // 2
    xp = _mirror_pad(x, r)
    w = kernels.to(x)[:, None].repeat_interleave(C, 0)  # (B*C, 1, k, k)
    return F.conv2d(xp.reshape(1, B * C, H + 2 * r, W + 2 * r), w.flip(-1, -2),
                    groups=B * C).reshape(B, C, H, W)


def _mirror_pad(x: torch.Tensor, r: int) -> torch.Tensor:
    """scipy's ``mode="mirror"`` (d c b | a b c d | c b a), for pads wider than the image too."""
    if r == 0:
        return x
    H, W = x.shape[-2:]
    rows = _mirror_index(H, r, x.device)
    cols = _mirror_index(W, r, x.device)
    return x[..., rows[:, None], cols[None, :]]


def _mirror_index(n: int, r: int, device: torch.device) -> torch.Tensor:
    i = torch.arange(-r, n + r, device=device)
    if n == 1:
        return torch.zeros_like(i)
    period = 2 * (n - 1)
    i = i.remainder(period)
    return torch.where(i >= n, period - i, i)


def _gaussian_blur(x: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Separable Gaussian per image, as ``scipy.ndimage.gaussian_filter(mode="mirror")``."""
    B, C, H, W = x.shape
    radius = (4.0 * sigma + 0.5).long()                  # scipy: int(truncate * sigma + 0.5)
    R = int(radius.max())
    t = torch.arange(-R, R + 1, dtype=torch.float64)
    k = torch.exp(-0.5 * (t[None] / sigma[:, None]) ** 2) * (t.abs()[None] <= radius[:, None])
    k = (k / k.sum(1, keepdim=True)).to(x)
    k = k.repeat_interleave(C, 0)                         # (B*C, 2R+1)
    xp = _mirror_pad(x, R).reshape(1, B * C, H + 2 * R, W + 2 * R)
    y = F.conv2d(xp, k[:, None, None, :], groups=B * C)   # along W
    y = F.conv2d(y, k[:, None, :, None], groups=B * C)    # along H
    return y.reshape(B, C, H, W)


def _line_kernels(length: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    """(B, k, k) normalised anti-aliased line kernels (motion blur), odd k."""
    k = 2 * int(math.ceil(float(length.max()) / 2)) + 1
    t = torch.arange(k, dtype=torch.float64) - k // 2
    yy, xx = torch.meshgrid(t, t, indexing="ij")
    th = torch.deg2rad(angle)[:, None, None]
    d = torch.cos(th), -torch.sin(th)                     # direction (x, y)
    along = xx * d[0] + yy * d[1]
    across = -xx * d[1] + yy * d[0]
    half = (length / 2)[:, None, None]
    dist = torch.sqrt(across ** 2 + (along.abs() - half).clamp(min=0) ** 2)
    ker = (1 - dist).clamp(min=0)
    return ker / ker.sum((1, 2), keepdim=True)


def _disk_kernels(radius: torch.Tensor) -> torch.Tensor:
    """(B, k, k) normalised anti-aliased disks (defocus blur)."""
    R = int(math.ceil(float(radius.max()))) + 1
    t = torch.arange(-R, R + 1, dtype=torch.float64)
    rr = torch.sqrt(t[:, None] ** 2 + t[None] ** 2)
    ker = (radius[:, None, None] + 0.5 - rr).clamp(0, 1)
    return ker / ker.sum((1, 2), keepdim=True)


def _jpeg(x: torch.Tensor, quality: torch.Tensor) -> torch.Tensor:
    """Pillow JPEG round trip per image (4:2:0 chroma, Pillow's defaults), on the CPU."""
    Image = require("PIL.Image", "image")
    arr = (x.detach().cpu().permute(0, 2, 3, 1).double() * 255).round().clamp(0, 255)
    arr = arr.to(torch.uint8).numpy()
    out = np.empty_like(arr)
    for i in range(len(arr)):  # Pillow encodes one image at a time
        buf = io.BytesIO()
        Image.fromarray(arr[i]).save(buf, format="JPEG", quality=int(quality[i]))
        buf.seek(0)
        out[i] = np.asarray(Image.open(buf).convert("RGB"))
    return torch.from_numpy(out).to(x.device).permute(0, 3, 1, 2).to(x.dtype) / 255.0


def _segments_mask(B: int, H: int, W: int, n_lines: torch.Tensor, thick: torch.Tensor,
                   g: torch.Generator, device: torch.device) -> torch.Tensor:
    """(B, 1, H, W) bool mask of up to max(n_lines) random thick line segments per image."""
    L = int(n_lines.max())
    p = torch.rand(B, L, 2, 2, generator=g, dtype=torch.float64).to(device)
    p = p * torch.tensor([W - 1, H - 1], dtype=torch.float64, device=device)
    a, b = p[:, :, 0], p[:, :, 1]                          # (B, L, 2) endpoints (x, y)
    yy, xx = torch.meshgrid(torch.arange(H, device=device, dtype=torch.float64),
                            torch.arange(W, device=device, dtype=torch.float64), indexing="ij")
    q = torch.stack([xx, yy], -1)                          # (H, W, 2)
    ab = (b - a)[:, :, None, None]                         # (B, L, 1, 1, 2)
    aq = q[None, None] - a[:, :, None, None]
    t = ((aq * ab).sum(-1) / (ab ** 2).sum(-1).clamp(min=1e-9)).clamp(0, 1)
    dist = (aq - t[..., None] * ab).norm(dim=-1)           # (B, L, H, W)
    active = torch.arange(L, device=device)[None] < n_lines.to(device)[:, None]
    hit = (dist <= thick.to(device)[:, None, None, None] / 2) & active[:, :, None, None]
    return hit.any(1, keepdim=True)


def _bayer_bilinear(x: torch.Tensor) -> torch.Tensor:
    """RGGB Bayer sampling followed by bilinear demosaicing (what a cheap camera does)."""
    B, C, H, W = x.shape
    yy = torch.arange(H, device=x.device)[:, None] % 2
    xx = torch.arange(W, device=x.device)[None] % 2
    masks = torch.stack([(yy == 0) & (xx == 0), (yy + xx) == 1, (yy == 1) & (xx == 1)]).to(x)
    raw = x * masks                                        # (B, 3, H, W)
    k_rb = torch.tensor([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=x.dtype, device=x.device) / 4
    k_g = torch.tensor([[0, 1, 0], [1, 4, 1], [0, 1, 0]], dtype=x.dtype, device=x.device) / 4
    w = torch.stack([k_rb, k_g, k_rb])[:, None]            # (3, 1, 3, 3)
    return F.conv2d(_mirror_pad(raw, 1), w, groups=3)


def degrade(x: ArrayLike, kind: str, *, seed: int | torch.Generator | None = None,
            **params: Any) -> torch.Tensor:
    """Apply the synthetic degradation ``kind`` to an image or a batch (values stay in [0, 1]).

    Vectorised in torch on the input's device; only ``jpeg`` round-trips through Pillow on
    the CPU. Each parameter is a number (fixed) or a ``(low, high)`` pair drawn uniformly per
    image; anything not given takes the default below.

    =========== ==============================================================================
    kind        model (defaults)
    =========== ==============================================================================
    noise       J + σ·N(0, 1), ``sigma`` = 25/255
    blur        Gaussian, ``sigma`` ∈ [1.5, 2.5], radius int(4σ + 0.5), scipy ``mode="mirror"``
    motion_blur line kernel, ``length`` ∈ [7, 13] px, ``angle`` ∈ [0, 180)°
    defocus     disk kernel, ``radius`` ∈ [2, 4] px
    jpeg        Pillow JPEG round trip, ``quality`` ∈ [8, 15] (integers)
    haze        J·t + A(1 − t), t = exp(−β·ramp), ramp a random linear depth in [0, 1],
                ``beta`` ∈ [0.6, 1.2], ``airlight`` A ∈ [0.8, 1]
    low_light   Poisson(λ·k·J^g)/λ + N(0, σ_r²), ``k`` ∈ [0.08, 0.2], ``gamma`` g ∈ [1.5, 2.2],
                ``lam`` λ = 300, ``read_sigma`` σ_r = 0.01
    rain        sparse drops smeared along one ``angle`` by ``length`` px, added with
                ``intensity``, ``density`` ∈ [0.004, 0.01]
    inpaint     ``n_lines`` ∈ [4, 8] random strokes of ``thickness`` ∈ [2, 4] px, each image's
                strokes all white or all black (DCPT's inpainting set)
    mosaic      RGGB Bayer sampling, bilinear demosaicing
    =========== ==============================================================================

    The result is clipped to [0, 1] (so noise is slightly non-Gaussian at the extremes).

    Args:
        x: (3, H, W) or (B, 3, H, W) float image(s) in [0, 1].
        kind: one of :data:`KINDS`.
        seed: int, Generator (CPU) or None.
        **params: the kind's parameters by name, e.g. ``sigma=0.1`` or ``quality=(5, 10)``.

    Returns:
        A new tensor of ``x``'s shape, dtype and device.

    Raises:
        TypeError: integer images.
        ValueError: bad shape/values, unknown ``kind`` or parameter.

    Examples:
        >>> x = load_image("astronaut", max_side=64)
        >>> y = degrade(x, "noise", seed=0, sigma=0.1)
        >>> y.shape == x.shape and 0 <= float(y.min()) and float(y.max()) <= 1
        True
    """
    t = check_images(x, "x")
    check_choice(kind, "kind", KINDS)
    p = _params(kind, params)
    single = t.ndim == 3
    J = t[None] if single else t
    g = resolve_seed(seed)
    dev = J.device
    gdev = g if dev.type == "cpu" else torch.Generator(dev).manual_seed(
        int(torch.randint(2 ** 62, (1,), generator=g)))
    out = _DEGRADATIONS[kind](J, p, g, gdev).clamp(0, 1)
    return out[0] if single else out


# --- one function per kind: (J (B, 3, H, W), params, CPU generator for the per-image
# parameters, generator on J's device for the pixels) -> the unclipped degraded batch ---------

def _randn(shape: tuple[int, ...] | torch.Size, J: torch.Tensor,
           gdev: torch.Generator) -> torch.Tensor:
    return torch.randn(shape, generator=gdev, device=J.device, dtype=J.dtype)


def _noise(J: torch.Tensor, p: dict, g: torch.Generator, gdev: torch.Generator) -> torch.Tensor:
    s = _draw(p["sigma"], "sigma", len(J), g).to(J)
    return J + s[:, None, None, None] * _randn(J.shape, J, gdev)


def _blur(J: torch.Tensor, p: dict, g: torch.Generator, gdev: torch.Generator) -> torch.Tensor:
    return _gaussian_blur(J, _draw(p["sigma"], "sigma", len(J), g).clamp(min=1e-3))


def _motion_blur(J: torch.Tensor, p: dict, g: torch.Generator,
                 gdev: torch.Generator) -> torch.Tensor:
    B = len(J)
    ker = _line_kernels(_draw(p["length"], "length", B, g).clamp(min=1),
                        _draw(p["angle"], "angle", B, g))
    return _depthwise(J, ker)


def _defocus(J: torch.Tensor, p: dict, g: torch.Generator, gdev: torch.Generator) -> torch.Tensor:
    return _depthwise(J, _disk_kernels(_draw(p["radius"], "radius", len(J), g).clamp(min=0.5)))


def _jpeg_kind(J: torch.Tensor, p: dict, g: torch.Generator,
               gdev: torch.Generator) -> torch.Tensor:
    return _jpeg(J, _draw(p["quality"], "quality", len(J), g, integer=True).clamp(1, 95))


def _haze(J: torch.Tensor, p: dict, g: torch.Generator, gdev: torch.Generator) -> torch.Tensor:
    B, _, H, W = J.shape
    beta = _draw(p["beta"], "beta", B, g).to(J)[:, None, None, None]
    A = _draw(p["airlight"], "airlight", B, g).to(J)[:, None, None, None]
    ramp = _ramp(B, H, W, g, J.device, J.dtype)
    tr = torch.exp(-beta * ramp)
    return J * tr + A * (1 - tr)


def _low_light(J: torch.Tensor, p: dict, g: torch.Generator,
               gdev: torch.Generator) -> torch.Tensor:
    B = len(J)
    k = _draw(p["k"], "k", B, g).to(J)[:, None, None, None]
    gm = _draw(p["gamma"], "gamma", B, g).to(J)[:, None, None, None]
    lam = check_range(p["lam"], "lam", 0, low_open=True)
    rs = check_range(p["read_sigma"], "read_sigma", 0)
    rate = lam * k * J.clamp(min=0) ** gm
    return torch.poisson(rate, generator=gdev) / lam + rs * _randn(J.shape, J, gdev)


def _rain(J: torch.Tensor, p: dict, g: torch.Generator, gdev: torch.Generator) -> torch.Tensor:
    B, _, H, W = J.shape
    dens = _draw(p["density"], "density", B, g).to(J)[:, None, None, None]
    inten = _draw(p["intensity"], "intensity", B, g).to(J)[:, None, None, None]
    u = torch.rand((B, 1, H, W), generator=gdev, device=J.device, dtype=J.dtype)
    drops = (u < dens).to(J) * (0.5 + 0.5 * torch.rand((B, 1, H, W), generator=gdev,
                                                        device=J.device, dtype=J.dtype))
    ker = _line_kernels(_draw(p["length"], "length", B, g).clamp(min=1),
                        _draw(p["angle"], "angle", B, g))
    streaks = _depthwise(drops, ker * ker.shape[-1] / 3)
    return J + inten * streaks.clamp(0, 1)


def _inpaint(J: torch.Tensor, p: dict, g: torch.Generator, gdev: torch.Generator) -> torch.Tensor:
    B, _, H, W = J.shape
    n_lines = _draw(p["n_lines"], "n_lines", B, g, integer=True).long().clamp(min=0)
    thick = _draw(p["thickness"], "thickness", B, g)
    white = (torch.rand(B, generator=g) < 0.5).to(J).to(J.device)[:, None, None, None]
    mask = _segments_mask(B, H, W, n_lines, thick, g, J.device)
    return torch.where(mask, white.expand(B, 1, H, W), J)


def _mosaic(J: torch.Tensor, p: dict, g: torch.Generator, gdev: torch.Generator) -> torch.Tensor:
    return _bayer_bilinear(J)


_DEGRADATIONS = {"noise": _noise, "blur": _blur, "motion_blur": _motion_blur,
                 "defocus": _defocus, "jpeg": _jpeg_kind, "haze": _haze,
                 "low_light": _low_light, "rain": _rain, "inpaint": _inpaint, "mosaic": _mosaic}


def _ramp(B: int, H: int, W: int, g: torch.Generator, device: torch.device,
          dtype: torch.dtype) -> torch.Tensor:
    """(B, 1, H, W) random linear depth ramps rescaled to [0, 1] (random direction)."""
    th = 2 * math.pi * torch.rand(B, generator=g, dtype=torch.float64)
    yy = torch.linspace(0, 1, H, dtype=torch.float64)[:, None]
    xx = torch.linspace(0, 1, W, dtype=torch.float64)[None]
    d = torch.cos(th)[:, None, None] * xx + torch.sin(th)[:, None, None] * yy
    lo = d.amin((1, 2), keepdim=True)
    hi = d.amax((1, 2), keepdim=True)
    d = (d - lo) / (hi - lo).clamp(min=1e-12)
    return d[:, None].to(device=device, dtype=dtype)


class AllInOnePairs:
    """An endless, seeded stream of ``(lq, gt, y)`` batches for all-in-one restoration.

    Each batch holds ``batch_size`` random crops (:func:`random_crops`) of ``images``; sample
    ``i`` is degraded with ``kinds[y[i]]``, the labels cycling through the kinds in a random
    order so every kind appears ``batch_size // len(kinds)`` times or one more. Iterating
    twice gives the same batches (the stream restarts from ``seed``).

    Args:
        images: list of (3, H, W) clean images (on the device batches should be on).
        kinds: names from :data:`KINDS`; ``y`` indexes this tuple.
        size: crop side.
        batch_size: crops per batch.
        seed: int or None (a fresh stream).
        params: ``{kind: {name: value or (low, high)}}`` overriding :func:`degrade`'s defaults.

    Yields:
        ``lq`` (B, 3, size, size), ``gt`` (B, 3, size, size), ``y`` (B,) int64.

    Examples:
        >>> pairs = AllInOnePairs([load_image("astronaut", max_side=96)], ("noise", "blur"),
        ...                       size=32, batch_size=4, seed=0)
        >>> lq, gt, y = next(iter(pairs))
        >>> lq.shape, y.tolist()
        (torch.Size([4, 3, 32, 32]), [0, 1, 0, 1])
    """

    def __init__(self, images: Sequence[torch.Tensor], kinds: Sequence[str], size: int,
                 batch_size: int, *, seed: int | None = 0,
                 params: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        if isinstance(kinds, str):
            raise TypeError("kinds must be a sequence of kind names, got a single string")
        self.kinds = tuple(check_choice(k, "kinds", KINDS) for k in kinds)
        if not self.kinds:
            raise ValueError("kinds is empty")
        if len(set(self.kinds)) != len(self.kinds):
            raise ValueError(f"kinds has duplicates: {self.kinds}")
        self.size = check_int(size, "size", 1)
        self.batch_size = check_int(batch_size, "batch_size", 1)
        self.images = [check_images(im, f"images[{i}]") for i, im in enumerate(images)]
        if not self.images:
            raise ValueError("images is empty")
        for i, im in enumerate(self.images):
            if im.ndim != 3 or min(im.shape[1:]) < self.size:
                raise ValueError(f"images[{i}] must be one (3, H, W) image at least "
                                 f"{self.size} px on each side, got {tuple(im.shape)}")
        self.params = {k: dict(v) for k, v in (params or {}).items()}
        for k, v in self.params.items():
            check_choice(k, "params", KINDS)
            _params(k, v)
        self.seed = seed if seed is not None else int(resolve_seed(None).initial_seed())
        check_int(self.seed, "seed", 0)

    def batch(self, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One batch drawn from generator ``g``."""
        B, K = self.batch_size, len(self.kinds)
        gt = _crops(self.images, B, self.size, g)  # images checked in __init__
        y = (torch.randperm(K, generator=g).repeat(B // K + 1)[:B]).to(gt.device)
        lq = torch.empty_like(gt)
        for c, kind in enumerate(self.kinds):  # one vectorised call per kind
            idx = (y == c).nonzero().flatten()
            if len(idx):
                lq[idx] = degrade(gt[idx], kind, seed=g, **self.params.get(kind, {}))
        return lq, gt, y

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        g = torch.Generator().manual_seed(self.seed)
        while True:
            yield self.batch(g)

    def take(self, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The first ``n`` samples of the stream's batches, concatenated (a fixed eval set)."""
        n = check_int(n, "n", 1)
        parts, got = [], 0
        for b in self:
            parts.append(b)
            got += len(b[2])
            if got >= n:
                break
        return tuple(torch.cat(p)[:n] for p in zip(*parts, strict=True))  # type: ignore


# --- metrics --------------------------------------------------------------------------------

def _pair(x: ArrayLike, y: ArrayLike) -> tuple[torch.Tensor, torch.Tensor]:
    a = as_tensor(x, "x", ndim=(3, 4))
    b = as_tensor(y, "y", ndim=(3, 4))
    if a.shape != b.shape:
        raise ValueError(f"x and y must have the same shape, got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    if not a.is_floating_point():
        a = a.double()
    if not b.is_floating_point():
        b = b.double()
    a, b = a.double(), b.to(a.device).double()
    return (a[None], b[None]) if a.ndim == 3 else (a, b)


@checked
def psnr(x: RealImages, y: RealImages, *, data_range: float = 1.0,
         reduction: Literal["mean", "none"] = "mean") -> float | torch.Tensor:
    """Peak signal-to-noise ratio in dB, per image then averaged (as ``skimage.metrics``).

    Args:
        x, y: (C, H, W) or (B, C, H, W) images of the same shape.
        data_range: max − min of the value range.
        reduction: ``"mean"`` (a float over the batch) or ``"none"`` ((B,) float64 tensor).

    Returns:
        float or (B,) tensor; ``inf`` where the images are equal.
    """
    check_range(data_range, "data_range", 0, low_open=True)
    check_choice(reduction, "reduction", ("mean", "none"))
    a, b = _pair(x, y)
    mse = ((a - b) ** 2).flatten(1).mean(1)
    v = 10 * torch.log10(data_range ** 2 / mse)
    return float(v.mean()) if reduction == "mean" else v


@checked
def ssim(x: RealImages, y: RealImages, *, data_range: float = 1.0, sigma: float = 1.5,
         reduction: Literal["mean", "none"] = "mean") -> float | torch.Tensor:
    """Structural similarity with a Gaussian window (Wang et al. 2004), channel-averaged.

    Equals ``skimage.metrics.structural_similarity(..., gaussian_weights=True, sigma=1.5,
    use_sample_covariance=False, data_range=1, channel_axis=0)``: an 11-tap window
    (truncate 3.5), K1 = 0.01, K2 = 0.03, the mean over pixels whose window fits.

    Args:
        x, y: (C, H, W) or (B, C, H, W), each side at least the window size.
        reduction: ``"mean"`` (float) or ``"none"`` ((B,) tensor).
    """
    check_range(data_range, "data_range", 0, low_open=True)
    check_range(sigma, "sigma", 0, low_open=True)
    check_choice(reduction, "reduction", ("mean", "none"))
    a, b = _pair(x, y)
    r = int(3.5 * sigma + 0.5)
    if min(a.shape[-2:]) < 2 * r + 1:
        raise ValueError(f"x must be at least {2 * r + 1} px on each side for ssim, got "
                         f"{tuple(a.shape[-2:])}")
    t = torch.arange(-r, r + 1, dtype=torch.float64, device=a.device)
    w = torch.exp(-0.5 * (t / sigma) ** 2)
    w = w / w.sum()
    B, C, H, W = a.shape

    def filt(z: torch.Tensor) -> torch.Tensor:
        z = z.reshape(B * C, 1, H, W)
        z = F.conv2d(z, w[None, None, None, :])
        return F.conv2d(z, w[None, None, :, None])

    mx, my = filt(a), filt(b)
    sxx = filt(a * a) - mx * mx
    syy = filt(b * b) - my * my
    sxy = filt(a * b) - mx * my
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    s = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx ** 2 + my ** 2 + c1) * (sxx + syy + c2))
    v = s.reshape(B, -1).mean(1)
    return float(v.mean()) if reduction == "mean" else v


# --- files ----------------------------------------------------------------------------------

def _read_file(path: Path) -> torch.Tensor:
    Image = require("PIL.Image", "image")
    try:
        with Image.open(path) as im:
            if im.mode in ("RGBA", "LA", "P"):
                im = im.convert("RGBA")
                bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
                im = Image.alpha_composite(bg, im)
            a = np.asarray(im.convert("RGB") if im.mode != "I;16" else im)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read image file {path}: {exc}") from None
    if a.dtype == np.uint16 or a.dtype == np.int32:
        x = torch.from_numpy(a.astype(np.float32)) / 65535.0
        x = x[..., None].expand(-1, -1, 3) if x.ndim == 2 else x
    else:
        x = torch.from_numpy(a.copy()).float() / 255.0
    return x.permute(2, 0, 1).contiguous()


def load_folder(path: str | Path, *, max_side: int | None = None) -> dict[str, torch.Tensor]:
    """Read every image in a folder (or one image file) as (3, H, W) float32 in [0, 1].

    Args:
        path: a directory (files with :data:`IMAGE_SUFFIXES`, sorted by name, not recursive)
            or a single image file.
        max_side: shrink each image so that its longer side is at most this.

    Returns:
        ``{file name: image}`` in name order.

    Raises:
        ValueError: the path is missing, the folder holds no images, or a file cannot be read
            (the error names it).
    """
    p = Path(path)
    if max_side is not None:
        max_side = check_int(max_side, "max_side", 8)
    if not p.exists():
        raise ValueError(f"path {p} does not exist")
    files = [p] if p.is_file() else sorted(
        f for f in p.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise ValueError(f"path {p} holds no image files ({', '.join(IMAGE_SUFFIXES)})")
    out = {}
    for f in files:
        x = _read_file(f)
        if max_side is not None and max(x.shape[1:]) > max_side:
            s = max_side / max(x.shape[1:])
            size = (max(1, round(x.shape[1] * s)), max(1, round(x.shape[2] * s)))
            x = F.interpolate(x[None], size=size, mode="bilinear", antialias=True)[0].clamp(0, 1)
        out[f.name] = x
    return out


def save_image(x: ArrayLike, path: str | Path, *, quality: int = 95) -> Path:
    """Write a (3, H, W) image in [0, 1] as 8-bit .png/.jpg/.tif/.bmp (by the suffix).

    Raises:
        ValueError: bad image, unknown suffix or a directory that does not exist.
    """
    Image = require("PIL.Image", "image")
    t = check_images(x, "x")
    if t.ndim != 3:
        raise ValueError(f"x must be one (3, H, W) image, got shape {tuple(t.shape)}")
    p = Path(path)
    if p.suffix.lower() not in IMAGE_SUFFIXES:
        raise ValueError(f"path must end in one of {', '.join(IMAGE_SUFFIXES)}, got {p.name!r}")
    if not p.parent.is_dir():
        raise ValueError(f"path: directory {p.parent} does not exist")
    quality = check_int(quality, "quality", 1, 100)
    a = (t.detach().cpu().permute(1, 2, 0).double() * 255).round().to(torch.uint8).numpy()
    kw = {"quality": quality} if p.suffix.lower() in (".jpg", ".jpeg") else {}
    Image.fromarray(a).save(p, **kw)
    return p
