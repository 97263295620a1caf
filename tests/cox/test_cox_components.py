"""COX components: VIB loss, entropy discrepancy, agreement selection, prior KL, matching."""


import numpy as np
import pytest
import scipy.stats
import torch
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence

from iclr25.cox import (
    VIB,
    VIBLoss,
    emergent_correspondences,
    entropy_discrepancy,
    match_purity,
    prior_kl,
    select_agreement,
    vib_loss,
)


def _g(seed=0):
    return torch.Generator().manual_seed(seed)


def test_vib_loss_matches_torch_kl():
    g = _g()
    pred, target = torch.randn(5, 4, generator=g), torch.randn(5, 4, generator=g)
    mu, logvar = torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)
    kl = kl_divergence(Normal(mu, (0.5 * logvar).exp()), Normal(0.0, 1.0)).sum(1).mean()
    want = ((pred - target) ** 2).mean() + 0.7 * kl
    assert torch.allclose(vib_loss(pred, target, mu, logvar, beta=0.7), want, atol=1e-5)
    assert torch.allclose(vib_loss(pred, target, mu, logvar), ((pred - target) ** 2).mean())
    assert torch.allclose(VIBLoss(0.7)(pred, target, mu, logvar), want, atol=1e-5)


def test_vib_loss_errors():
    z = torch.zeros(3, 2)
    with pytest.raises(ValueError, match="beta"):
        vib_loss(z, z, z, z, beta=-1.0)
    with pytest.raises(ValueError, match="pred"):
        vib_loss(z, torch.zeros(3, 4), z, z)
    with pytest.raises(ValueError, match="mu"):
        vib_loss(z, z, torch.zeros(2, 2), torch.zeros(2, 2))
    with pytest.raises(ValueError, match="target"):
        vib_loss(z, torch.full((3, 2), float("nan")), z, z)


def test_vib_is_not_residual_by_default_and_its_gradient_reaches_the_encoder():
    v = VIB(6, bottleneck=3, hidden=8, seed=1)
    h = torch.randn(4, 6, generator=_g())
    target = torch.randn(4, 6, generator=_g(5))
    pred, mu, logvar = v(h, generator=_g(2))
    vib_loss(pred, target, mu, logvar, beta=0.0).backward()
    assert all(p.grad is not None and float(p.grad.abs().sum()) > 0
               for p in v.encoder.parameters())
    v.eval()
    # the official model outputs g(z): with a zero decoder the prediction carries nothing
    for p in v.decoder.parameters():
        torch.nn.init.zeros_(p)
    assert torch.equal(v(h)[0], torch.zeros(4, 6))
    r = VIB(6, bottleneck=3, hidden=8, residual=True, seed=1).eval()
    for p in r.decoder.parameters():
        torch.nn.init.zeros_(p)
    assert torch.equal(r(h)[0], h)  # the residual option can bypass the bottleneck
    with pytest.raises(TypeError, match="residual"):
        VIB(6, residual=1)


def test_vib_forward_shapes_residual_and_eval_determinism():
    v = VIB(6, bottleneck=3, hidden=8, residual=True, seed=1)
    h = torch.randn(4, 6, generator=_g())
    v.eval()
    pred, mu, logvar = v(h)
    assert pred.shape == (4, 6) and mu.shape == logvar.shape == (4, 3)
    assert torch.allclose(pred - h, v.decoder(mu), atol=1e-6)
    assert torch.equal(VIB(6, bottleneck=3, hidden=8, seed=1).eval()(h)[0], v.decoder(mu))
    assert torch.equal(v(h)[0], pred)
    v2 = VIB(6, bottleneck=3, hidden=8, residual=True, seed=1)
    assert all(torch.equal(a, b) for a, b in zip(v.parameters(), v2.parameters(), strict=True))
    with pytest.raises(ValueError, match="h must"):
        v(torch.zeros(4, 5))


def test_entropy_discrepancy_matches_scipy():
    g = _g(2)
    a, b = torch.randn(7, 5, generator=g, dtype=torch.float64), torch.randn(7, 5, generator=g,
                                                                            dtype=torch.float64)
    want = np.abs(scipy.stats.entropy(a.softmax(1).numpy(), axis=1)
                  - scipy.stats.entropy(b.softmax(1).numpy(), axis=1))
    np.testing.assert_allclose(entropy_discrepancy(a, b).numpy(), want, atol=1e-10)
    with pytest.raises(ValueError, match="logits_a"):
        entropy_discrepancy(a, b[:, :4])


def test_select_agreement_hand_made():
    a = torch.tensor([[5.0, 0, 0], [0, 5.0, 0], [5.0, 0, 0], [0, 0, 9.0], [0, 0, 0.1]])
    b = torch.tensor([[5.0, 0, 0], [5.0, 0, 0], [3.0, 0, 0], [0, 0, 9.0], [0, 0, 0.1]])
    # row 1 disagrees, row 4 is unconfident; rows 0 and 3 have zero discrepancy, row 2 more
    idx, lab = select_agreement([a, b], k=8, min_confidence=0.8)
    assert idx.tolist() == [0, 3, 2] and lab.tolist() == [0, 2, 0]
    idx, lab = select_agreement([a, b], k=1, min_confidence=0.8)
    assert idx.tolist() == [0] and lab.tolist() == [0]
    idx, _ = select_agreement([a, b], k=8, min_confidence=0.95)
    assert idx.tolist() == [0, 3]


def test_select_agreement_errors():
    a = torch.zeros(3, 2)
    with pytest.raises(ValueError, match="k"):
        select_agreement([a, a], k=0)
    with pytest.raises(ValueError, match="min_confidence"):
        select_agreement([a, a], min_confidence=1.0)
    with pytest.raises(ValueError, match="logits_list"):
        select_agreement([a, torch.zeros(3, 3)])
    with pytest.raises(ValueError, match="logits_list"):
        select_agreement([a])


def test_prior_kl_zero_at_prior_and_positive_elsewhere():
    pi = torch.tensor([0.2, 0.3, 0.5])
    assert abs(float(prior_kl(pi.log()[None].repeat(4, 1), pi))) < 1e-6
    x = torch.tensor([[5.0, 0, 0], [0, 5.0, 0]])
    mean = x.softmax(1).mean(0)
    want = float((pi * (pi / mean).log()).sum())
    assert abs(float(prior_kl(x, pi)) - want) < 1e-5
    with pytest.raises(ValueError, match="prior"):
        prior_kl(x, torch.tensor([0.5, 0.6, -0.1]))
    with pytest.raises(ValueError, match="prior"):
        prior_kl(x, torch.tensor([0.2, 0.2, 0.2]))
    with pytest.raises(ValueError, match="prior"):
        prior_kl(x, torch.tensor([0.5, 0.5]))


@pytest.mark.parametrize("method", ["mnn", "hungarian"])
def test_hidden_permutation_recovered(method):
    g = _g(3)
    Z = torch.randn(60, 8, generator=g)
    perm = torch.randperm(60, generator=g)
    P = emergent_correspondences(Z[perm], Z, method, chunk=7)
    assert len(P) == 60
    assert torch.equal(perm[P[:, 0]], P[:, 1])


def test_gw_recovers_rotated_structure_better_than_chance():
    g = _g(4)
    Z = torch.randn(40, 3, generator=g) * torch.tensor([5.0, 2.0, 0.5])
    Q, _ = torch.linalg.qr(torch.randn(3, 3, generator=g))
    perm = torch.randperm(40, generator=g)
    P = emergent_correspondences(Z[perm] @ Q, Z, "gw", epsilon=1e-2)
    y = torch.arange(40) // 10  # four blocks along the main axis: coarse structure
    order = Z[:, 0].argsort()
    yz = torch.empty(40, dtype=torch.long)
    yz[order] = y
    assert match_purity(P, yz[perm], yz) > 0.5


def test_matching_errors_and_no_mutation():
    Z = torch.randn(5, 3, generator=_g())
    before = Z.clone()
    emergent_correspondences(Z, Z)
    assert torch.equal(Z, before)
    with pytest.raises(ValueError, match="method"):
        emergent_correspondences(Z, Z, "nearest")
    with pytest.raises(ValueError, match="Z_oom"):
        emergent_correspondences(Z, torch.zeros(5, 4))
    with pytest.raises(ValueError, match="Z_im"):
        emergent_correspondences(torch.zeros(5), Z)
    with pytest.raises(ValueError, match="pairs"):
        match_purity(torch.zeros(3, 3, dtype=torch.long), torch.zeros(3).long(),
                     torch.zeros(3).long())


def test_numpy_float64_input():
    a = np.random.default_rng(0).normal(size=(4, 3))
    assert entropy_discrepancy(a, a).dtype == torch.float64
    P = emergent_correspondences(a, a)
    assert P.tolist() == [[i, i] for i in range(4)]


def test_mnn_chunked_equals_brute_force():
    g = _g(5)
    A, B = torch.randn(37, 4, generator=g), torch.randn(23, 4, generator=g)
    S = F.normalize(A, dim=1) @ F.normalize(B, dim=1).T
    fwd, bwd = S.argmax(1), S.argmax(0)
    want = [[i, int(fwd[i])] for i in range(37) if int(bwd[fwd[i]]) == i]
    for chunk in (1, 5, 64):
        assert emergent_correspondences(A, B, chunk=chunk).tolist() == want


def test_mnn_tiled_sweep_equals_brute_force_with_ties():
    from iclr25.cox.match import _nn_both
    g = _g(6)
    A, B = torch.randn(41, 5, generator=g), torch.randn(29, 5, generator=g)
    A[[7, 30]] = A[19].clone()          # tied rows: the first index must win, as argmax
    B[[2, 25]] = B[11].clone()
    B[17] = 2 * B[11]                   # same direction, so the same cosine
    An, Bn = F.normalize(A, dim=1), F.normalize(B, dim=1)
    S = An @ Bn.T
    want_f, want_b = S.argmax(1), S.argmax(0)
    for chunk, tile in ((1, 1), (4, 3), (41, 29), (64, 7), (5, 64)):
        fwd, bwd = _nn_both(An, Bn, chunk, tile)
        assert fwd.tolist() == want_f.tolist() and bwd.tolist() == want_b.tolist()
    want = [[i, int(want_f[i])] for i in range(41) if int(want_b[want_f[i]]) == i]
    assert emergent_correspondences(A, B, chunk=3).tolist() == want
