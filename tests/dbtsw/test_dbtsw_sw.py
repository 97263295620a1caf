"""The flows' SW loss: POT's ``ot.wasserstein_1d`` bit for bit, faster sort and all."""

import pytest
import torch

from iclr25.dbtsw.claim import _argsort0, _wasserstein_1d

ot = pytest.importorskip("ot")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n, m, ties", [(100, 100, False), (100, 100, True), (37, 15, False),
                                        (15, 37, True)])
def test_wasserstein_1d_equals_pot_in_value_and_gradient(n, m, ties, dtype):
    g = torch.Generator().manual_seed(n + 7 * m + ties)
    if ties:  # every column holds ties, and -0.0 beside 0.0: torch's own order must be kept
        u = torch.randint(-3, 4, (n, 300), generator=g).to(dtype)
        v = torch.randint(-3, 4, (m, 300), generator=g).to(dtype)
        u[u == 0] = -0.0
    else:
        u = torch.randn(n, 300, generator=g, dtype=dtype)
        v = torch.randn(m, 300, generator=g, dtype=dtype)
    w = torch.randn(300, generator=g, dtype=dtype)
    u1, v1 = u.clone().requires_grad_(), v.clone().requires_grad_()
    u2, v2 = u.clone().requires_grad_(), v.clone().requires_grad_()
    ref = ot.wasserstein_1d(u1, v1, p=1)
    (ref * w).sum().backward()
    got = _wasserstein_1d(u2, v2)
    (got * w).sum().backward()
    assert torch.equal(got, ref)
    assert torch.equal(u2.grad, u1.grad) and torch.equal(v2.grad, v1.grad)
    assert torch.equal(_argsort0(u), torch.sort(u, dim=0).indices)
