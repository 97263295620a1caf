import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr25.crh import alignment_score, power_law_exponent, random_orthogonal, rotation_null


def wishart(d, n, seed):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    return X.T @ X / n


def test_identical_and_scaled_matrices_score_one():
    A = wishart(20, 40, 0)
    assert float(alignment_score(A, A)) == pytest.approx(1.0, abs=1e-12)
    assert float(alignment_score(A, 3.7 * A)) == pytest.approx(1.0, abs=1e-12)
    assert float(alignment_score(A, -2.0 * A)) == pytest.approx(-1.0, abs=1e-12)
    # with off-diagonal entries only, a shift of the diagonal is invisible
    assert float(alignment_score(A, 2 * A + 5 * torch.eye(20, dtype=A.dtype))) == pytest.approx(1)
    assert float(alignment_score(A, A + 5 * torch.eye(20, dtype=A.dtype), offdiag=False)) < 0.99


def test_matches_numpy_pearson_on_offdiagonal_entries():
    A, B = wishart(12, 30, 1), wishart(12, 30, 2) + 0.5 * wishart(12, 30, 1)
    mask = ~np.eye(12, dtype=bool)
    want = np.corrcoef(A.numpy()[mask], B.numpy()[mask])[0, 1]
    assert float(alignment_score(A, B)) == pytest.approx(want, abs=1e-12)
    want_all = np.corrcoef(A.numpy().ravel(), B.numpy().ravel())[0, 1]
    assert float(alignment_score(A, B, offdiag=False)) == pytest.approx(want_all, abs=1e-12)


def test_independent_matrices_near_zero_offdiag_but_inflated_with_diagonal():
    # The reason for offdiag=True: unrelated PSD matrices correlate through their diagonals.
    off = [float(alignment_score(wishart(32, 64, s), wishart(32, 64, 100 + s))) for s in range(10)]
    full = [float(alignment_score(wishart(32, 64, s), wishart(32, 64, 100 + s), offdiag=False))
            for s in range(10)]
    assert abs(np.mean(off)) < 0.05
    assert np.mean(full) > 0.4


@settings(max_examples=25, deadline=None)
@given(c=st.floats(1e-3, 1e3), seed=st.integers(0, 1000))
def test_invariant_to_positive_scaling(c, seed):
    A, B = wishart(8, 10, seed), wishart(8, 10, seed + 1)
    base = float(alignment_score(A, B))
    assert float(alignment_score(c * A, B)) == pytest.approx(base, abs=1e-9)
    assert float(alignment_score(A, c * B)) == pytest.approx(base, abs=1e-9)


def test_degenerate_and_bad_inputs():
    eye = torch.eye(4, dtype=torch.float64)
    assert math.isnan(float(alignment_score(eye, wishart(4, 8, 0))))  # constant off-diagonal
    with pytest.raises(ValueError, match="square"):
        alignment_score(torch.zeros(3, 4), torch.zeros(3, 4))
    with pytest.raises(ValueError, match="same shape"):
        alignment_score(torch.eye(3), torch.eye(4))
    with pytest.raises(ValueError, match="size >= 2"):
        alignment_score(torch.ones(1, 1), torch.ones(1, 1))
    with pytest.raises(ValueError, match="NaN"):
        alignment_score(torch.full((3, 3), float("nan")), torch.eye(3))
    with pytest.raises(TypeError, match="floating"):
        alignment_score(torch.eye(3, dtype=torch.long), torch.eye(3))


def test_inputs_not_modified():
    A, B = wishart(6, 9, 0), wishart(6, 9, 1)
    A0, B0 = A.clone(), B.clone()
    alignment_score(A, B)
    rotation_null(A, B, seed=0, n_draws=3)
    power_law_exponent(A, B)
    assert torch.equal(A, A0) and torch.equal(B, B0)


def test_random_orthogonal_is_orthogonal_and_seeded():
    Q = random_orthogonal(10, seed=3)
    assert torch.allclose(Q.T @ Q, torch.eye(10, dtype=Q.dtype), atol=1e-12)
    assert torch.equal(Q, random_orthogonal(10, seed=3))
    assert not torch.equal(Q, random_orthogonal(10, seed=4))


def test_rotation_null_destroys_alignment_and_is_seeded():
    A = wishart(24, 12, 0)  # low-rank, strongly structured
    null = rotation_null(A, 2 * A, seed=1, n_draws=50)
    assert null.shape == (50,)
    assert abs(float(null.mean())) < 0.1 and float(null.abs().max()) < 0.5
    assert torch.equal(null, rotation_null(A, 2 * A, seed=1, n_draws=50))
    with pytest.raises(ValueError, match="n_draws"):
        rotation_null(A, A, n_draws=0)


@pytest.mark.parametrize("alpha", [-1.0, 1 / 3, 0.5, 1.0, 2.0, 3.0])
def test_power_law_exponent_exact_recovery(alpha):
    Z = wishart(16, 40, 7)
    lam, V = torch.linalg.eigh(Z)
    H = 0.3 * (V * lam**alpha) @ V.T  # H = 0.3 Z^alpha
    fit = power_law_exponent(H, Z)
    assert fit.exponent == pytest.approx(alpha, abs=1e-8)
    assert fit.intercept == pytest.approx(math.log(0.3), abs=1e-8)
    assert fit.r2 == pytest.approx(1.0, abs=1e-10) and fit.n_used == 16


def test_power_law_exponent_drops_null_space_and_degenerate_cases():
    Z = wishart(10, 4, 0)  # rank 4
    lam, V = torch.linalg.eigh(Z)
    H = (V * lam.clamp_min(0) ** 2) @ V.T
    fit = power_law_exponent(H, Z)
    assert fit.n_used == 4 and fit.exponent == pytest.approx(2.0, abs=1e-6)
    eye = torch.eye(5, dtype=torch.float64)
    assert math.isnan(power_law_exponent(eye, eye).exponent)  # all eigenvalues equal
    with pytest.raises(ValueError, match="rtol"):
        power_law_exponent(eye, eye, rtol=0)


def test_batched_scores_match_pairwise():
    from iclr25.crh.alignment import _alignments

    mats = torch.stack([wishart(7, 9, s) for s in range(3)] + [torch.eye(7, dtype=torch.float64)])
    for offdiag in (True, False):
        table = _alignments(mats, offdiag)
        for i in range(4):
            for j in range(4):
                want = alignment_score(mats[i], mats[j], offdiag)
                if math.isnan(want):
                    assert math.isnan(float(table[i, j]))
                else:
                    assert float(table[i, j]) == pytest.approx(want, abs=1e-14)


# --- regression tests for the robustness findings of issue 9 -------------------------------

def test_returns_python_float():
    A, B = wishart(5, 8, 0), wishart(5, 8, 1)
    assert isinstance(alignment_score(A, B), float)
    assert isinstance(alignment_score(A.numpy(), B.float().numpy()), float)


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e300, 1e-300])
def test_extreme_scales_stay_finite(scale):
    # used to return NaN: the product of norms overflowed or underflowed
    A, B = wishart(6, 9, 0), wishart(6, 9, 1)
    want = alignment_score(A, B)
    assert alignment_score(scale * A, B) == pytest.approx(want, abs=1e-12)
    assert alignment_score(scale * A, scale * B) == pytest.approx(want, abs=1e-12)
    assert alignment_score(scale * A, scale * A) == pytest.approx(1.0, abs=1e-12)


def test_complex_matrices_refused():
    A = wishart(4, 6, 0)
    with pytest.raises(TypeError, match="A must be real"):
        alignment_score(A.to(torch.complex128), A)
    with pytest.raises(TypeError, match="Z must be real"):
        power_law_exponent(A, A.to(torch.complex128))


def test_power_law_names_z():
    # used to say "B" for a bad Z
    A = wishart(4, 6, 0)
    with pytest.raises(ValueError, match="Z must be square"):
        power_law_exponent(A, torch.zeros(4, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="A and Z must have the same shape"):
        power_law_exponent(A, torch.eye(3, dtype=torch.float64))


@pytest.mark.parametrize("rtol", [float("nan"), float("inf"), -1.0])
def test_power_law_rtol_must_be_finite_positive(rtol):
    # rtol=nan used to make every comparison false and drop nothing silently
    A = wishart(4, 6, 0)
    with pytest.raises(ValueError, match="rtol"):
        power_law_exponent(A, A, rtol=rtol)


def test_generator_seeds():
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert torch.equal(random_orthogonal(6, seed=g1), random_orthogonal(6, seed=g2))
    assert torch.equal(random_orthogonal(6, seed=5), random_orthogonal(6, seed=5))
    A = wishart(6, 9, 0)
    a = rotation_null(A, A, seed=torch.Generator().manual_seed(2), n_draws=4)
    assert torch.equal(a, rotation_null(A, A, seed=2, n_draws=4))
    with pytest.raises(ValueError, match="d must"):
        random_orthogonal(0)
