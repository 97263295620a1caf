"""Known answers, invariances and error paths of infonce, clip_loss, CoMMLoss, masks."""

import math

import numpy as np
import pytest
import torch

from iclr25.comm import (
    ClipLoss,
    CoMMLoss,
    InfoNCELoss,
    clip_loss,
    comm_loss,
    infonce,
    modality_masks,
)


def _rand(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _numpy_ntxent(a, b, tau):
    """SimCLR NT-Xent written out anchor by anchor."""
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    z = np.concatenate([a, b])
    n = len(a)
    total = 0.0
    for i in range(2 * n):
        j = (i + n) % (2 * n)
        sims = np.array([z[i] @ z[k] / tau for k in range(2 * n) if k != i])
        pos = z[i] @ z[j] / tau
        total += -(pos - np.log(np.exp(sims).sum()))
    return total / (2 * n)


def _numpy_clip(a, b, tau):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    L = a @ b.T / tau
    ce = lambda M: np.mean(-np.diag(M) + np.log(np.exp(M).sum(1)))  # noqa: E731
    return (ce(L) + ce(L.T)) / 2


def test_infonce_matches_hand_written_numpy():
    a, b = _rand(7, 5, seed=1, dtype=torch.float64), _rand(7, 5, seed=2, dtype=torch.float64)
    for tau in (0.1, 0.5, 2.0):
        ref = _numpy_ntxent(a.numpy(), b.numpy(), tau)
        assert math.isclose(float(infonce(a, b, tau)), ref, rel_tol=1e-10)


def test_infonce_docstring_value():
    z = torch.eye(4)
    assert math.isclose(float(infonce(z, z, 1.0)), math.log((math.e + 6) / math.e), rel_tol=1e-6)


def test_infonce_matches_pytorch_metric_learning():
    pml = pytest.importorskip("pytorch_metric_learning.losses")
    a, b = _rand(16, 8, seed=3, dtype=torch.float64), _rand(16, 8, seed=4, dtype=torch.float64)
    labels = torch.arange(16).repeat(2)
    ref = pml.NTXentLoss(temperature=0.1)(torch.cat([a, b]), labels)
    assert torch.allclose(infonce(a, b, 0.1), ref, atol=1e-10)


def test_clip_loss_matches_numpy():
    a, b = _rand(6, 4, seed=5, dtype=torch.float64), _rand(6, 4, seed=6, dtype=torch.float64)
    assert math.isclose(float(clip_loss(a, b, 0.3)), _numpy_clip(a.numpy(), b.numpy(), 0.3),
                        rel_tol=1e-10)
    assert torch.equal(ClipLoss(0.3)(a, b), clip_loss(a, b, 0.3))


def test_infonce_symmetric_and_invariant_to_scale_and_rotation():
    a, b = _rand(10, 6, seed=7, dtype=torch.float64), _rand(10, 6, seed=8, dtype=torch.float64)
    ref = infonce(a, b)
    assert torch.allclose(infonce(b, a), ref, atol=1e-12)
    scale = torch.rand(10, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert torch.allclose(infonce(a * (scale + 0.1), b * 3.0), ref, atol=1e-12)
    Q, _ = torch.linalg.qr(_rand(6, 6, seed=9, dtype=torch.float64))
    assert torch.allclose(infonce(a @ Q, b @ Q), ref, atol=1e-12)
    assert torch.allclose(InfoNCELoss()(a, b), ref)


def test_infonce_positive_pairs_lower_the_loss():
    a = _rand(32, 8, seed=10)
    assert float(infonce(a, a + 0.01 * _rand(32, 8, seed=11))) < float(infonce(a, _rand(32, 8)))


def test_modality_masks():
    assert modality_masks(2).tolist() == [[True, False], [False, True], [True, True]]
    m3 = modality_masks(3)
    assert m3.dtype == torch.bool and m3.shape == (4, 3)
    assert m3[:3].equal(torch.eye(3, dtype=torch.bool)) and bool(m3[3].all())
    with pytest.raises(ValueError, match="n must"):
        modality_masks(0)


def test_comm_loss_is_the_mean_of_its_three_terms():
    z1 = [_rand(12, 4, seed=s, dtype=torch.float64) for s in range(3)]
    z2 = [_rand(12, 4, seed=s + 10, dtype=torch.float64) for s in range(3)]
    terms = [(infonce(z1[i], z2[2]) + infonce(z2[i], z1[2])) / 2 for i in range(3)]
    loss = CoMMLoss(0.1)
    value = loss(z1, z2)
    assert torch.allclose(value, torch.stack(terms).mean(), atol=1e-12)
    assert torch.allclose(loss.terms, torch.stack(terms), atol=1e-12)
    assert torch.allclose(comm_loss(z1, z2), value)
    w = comm_loss(z1, z2, weights=[0.0, 0.0, 2.0])  # SimCLR on the fused embedding only
    assert torch.allclose(w, infonce(z1[2], z2[2]), atol=1e-12)


def test_gradcheck():
    a = _rand(5, 3, seed=1, dtype=torch.float64).requires_grad_()
    b = _rand(5, 3, seed=2, dtype=torch.float64).requires_grad_()
    c = _rand(5, 3, seed=3, dtype=torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y: infonce(x, y, 0.5), (a, b))
    assert torch.autograd.gradcheck(lambda x, y: clip_loss(x, y, 0.5), (a, b))
    assert torch.autograd.gradcheck(lambda x, y, z: comm_loss([x, y, z], [y, z, x], 0.5),
                                    (a, b, c))


def test_inputs_not_modified_and_numpy_float64_accepted():
    a = np.random.default_rng(0).normal(size=(6, 3))
    b = a + 0.1
    a0, b0 = a.copy(), b.copy()
    out = infonce(a, b)
    assert out.dtype == torch.float64 and np.array_equal(a, a0) and np.array_equal(b, b0)


@pytest.mark.parametrize("fn", [infonce, clip_loss])
def test_pair_errors(fn):
    with pytest.raises(ValueError, match="same shape"):
        fn(torch.randn(4, 3), torch.randn(5, 3))
    with pytest.raises(ValueError, match="at least 2 rows"):
        fn(torch.randn(1, 3), torch.randn(1, 3))
    bad = torch.randn(4, 3)
    bad[1, 1] = float("nan")
    with pytest.raises(ValueError, match="z1 contains"):
        fn(bad, torch.randn(4, 3))
    inf = torch.randn(4, 3)
    inf[0, 0] = float("inf")
    with pytest.raises(ValueError, match="z2 contains"):
        fn(torch.randn(4, 3), inf)
    with pytest.raises(ValueError, match="temperature"):
        fn(torch.randn(4, 3), torch.randn(4, 3), 0.0)
    with pytest.raises(TypeError, match="z1 must be a floating"):
        fn(torch.ones(4, 3, dtype=torch.long), torch.randn(4, 3))


def test_comm_loss_errors():
    z = [torch.randn(4, 3) for _ in range(3)]
    with pytest.raises(ValueError, match="temperature"):
        CoMMLoss(-1.0)
    with pytest.raises(ValueError, match="weights must have one entry"):
        CoMMLoss(weights=[1.0, 1.0])(z, z)
    with pytest.raises(ValueError, match="weights must have one entry"):
        comm_loss(z, z, weights=[1.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="weights must be >= 0"):
        CoMMLoss(weights=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="same number of embeddings"):
        comm_loss(z, z[:2])
    with pytest.raises(ValueError, match="n \\+ 1 >= 3"):
        comm_loss(z[:2], z[:2])
    with pytest.raises(ValueError, match="batch size"):
        comm_loss([z[0], z[1], torch.randn(5, 3)], [z[0], z[1], torch.randn(5, 3)])
    with pytest.raises(TypeError, match="z1 must be a list"):
        comm_loss(torch.randn(3, 4, 3), z)
    with pytest.raises(ValueError, match="z2\\[1\\] contains"):
        comm_loss(z, [z[0], torch.full((4, 3), float("nan")), z[2]])
