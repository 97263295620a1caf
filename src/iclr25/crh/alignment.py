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

from iclr25._checks import ArrayLike, as_tensor, check_int, check_range, resolve_seed
from iclr25._contract import FloatDtype, checked


def _check_square(A: ArrayLike, name: str) -> torch.Tensor:
    A = as_tensor(A, name, ndim=2)
    if not A.is_floating_point():
        raise TypeError(f"{name} must be a floating-point matrix, got {A.dtype}")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square, got shape {tuple(A.shape)}")
    return A


def _check_pair(A: ArrayLike, B: ArrayLike, names: tuple[str, str] = ("A", "B"),
                ) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = names
    A, B = _check_square(A, a), _check_square(B, b)
    if A.shape != B.shape:
        raise ValueError(f"{a} and {b} must have the same shape, got {tuple(A.shape)} and "
                         f"{tuple(B.shape)}")
    if A.device != B.device:
        raise ValueError(f"{a} and {b} must be on the same device, got {A.device} and "
                         f"{B.device}")
    return A, B


def _entries(A: torch.Tensor, offdiag: bool) -> torch.Tensor:
    if not offdiag:
        return A.reshape(-1)
    # Both triangles: for symmetric inputs every pair then appears twice on both sides,
    # which leaves a Pearson correlation unchanged, and non-symmetric inputs still work.
    # Dropping the first entry, rows of d + 1 start at each diagonal entry: cut them off.
    d = A.shape[0]
    return A.reshape(-1)[1:].reshape(d - 1, d + 1)[:, :-1].reshape(-1)


def _unit_centred(x: torch.Tensor) -> torch.Tensor | None:
    """``(x - mean) / ||x - mean||`` without overflow or underflow; None if x is constant."""
    if x.numel() == 0:
        return None
    x = x - x.mean()
    peak = x.abs().max()
    if float(peak) == 0.0:
        return None
    x = x / peak  # entries now in [-1, 1]: the norm below can neither overflow nor vanish
    return x / x.norm()


def _alignments(mats: torch.Tensor, offdiag: bool) -> torch.Tensor:
    """(k, k) alignment scores between every pair of a (k, d, d) stack, in a few batched ops.

    Same numbers as :func:`_alignment` pairwise (centred, scaled by the peak, then by the
    norm); NaN in the rows and columns of matrices whose selected entries are constant.
    """
    k, d = mats.shape[0], mats.shape[1]
    x = mats.to(torch.float64).reshape(k, -1)
    if offdiag:
        x = x[:, 1:].reshape(k, d - 1, d + 1)[:, :, :-1].reshape(k, -1)
    if x.shape[1] == 0:
        return torch.full((k, k), float("nan"), dtype=torch.float64, device=mats.device)
    x = x - x.mean(1, keepdim=True)
    peak = x.abs().amax(1, keepdim=True)
    ok = peak[:, 0] > 0
    x = x / torch.where(peak > 0, peak, 1.0)
    x = x / torch.linalg.vector_norm(x, dim=1, keepdim=True).clamp_min(1e-300)
    scores = (x @ x.T).clamp(-1.0, 1.0)
    return scores.masked_fill(~(ok[:, None] & ok[None, :]), float("nan"))


@checked
def alignment_score(A: torch.Tensor, B: torch.Tensor, offdiag: bool = True) -> float:
    """Pearson correlation of the entries of two square matrices (the CRH alignment α).

    Args:
        A, B: (d, d) real floating matrices (usually symmetric PSD), same shape and device;
            numpy arrays are accepted.
        offdiag: use only the off-diagonal entries (default; see the module docstring for why).

    Returns:
        A float in [-1, 1]: 1 iff B = cA (+ c' I when ``offdiag``) with c > 0, about 0 for
        independent matrices. NaN if the selected entries of A or B are constant (e.g. a
        diagonal matrix with ``offdiag=True``), where a correlation is undefined. Each side
        is centred and scaled to unit norm before the product, so matrices scaled by 1e±200
        score the same as unscaled ones.

    Raises:
        ValueError: non-square, mismatched shapes, NaN/inf, or d < 2 with ``offdiag``.
        TypeError: integer or complex matrices.

    Paper: the alignment measure α(A, B) of Sec. 5 (a normalised entry-wise correlation).

    Examples:
        >>> import torch
        >>> A = torch.tensor([[2.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 2.0]])
        >>> alignment_score(A, 3 * A + torch.eye(3))
        1.0
    """
    A, B = _check_pair(A, B)
    if offdiag and A.shape[0] < 2:
        raise ValueError("offdiag=True needs matrices of size >= 2 (a 1x1 matrix has no "
                         "off-diagonal entries)")
    return _alignment(A, B, offdiag)


def _alignment(A: torch.Tensor, B: torch.Tensor, offdiag: bool) -> float:
    """:func:`alignment_score` on checked matrices."""
    a = _unit_centred(_entries(A.to(torch.float64), offdiag))
    b = _unit_centred(_entries(B.to(torch.float64), offdiag))
    if a is None or b is None:
        return float("nan")
    return min(1.0, max(-1.0, float(a @ b)))


@checked
def random_orthogonal(
    d: int, *, seed: int | torch.Generator | None = None,
    dtype: FloatDtype = torch.float64, device: torch.device | str | None = None,
) -> torch.Tensor:
    """A Haar-distributed random orthogonal (d, d) matrix (QR of a Gaussian with sign fix).

    Args:
        d: size >= 1.
        seed: int, CPU Generator (drawn from, so successive calls differ) or None (fresh).
        dtype, device: of the result (drawn on the CPU, so the same seed gives the same
            matrix on every device).

    Returns:
        (d, d) tensor Q with QᵀQ = I.
    """
    d = check_int(d, "d", 1)
    generator = resolve_seed(seed)
    X = torch.randn(d, d, generator=generator, dtype=torch.float64)
    Q, R = torch.linalg.qr(X)
    # Multiplying column k by sign(R_kk) makes the distribution exactly Haar.
    r = torch.diagonal(R)
    Q = Q * torch.where(r < 0, -1.0, 1.0).to(Q.dtype)
    return Q.to(dtype=dtype, device=device)


@checked
def rotation_null(
    A: torch.Tensor, B: torch.Tensor, *, seed: int | torch.Generator | None = 0,
    n_draws: int = 100, offdiag: bool = True,
) -> torch.Tensor:
    """Chance level of ``alignment_score(A, B)``: scores of A against random rotations of B.

    Each draw replaces B by Q B Qᵀ for a Haar-random orthogonal Q. This keeps B's spectrum
    (so its diagonal dominance and eigenvalue decay) but destroys any relation between B's
    eigenvectors and A's, which is exactly what the alignment hypothesis is about.

    Args:
        A, B: (d, d) matrices as for ``alignment_score``.
        seed: seed of the rotations (int, CPU Generator, or None for a fresh one).
        n_draws: number of random rotations.
        offdiag: passed to ``alignment_score``.

    Returns:
        (n_draws,) float64 tensor of null scores (compare the observed score with, e.g., the
        mean of their absolute values or a high quantile).
    """
    A, B = _check_pair(A, B)
    n_draws = check_int(n_draws, "n_draws", 1)
    g = resolve_seed(seed)
    Bd = B.to(torch.float64)
    out = torch.empty(n_draws, dtype=torch.float64, device=A.device)
    for k in range(n_draws):  # a few draws, each an O(d^3) product: no per-entry loop
        Q = random_orthogonal(A.shape[0], seed=g, device=A.device)
        out[k] = alignment_score(A, Q @ Bd @ Q.T, offdiag=offdiag)
    return out


class PowerLawFit(NamedTuple):
    """Least-squares fit ``log(v_iᵀ A v_i) = exponent * log λ_i(Z) + intercept``."""

    exponent: float
    intercept: float
    r2: float
    n_used: int


@checked
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
        rtol: eigenvalues of Z below ``rtol * max`` are dropped (numerical null space); a
            finite number > 0.

    Returns:
        PowerLawFit(exponent, intercept, r2, n_used); exponent is NaN if fewer than 2
        eigen-directions are usable or all used λ_i are equal.

    Paper: Polynomial Alignment Hypothesis, Sec. 4 (H ∝ Z^α, G ∝ Z^β; eigenvalue scatter plots).
    """
    A, Z = _check_pair(A, Z, ("A", "Z"))
    rtol = check_range(rtol, "rtol", 0.0, low_open=True)
    return _power_law(A, _eigh(Z), rtol)


def _eigh(Z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Eigenvalues and eigenvectors of the symmetric part of Z, in float64."""
    Zs = Z.to(torch.float64)
    return torch.linalg.eigh(0.5 * (Zs + Zs.T))


def _power_law(A: torch.Tensor, eig: tuple[torch.Tensor, torch.Tensor],
               rtol: float = 1e-6) -> PowerLawFit:
    """:func:`power_law_exponent` from Z's eigendecomposition (shared by several fits)."""
    lam, V = eig
    a = ((V.T @ A.to(torch.float64)) * V.T).sum(1)  # Rayleigh quotients v_iᵀ A v_i
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
