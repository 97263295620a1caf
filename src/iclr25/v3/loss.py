"""The V3 variability statistic and its four hinge terms (paper Sec. 3; official
``model/v3_loss.py``): content varies within a sample and is invariant across samples, style
the reverse, and each dominates the other on its own axis."""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import torch
from torch import nn

from iclr25._checks import ArrayLike, check_choice, check_tensor
from iclr25._contract import checked

__all__ = ["TERMS", "V3Loss", "V3Terms", "mpd", "v3_loss"]

TERMS = ("content", "style", "sample", "fragment")
Variant = Literal["pure", "adapted"]


# Pairs whose Gram-form squared distance is below this fraction of |a|^2 + |b|^2 lose digits to
# cancellation; they are recomputed from differences (relative error of the rest <~ d eps / tol).
_CLOSE = 1e-2


@checked
def mpd(x: torch.Tensor) -> torch.Tensor:
    """Mean pairwise L2 distance between the rows of the last two axes.

    ``sum_{i != j} ||x_i - x_j|| / (n (n - 1))``. Computed on the Gram form
    ``|a|^2 + |b|^2 - 2 a.b`` (one batched GEMM); pairs where that form cancels (squared distance
    below 1% of ``|a|^2 + |b|^2``, e.g. repeated rows) are recomputed from differences, so
    identical rows give exactly 0 and their gradient is a finite zero subgradient, not NaN.

    Args:
        x: (..., n, d) float tensor, n >= 2.

    Returns:
        (...) tensor of mean distances, same dtype and device as ``x``.

    Raises:
        TypeError: ``x`` is not floating point.
        ValueError: fewer than 2 rows, or x has fewer than 2 dimensions.

    Examples:
        >>> float(mpd(torch.tensor([[0.0, 0.0], [3.0, 4.0]])))
        5.0
    """
    x = check_tensor(x, "x", floating=True, finite=False)
    if x.ndim < 2:
        raise ValueError(f"x must be (..., n, d), got shape {tuple(x.shape)}")
    n = x.shape[-2]
    if n < 2:
        raise ValueError(f"x needs at least 2 rows on axis -2, got {n}")
    xb = x.reshape(-1, n, x.shape[-1])
    sq = (xb * xb).sum(-1)
    s = sq.unsqueeze(-1) + sq.unsqueeze(-2)
    d2 = torch.baddbmm(s, xb, xb.mT, alpha=-2)  # (b, n, n)
    with torch.no_grad():
        close = d2 <= s.mul(_CLOSE)  # true on the diagonal
        extra = int(close.count_nonzero()) > close.shape[0] * n  # any off the diagonal?
    # masked_fill's backward drops the inf that sqrt's gives at the zeroed entries.
    dist = d2.masked_fill(close, 0.0).sqrt_()
    if extra:
        b, i, j = close.nonzero(as_tuple=True)
        b, i, j = b[i != j], i[i != j], j[i != j]
        # rows by index_select, whose backward (index_add_) sums a row's gradients in a fixed
        # order: advanced indexing's (index_put_ with accumulate) adds them with atomics on
        # several CPU threads, in an order that changes from run to run.
        rows = xb.reshape(-1, xb.shape[-1])
        diff = rows.index_select(0, b * n + i) - rows.index_select(0, b * n + j)
        # vector_norm's backward is 0 (not NaN) where the norm is 0.
        dist = dist.index_put((b, i, j), torch.linalg.vector_norm(diff, dim=-1))
    return (dist.sum((-1, -2)) / (n * (n - 1))).reshape(x.shape[:-2])


class V3Terms(NamedTuple):
    """The V3 objective: weighted total, the four hinges in [0, 1] and their ratios."""

    total: torch.Tensor
    content: torch.Tensor
    style: torch.Tensor
    sample: torch.Tensor
    fragment: torch.Tensor
    ratios: dict[str, torch.Tensor]


def _supersample(z: torch.Tensor) -> torch.Tensor:
    """(B, N, d) -> (s, s, d): the first s*s fragments on the nearest square grid."""
    m = z.shape[0] * z.shape[1]
    s = max(2, math.isqrt(m))
    return z.reshape(m, z.shape[-1])[: s * s].reshape(s, s, z.shape[-1])


def _widen(z: torch.Tensor) -> torch.Tensor:
    """Moving average over fragments with radius 1 (edges averaged over what exists)."""
    pad = torch.nn.functional.pad(z.transpose(1, 2), (1, 1))  # (B, d, N + 2)
    ones = torch.nn.functional.pad(torch.ones_like(z[:1, :, :1]).transpose(1, 2), (1, 1))
    kernel = torch.ones(1, 1, 3, dtype=z.dtype, device=z.device)
    s = torch.nn.functional.conv1d(pad.reshape(-1, 1, pad.shape[-1]), kernel)
    c = torch.nn.functional.conv1d(ones.reshape(-1, 1, ones.shape[-1]), kernel)
    return (s.reshape(z.shape[0], z.shape[2], -1) / c).transpose(1, 2)


def _check_latents(z_c: ArrayLike, z_c_q: ArrayLike, z_s: ArrayLike) -> tuple[torch.Tensor, ...]:
    out = []
    for name, z in (("z_c", z_c), ("z_c_q", z_c_q), ("z_s", z_s)):
        z = check_tensor(z, name, ndim=3, floating=True)
        out.append(z)
    zc, zq, zs = out
    if zc.shape != zq.shape:
        raise ValueError(f"z_c_q must have z_c's shape {tuple(zc.shape)}, got {tuple(zq.shape)}")
    if zs.shape[:2] != zc.shape[:2]:
        raise ValueError(f"z_s must share (B, N) = {tuple(zc.shape[:2])} with z_c, "
                         f"got {tuple(zs.shape[:2])}")
    if zc.shape[0] < 2 or zc.shape[1] < 2:
        raise ValueError(f"z_c needs B >= 2 samples and N >= 2 fragments, got {tuple(zc.shape)}")
    return zc, zq, zs


def _term_weights(weights: dict[str, float] | None) -> dict[str, float]:
    """Each term's weight: 1 unless ``weights`` names it."""
    w = {t: 1.0 for t in TERMS}
    if weights is not None:
        unknown = set(weights) - set(TERMS)
        if unknown:
            raise ValueError(f"weights has unknown terms {sorted(unknown)}; known {TERMS}")
        w.update({k: float(v) for k, v in weights.items()})
    return w


def _ratios(zc: torch.Tensor, zq: torch.Tensor, zs: torch.Tensor,
            eps: float) -> dict[str, torch.Tensor]:
    """The four variance ratios the hinges act on, keyed by term."""
    v_frag_c = 0.5 * (mpd(zc).mean() + mpd(zq).mean())
    v_samp_c = 0.5 * (mpd(zc.mean(1)) + mpd(zq.mean(1)))
    v_frag_s = mpd(zs).mean()
    v_samp_s = mpd(zs.mean(1))
    return {
        "content": v_frag_c / (v_samp_c + eps),
        "style": v_samp_s / (v_frag_s + eps),
        "sample": v_samp_s / (v_samp_c + eps),
        "fragment": v_frag_c / (v_frag_s + eps),
    }


@checked
def v3_loss(z_c: torch.Tensor, z_c_q: torch.Tensor, z_s: torch.Tensor, *,
            relativity: float = 15.0, eps: float = 1e-5,
            weights: dict[str, float] | None = None, variant: Variant = "pure") -> V3Terms:
    """The four V3 hinges ``relu(r - ratio) / r`` on content and style latents.

    With V_frag (mean within-sample mpd) and V_samp (mpd of the per-sample means), content
    averaged over ``z_c`` and ``z_c_q``:

    - content: V_frag^c / V_samp^c, style: V_samp^s / V_frag^s,
    - sample: V_samp^s / V_samp^c, fragment: V_frag^c / V_frag^s,

    each denominator plus ``eps``. ``variant="adapted"`` computes the content statistics on
    the B*N fragments regrouped into a near-square grid (``supersample_content``) and the
    style statistics after a radius-1 moving average over fragments (``widen_style``).

    Args:
        z_c: (B, N, d_c) continuous content latents.
        z_c_q: (B, N, d_c) quantised content latents.
        z_s: (B, N, d_s) style latents.
        relativity: r > 0, the ratio at which a hinge saturates to 0.
        eps: >= 0 added to each denominator.
        weights: per-term weights (keys in ``TERMS``), default 1 each.
        variant: ``"pure"`` or ``"adapted"``.

    Returns:
        :class:`V3Terms`; ``total`` is the weighted sum of the four hinges (scalar tensors).

    Raises:
        ValueError: mismatched (B, N), B or N < 2, NaN/inf, relativity <= 0, unknown weight.
        TypeError: non-floating latents.

    Examples:
        >>> zc = torch.eye(4).repeat(3, 1, 1)          # each sample shuffles the same atoms
        >>> zs = torch.arange(3.0)[:, None, None].expand(3, 4, 2)  # one style per sample
        >>> float(v3_loss(zc, zc, zs).total)
        0.0
    """
    if not (isinstance(relativity, (int, float)) and math.isfinite(relativity)
            and relativity > 0):
        raise ValueError(f"relativity must be a positive number, got {relativity!r}")
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be a non-negative number, got {eps!r}")
    check_choice(variant, "variant", ("pure", "adapted"))
    w = _term_weights(weights)
    zc, zq, zs = _check_latents(z_c, z_c_q, z_s)
    if variant == "adapted":
        zc, zq, zs = _supersample(zc), _supersample(zq), _widen(zs)
    ratios = _ratios(zc, zq, zs, eps)
    hinge = {k: torch.relu(relativity - r) / relativity for k, r in ratios.items()}
    total = sum(w[k] * hinge[k] for k in TERMS)
    return V3Terms(total, hinge["content"], hinge["style"], hinge["sample"],
                   hinge["fragment"], ratios)


@checked
class V3Loss(nn.Module):
    """Module twin of :func:`v3_loss`; ``forward(z_c, z_c_q, z_s) -> V3Terms``."""

    def __init__(self, relativity: float = 15.0, eps: float = 1e-5,
                 weights: dict[str, float] | None = None, variant: Variant = "pure") -> None:
        super().__init__()
        if not (isinstance(relativity, (int, float)) and math.isfinite(relativity)
                and relativity > 0):
            raise ValueError(f"relativity must be a positive number, got {relativity!r}")
        if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps >= 0):
            raise ValueError(f"eps must be a non-negative number, got {eps!r}")
        check_choice(variant, "variant", ("pure", "adapted"))
        if weights is not None and set(weights) - set(TERMS):
            raise ValueError(f"weights has unknown terms {sorted(set(weights) - set(TERMS))}")
        self.relativity, self.eps = float(relativity), float(eps)
        self.weights, self.variant = dict(weights) if weights else None, variant

    def forward(self, z_c: torch.Tensor, z_c_q: torch.Tensor, z_s: torch.Tensor) -> V3Terms:
        return v3_loss(z_c, z_c_q, z_s, relativity=self.relativity, eps=self.eps,
                       weights=self.weights, variant=self.variant)
