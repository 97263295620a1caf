"""Evaluation of predicted Gaussians: TAC, test NLL and relative covariance error."""

from __future__ import annotations

import math

import torch

from iclr25._checks import ArrayLike, as_tensor
from iclr25._contract import checked

__all__ = ["cov_error", "gaussian_nll", "tac"]


def _gaussians(mean: ArrayLike, cov: ArrayLike, Y: ArrayLike) -> tuple[torch.Tensor, ...]:
    m = as_tensor(mean, "mean", ndim=2)
    if not m.is_floating_point():
        raise TypeError(f"mean must be floating point, got {m.dtype}")
    c = as_tensor(cov, "cov", ndim=3, dtype=m.dtype, device=m.device)
    y = as_tensor(Y, "Y", ndim=2, dtype=m.dtype, device=m.device)
    n, q = m.shape
    if c.shape != (n, q, q):
        raise ValueError(f"cov must have shape {(n, q, q)}, got {tuple(c.shape)}")
    if y.shape != (n, q):
        raise ValueError(f"Y must have shape {(n, q)}, got {tuple(y.shape)}")
    chol, info = torch.linalg.cholesky_ex(c)
    if bool((info != 0).any()):
        raise ValueError(f"cov must be positive definite; {int((info != 0).sum())} matrices "
                         f"are not")
    return m, chol, y


@checked
def tac(mean: ArrayLike, cov: ArrayLike, Y: ArrayLike) -> float:
    """Task Agnostic Correlations error (TIC-TAC, Shukla et al. 2024): mean |y_j − E[y_j|y_−j]|.

    Each coordinate is predicted from the observed others under N(mean, cov); in closed form
    the residual is r_j = (Λ(y − μ))_j / Λ_jj with Λ = Σ⁻¹. Averaged over samples and
    coordinates. It ignores the overall scale of Σ.

    Args:
        mean: (n, q). cov: (n, q, q) SPD. Y: (n, q) observations.

    Returns:
        float.
    """
    m, chol, y = _gaussians(mean, cov, Y)
    prec = torch.cholesky_inverse(chol)
    r = (prec @ (y - m).unsqueeze(-1)).squeeze(-1) / torch.diagonal(prec, dim1=-2, dim2=-1)
    return float(r.abs().mean())


@checked
def gaussian_nll(mean: ArrayLike, cov: ArrayLike, Y: ArrayLike) -> float:
    """Mean negative log-likelihood (nats, with the 2π constant) of Y under N(mean, cov).

    Args:
        mean: (n, q). cov: (n, q, q) SPD. Y: (n, q).

    Returns:
        float.
    """
    m, chol, y = _gaussians(mean, cov, Y)
    q = m.shape[1]
    z = torch.linalg.solve_triangular(chol, (y - m).unsqueeze(-1), upper=False).squeeze(-1)
    logdet = 2 * torch.diagonal(chol, dim1=-2, dim2=-1).log().sum(-1)
    return float((0.5 * z.square().sum(-1) + 0.5 * logdet).mean() + 0.5 * q * math.log(2 * math.pi))


@checked
def cov_error(cov_pred: ArrayLike, cov_true: ArrayLike) -> float:
    """Mean relative Frobenius error ‖Σ̂ − Σ‖_F / ‖Σ‖_F over samples.

    Args:
        cov_pred, cov_true: (n, q, q).

    Returns:
        float (0 for a perfect prediction).
    """
    p = as_tensor(cov_pred, "cov_pred", ndim=3)
    if not p.is_floating_point():
        raise TypeError(f"cov_pred must be floating point, got {p.dtype}")
    t = as_tensor(cov_true, "cov_true", ndim=3, dtype=p.dtype, device=p.device)
    if t.shape != p.shape:
        raise ValueError(f"cov_true must have the shape of cov_pred {tuple(p.shape)}, "
                         f"got {tuple(t.shape)}")
    norm = torch.linalg.matrix_norm(t)
    if bool((norm == 0).any()):
        raise ValueError("cov_true has a zero matrix: the relative error is undefined")
    return float((torch.linalg.matrix_norm(p - t) / norm).mean())
