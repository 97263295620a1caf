"""Db-TSW: known answers (POT's exact OT on the tree metric, scipy 1-D), invariances, gradients."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import wasserstein_distance

from iclr25.dbtsw import DbTSWLoss, db_tsw, sample_trees

ot = pytest.importorskip("ot")

F64 = torch.float64


def _tree(d, k, seed, std=0.5):
    return sample_trees(1, k, d, mean=torch.zeros(d, dtype=F64), std=std, seed=seed)


def _exact_tree_w1(X, Y, a, b, theta, root, delta):
    """W1 under the tree metric by POT's exact solver, splitting computed independently."""
    Z = torch.cat([X, Y])
    t = (Z - root) @ theta.T  # (N, k) coordinates
    perp = ((Z - root)[:, None, :] - t[..., None] * theta[None]).norm(dim=-1)
    alpha = torch.softmax(-delta * perp, dim=1)
    n = len(X)
    ms = (alpha[:n] * a[:, None]).reshape(-1)
    mt = (alpha[n:] * b[:, None]).reshape(-1)
    line = torch.arange(theta.shape[0])
    s, ls = t[:n].reshape(-1), line.repeat(n)
    u, lu = t[n:].reshape(-1), line.repeat(len(Y))
    same = ls[:, None] == lu[None]
    C = torch.where(same, (s[:, None] - u[None]).abs(), s.abs()[:, None] + u.abs()[None])
    return float(ot.emd2(ms.numpy(), mt.numpy(), C.numpy(), numItermax=10**6))


@pytest.mark.parametrize("delta", [0.0, 10.0])
def test_one_tree_p1_is_exact_w1_on_the_tree_metric(delta):
    g = torch.Generator().manual_seed(0)
    for case in range(20):
        n, m, d, k = 3 + case % 5, 2 + case % 4, 2 + case % 3, 1 + case % 4
        X = torch.randn(n, d, generator=g, dtype=F64)
        Y = torch.randn(m, d, generator=g, dtype=F64) + 0.3
        a = torch.rand(n, generator=g, dtype=F64) + 0.1
        b = torch.rand(m, generator=g, dtype=F64) + 0.1
        a, b = a / a.sum(), b / b.sum()
        theta, roots = _tree(d, k, case)
        got = float(db_tsw(X, Y, a, b, trees=(theta, roots), delta=delta, p=1))
        ref = _exact_tree_w1(X, Y, a, b, theta[0], roots[0], delta)
        assert got == pytest.approx(ref, rel=1e-6, abs=1e-12)


def test_one_line_is_1d_wasserstein_of_projections():
    g = torch.Generator().manual_seed(1)
    X = torch.randn(30, 4, generator=g, dtype=F64)
    Y = torch.randn(17, 4, generator=g, dtype=F64) * 2
    a = torch.rand(30, generator=g, dtype=F64)
    b = torch.rand(17, generator=g, dtype=F64)
    a, b = a / a.sum(), b / b.sum()
    theta, roots = _tree(4, 1, 3, std=3.0)  # any root: one line is a 1-D problem
    got = float(db_tsw(X, Y, a, b, trees=(theta, roots), delta=10.0))
    u, v = (X @ theta[0, 0]).numpy(), (Y @ theta[0, 0]).numpy()
    assert got == pytest.approx(wasserstein_distance(u, v, a.numpy(), b.numpy()), rel=1e-10)


def test_p2_is_closed_form_with_squared_mass_differences():
    # two atoms on one line, root between: edges [x, 0] and [0, y] carry mass 1 each
    X = torch.tensor([[-1.0, 0.0]], dtype=F64)
    Y = torch.tensor([[2.0, 0.0]], dtype=F64)
    trees = (torch.tensor([[[1.0, 0.0]]], dtype=F64), torch.zeros(1, 2, dtype=F64))
    assert float(db_tsw(X, Y, trees=trees, p=2)) == pytest.approx(math.sqrt(3.0))
    assert float(db_tsw(X, Y, trees=trees, p=1)) == pytest.approx(3.0)


def _rotation(d, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.linalg.qr(torch.randn(d, d, generator=g, dtype=F64)).Q


@pytest.mark.parametrize("delta", [0.0, 10.0])
def test_rigid_motion_of_data_and_trees_changes_nothing(delta):
    g = torch.Generator().manual_seed(2)
    X = torch.randn(40, 5, generator=g, dtype=F64)
    Y = torch.randn(25, 5, generator=g, dtype=F64) + 1
    theta, roots = sample_trees(20, 4, 5, mean=torch.zeros(5, dtype=F64), std=0.3, seed=4)
    Q, shift = _rotation(5, 5), torch.randn(5, generator=g, dtype=F64) * 3
    before = db_tsw(X, Y, trees=(theta, roots), delta=delta)
    after = db_tsw(X @ Q.T + shift, Y @ Q.T + shift, trees=(theta @ Q.T, roots @ Q.T + shift),
                   delta=delta)
    assert float(after) == pytest.approx(float(before), abs=1e-10)


def test_default_roots_follow_the_data_under_one_seed():
    g = torch.Generator().manual_seed(3)
    X = torch.randn(50, 3, generator=g, dtype=F64)
    Y = torch.randn(60, 3, generator=g, dtype=F64) * 0.5
    shift = torch.tensor([10.0, -4.0, 7.0], dtype=F64)
    assert float(db_tsw(X + shift, Y + shift, seed=11)) == pytest.approx(
        float(db_tsw(X, Y, seed=11)), abs=1e-10)


def test_identical_clouds_have_zero_distance_and_it_is_symmetric():
    g = torch.Generator().manual_seed(4)
    X = torch.randn(30, 3, generator=g, dtype=F64)
    Y = torch.randn(20, 3, generator=g, dtype=F64)
    assert float(db_tsw(X, X, seed=0)) == pytest.approx(0.0, abs=1e-12)
    assert float(db_tsw(X, Y, seed=0)) == pytest.approx(float(db_tsw(Y, X, seed=0)), rel=1e-12)


def test_in_one_dimension_it_is_the_exact_w1():
    # in 1-D every line is the data line: Db-TSW (p=1) is the exact W1
    g = torch.Generator().manual_seed(5)
    X = torch.randn(40, 1, generator=g, dtype=F64)
    Y = torch.randn(30, 1, generator=g, dtype=F64) + 0.7
    w1 = ot.emd2([], [], ot.dist(X.numpy(), Y.numpy(), metric="euclidean"))
    assert float(db_tsw(X, Y, n_lines=1, n_trees=3, seed=0)) == pytest.approx(w1, rel=1e-10)


def test_gradcheck_in_float64():
    g = torch.Generator().manual_seed(6)
    X = torch.randn(6, 3, generator=g, dtype=F64, requires_grad=True)
    Y = torch.randn(5, 3, generator=g, dtype=F64, requires_grad=True)
    la = torch.randn(6, generator=g, dtype=F64, requires_grad=True)
    lb = torch.randn(5, generator=g, dtype=F64, requires_grad=True)
    trees = sample_trees(3, 4, 3, mean=torch.zeros(3, dtype=F64), std=0.3, seed=0)
    for p in (1, 2):
        assert torch.autograd.gradcheck(
            lambda X, Y, la, lb, p=p: db_tsw(X, Y, la.softmax(0), lb.softmax(0), trees=trees,
                                             delta=3.0, p=p),
            (X, Y, la, lb))


def test_batched_equals_a_loop_over_pairs():
    g = torch.Generator().manual_seed(7)
    Xs = torch.randn(3, 20, 4, generator=g, dtype=F64)
    Xt = torch.randn(3, 15, 4, generator=g, dtype=F64) + 1
    a = torch.rand(3, 20, generator=g, dtype=F64)
    a = a / a.sum(-1, keepdim=True)
    trees = sample_trees(10, 4, 4, mean=torch.zeros(4, dtype=F64), seed=1)
    batched = db_tsw(Xs, Xt, a, trees=trees)
    loop = torch.stack([db_tsw(Xs[i], Xt[i], a[i], trees=trees) for i in range(3)])
    torch.testing.assert_close(batched, loop, rtol=1e-12, atol=1e-14)
    # default roots: one draw of directions and root noise, each root at its pair's mean
    gen = torch.Generator().manual_seed(9)
    batched = db_tsw(Xs, Xt, seed=9)
    theta, roots = sample_trees(250, 4, 4, mean=torch.zeros(3, 4, dtype=F64), seed=gen)
    means = (Xs.mean(1) + Xt.mean(1)) / 2
    loop = torch.stack([db_tsw(Xs[i], Xt[i], trees=(theta, roots[i] + means[i]))
                        for i in range(3)])
    torch.testing.assert_close(batched, loop, rtol=1e-10, atol=1e-12)
    # one tree draw per pair
    th, ro = sample_trees(30, 4, 4, mean=torch.zeros(4, dtype=F64), seed=2)
    th, ro = th.view(3, 10, 4, 4), ro.view(3, 10, 4)
    loop = torch.stack([db_tsw(Xs[i], Xt[i], trees=(th[i], ro[i])) for i in range(3)])
    torch.testing.assert_close(db_tsw(Xs, Xt, trees=(th, ro)), loop, rtol=1e-12, atol=1e-14)


def test_seeded_draws_repeat_and_generators_advance():
    X, Y = torch.randn(30, 3), torch.randn(20, 3)
    assert float(db_tsw(X, Y, seed=3)) == float(db_tsw(X, Y, seed=3))
    assert float(db_tsw(X, Y, seed=3)) != float(db_tsw(X, Y, seed=4))
    g = torch.Generator().manual_seed(3)
    assert float(db_tsw(X, Y, seed=g)) == float(db_tsw(X, Y, seed=3))
    assert float(db_tsw(X, Y, seed=g)) != float(db_tsw(X, Y, seed=3))


def test_numpy_float64_input_and_dtype_follow_the_input():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(20, 3)), rng.normal(size=(10, 3))
    X0 = X.copy()
    d = db_tsw(X, Y, seed=0)
    assert type(d) is float  # NumPy in, float out (computed in float64)
    assert d == float(db_tsw(torch.from_numpy(X), torch.from_numpy(Y), seed=0))
    np.testing.assert_array_equal(X, X0)
    assert db_tsw(torch.randn(5, 2), torch.randn(4, 2), seed=0).dtype == torch.float32


def test_inputs_are_not_modified():
    X, Y = torch.randn(20, 3), torch.randn(10, 3)
    a = torch.full((20,), 0.05)
    X0, Y0, a0 = X.clone(), Y.clone(), a.clone()
    db_tsw(X, Y, a, seed=0).item()
    assert torch.equal(X, X0) and torch.equal(Y, Y0) and torch.equal(a, a0)


def test_gradient_reaches_weights_and_points():
    X = torch.randn(20, 3, requires_grad=True)
    a = torch.full((20,), 0.05, requires_grad=True)
    db_tsw(X, torch.randn(10, 3) + 2, a, seed=0).backward()
    assert X.grad.abs().sum() > 0 and a.grad.abs().sum() > 0


def test_orthogonal_directions_are_orthonormal_and_roots_follow_mean():
    theta, roots = sample_trees(7, 3, 5, mean=torch.ones(5, dtype=F64), std=0.0,
                                directions="orthogonal", seed=0)
    gram = theta @ theta.transpose(-1, -2)
    torch.testing.assert_close(gram, torch.eye(3, dtype=F64).expand(7, 3, 3))
    torch.testing.assert_close(roots, torch.ones(7, 5, dtype=F64))
    theta, _ = sample_trees(7, 6, 5, mean=0.0, seed=0)
    torch.testing.assert_close(theta.norm(dim=-1), torch.ones(7, 6))
    X, Y = torch.randn(20, 5), torch.randn(20, 5) + 1
    assert float(db_tsw(X, Y, directions="orthogonal", seed=0)) > 0


def test_loss_module_draws_fresh_repeatable_trees():
    X, Y = torch.randn(30, 3), torch.randn(20, 3) + 1
    loss = DbTSWLoss(n_trees=20, seed=5)
    first, second = float(loss(X, Y)), float(loss(X, Y))
    assert first != second
    gen = torch.Generator().manual_seed(5)
    assert first == float(db_tsw(X, Y, n_trees=20, seed=gen))
    assert second == float(db_tsw(X, Y, n_trees=20, seed=gen))
    again = DbTSWLoss(n_trees=20, seed=5)
    assert float(again(X, Y)) == first
    assert "n_trees=20" in repr(loss)


def test_runs_on_device(device):
    X = torch.randn(50, 3, device=device)
    Y = torch.randn(40, 3, device=device)
    d = db_tsw(X, Y, seed=0)
    assert d.device == X.device and d.item() > 0
