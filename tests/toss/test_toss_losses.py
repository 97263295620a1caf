"""The W2 bound (Theorem 1), the exact Gaussian W2, NLL losses and the metrics."""

import numpy as np
import pytest
import scipy.linalg
import torch
from torch.distributions import MultivariateNormal

from iclr25.toss import (
    BetaNLLLoss,
    GaussianNLLLoss,
    W2BoundLoss,
    beta_nll_loss,
    cov_error,
    gaussian_nll,
    gaussian_nll_loss,
    gaussian_w2,
    sqrtm_psd,
    tac,
    w2_bound,
)


def _spd(b, q, gen, commuting_with=None):
    A = torch.randn(b, q, q, generator=gen, dtype=torch.float64)
    if commuting_with is not None:
        Q = commuting_with
        w = torch.rand(b, q, generator=gen, dtype=torch.float64) * 3 + 0.1
        return (Q * w.unsqueeze(-2)) @ Q.mT
    return A @ A.mT + 0.1 * torch.eye(q, dtype=torch.float64)


def test_bound_dominates_exact_w2_on_random_pairs():
    g = torch.Generator().manual_seed(0)
    for q in (2, 3, 5):
        m1, m2 = torch.randn(200, q, generator=g, dtype=torch.float64), torch.randn(
            200, q, generator=g, dtype=torch.float64)
        C1, C2 = _spd(200, q, g), _spd(200, q, g)
        bound = w2_bound(m1, sqrtm_psd(C1), m2, sqrtm_psd(C2))
        exact = gaussian_w2(m1, C1, m2, C2)
        assert bound.shape == (200,)
        assert bool((bound >= exact - 1e-9).all())
        assert bool((bound > exact + 1e-6).any())  # non-commuting pairs: strictly above


def test_bound_equals_exact_w2_for_commuting_covariances():
    g = torch.Generator().manual_seed(1)
    Q, _ = torch.linalg.qr(torch.randn(50, 4, 4, generator=g, dtype=torch.float64))
    C1, C2 = _spd(50, 4, g, Q), _spd(50, 4, g, Q)
    m1, m2 = torch.randn(50, 4, generator=g, dtype=torch.float64), torch.zeros(50, 4,
                                                                              dtype=torch.float64)
    bound = w2_bound(m1, sqrtm_psd(C1), m2, sqrtm_psd(C2))
    torch.testing.assert_close(bound, gaussian_w2(m1, C1, m2, C2), atol=1e-10, rtol=0)


def test_gaussian_w2_matches_pot_and_scipy():
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(2)
    for q in (1, 3, 6):
        A, B = rng.normal(size=(q, q)), rng.normal(size=(q, q))
        C1, C2 = A @ A.T + 0.1 * np.eye(q), B @ B.T + 0.1 * np.eye(q)
        m1, m2 = rng.normal(size=q), rng.normal(size=q)
        ours = float(gaussian_w2(m1, C1, m2, C2))
        pot = float(ot.gaussian.bures_wasserstein_distance(m1, m2, C1, C2)) ** 2
        r2 = scipy.linalg.sqrtm(C2).real
        sc = (np.sum((m1 - m2) ** 2) + np.trace(C1 + C2)
              - 2 * np.trace(scipy.linalg.sqrtm(r2 @ C1 @ r2).real))
        assert ours == pytest.approx(pot, rel=1e-8, abs=1e-10)
        assert ours == pytest.approx(sc, rel=1e-8, abs=1e-10)


def test_bound_known_value_and_module_reductions():
    mp, mt = torch.zeros(3, 2), torch.ones(3, 2)
    Sp, St = 2 * torch.eye(2).expand(3, 2, 2), torch.eye(2).expand(3, 2, 2)
    torch.testing.assert_close(w2_bound(mp, Sp, mt, St), torch.full((3,), 4.0))
    assert float(W2BoundLoss()(mp, Sp, mt, St)) == pytest.approx(4.0)
    assert float(W2BoundLoss("sum")(mp, Sp, mt, St)) == pytest.approx(12.0)
    assert W2BoundLoss("none")(mp, Sp, mt, St).shape == (3,)


def test_bound_gradient_reaches_the_square_root():
    S = torch.eye(2, requires_grad=True)
    w2_bound(torch.zeros(2), S, torch.zeros(2), 3 * torch.eye(2)).backward()
    torch.testing.assert_close(S.grad, -4 * torch.eye(2))


def test_nll_losses_match_multivariate_normal():
    g = torch.Generator().manual_seed(3)
    m, y = torch.randn(10, 3, generator=g), torch.randn(10, 3, generator=g)
    L = torch.linalg.cholesky(_spd(10, 3, g).float())
    ref = -MultivariateNormal(m, scale_tril=L).log_prob(y)
    torch.testing.assert_close(gaussian_nll_loss(m, L, y), ref)
    torch.testing.assert_close(beta_nll_loss(m, L, y, beta=0.0), ref)
    assert float(GaussianNLLLoss()(m, L, y)) == pytest.approx(float(ref.mean()), rel=1e-6)
    # q = 1: Seitzer's stopgrad(σ^{2β}) · NLL
    s = torch.tensor([[[2.0]]])
    val = beta_nll_loss(torch.zeros(1, 1), s, torch.ones(1, 1), beta=0.5)
    nll = 0.5 * 0.25 + np.log(2.0) + 0.5 * np.log(2 * np.pi)
    assert float(val[0]) == pytest.approx(2.0 * nll, rel=1e-6)
    assert float(BetaNLLLoss(0.5, "sum")(torch.zeros(1, 1), s, torch.ones(1, 1))) == \
        pytest.approx(2.0 * nll, rel=1e-6)


def _tac_loop(mean, cov, y):
    """The TIC-TAC per-sample, per-coordinate conditional-Gaussian loop."""
    n, q = mean.shape
    out = np.zeros((n, q))
    for k in range(n):
        for i in range(q):
            o = [j for j in range(q) if j != i]
            s12, s22 = cov[k][i, o], cov[k][np.ix_(o, o)]
            cond = mean[k, i] + s12 @ np.linalg.solve(s22, y[k, o] - mean[k, o])
            out[k, i] = abs(y[k, i] - cond)
    return out.mean()


def test_tac_matches_the_per_coordinate_loop():
    rng = np.random.default_rng(4)
    n, q = 30, 4
    A = rng.normal(size=(n, q, q))
    cov = A @ A.transpose(0, 2, 1) + 0.2 * np.eye(q)
    mean, y = rng.normal(size=(n, q)), rng.normal(size=(n, q))
    assert tac(mean, cov, y) == pytest.approx(_tac_loop(mean, cov, y), rel=1e-10)
    m1, y1 = rng.normal(size=(n, 1)), rng.normal(size=(n, 1))
    assert tac(m1, np.ones((n, 1, 1)), y1) == pytest.approx(np.abs(y1 - m1).mean())


def test_gaussian_nll_and_cov_error_known_values():
    g = torch.Generator().manual_seed(5)
    m, y = torch.randn(8, 2, generator=g, dtype=torch.float64), torch.randn(
        8, 2, generator=g, dtype=torch.float64)
    C = _spd(8, 2, g)
    ref = float(-MultivariateNormal(m, covariance_matrix=C).log_prob(y).mean())
    assert gaussian_nll(m, C, y) == pytest.approx(ref, rel=1e-10)
    assert cov_error(C, C) == 0.0
    assert cov_error(2 * C, C) == pytest.approx(1.0)
    assert isinstance(tac(m, C, y), float)


@pytest.mark.parametrize("call, match", [
    (lambda: w2_bound(torch.zeros(3, 2), torch.eye(3).expand(3, 3, 3), torch.zeros(3, 2),
                      torch.eye(2).expand(3, 2, 2)), "sqrt_cov_p"),
    (lambda: w2_bound(torch.zeros(3, 2), torch.eye(2).expand(3, 2, 2), torch.zeros(4, 2),
                      torch.eye(2).expand(4, 2, 2)), "mean_t"),
    (lambda: w2_bound(torch.tensor([float("nan"), 0.0]), torch.eye(2), torch.zeros(2),
                      torch.eye(2)), "mean_p"),
    (lambda: w2_bound(torch.zeros(2), torch.eye(2), torch.zeros(2),
                      torch.tensor([[1.0, float("inf")], [0.0, 1.0]])), "sqrt_cov_t"),
    (lambda: gaussian_w2(torch.zeros(2, 2, 2), torch.eye(2), torch.zeros(2), torch.eye(2)),
     "mean1"),
    (lambda: tac(torch.zeros(3, 2), -torch.eye(2).expand(3, 2, 2), torch.zeros(3, 2)), "cov"),
    (lambda: tac(torch.zeros(3, 2), torch.eye(2).expand(3, 2, 2), torch.zeros(3, 3)), "Y"),
    (lambda: cov_error(torch.eye(2).expand(3, 2, 2), torch.zeros(3, 2, 2)), "cov_true"),
    (lambda: W2BoundLoss("avg"), "reduction"),
    (lambda: beta_nll_loss(torch.zeros(1, 1), torch.ones(1, 1, 1), torch.zeros(1, 1), 2.0),
     "beta"),
])
def test_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_integer_means_are_refused():
    with pytest.raises(TypeError, match="mean_p"):
        w2_bound(torch.zeros(2, dtype=torch.int64), torch.eye(2), torch.zeros(2), torch.eye(2))
    with pytest.raises(TypeError, match="mean"):
        gaussian_nll(np.zeros((2, 2), dtype=int), np.eye(2)[None].repeat(2, 0), np.zeros((2, 2)))


@pytest.mark.parametrize("cov1, cov2, match", [
    (-torch.eye(2), torch.eye(2), "cov1 must be positive semi-definite"),
    (torch.eye(2), torch.tensor([[1.0, 0.5], [0.0, 1.0]]), "cov2 must be symmetric"),
    (torch.eye(2), torch.diag(torch.tensor([1.0, -1e-3])), "cov2 must be positive semi-"),
])
def test_gaussian_w2_refuses_non_covariances(cov1, cov2, match):
    with pytest.raises(ValueError, match=match):
        gaussian_w2(torch.zeros(2), cov1, torch.zeros(2), cov2)


def test_gaussian_w2_accepts_round_off_asymmetry_and_singular_psd():
    C = torch.tensor([[2.0, 1.0], [1.0 + 1e-7, 0.5 + 1e-7]])   # float32 round-off, PSD
    assert float(gaussian_w2(torch.zeros(2), C, torch.zeros(2), C)) == pytest.approx(0, abs=1e-3)
    P = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float64)  # rank 1
    assert float(gaussian_w2(torch.zeros(2), P, torch.zeros(2), P)) == pytest.approx(0, abs=1e-6)


@pytest.mark.parametrize("L, match", [
    (torch.tensor([[1.0, 0.3], [0.2, 1.0]]), "lower-triangular"),
    (torch.tensor([[1.0, 0.0], [0.2, 0.0]]), "positive diagonal"),
    (torch.tensor([[-1.0, 0.0], [0.2, 1.0]]), "positive diagonal"),
])
def test_nll_losses_refuse_a_bad_cholesky_factor(L, match):
    for fn in (gaussian_nll_loss, beta_nll_loss):
        with pytest.raises(ValueError, match=f"scale_tril must .*{match}"):
            fn(torch.zeros(2), L, torch.ones(2))
