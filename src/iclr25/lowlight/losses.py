"""Zero-reference losses: Zero-DCE's four terms, PairLIE's paired sub-images, the joint loss.

Functions first, each with an ``nn.Module`` twin. Images are (B, 3, H, W) in [0, 1].
"""

# ruff: noqa: E741  (I is the paper's and the issue's name for the enhanced image)
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import ArrayLike, as_tensor, check_int, check_range, resolve_seed
from iclr25._contract import FloatArray, Images4D, PositiveInt, checked

__all__ = [
    "ColorConstancyLoss", "ExposureLoss", "IlluminationTVLoss", "SpatialConsistencyLoss",
    "color_constancy_loss", "exposure_loss", "illumination_tv_loss", "neighbor_subimages",
    "relight", "spatial_consistency_loss", "zero_reference_loss",
]

#: The 8 ordered adjacent pairs in a 2×2 cell (raster indices 0 1 / 2 3), as Neighbor2Neighbor.
PAIRS = ((0, 1), (0, 2), (1, 3), (2, 3), (1, 0), (2, 0), (3, 1), (3, 2))


def _batch(x: ArrayLike, name: str) -> torch.Tensor:
    t = as_tensor(x, name)
    if t.ndim != 4:
        raise ValueError(f"{name} must have shape (B, C, H, W), got {tuple(t.shape)}")
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating-point image, got {t.dtype}")
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} holds NaN or inf")
    return t


@checked
def neighbor_subimages(x: Images4D, *, seed: int | torch.Generator | None = None
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """Two half-size sub-images with the same content and independent noise (paper §3.2).

    In each 2×2 cell one of the 8 ordered adjacent pairs is drawn uniformly; ``d1`` takes
    the pair's first pixel and ``d2`` its second (all channels alike).

    Args:
        x: (B, C, H, W) with even H and W.
        seed: int, Generator or None (fresh entropy).

    Returns:
        ``(d1, d2)``, each (B, C, H/2, W/2).

    Raises:
        ValueError: odd H or W, bad shape.
    """
    t = _batch(x, "x")
    B, C, H, W = t.shape
    if H % 2 or W % 2:
        raise ValueError(f"x must have even H and W for neighbor_subimages, got {H}×{W}")
    g = resolve_seed(seed)
    choice = torch.randint(8, (B, 1, H // 2, W // 2), generator=g).to(t.device)
    return _pick(t, choice)


def _pick(t: torch.Tensor, choice: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Sub-images of ``t`` for a drawn (B, 1, H/2, W/2) pair choice."""
    B, C, H, W = t.shape
    cells = t.reshape(B, C, H // 2, 2, W // 2, 2).permute(0, 1, 2, 4, 3, 5)
    cells = cells.reshape(B, C, H // 2, W // 2, 4)
    pairs = torch.tensor(PAIRS, device=t.device)[choice]          # (B, 1, h, w, 2)
    i1 = pairs[..., :1].expand(B, C, H // 2, W // 2, 1)
    i2 = pairs[..., 1:].expand(B, C, H // 2, W // 2, 1)
    return cells.gather(-1, i1)[..., 0], cells.gather(-1, i2)[..., 0]


@checked
def relight(x: FloatArray, gamma: float) -> torch.Tensor:
    """``clamp(x ** (1 / gamma), 0, 1)``: the re-lit second sub-image (D̃2)."""
    t = as_tensor(x, "x")
    gamma = check_range(gamma, "gamma", 0, low_open=True)
    return t.clamp(min=0).pow(1.0 / gamma).clamp(0, 1)


@checked
def exposure_loss(I: Images4D, patch: PositiveInt = 48, level: float = 0.5) -> torch.Tensor:
    """Zero-DCE exposure control: mean over ``patch``² patches of (mean intensity − level)².

    Raises:
        ValueError: ``patch`` <= 0 or larger than the image, ``level`` not in (0, 1).
    """
    t = _batch(I, "I")
    patch = check_int(patch, "patch", 1)
    level = check_range(level, "level", 0, 1, low_open=True, high_open=True)
    if patch > min(t.shape[-2:]):
        raise ValueError(f"patch={patch} is larger than the image {tuple(t.shape[-2:])}")
    m = F.avg_pool2d(t.mean(1, keepdim=True), patch)
    return ((m - level) ** 2).mean()


_DIRS = torch.tensor([[[0, 0, 0], [-1, 1, 0], [0, 0, 0]],   # left
                      [[0, 0, 0], [0, 1, -1], [0, 0, 0]],   # right
                      [[0, -1, 0], [0, 1, 0], [0, 0, 0]],   # up
                      [[0, 0, 0], [0, 1, 0], [0, -1, 0]]],  # down
                     dtype=torch.float64)[:, None]


@checked
def spatial_consistency_loss(x: Images4D, I: Images4D) -> torch.Tensor:
    """Zero-DCE spatial consistency: neighbour differences of 4×4-pooled intensity kept.

    Sum over the 4 directions of (Δ pool(mean_c x) − Δ pool(mean_c I))², averaged over pixels.

    Raises:
        ValueError: shapes differ.
    """
    a, b = _batch(x, "x"), _batch(I, "I")
    if a.shape[0] != b.shape[0] or a.shape[-2:] != b.shape[-2:]:
        raise ValueError(f"x and I must have the same batch and size, got {tuple(a.shape)} "
                         f"and {tuple(b.shape)}")
    k = _DIRS.to(b)
    pa = F.avg_pool2d(a.mean(1, keepdim=True).to(b), 4)
    pb = F.avg_pool2d(b.mean(1, keepdim=True), 4)
    return ((F.conv2d(pa, k, padding=1) - F.conv2d(pb, k, padding=1)) ** 2).sum(1).mean()


@checked
def illumination_tv_loss(I: Images4D) -> torch.Tensor:
    """Zero-DCE illumination smoothness, weighted as the official ``L_TV``:
    2·(Σ Δ_v² / ((H−1)W) + Σ Δ_h² / (H(W−1))) / B, the sums over batch and channels
    (so 2C times the mean squared difference per direction)."""
    t = _batch(I, "I")
    c = 2 * t.shape[1]
    return c * (((t[..., 1:, :] - t[..., :-1, :]) ** 2).mean() +
                ((t[..., :, 1:] - t[..., :, :-1]) ** 2).mean())


@checked
def color_constancy_loss(I: Images4D) -> torch.Tensor:
    """Zero-DCE colour constancy (grey world): sqrt(Σ over channel pairs of (μ_p − μ_q)⁴)."""
    t = _batch(I, "I")
    if t.shape[1] != 3:
        raise ValueError(f"I must have 3 channels, got {t.shape[1]}")
    m = t.mean((-2, -1))
    r, g, b = m[:, 0], m[:, 1], m[:, 2]
    return torch.sqrt((r - g) ** 4 + (r - b) ** 4 + (g - b) ** 4 + 1e-12).mean()


@checked
class ExposureLoss(nn.Module):
    """Module twin of :func:`exposure_loss`."""

    def __init__(self, patch: PositiveInt = 48, level: float = 0.5) -> None:
        super().__init__()
        self.patch = check_int(patch, "patch", 1)
        self.level = check_range(level, "level", 0, 1, low_open=True, high_open=True)

    def forward(self, I: Images4D) -> torch.Tensor:
        return exposure_loss(I, self.patch, self.level)


@checked
class SpatialConsistencyLoss(nn.Module):
    """Module twin of :func:`spatial_consistency_loss`."""

    def forward(self, x: Images4D, I: Images4D) -> torch.Tensor:
        return spatial_consistency_loss(x, I)


@checked
class IlluminationTVLoss(nn.Module):
    """Module twin of :func:`illumination_tv_loss`."""

    def forward(self, I: Images4D) -> torch.Tensor:
        return illumination_tv_loss(I)


@checked
class ColorConstancyLoss(nn.Module):
    """Module twin of :func:`color_constancy_loss`."""

    def forward(self, I: Images4D) -> torch.Tensor:
        return color_constancy_loss(I)


def zero_dce_terms(x: torch.Tensor, I: torch.Tensor, patch: int = 48) -> torch.Tensor:
    """loss4: exposure + 0.1·spatial + 0.1·TV + 0.5·colour (the repo's LOL weights)."""
    return (exposure_loss(I, patch, 0.5) + 0.1 * spatial_consistency_loss(x, I)
            + 0.1 * illumination_tv_loss(I) + 0.5 * color_constancy_loss(I))


def _tv_abs(L: torch.Tensor) -> torch.Tensor:
    return (L[..., 2:, :] - L[..., :-2, :]).abs().mean() + \
        (L[..., :, 2:] - L[..., :, :-2]).abs().mean()


@checked
def zero_reference_loss(model: nn.Module, x: Images4D, *,
                        seed: int | torch.Generator | None = None, pairing: bool = True,
                        patch: PositiveInt = 48) -> tuple[torch.Tensor, dict[str, float]]:
    """The paper's training loss on a batch of dark images (no references), notes §2.2.

    loss1 (reflectance consistency between D1 and the re-lit D̃2 = D2^(1/γ), γ ~ U(1.2, 1.5),
    plus the Neighbor2Neighbor term) + loss2 (Retinex: L·R = X, R = X/L, L ≈ max_c D1, TV)
    + 500·loss3 (projection ‖D1 − X1‖²) + loss4 (Zero-DCE terms on the enhanced D1).

    Args:
        model: a :class:`~iclr25.lowlight.RetinexEnhancer`.
        x: (B, 3, H, W) dark images in [0, 1], even H and W.
        seed: sub-image pairing, γ and the prior's shuffle.
        pairing: False = the ablation: loss1 off and D̃2 = D2.
        patch: exposure-loss patch (on the half-size sub-images).

    Returns:
        ``(total, parts)``: the scalar loss (with grad) and floats of loss1..loss4.
    """
    t = _batch(x, "x")
    B, _, H, W = t.shape
    if H % 2 or W % 2:
        raise ValueError(f"x must have even H and W, got {H}×{W}")
    return _zero_reference_loss(model, t, *_pairing_draws(t.shape, resolve_seed(seed), pairing),
                                patch)


def _pairing_draws(shape: torch.Size | tuple[int, ...], g: torch.Generator, pairing: bool
                   ) -> tuple[torch.Tensor, int, float | None]:
    """:func:`zero_reference_loss`'s random draws for a (B, 3, H, W) batch, in its order:
    each 2×2 cell's sub-image pair (B, 1, H/2, W/2) (row i is image i's, so a training split
    over processes takes its rows of the global batch's draw), the prior's shuffle seed, and
    γ (None without pairing)."""
    B, _, H, W = shape
    choice = torch.randint(8, (B, 1, H // 2, W // 2), generator=g)
    s = int(torch.randint(2 ** 31, (1,), generator=g))
    gamma = 1.2 + 0.3 * float(torch.rand(1, generator=g)) if pairing else None
    return choice, s, gamma


def _zero_reference_loss(model: nn.Module, t: torch.Tensor, choice: torch.Tensor, s: int,
                         gamma: float | None, patch: int
                         ) -> tuple[torch.Tensor, dict[str, float]]:
    """:func:`zero_reference_loss` on checked images ``t`` with its draws given
    (:func:`_pairing_draws`; ``gamma`` None is the ablation)."""
    B = len(t)
    pairing = gamma is not None
    d1, d2 = _pick(t, choice.to(t.device))
    if pairing:
        # D1 and D̃2 share one forward pass (same shuffle seed; every layer is per-image)
        o = model(torch.cat([d1, relight(d2, gamma)]), shuffle_seed=s)
        o1 = type(o)(*(v[:B] for v in o))
        R2 = o.reflectance[B:].clamp(0, 1)
    else:
        o1 = model(d1, shuffle_seed=s)
    L1 = o1.illumination
    X1, R1, I1 = o1.denoised.clamp(0, 1), o1.reflectance.clamp(0, 1), o1.enhanced.clamp(0, 1)
    if pairing:
        I3 = model(t, shuffle_seed=s).enhanced
        e1, e2 = _pick(I3, choice.to(t.device))
        loss1 = F.mse_loss(R1, R2) + 0.5 * F.mse_loss(R1 - R2, e1 - e2)
    else:
        loss1 = t.new_zeros(())
    loss2 = (F.mse_loss(L1 * R1, X1) + F.mse_loss(R1, X1 / L1.detach().clamp(min=1e-4))
             + F.mse_loss(L1, d1.amax(1, keepdim=True)) + _tv_abs(L1))
    loss3 = F.mse_loss(d1, X1)
    loss4 = zero_dce_terms(X1, I1, patch)
    total = loss1 + loss2 + 500 * loss3 + loss4
    parts = {k: float(v.detach()) for k, v in
             (("loss1", loss1), ("loss2", loss2), ("loss3", loss3), ("loss4", loss4))}
    return total, parts
