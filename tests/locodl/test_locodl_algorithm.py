"""Known answers: compressor moments, LoCoDL's invariants and exact convergence, baselines."""

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression, Ridge

from iclr25.locodl import (
    ClientLogistic,
    ClientRidge,
    ComposedCompressor,
    Identity,
    LoCoDLClassifier,
    Natural,
    RandK,
    adiana,
    diana,
    gd,
    locodl,
    make_compressor,
    scaffnew,
)
from iclr25.locodl.testbed import breast_cancer

pytestmark = pytest.mark.usefixtures("one_thread")


def small(n=4, d=6, m=30, alpha=0.1, seed=0, kind=ClientLogistic):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n * m, d, generator=g, dtype=torch.float64)
    y = (X[:, 0] + 0.5 * torch.randn(n * m, generator=g, dtype=torch.float64) > 0).long()
    if kind is ClientRidge:
        y = X @ torch.arange(1.0, d + 1, dtype=torch.float64) + torch.randn(n * m, generator=g,
                                                                            dtype=torch.float64)
    return kind(X, y, torch.arange(n * m) % n, alpha=alpha), X, y


@pytest.mark.parametrize("comp", [Identity(), RandK(2), Natural(),
                                  ComposedCompressor(RandK(3), Natural())])
def test_compressor_unbiased_with_bounded_variance(comp):
    d, reps = 8, 20000
    x = torch.linspace(-3, 2.5, d, dtype=torch.float64)
    V = x.expand(reps, d).clone()
    C = comp(V, torch.Generator().manual_seed(1))
    omega = comp.omega(d)
    se = C.std(0) / reps**0.5
    assert torch.all((C.mean(0) - x).abs() <= 5 * se + 1e-12)
    var = ((C - x) ** 2).sum(1).mean()
    assert var <= omega * (x @ x) * 1.05 + 1e-12
    assert torch.equal(V, x.expand(reps, d))       # input untouched


def test_bits_as_the_paper_counts():
    d = 30
    assert Identity().bits(d) == 32 * d
    assert RandK(3).bits(d) == 3 * (32 + 5)
    assert Natural().bits(d) == 9 * d
    assert make_compressor("rand-3+natural").bits(d) == 3 * (9 + 5)
    assert make_compressor("rand-3+natural").omega(d) == pytest.approx(10 * 1.125 - 1)


def test_dual_sum_invariant_fixed_point_and_identity_round():
    f, _, _ = small()
    run = locodl(f, "rand-2", max_iter=300, seed=3)
    s = run.state
    assert torch.allclose(s["U"].mean(0) + s["v"], torch.zeros(f.d, dtype=torch.float64),
                          atol=1e-12)
    # the fixed point (x*, ∇f_i(x*), ∇g(x*)) is kept: one step from it changes nothing
    xs = f.solve()
    Xs = xs.expand(f.n_clients, -1)
    U, v = f.grad(Xs), f.grad_g(xs)
    gamma = 2 / (f.L + f.mu)
    Xh, yh = Xs - gamma * (f.grad(Xs) - U), xs - gamma * (f.grad_g(xs) - v)
    assert torch.allclose(Xh, Xs, atol=1e-13) and torch.allclose(yh, xs, atol=1e-13)
    D = RandK(2)(Xh - yh, torch.Generator().manual_seed(0))
    assert D.abs().max() <= 1e-12
    # Identity, ρ = χ = 1, p = 1: one round sets every x_i and y to (mean x̂_i + ŷ)/2
    one = locodl(f, Identity(), p=1.0, rho=1.0, chi=1.0, max_iter=1)
    Xh = -gamma * f.grad(torch.zeros(f.n_clients, f.d, dtype=torch.float64))
    want = (Xh.mean(0) + 0) / 2
    assert torch.allclose(one.x, want, atol=1e-14)
    assert torch.allclose(one.state["X"], want.expand(f.n_clients, -1), atol=1e-14)


@pytest.mark.parametrize("k", [1, 5, 6])
def test_exact_convergence(k):
    f, _, _ = small()
    xs = f.solve()
    run = locodl(f, RandK(k), x_star=xs, tol=1e-11, seed=k)
    assert run.converged and torch.linalg.vector_norm(run.x - xs) < 1e-10


def test_coef_matches_sklearn_and_ridge_closed_form():
    f, X, y = small(alpha=0.05)
    N = len(X)
    lr = LogisticRegression(C=1 / (0.05 * N), fit_intercept=False, tol=1e-12,
                            max_iter=10000).fit(X.numpy(), y.numpy())
    clf = LoCoDLClassifier(alpha=0.05, n_clients=4, compressor="rand-2", seed=0).fit(
        X.numpy(), y.numpy(), client_ids=np.arange(N) % 4)
    assert np.allclose(clf.coef_, lr.coef_, atol=1e-6)
    assert np.allclose(clf.coef_[0], f.solve().numpy(), atol=1e-8)
    assert clf.score(X.numpy(), y.numpy()) == lr.score(X.numpy(), y.numpy())
    fr, Xr, yr = small(alpha=0.05, kind=ClientRidge)
    ridge = Ridge(alpha=0.05 * N, fit_intercept=False).fit(Xr.numpy(), yr.numpy())
    assert np.allclose(fr.solve().numpy(), ridge.coef_, atol=1e-10)
    run = locodl(fr, "natural", x_star=fr.solve(), tol=1e-10, seed=0)
    assert run.converged


def test_global_objective_is_the_mean_loss():
    f, X, y = small()
    x = torch.linspace(-1, 1, f.d, dtype=torch.float64)
    b = torch.where(y == 1, 1.0, -1.0).double()
    want = torch.nn.functional.softplus(-b * (X @ x)).mean() + f.alpha / 2 * x @ x
    assert f.value(x) == pytest.approx(float(want), rel=1e-12)
    # (1/n) Σ ∇f_i(x) + ∇g(x) is the gradient of the global objective
    xg = x.clone().requires_grad_(True)
    (torch.nn.functional.softplus(-b * (X @ xg)).mean() + f.alpha / 2 * xg @ xg).backward()
    G = f.grad(x.expand(f.n_clients, -1)).mean(0) + f.grad_g(x)
    assert torch.allclose(G, xg.grad, atol=1e-14)


def test_baselines_converge_and_locodl_beats_them_on_bits():
    f = breast_cancer(10, 1e2)
    xs = f.solve()
    kw = dict(x_star=xs, tol=1e-4)
    lo = locodl(f, "rand-1", **kw)
    for fn, c in ((gd, "none"), (scaffnew, "none"), (diana, "rand-1")):
        r = fn(f, c, **kw)
        assert r.converged and r.uplink_bits > lo.uplink_bits


def test_adiana_accelerates_diana_at_large_kappa():
    # ill-conditioned ridge, κ ≈ 1.2e4: after the same number of rounds ADIANA is closer
    g = torch.Generator().manual_seed(0)
    X = torch.randn(160, 4, generator=g, dtype=torch.float64) * torch.tensor(
        [1, 0.3, 0.1, 0.03], dtype=torch.float64)
    y = X.sum(1) + 0.1 * torch.randn(160, generator=g, dtype=torch.float64)
    f = ClientRidge(X, y, torch.arange(160) % 4, alpha=2e-4)
    assert f.L / f.mu > 1e4
    xs = f.solve()
    a = adiana(f, "rand-2", x_star=xs, max_iter=3000)
    d = diana(f, "rand-2", x_star=xs, max_iter=3000)
    assert a.history[-1, 2] < 0.8 * d.history[-1, 2]


def test_seeded_determinism_and_float32():
    f, X, y = small()
    a, b = locodl(f, "rand-1", max_iter=200, seed=5), locodl(f, "rand-1", max_iter=200, seed=5)
    c = locodl(f, "rand-1", max_iter=200, seed=6)
    assert torch.equal(a.x, b.x) and not torch.equal(a.x, c.x)
    f32 = ClientLogistic(X.float(), y, torch.arange(len(X)) % 4, alpha=0.1)
    r = locodl(f32, "rand-2", max_iter=50)
    assert r.x.dtype == torch.float32


def test_ending_at_max_iter_warns_as_sklearn_naming_max_iter_and_tol():
    # issue 68 walk 5: raw runs ended at max_iter with converged=False and no word
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from iclr25.locodl import adiana, diana, gd, scaffnew

    f, _, _ = small()
    xs = f.solve()
    for fn in (locodl, gd, scaffnew, diana, adiana):
        with pytest.warns(ConvergenceWarning, match=r"ran to max_iter=20 iterations .* before "
                          r"the error \|\|x - x_star\|\| reached tol=1e-12 \(last") as w:
            run = fn(f, x_star=xs, tol=1e-12, max_iter=20)
        assert not run.converged and w[0].filename == __file__, fn.__name__
    with pytest.warns(ConvergenceWarning, match=r"no stopping tolerance \(tol=None\): pass "
                                                r"tol"):
        locodl(f, max_iter=5)
    with warnings.catch_warnings():  # converged, or stopped by the caller's max_bits: silent
        warnings.simplefilter("error")
        assert locodl(f, RandK(2), x_star=xs, tol=1e-8, seed=0).converged
        assert not gd(f, max_bits=1e3, x_star=xs, tol=1e-12, max_iter=10**6).converged
