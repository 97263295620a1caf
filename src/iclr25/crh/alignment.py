"""Alignment scores between square matrices, their rotation null, and PAH power-law fits.

The CRH paper (Ziyin, Chuang, Galanti, Poggio, ICLR 2025, Sec. 3-5) measures how
proportional two d x d matrices are (e.g. a representation covariance ``H`` and
``W Wᵀ``) with a correlation coefficient of their entries. We use the Pearson
correlation of the *off-diagonal* entries by default. Why: representation,
gradient and weight matrices are positive semi-definite, so their diagonals are
positive and usually much larger than the off-diagonal entries. A correlation over
all entries is then driven by the diagonal/off-diagonal contrast alone: two
*independent* Wishart matrices already score about 0.5. The off-diagonal entries
carry the directions (which neurons co-vary), and unrelated matrices score about 0
there. ``offdiag=False`` gives the all-entries score for comparison.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from iclr25._checks import check_tensor


def _check_square(A: object, name: str) -> torch.Tensor:
    A = check_tensor(A, name, ndim=2, floating=True)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square, got shape {tuple(A.shape)}")
    return A


def _check_pair(A: object, B: object) -> tuple[torch.Tensor, torch.Tensor]:
    A, B = _check_square(A, "A"), _check_square(B, "B")
    if A.shape != B.shape:
        raise ValueError(f"A and B must have the same shape, got {tuple(A.shape)} and "
                         f"{tuple(B.shape)}")
    if A.device != B.device:
        raise ValueError(f"A and B must be on the same device, got {A.device} and {B.device}")
    return A, B


def _entries(A: torch.Tensor, offdiag: bool) -> torch.Tensor:
    if not offdiag:
        return A.reshape(-1)
    # Both triangles: for symmetric inputs every pair then appears twice on both sides,
    # which leaves a Pearson correlation unchanged, and non-symmetric inputs still work.
    mask = ~torch.eye(A.shape[0], dtype=torch.bool, device=A.device)
    return A[mask]


def alignment_score(A: torch.Tensor, B: torch.Tensor, offdiag: bool = True) -> torch.Tensor:
    """Pearson correlation of the entries of two square matrices (the CRH alignment α).

    Args:
        A, B: (d, d) floating matrices (usually symmetric PSD), same shape and device.
        offdiag: use only the off-diagonal entries (default; see the module docstring for why).

    Returns:
        0-d float64 tensor in [-1, 1]: 1 iff B = cA (+ c' I when ``offdiag``) with c > 0,
        about 0 for independent matrices. NaN if the selected entries of A or B are constant
        (e.g. a diagonal matrix with ``offdiag=True``), where a correlation is undefined.

    Raises:
        ValueError: non-square, mismatched shapes, NaN/inf, or d < 2 with ``offdiag``.

    Paper: the alignment measure α(A, B) of Sec. 5 (a normalised entry-wise correlation).
    """
    A, B = _check_pair(A, B)
    if offdiag and A.shape[0] < 2:
        raise ValueError("offdiag=True needs matrices of size >= 2 (a 1x1 matrix has no "
                         "off-diagonal entries)")
    a = _entries(A.to(torch.float64), offdiag)
    b = _entries(B.to(torch.float64), offdiag)
    a, b = a - a.mean(), b - b.mean()
    denom = a.norm() * b.norm()
    if float(denom) == 0.0:
        return torch.tensor(float("nan"), dtype=torch.float64, device=A.device)
    return ((a @ b) / denom).clamp(-1.0, 1.0)


def random_orthogonal(
    d: int, *, seed: int | None = None, generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float64, device: torch.device | str | None = None,
) -> torch.Tensor:
    """A Haar-distributed random orthogonal (d, d) matrix (QR of a Gaussian with sign fix).

    Args:
        d: size; seed or generator: the randomness (one of them; ``seed`` wins if both).

    Returns:
        (d, d) tensor Q with QᵀQ = I.
    """
    if int(d) < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    if seed is not None or generator is None:
        generator = torch.Generator().manual_seed(0 if seed is None else int(seed))
    X = torch.randn(int(d), int(d), generator=generator, dtype=torch.float64)
    Q, R = torch.linalg.qr(X)
    # Multiplying column k by sign(R_kk) makes the distribution exactly Haar.
    r = torch.diagonal(R)
    Q = Q * torch.where(r < 0, -1.0, 1.0).to(Q.dtype)
    return Q.to(dtype=dtype, device=device)


def rotation_null(
    A: torch.Tensor, B: torch.Tensor, seed: int = 0, *, n_draws: int = 100, offdiag: bool = True,
) -> torch.Tensor:
    """Chance level of ``alignment_score(A, B)``: scores of A against random rotations of B.

    Each draw replaces B by Q B Qᵀ for a Haar-random orthogonal Q. This keeps B's spectrum
    (so its diagonal dominance and eigenvalue decay) but destroys any relation between B's
    eigenvectors and A's, which is exactly what the alignment hypothesis is about.

    Args:
        A, B: (d, d) matrices as for ``alignment_score``.
        seed: seed of the rotations.
        n_draws: number of random rotations.
        offdiag: passed to ``alignment_score``.

    Returns:
        (n_draws,) float64 tensor of null scores (compare the observed score with, e.g., the
        mean of their absolute values or a high quantile).
    """
    A, B = _check_pair(A, B)
    if int(n_draws) < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    g = torch.Generator().manual_seed(int(seed))
    Bd = B.to(torch.float64)
    out = torch.empty(int(n_draws), dtype=torch.float64, device=A.device)
    for k in range(int(n_draws)):  # a few draws, each an O(d^3) product: no per-entry loop
        Q = random_orthogonal(A.shape[0], generator=g, device=A.device)
        out[k] = alignment_score(A, Q @ Bd @ Q.T, offdiag=offdiag)
    return out


class PowerLawFit(NamedTuple):
    """Least-squares fit ``log(v_iᵀ A v_i) = exponent * log λ_i(Z) + intercept``."""

    exponent: float
    intercept: float
    r2: float
    n_used: int


def power_law_exponent(A: torch.Tensor, Z: torch.Tensor, *, rtol: float = 1e-6) -> PowerLawFit:
    """Fit the PAH exponent α in ``A ∝ Z^α`` from the spectrum of Z.

    Estimator: eigendecompose the symmetric PSD matrix Z = Σ λ_i v_i v_iᵀ; for each
    eigenvector with λ_i > rtol * λ_max, take the Rayleigh quotient a_i = v_iᵀ A v_i; keep
    a_i > 0; fit log a_i against log λ_i by ordinary least squares. If A = c Z^α exactly,
    a_i = c λ_i^α and the slope is α exactly. Using Rayleigh quotients in Z's eigenbasis
    (rather than sorting the two spectra separately) means the fit only sees a power law
    when A and Z also share eigenvectors, which is what PAH asserts.

    Args:
        A: (d, d) symmetric matrix (e.g. a representation or gradient covariance).
        Z: (d, d) symmetric PSD matrix (e.g. W Wᵀ). Only its symmetric part is used.
        rtol: eigenvalues of Z below ``rtol * max`` are dropped (numerical null space).

    Returns:
        PowerLawFit(exponent, intercept, r2, n_used); exponent is NaN if fewer than 2
        eigen-directions are usable or all used λ_i are equal.

    Paper: Polynomial Alignment Hypothesis, Sec. 4 (H ∝ Z^α, G ∝ Z^β; eigenvalue scatter plots).
    """
    A, Z = _check_pair(A, Z)
    if not rtol > 0:
        raise ValueError(f"rtol must be > 0, got {rtol}")
    Zs = Z.to(torch.float64)
    lam, V = torch.linalg.eigh(0.5 * (Zs + Zs.T))
    a = torch.einsum("ji,jk,ki->i", V, A.to(torch.float64), V)
    keep = (lam > rtol * lam.max().clamp_min(0)) & (a > 0) & (lam > 0)
    nan = float("nan")
    n = int(keep.sum())
    if n < 2:
        return PowerLawFit(nan, nan, nan, n)
    x, y = lam[keep].log(), a[keep].log()
    xc, yc = x - x.mean(), y - y.mean()
    sxx = float(xc @ xc)
    if sxx <= 1e-24:
        return PowerLawFit(nan, nan, nan, n)
    slope = float(xc @ yc) / sxx
    intercept = float(y.mean()) - slope * float(x.mean())
    syy = float(yc @ yc)
    resid = yc - slope * xc
    r2 = 1.0 - float(resid @ resid) / syy if syy > 0 else 1.0
    return PowerLawFit(slope, intercept, r2, n)
