"""Known answers of the self-organizing step: MI = sklearn on the same bins, Laplacian =
scipy's, planted blocks recovered, labels equivariant to column permutation, determinism."""

import numpy as np
import scipy.sparse.csgraph
import torch
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score, mutual_info_score

from iclr25.urlost import (
    SelfOrganizingClusters,
    density_adjusted_laplacian,
    dependence,
    equal_width_bins,
    group_tokens,
    groups_from_labels,
    knn_affinity,
    spectral_clusters,
)


def planted(n=400, blocks=4, size=8, noise=0.6, seed=0):
    """Columns in ``blocks`` groups sharing a latent factor each."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, blocks, generator=g)
    X = z.repeat_interleave(size, 1) + noise * torch.randn(n, blocks * size, generator=g)
    return X, torch.arange(blocks).repeat_interleave(size)


def test_corr_matches_numpy():
    X, _ = planted()
    S = dependence(X.double())
    np.testing.assert_allclose(S.numpy(), np.abs(np.corrcoef(X.double().numpy().T)),
                               atol=1e-10)


def _official_mi(x, y, bins):
    """The official calc_MI rule: np.histogram2d counts, then sklearn's MI."""
    return mutual_info_score(None, None, contingency=np.histogram2d(x, y, bins)[0])


def test_mi_matches_histogram2d_brute_force():
    X, _ = planted(n=300, blocks=2, size=3)
    X = X.double()
    M = dependence(X, "mi", bins=6, block=4)
    Xn = X.numpy()
    ref = np.array([[_official_mi(Xn[:, i], Xn[:, j], 6) for j in range(6)]
                    for i in range(6)])
    np.testing.assert_allclose(M.numpy(), ref, atol=1e-10)
    assert M[0, 1] > 3 * M[0, 4]  # same block depends more


def _mi_all_onehots(X, bins):
    """The former dependence("mi"): every column's one-hot at once, one product per row block."""
    codes = equal_width_bins(X, bins)
    n, d = codes.shape
    flat = torch.zeros(n, d, bins).scatter_(2, codes[:, :, None], 1.0).reshape(n, d * bins)
    joint = (flat.T @ flat).double().reshape(d, bins, d, bins) / n
    pm = flat.sum(0).double().reshape(d, bins) / n
    logm = torch.where(pm > 0, pm.log(), torch.zeros_like(pm))
    logj = torch.where(joint > 0, joint.log(), torch.zeros_like(joint))
    cross = (joint.sum(3) * logm[:, :, None]).sum(1) + (joint.sum(1) * logm[None]).sum(2)
    return ((joint * logj).sum((1, 3)) - cross).clamp_(min=0.0)


def test_mi_tiles_equal_all_one_hots_at_once():
    g = torch.Generator().manual_seed(4)
    X = torch.randn(80, 1030, generator=g, dtype=torch.float64)   # > 1024: two code blocks
    X[:, 1029] = X[:, 3] + 0.1 * X[:, 1029]
    want = _mi_all_onehots(X, 5)
    for block in (1030, 300, 7):
        got = dependence(X, "mi", bins=5, block=block)
        torch.testing.assert_close(got, got.T, rtol=0, atol=0)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-14)
    assert got[3, 1029] > 5 * got[3, 1028]


def test_mi_of_a_96_percent_zero_column():
    # a pixel that is 96% zeros: quantile bins put it in one bin (MI 0 with everything)
    g = torch.Generator().manual_seed(0)
    n = 1000
    z = torch.rand(n, generator=g)
    on = torch.rand(n, generator=g) < 0.04
    sparse = torch.where(on, z, torch.zeros(n)).double()
    neighbour = (sparse + 0.05 * torch.rand(n, generator=g)).double()
    X = torch.stack([sparse, neighbour, torch.rand(n, generator=g).double()], 1)
    assert float((X[:, 0] == 0).double().mean()) > 0.95
    M = dependence(X, "mi", bins=16)
    Xn = X.numpy()
    ref = np.array([[_official_mi(Xn[:, i], Xn[:, j], 16) for j in range(3)]
                    for i in range(3)])
    np.testing.assert_allclose(M.numpy(), ref, atol=1e-12)
    assert M[0, 1] > 0.1 and M[0, 1] > 2 * M[0, 2]  # beyond the plug-in bias


def test_equal_width_bins_follow_histogram_edges():
    X = torch.tensor([[0.0, 1.0], [0.0, 2.0], [0.0, 3.0], [1.0, 4.0]] * 5, dtype=torch.float64)
    codes = equal_width_bins(X, 4)
    for j in range(2):
        edges = np.histogram_bin_edges(X[:, j].numpy(), 4)
        ref = np.clip(np.searchsorted(edges, X[:, j].numpy(), side="right") - 1, 0, 3)
        assert codes[:, j].tolist() == ref.tolist()
    assert codes[:, 0].tolist() == [0, 0, 0, 3] * 5  # the max lands in the last bin


def test_mi_graph_on_raw_digit_pixels_has_no_isolated_node():
    from sklearn.datasets import load_digits

    X = load_digits().data
    X = X[:, X.std(0) > 0]  # 61 pixels, some 99.9% zeros
    soc = SelfOrganizingClusters(8, n_neighbors=5, dependence="mi").fit(X)
    assert int((soc.affinity_.sum(1) > 0).sum()) == X.shape[1]
    assert soc.n_clusters_ >= 2


def test_integer_counts_are_cast():
    X = torch.randint(0, 9, (50, 4))
    assert dependence(X).dtype == torch.float32


def test_knn_affinity_is_sparse_symmetric_zero_diagonal():
    S = torch.rand(20, 20, generator=torch.Generator().manual_seed(0))
    W = knn_affinity(S, 3)
    assert torch.equal(W, W.T)
    assert torch.all(W.diagonal() == 0)
    assert int((W > 0).sum(1).min()) >= 3 and int((W > 0).sum()) <= 2 * 3 * 20
    sym = (S + S.T) / 2
    i = 5
    nb = torch.topk(sym[i].masked_fill(torch.arange(20) == i, -1), 3).indices
    assert torch.allclose(W[i, nb], sym[i, nb])


def test_laplacian_matches_scipy_normalised():
    X, _ = planted()
    W = knn_affinity(dependence(X.double()), 5)
    L = density_adjusted_laplacian(W)
    ref = scipy.sparse.csgraph.laplacian(W.numpy(), normed=True)
    np.testing.assert_allclose(L.numpy(), ref, atol=1e-12)


def test_laplacian_density_formula():
    W = torch.tensor([[0, 1.0, 2.0], [1.0, 0, 0.5], [2.0, 0.5, 0]], dtype=torch.float64)
    q = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64)
    deg = W.sum(1)
    M = torch.diag((q * deg ** 0.5) ** -0.5)
    ref = M @ (torch.diag(deg) - W) @ M
    assert torch.allclose(density_adjusted_laplacian(W, q, 0.5), ref)


def test_planted_blocks_recovered():
    X, truth = planted()
    W = knn_affinity(dependence(X), 5)
    lab = spectral_clusters(W, 4)
    assert adjusted_rand_score(truth, lab) == 1.0
    assert lab.dtype == torch.int64


def test_labels_equivariant_to_column_permutation():
    X, _ = planted(blocks=6, size=7, noise=1.0)
    perm = torch.randperm(X.shape[1], generator=torch.Generator().manual_seed(3))
    a = SelfOrganizingClusters(6, n_neighbors=5).fit(X).labels_
    b = SelfOrganizingClusters(6, n_neighbors=5).fit(X[:, perm]).labels_
    assert adjusted_rand_score(a[perm], b) == 1.0


def test_determinism_and_clone():
    X, _ = planted()
    soc = SelfOrganizingClusters(4, n_neighbors=5, seed=1)
    a = soc.fit(X).labels_.copy()
    b = clone(soc).fit(X).labels_
    assert np.array_equal(a, b)
    assert clone(soc).get_params() == soc.get_params()


def test_mi_dependence_option_and_numpy_input():
    X, truth = planted()
    soc = SelfOrganizingClusters(4, n_neighbors=5, dependence="mi", bins=8).fit(X.numpy())
    assert adjusted_rand_score(truth, soc.labels_) == 1.0


def test_transform_tokens_and_padding():
    X, _ = planted(blocks=3, size=5)
    X = torch.cat([X, X[:, :2] + 0.1 * torch.randn(len(X), 2)], 1)  # unequal cluster sizes
    X0 = X.clone()
    soc = SelfOrganizingClusters(3, n_neighbors=4).fit(X)
    tok = soc.transform(X)
    G, m = soc.groups_.shape
    assert tok.shape == (len(X), G, m)
    assert torch.all(tok[:, soc.pad_mask_] == 0)
    g, c = torch.nonzero(~soc.pad_mask_)[0]
    assert torch.equal(tok[:, g, c], X[:, soc.groups_[g, c]])
    assert torch.equal(X, X0)
    flat = SelfOrganizingClusters(3, n_neighbors=4, flat=True).fit(X).transform(X)
    assert flat.shape == (len(X), G * m)


def test_groups_from_labels():
    groups, pad = groups_from_labels(torch.tensor([1, 0, 1, 2, 1]))
    assert groups.tolist() == [[1, -1, -1], [0, 2, 4], [3, -1, -1]]
    assert pad.tolist() == [[False, True, True], [False] * 3, [False, True, True]]
    tok = group_tokens(torch.arange(5.0)[None], groups)
    assert tok.tolist() == [[[1, 0, 0], [0, 2, 4], [3, 0, 0]]]


def test_drop_first_recipe_mis_splits_planted_blocks():
    # the official recipe drops the constant-like first vector and with it one block's
    # indicator: the finding (ARI < 1 where the default gets 1)
    X, truth = planted()
    W = knn_affinity(dependence(X), 5)
    assert adjusted_rand_score(truth, spectral_clusters(W, 4, drop_first=True)) < 0.95


def test_large_graph_uses_eigsh_and_matches_dense():
    X, truth = planted(n=300, blocks=5, size=16)
    W = knn_affinity(dependence(X), 6)
    assert W.shape[0] > 64
    assert adjusted_rand_score(truth, spectral_clusters(W, 5)) == 1.0
