"""mpd and the four V3 hinges: known answers, invariances, finite gradients, error paths."""

import numpy as np
import pytest
import torch
from scipy.spatial.distance import pdist

from iclr25.v3 import TERMS, EMAVectorQuantizer, V3Loss, mpd, v3_loss


def test_mpd_matches_pdist_and_batches():
    x = torch.randn(4, 7, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    want = [pdist(xi.numpy()).mean() for xi in x]
    np.testing.assert_allclose(mpd(x).numpy(), want, rtol=1e-12)
    assert float(mpd(torch.tensor([[0.0, 0.0], [3.0, 4.0]]))) == 5.0


def test_mpd_exact_zero_and_finite_gradient_on_repeated_rows():
    x = torch.ones(5, 3, requires_grad=True)
    out = mpd(x)
    assert float(out.detach()) == 0.0
    out.backward()
    assert torch.isfinite(x.grad).all()
    y = torch.tensor([[1.0, 2.0], [1.0, 2.0], [0.0, 0.0]], requires_grad=True)
    mpd(y).backward()
    assert torch.isfinite(y.grad).all()


def _mpd_direct(x):
    """The former implementation: cdist on differences (exact, finite gradients)."""
    n = x.shape[-2]
    d = torch.cdist(x, x, compute_mode="donot_use_mm_for_euclid_dist")
    return d.sum((-1, -2)) / (n * (n - 1))


def test_mpd_gram_form_equals_pdist_on_duplicates_and_near_duplicates():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 2, 9, 4, generator=g, dtype=torch.float64)
    x[0, 0, 3] = x[0, 0, 5]                       # exact duplicate rows
    x[1, 1, 2] = x[1, 1, 7] + 1e-9                # cancellation: Gram form alone loses this
    x[2, 0] = 0.0                                 # all rows zero
    x[3, 1, :4] = 1e6 * x[3, 1, :1]               # large norms, repeated
    got = mpd(x)
    assert got.shape == (6, 2)
    want = np.array([[pdist(xi.numpy()).mean() for xi in xb] for xb in x])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=0)
    assert float(got[2, 0]) == 0.0
    # float32 and a non-contiguous (expanded) input
    y = torch.randn(3, 1, 5, generator=g).expand(3, 4, 5)
    np.testing.assert_allclose(mpd(y).numpy(), 0.0, atol=0)
    z = torch.randn(8, 10, 16, generator=g)
    np.testing.assert_allclose(mpd(z).numpy(), [pdist(zi.double().numpy()).mean() for zi in z],
                               rtol=1e-5)


def test_mpd_gradient_equals_direct_form_with_duplicates():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(5, 8, 3, generator=g, dtype=torch.float64)
    x[:, 4] = x[:, 1]                             # repeated rows in every sample
    x[0] = x[0, :1]                               # one sample all identical
    a = x.clone().requires_grad_(True)
    b = x.clone().requires_grad_(True)
    w = torch.rand(5, generator=g, dtype=torch.float64)
    (mpd(a) * w).sum().backward()
    (_mpd_direct(b) * w).sum().backward()
    assert torch.isfinite(a.grad).all()
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-12)


def _ideal(b=6, n=5, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    atoms = torch.randn(n, d, generator=g)
    perm = torch.argsort(torch.rand(b, n, generator=g), 1)
    zc = atoms[perm]                                   # each sample shuffles the same atoms
    zs = torch.randn(b, 1, 3, generator=g).expand(b, n, 3)  # one style per sample
    return zc, zs


def test_hinges_zero_on_ideal_and_one_on_constant():
    zc, zs = _ideal()
    t = v3_loss(zc, zc, zs)
    for k in TERMS:
        assert float(getattr(t, k)) == 0.0
    c = torch.ones(4, 5, 3)
    t = v3_loss(c, c, torch.ones(4, 5, 2))
    for k in TERMS:
        assert float(getattr(t, k)) == 1.0
    assert float(t.total) == 4.0
    w = v3_loss(c, c, torch.ones(4, 5, 2), weights={"style": 0.0, "content": 2.0})
    assert float(w.total) == 4.0


def _ratios(zc, zq, zs):
    return torch.stack([v3_loss(zc, zq, zs, eps=0.0).ratios[k] for k in TERMS])


def test_terms_invariant_to_scale_rotation_and_permutations():
    g = torch.Generator().manual_seed(1)
    zc = torch.randn(6, 5, 4, generator=g, dtype=torch.float64)
    zq = torch.randn(6, 5, 4, generator=g, dtype=torch.float64)
    zs = torch.randn(6, 5, 3, generator=g, dtype=torch.float64)
    ref = _ratios(zc, zq, zs)
    torch.testing.assert_close(_ratios(3 * zc, 3 * zq, 3 * zs), ref)
    qc, _ = torch.linalg.qr(torch.randn(4, 4, generator=g, dtype=torch.float64))
    qs, _ = torch.linalg.qr(torch.randn(3, 3, generator=g, dtype=torch.float64))
    torch.testing.assert_close(_ratios(zc @ qc, zq @ qc, zs @ qs), ref)
    pf, ps = torch.randperm(5, generator=g), torch.randperm(6, generator=g)
    torch.testing.assert_close(_ratios(zc[:, pf], zq[:, pf], zs[:, pf]), ref)
    torch.testing.assert_close(_ratios(zc[ps], zq[ps], zs[ps]), ref)


def test_gradient_finite_with_repeated_codes():
    zc = torch.randn(4, 6, 3, generator=torch.Generator().manual_seed(2), requires_grad=True)
    codebook = torch.randn(2, 3, generator=torch.Generator().manual_seed(3))
    zq = zc + (codebook[torch.tensor([0, 1, 0, 1, 0, 0])].expand(4, 6, 3) - zc).detach()
    zs = torch.zeros(4, 6, 2, requires_grad=True)
    v3_loss(zc, zq, zs).total.backward()
    assert torch.isfinite(zc.grad).all() and torch.isfinite(zs.grad).all()


def test_module_twin_and_adapted_variant():
    zc, zs = _ideal(seed=4)
    zs = zs + 0.1 * torch.randn(zs.shape, generator=torch.Generator().manual_seed(5))
    a, b = V3Loss(relativity=5.0)(zc, zc, zs), v3_loss(zc, zc, zs, relativity=5.0)
    assert float(a.total) == float(b.total)
    t = V3Loss(variant="adapted")(zc, zc, zs)
    for k in TERMS:
        assert 0.0 <= float(getattr(t, k)) <= 1.0


def test_inputs_not_modified():
    zc, zs = _ideal()
    zc0, zs0 = zc.clone(), zs.clone()
    v3_loss(zc, zc, zs)
    assert torch.equal(zc, zc0) and torch.equal(zs, zs0)


def test_loss_errors_name_argument():
    z = torch.randn(3, 4, 2)
    with pytest.raises(ValueError, match="z_s"):
        v3_loss(z, z, torch.randn(3, 5, 2))
    with pytest.raises(ValueError, match="z_c_q"):
        v3_loss(z, torch.randn(3, 4, 3), z)
    with pytest.raises(ValueError, match="relativity"):
        v3_loss(z, z, z, relativity=0.0)
    with pytest.raises(ValueError, match="relativity"):
        V3Loss(relativity=-1.0)
    with pytest.raises(ValueError, match="weights"):
        v3_loss(z, z, z, weights={"colour": 1.0})
    with pytest.raises(ValueError, match="variant"):
        v3_loss(z, z, z, variant="mixed")
    with pytest.raises(ValueError, match="z_c"):
        v3_loss(z[:1], z[:1], z[:1])
    with pytest.raises(ValueError, match="z_c"):
        v3_loss(torch.full((3, 4, 2), float("nan")), z, z)
    with pytest.raises(TypeError, match="z_c"):
        v3_loss(torch.ones(3, 4, 2, dtype=torch.int64), z, z)
    with pytest.raises(ValueError, match="x"):
        mpd(torch.ones(1, 3))


def test_one_ema_step_by_hand():
    vq = EMAVectorQuantizer(2, 2, decay=0.5, commitment=1.0, kmeans_init=False,
                            dead_code_threshold=0, seed=0)
    vq.codebook.copy_(torch.tensor([[0.0, 0.0], [10.0, 10.0]]))
    vq.embed_avg.copy_(vq.codebook * vq.cluster_size[:, None])
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [9.0, 9.0]])
    out, codes, commit = vq(x)
    assert codes.tolist() == [0, 0, 1]
    torch.testing.assert_close(out, torch.tensor([[0.0, 0.0], [0.0, 0.0], [10.0, 10.0]]))
    torch.testing.assert_close(commit, torch.tensor((1 + 1 + 2) / 6))
    size = torch.tensor([0.5 * 1 + 0.5 * 2, 0.5 * 1 + 0.5 * 1])       # 1.5, 1.0
    avg = torch.tensor([[0.5, 0.5], [0.5 * 10 + 0.5 * 9] * 2])
    n, eps = size.sum(), 1e-5
    smooth = (size + eps) / (n + 2 * eps) * n
    torch.testing.assert_close(vq.cluster_size, size)
    torch.testing.assert_close(vq.codebook, avg / smooth[:, None])


def test_quantizer_errors_and_straight_through_gradient():
    with pytest.raises(ValueError, match="codebook_size"):
        EMAVectorQuantizer(1, 4)
    with pytest.raises(ValueError, match="decay"):
        EMAVectorQuantizer(4, 4, decay=1.0)
    with pytest.raises(ValueError, match="decay"):
        EMAVectorQuantizer(4, 4, decay=0.0)
    vq = EMAVectorQuantizer(3, 2, seed=1)
    x = torch.randn(10, 2, generator=torch.Generator().manual_seed(0), requires_grad=True)
    out, codes, _ = vq(x)
    out.sum().backward()
    torch.testing.assert_close(x.grad, torch.ones_like(x))
    assert codes.shape == (10,) and bool(vq.initted)
    with pytest.raises(ValueError, match="x"):
        vq(torch.randn(4, 3))
