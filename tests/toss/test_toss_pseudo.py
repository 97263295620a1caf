"""Neighbourhood pseudo-labels: a numpy loop as oracle, invariances, error paths."""

import numpy as np
import pytest
import torch

from iclr25.toss import pseudo_covariance


def _data(n=50, d=3, q=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    Y = np.sin(X[:, :q]) + rng.normal(size=(n, q)) * (0.2 + np.abs(X[:, :1]))
    return X, Y


def _loop(X, Y, k, temperature, include_self, jitter, center="mean"):
    """Brute force: full Mahalanobis matrix, argsort, weighted covariance, one point at a time."""
    VI = np.linalg.inv(np.cov(X, rowvar=False, ddof=1))
    n, q = Y.shape
    out = np.zeros((n, q, q))
    for i in range(n):
        diff = X - X[i]
        d2 = np.einsum("nd,de,ne->n", diff, VI, diff)
        order = np.argsort(d2, kind="stable")
        if not include_self:
            order = order[order != i]
        nb = order[:k]
        w = np.exp(-(d2[nb] - d2[nb].min()) / temperature)
        w /= w.sum()
        if center == "mean":
            r = Y[nb] - w @ Y[nb]
        else:
            D = np.hstack([np.ones((k, 1)), X[nb] - X[i]])
            sw = np.sqrt(w)[:, None]
            beta = np.linalg.lstsq(D * sw, Y[nb] * sw, rcond=None)[0]
            r = Y[nb] - D @ beta
        out[i] = (r * w[:, None]).T @ r + jitter * np.eye(q)
    return out


@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("center", ["mean", "local_linear"])
def test_matches_numpy_loop(include_self, center):
    X, Y = _data()
    got = pseudo_covariance(X, Y, n_neighbors=8, temperature=0.7, include_self=include_self,
                            center=center, jitter=1e-3, chunk_size=7)
    ref = _loop(X, Y, 8, 0.7, include_self, 1e-3, center)
    assert got.dtype == torch.float64 and got.shape == (50, 2, 2)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6, atol=1e-9)


def test_weighted_covariance_matches_numpy_cov():
    X, Y = _data(n=40, q=3)
    got = pseudo_covariance(X, Y, n_neighbors=10, jitter=1e-6, temperature=1e6)
    # huge temperature: uniform weights -> plain biased covariance of the 10 neighbours, the
    # point itself the first of them (Algorithm 1's bottom-k over all observations)
    d2 = ((X[:, None] - X[None]) @ np.linalg.inv(np.cov(X.T)) * (X[:, None] - X[None])).sum(-1)
    nb = np.argsort(d2[0])[:10]
    assert nb[0] == 0
    ref = np.cov(Y[nb].T, aweights=np.ones(10), bias=True) + 1e-6 * np.eye(3)
    np.testing.assert_allclose(got[0].numpy(), ref, rtol=1e-5)


def test_spd_and_constant_targets_give_jitter():
    X, Y = _data(n=200)
    C = pseudo_covariance(X, Y, n_neighbors=16)
    assert bool((torch.linalg.eigvalsh(C) > 0).all())
    torch.testing.assert_close(C, C.mT)
    const = pseudo_covariance(X, np.full((200, 2), 3.0), n_neighbors=16, jitter=1e-3)
    torch.testing.assert_close(const, 1e-3 * torch.eye(2, dtype=torch.float64).expand(200, 2, 2))


def test_scales_with_target_and_ignores_affine_maps_of_x():
    X, Y = _data(n=120, d=2)
    j = 1e-4
    base = pseudo_covariance(X, Y, n_neighbors=12, jitter=j) - j * torch.eye(2)
    scaled = pseudo_covariance(X, 3.0 * Y, n_neighbors=12, jitter=j) - j * torch.eye(2)
    torch.testing.assert_close(scaled, 9.0 * base, rtol=1e-9, atol=1e-12)
    A = np.array([[2.0, 0.5], [-1.0, 3.0]])
    moved = pseudo_covariance(X @ A + np.array([5.0, -7.0]), Y, n_neighbors=12, jitter=j)
    torch.testing.assert_close(moved - j * torch.eye(2), base, rtol=1e-7, atol=1e-10)


def test_local_linear_removes_a_linear_mean():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    Y = X @ rng.normal(size=(3, 2)) + 1.0
    ll = pseudo_covariance(X, Y, n_neighbors=20, center="local_linear", jitter=1e-4)
    torch.testing.assert_close(ll, 1e-4 * torch.eye(2, dtype=torch.float64).expand(300, 2, 2),
                               atol=1e-9, rtol=0)
    plain = pseudo_covariance(X, Y, n_neighbors=20, jitter=1e-4)
    assert float(plain.diagonal(dim1=1, dim2=2).mean()) > 1e-2


def test_chunks_dtype_and_input_untouched():
    X, Y = _data(n=90)
    Xt, Yt = torch.tensor(X, dtype=torch.float32), torch.tensor(Y, dtype=torch.float32)
    X0, Y0 = Xt.clone(), Yt.clone()
    a = pseudo_covariance(Xt, Yt, n_neighbors=9, chunk_size=4)
    b = pseudo_covariance(Xt, Yt, n_neighbors=9, chunk_size=4096, algorithm="brute")
    c = pseudo_covariance(Xt, Yt, n_neighbors=9, algorithm="ball_tree")
    assert a.dtype == torch.float32
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(a, c)
    assert torch.equal(Xt, X0) and torch.equal(Yt, Y0)


def test_duplicate_inputs_drop_one_neighbour():
    X, Y = _data(n=30)
    X = np.vstack([X, X[:5]])
    Y = np.vstack([Y, Y[:5] + 1.0])
    C = pseudo_covariance(X, Y, n_neighbors=6)
    assert C.shape == (35, 2, 2) and bool(torch.isfinite(C).all())


@pytest.mark.parametrize("kwargs, match", [
    (dict(X=np.zeros(10), Y=np.zeros((10, 1))), "X"),
    (dict(Y=np.zeros((49, 2))), "same number of rows"),
    (dict(Y=np.full((50, 2), np.nan)), "Y"),
    (dict(n_neighbors=50), "n_neighbors"),
    (dict(n_neighbors=1), "n_neighbors"),
    (dict(temperature=0.0), "temperature"),
    (dict(jitter=-1.0), "jitter"),
    (dict(center="median"), "center"),
    (dict(algorithm="hnsw"), "algorithm"),
    (dict(center="local_linear", n_neighbors=4), "n_neighbors"),
])
def test_errors_name_the_argument(kwargs, match):
    X, Y = _data()
    args = dict(X=X, Y=Y, n_neighbors=8) | kwargs
    with pytest.raises(ValueError, match=match):
        pseudo_covariance(args.pop("X"), args.pop("Y"), **args)


def test_constant_column_and_integer_dtype():
    X, Y = _data()
    X[:, 1] = 2.0
    with pytest.raises(ValueError, match="X column 1 is constant"):
        pseudo_covariance(X, Y, n_neighbors=8)
    with pytest.raises(TypeError, match="Y"):
        pseudo_covariance(_data()[0], np.ones((50, 2), dtype=np.int64), n_neighbors=8)
    with pytest.raises(TypeError, match="include_self"):
        pseudo_covariance(*_data(), n_neighbors=8, include_self=1)


def test_faiss_index_agrees_with_exact_search(one_thread):
    pytest.importorskip("faiss")
    from iclr25.toss import make_heteroscedastic

    d = make_heteroscedastic(4000, 4, seed=0)
    approx = pseudo_covariance(d.X, d.Y, algorithm="faiss")
    exact = pseudo_covariance(d.X, d.Y, algorithm="brute")
    rel = torch.linalg.matrix_norm(approx - exact) / torch.linalg.matrix_norm(exact)
    assert float((rel < 1e-9).double().mean()) > 0.9     # most neighbour sets are exact
    assert float(rel.mean()) < 0.01
    assert bool((torch.linalg.eigvalsh(approx) > 0).all())


def test_auto_switches_to_faiss_above_the_size_threshold(monkeypatch, one_thread):
    pytest.importorskip("faiss")
    import iclr25.toss.pseudo as pseudo

    X, Y = _data(n=400)
    monkeypatch.setattr(pseudo, "FAISS_MIN_N", 100)
    torch.testing.assert_close(pseudo_covariance(X, Y, n_neighbors=8),
                               pseudo_covariance(X, Y, n_neighbors=8, algorithm="faiss"),
                               rtol=0, atol=0)
    monkeypatch.setitem(__import__("sys").modules, "faiss", None)
    with pytest.raises(ImportError, match="knn"):
        pseudo_covariance(X, Y, n_neighbors=8, algorithm="faiss")
    pseudo_covariance(X, Y, n_neighbors=8)   # auto falls back to exact search without faiss
