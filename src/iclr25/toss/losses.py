"""The 2-Wasserstein bound (ToSS Theorem 1), the exact Gaussian W2, and the NLL baselines.

All functions take batches: means ``(B, q)``, covariances or their square roots
``(B, q, q)``; unbatched ``(q,)``/``(q, q)`` inputs work too and give 0-d results.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn

from iclr25._checks import ArrayLike, as_tensor, check_choice, check_range
from iclr25._contract import checked

__all__ = [
    "BetaNLLLoss", "GaussianNLLLoss", "W2BoundLoss", "beta_nll_loss", "gaussian_nll_loss",
    "gaussian_w2", "sqrtm_psd", "w2_bound",
]

Reduction = Literal["mean", "sum", "none"]


def _pair(mean: ArrayLike, mat: ArrayLike, mean_name: str, mat_name: str,
          like: torch.Tensor | None = None, finite: bool = True
          ) -> tuple[torch.Tensor, torch.Tensor]:
    """Check a (..., q) mean and a (..., q, q) matrix; floating, finite, matching shapes."""
    kw = {} if like is None else {"dtype": like.dtype, "device": like.device}
    m = as_tensor(mean, mean_name, ndim=(1, 2), finite=finite, **kw)
    if not m.is_floating_point():
        raise TypeError(f"{mean_name} must be floating point, got {m.dtype}")
    s = as_tensor(mat, mat_name, ndim=(2, 3), dtype=m.dtype, device=m.device, finite=finite)
    if s.shape != (*m.shape, m.shape[-1]):
        raise ValueError(f"{mat_name} must have shape {(*m.shape, m.shape[-1])} to match "
                         f"{mean_name} {tuple(m.shape)}, got {tuple(s.shape)}")
    return m, s


def _check_psd(c: torch.Tensor, name: str) -> None:
    """Symmetric (to 1e-8 of the largest entry, as float64 round-off) and PSD, else ValueError."""
    scale = c.detach().abs().amax((-2, -1)).clamp_min(torch.finfo(c.dtype).tiny)
    tol = 1e-8 if c.dtype == torch.float64 else 1e-5
    if bool(((c - c.mT).detach().abs().amax((-2, -1)) > tol * scale).any()):
        raise ValueError(f"{name} must be symmetric")
    if bool((torch.linalg.eigvalsh(c.detach())[..., 0] < -tol * scale).any()):
        raise ValueError(f"{name} must be positive semi-definite")


def _check_tril(L: torch.Tensor, name: str) -> None:
    """Lower-triangular with a positive diagonal (a Cholesky factor), else ValueError."""
    if bool((L.detach().triu(1) != 0).any()):
        raise ValueError(f"{name} must be lower-triangular (its upper triangle is not zero)")
    if bool((torch.diagonal(L.detach(), dim1=-2, dim2=-1) <= 0).any()):
        raise ValueError(f"{name} must have a positive diagonal (a Cholesky factor of an SPD "
                         f"covariance)")


def _reduce(x: torch.Tensor, reduction: str) -> torch.Tensor:
    if reduction == "mean":
        return x.mean()
    if reduction == "sum":
        return x.sum()
    return x


@checked
def w2_bound(mean_p: ArrayLike, sqrt_cov_p: ArrayLike, mean_t: ArrayLike,
             sqrt_cov_t: ArrayLike) -> torch.Tensor:
    """ToSS's upper bound on the squared 2-Wasserstein distance between two Gaussians.

    ``‖μ_p − μ_t‖² + ‖S_p − S_t‖_F²`` with ``S = Σ^{1/2}`` (Theorem 1). It is ``>=``
    :func:`gaussian_w2` for any SPD pair and equal to it when the covariances commute. No
    eigendecomposition: a network predicts ``S_p`` directly (see :class:`CovarianceHead`).

    Args:
        mean_p: (B, q) or (q,) predicted means.
        sqrt_cov_p: (B, q, q) or (q, q) predicted covariance square roots (symmetric PSD).
        mean_t: target means (the observed ``y``), same shape as ``mean_p``.
        sqrt_cov_t: target covariance square roots, same shape as ``sqrt_cov_p``.

    Returns:
        (B,) tensor (0-d for unbatched input) on ``mean_p``'s device and dtype.

    Raises:
        TypeError: non-floating means. ValueError: shapes that do not match, NaN/inf.

    Examples:
        >>> import torch
        >>> S = torch.eye(2)
        >>> float(w2_bound(torch.zeros(2), 2 * S, torch.ones(2), S))
        4.0
    """
    # shapes first; finiteness once on the result (a sum of squares: any NaN/inf input
    # makes it non-finite), then the culprit is named. One check, not four, per step.
    mp, sp = _pair(mean_p, sqrt_cov_p, "mean_p", "sqrt_cov_p", finite=False)
    mt, st = _pair(mean_t, sqrt_cov_t, "mean_t", "sqrt_cov_t", like=mp, finite=False)
    if mt.shape != mp.shape:
        raise ValueError(f"mean_t must have the shape of mean_p {tuple(mp.shape)}, "
                         f"got {tuple(mt.shape)}")
    out = _w2_bound(mp, sp, mt, st)
    if not bool(torch.isfinite(out).all()):
        for name, t in (("mean_p", mp), ("sqrt_cov_p", sp), ("mean_t", mt), ("sqrt_cov_t", st)):
            as_tensor(t.detach(), name)
    return out


def _w2_bound(mp: torch.Tensor, sp: torch.Tensor, mt: torch.Tensor,
              st: torch.Tensor) -> torch.Tensor:
    """:func:`w2_bound` without checks (the training loop's inner call)."""
    return (mp - mt).square().sum(-1) + (sp - st).square().sum((-2, -1))


@checked
class W2BoundLoss(nn.Module):
    """:func:`w2_bound` as a module: ``loss(mean_p, sqrt_cov_p, mean_t, sqrt_cov_t)``.

    Args:
        reduction: "mean" (default), "sum" or "none" (per-sample (B,)).
    """

    def __init__(self, reduction: Reduction = "mean") -> None:
        super().__init__()
        self.reduction = check_choice(reduction, "reduction", Reduction)

    def forward(self, mean_p: torch.Tensor, sqrt_cov_p: torch.Tensor, mean_t: torch.Tensor,
                sqrt_cov_t: torch.Tensor) -> torch.Tensor:
        return _reduce(w2_bound(mean_p, sqrt_cov_p, mean_t, sqrt_cov_t), self.reduction)


@checked
def sqrtm_psd(cov: ArrayLike, name: str = "cov") -> torch.Tensor:
    """Symmetric PSD square root of (..., q, q) matrices by ``eigh`` (negative eigenvalues
    from round-off are clipped to 0)."""
    c = as_tensor(cov, name, ndim=(2, 3))
    if not c.is_floating_point():
        raise TypeError(f"{name} must be floating point, got {c.dtype}")
    w, v = torch.linalg.eigh(c)
    return (v * w.clamp_min(0).sqrt().unsqueeze(-2)) @ v.mT


@checked
def gaussian_w2(mean1: ArrayLike, cov1: ArrayLike, mean2: ArrayLike, cov2: ArrayLike,
                ) -> torch.Tensor:
    """Exact squared 2-Wasserstein distance between N(mean1, cov1) and N(mean2, cov2).

    ``‖μ1 − μ2‖² + tr Σ1 + tr Σ2 − 2 tr (Σ2^{1/2} Σ1 Σ2^{1/2})^{1/2}`` by two ``eigh``
    (the Bures metric; POT's ``ot.gaussian.bures_wasserstein_distance`` squared).

    Args:
        mean1, mean2: (B, q) or (q,) means. cov1, cov2: (B, q, q) or (q, q) PSD covariances.

    Returns:
        (B,) tensor, or 0-d for unbatched input, on ``mean1``'s device and dtype.

    Raises:
        TypeError / ValueError: as :func:`w2_bound`; ValueError naming ``cov1``/``cov2`` when
        one is not symmetric or not positive semi-definite (relative tolerance 1e-8 in
        float64, 1e-5 in float32).
    """
    m1, c1 = _pair(mean1, cov1, "mean1", "cov1")
    m2, c2 = _pair(mean2, cov2, "mean2", "cov2", like=m1)
    if m2.shape != m1.shape:
        raise ValueError(f"mean2 must have the shape of mean1 {tuple(m1.shape)}, "
                         f"got {tuple(m2.shape)}")
    _check_psd(c1, "cov1")
    _check_psd(c2, "cov2")
    r2 = sqrtm_psd(c2, "cov2")
    cross = torch.linalg.eigvalsh(r2 @ c1 @ r2).clamp_min(0).sqrt().sum(-1)
    tr = torch.diagonal(c1, dim1=-2, dim2=-1).sum(-1) + torch.diagonal(c2, dim1=-2,
                                                                       dim2=-1).sum(-1)
    return (m1 - m2).square().sum(-1) + (tr - 2 * cross).clamp_min(0)


def _nll_tril(mean: torch.Tensor, scale_tril: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-sample −log N(y; mean, L Lᵀ) by one triangular solve."""
    q = mean.shape[-1]
    z = torch.linalg.solve_triangular(scale_tril, (y - mean).unsqueeze(-1), upper=False)
    half_logdet = torch.diagonal(scale_tril, dim1=-2, dim2=-1).abs().log().sum(-1)
    return 0.5 * z.squeeze(-1).square().sum(-1) + half_logdet + 0.5 * q * math.log(2 * math.pi)


@checked
def gaussian_nll_loss(mean: ArrayLike, scale_tril: ArrayLike, y: ArrayLike) -> torch.Tensor:
    """Full-covariance Gaussian negative log-likelihood, per sample.

    Same value as ``-MultivariateNormal(mean, scale_tril=L).log_prob(y)``.

    Args:
        mean: (B, q) or (q,). scale_tril: (B, q, q) lower-triangular Cholesky factor of Σ.
        y: observations, shape of ``mean``.

    Returns:
        (B,) tensor (0-d unbatched).

    Raises:
        TypeError: non-floating mean. ValueError: shapes, NaN/inf, ``scale_tril`` not
        lower-triangular or without a positive diagonal (named).
    """
    m, L = _pair(mean, scale_tril, "mean", "scale_tril")
    t = as_tensor(y, "y", dtype=m.dtype, device=m.device)
    if t.shape != m.shape:
        raise ValueError(f"y must have the shape of mean {tuple(m.shape)}, got {tuple(t.shape)}")
    _check_tril(L, "scale_tril")
    return _nll_tril(m, L, t)


@checked
def beta_nll_loss(mean: ArrayLike, scale_tril: ArrayLike, y: ArrayLike, beta: float = 0.5
                  ) -> torch.Tensor:
    """β-NLL (Seitzer et al., 2022) for full covariances, per sample.

    The NLL is weighted by the detached ``det(Σ)^{β/q}`` (the geometric-mean variance to the
    power β): for q = 1 this is Seitzer's ``stopgrad(σ^{2β}) · NLL``. β = 0 is the NLL.

    Args:
        mean, scale_tril, y: as :func:`gaussian_nll_loss`. beta: in [0, 1].

    Returns:
        (B,) tensor (0-d unbatched).

    Raises:
        ValueError: as :func:`gaussian_nll_loss`; ``beta`` outside [0, 1].
    """
    beta = check_range(beta, "beta", 0.0, 1.0)
    m, L = _pair(mean, scale_tril, "mean", "scale_tril")
    t = as_tensor(y, "y", dtype=m.dtype, device=m.device)
    if t.shape != m.shape:
        raise ValueError(f"y must have the shape of mean {tuple(m.shape)}, got {tuple(t.shape)}")
    _check_tril(L, "scale_tril")
    q = m.shape[-1]
    logdet = 2 * torch.diagonal(L, dim1=-2, dim2=-1).abs().log().sum(-1)
    weight = torch.exp(beta * logdet.detach() / q)
    return weight * _nll_tril(m, L, t)


@checked
class GaussianNLLLoss(nn.Module):
    """:func:`gaussian_nll_loss` as a module: ``loss(mean, scale_tril, y)``."""

    def __init__(self, reduction: Reduction = "mean") -> None:
        super().__init__()
        self.reduction = check_choice(reduction, "reduction", Reduction)

    def forward(self, mean: torch.Tensor, scale_tril: torch.Tensor,
                y: torch.Tensor) -> torch.Tensor:
        return _reduce(gaussian_nll_loss(mean, scale_tril, y), self.reduction)


@checked
class BetaNLLLoss(nn.Module):
    """:func:`beta_nll_loss` as a module: ``loss(mean, scale_tril, y)``."""

    def __init__(self, beta: float = 0.5, reduction: Reduction = "mean") -> None:
        super().__init__()
        self.beta = check_range(beta, "beta", 0.0, 1.0)
        self.reduction = check_choice(reduction, "reduction", Reduction)

    def forward(self, mean: torch.Tensor, scale_tril: torch.Tensor,
                y: torch.Tensor) -> torch.Tensor:
        return _reduce(beta_nll_loss(mean, scale_tril, y, self.beta), self.reduction)
