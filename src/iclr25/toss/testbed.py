"""Synthetic heteroscedastic data with known E[y|x] and Σ(x): the TIC-TAC samplers.

Both follow ``vita-epfl/TIC-TAC`` (``Multivariate/sampler.py``, ``Univariate/sampler.py``),
re-implemented on a seeded torch Generator. The random distribution parameters (means,
correlations) are drawn from ``seed`` too, so draw train and test sets in ONE call and split.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from iclr25._checks import check_int, check_range, resolve_seed
from iclr25._contract import checked

__all__ = ["HeteroscedasticData", "make_heteroscedastic", "make_sinusoid"]


class HeteroscedasticData(NamedTuple):
    """Samples with their truth: X (n, d), Y (n, q), mean = E[y|x] (n, q), cov = Σ(x)
    (n, q, q). Float64."""

    X: torch.Tensor
    Y: torch.Tensor
    mean: torch.Tensor
    cov: torch.Tensor


def _correlation(dim: int, gen: torch.Generator) -> torch.Tensor:
    """A random full-rank correlation matrix with some strong correlations (TIC-TAC)."""
    A = torch.randn(dim, dim, generator=gen, dtype=torch.float64)
    A = A + 2.0 * torch.randn(dim, 1, generator=gen, dtype=torch.float64)
    C = A @ A.T
    d = C.diagonal().rsqrt()
    return d[:, None] * C * d[None, :]


def _mvn(mean: torch.Tensor, cov: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    L = torch.linalg.cholesky(cov)
    eps = torch.randn(*mean.shape, generator=gen, dtype=torch.float64)
    return mean + (L @ eps.unsqueeze(-1)).squeeze(-1)


def _conditional(X: torch.Tensor, mu: torch.Tensor, corr: torch.Tensor,
                 z_corr: torch.Tensor, het_scale: float = 1.0
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """E[y|x] (n, q) and Σ(x) (n, q, q) of TIC-TAC's sampler at inputs X (n, q), from its
    joint mean ``mu`` (2q: y then x), joint correlation ``corr`` (2q, 2q; covariance
    q·corr), noise correlation ``z_corr`` (q, q) and the weight of the x-dependent term."""
    dim = X.shape[1]
    cov = corr * float(dim)
    s11, s12 = cov[:dim, :dim], cov[:dim, dim:]
    s21, s22 = cov[dim:, :dim], cov[dim:, dim:]
    gain = s12 @ torch.linalg.inv(s22)
    y_sigma = s11 - gain @ s21
    y_sigma = (y_sigma + y_sigma.T) / 2
    mean = mu[:dim] + (X - mu[dim:]) @ gain.T
    het = torch.diag_embed((X - mu[dim:]).abs().sqrt())
    return mean, y_sigma + z_corr + het_scale * het


@checked
def make_heteroscedastic(n: int, dim: int, *, het_scale: float = 1.0,
                         seed: int | torch.Generator | None = None,
                         device: torch.device | str | None = None) -> HeteroscedasticData:
    """TIC-TAC's multivariate sampler with in = out = ``dim``.

    A joint Gaussian over (y, x) with mean ~ U[−dim, dim] and covariance dim·C (C a random
    correlation); x is made uniform by a Gaussian copula (same means, variance dim);
    E[y|x] = μ_y + Σ_yx Σ_xx⁻¹ (x − μ_x) and Σ(x) = Σ_{y|x} + Z + h·diag(√|x − μ_x|),
    Z a second random correlation, h = ``het_scale`` (1 in TIC-TAC); y ~ N(E[y|x], Σ(x)).

    Args:
        n: samples (>= 2). dim: input and output dimension (>= 1).
        het_scale: h >= 0, the weight of Σ(x)'s x-dependent term (1: TIC-TAC's sampler;
            0: homoscedastic). The random draws do not depend on it.
        seed: int, Generator or None. device: where the tensors go (generated on CPU).

    Returns:
        :class:`HeteroscedasticData` (float64).

    Examples:
        >>> d = make_heteroscedastic(100, 4, seed=0)
        >>> d.X.shape, d.cov.shape
        (torch.Size([100, 4]), torch.Size([100, 4, 4]))
    """
    n = check_int(n, "n", 2)
    dim = check_int(dim, "dim", 1)
    het_scale = check_range(het_scale, "het_scale", 0.0)
    gen = resolve_seed(seed)
    f64 = torch.float64
    scale = float(dim)
    mu = (torch.rand(2 * dim, generator=gen, dtype=f64) * 2 - 1) * scale
    corr = _correlation(2 * dim, gen)
    z_corr = _correlation(dim, gen)
    # Gaussian copula: uniform marginals with the input block's rank correlation
    rho = 2 * torch.sin(corr[dim:, dim:] * torch.pi / 6)
    w, v = torch.linalg.eigh(rho)
    rho = (v * w.clamp_min(1e-10)) @ v.T
    U = torch.special.ndtr(_mvn(torch.zeros(n, dim, dtype=f64), rho, gen))
    width = (12 * scale) ** 0.5
    X = (mu[dim:] - width / 2) + width * U
    mean, Sigma = _conditional(X, mu, corr, z_corr, het_scale)
    Y = _mvn(mean, Sigma, gen)
    return HeteroscedasticData(*(t.to(device) for t in (X, Y, mean, Sigma)))


@checked
def make_sinusoid(n: int, *, varying_amplitude: bool = True,
                  seed: int | torch.Generator | None = None,
                  device: torch.device | str | None = None) -> HeteroscedasticData:
    """TIC-TAC's univariate sinusoid: x ~ U[−5, 5], y = A(x) sin(2πx) + N(0, x²).

    A(x) = |x| (``varying_amplitude``) or 5; the noise std is |x| (+1e-5), as in TIC-TAC
    with amplitude 5 and max|x| = 5.

    Returns:
        :class:`HeteroscedasticData` with X, Y, mean of shape (n, 1), cov (n, 1, 1).
    """
    n = check_int(n, "n", 2)
    if not isinstance(varying_amplitude, bool):
        raise TypeError(f"varying_amplitude must be a bool, got {type(varying_amplitude)}")
    gen = resolve_seed(seed)
    f64 = torch.float64
    x = (torch.rand(n, 1, generator=gen, dtype=f64) * 2 - 1) * 5.0
    amp = x.abs() if varying_amplitude else torch.full_like(x, 5.0)
    mean = amp * torch.sin(2 * torch.pi * x)
    std = x.abs() + 1e-5
    y = mean + std * torch.randn(n, 1, generator=gen, dtype=f64)
    return HeteroscedasticData(*(t.to(device) for t in (x, y, mean, std.square().unsqueeze(-1))))
