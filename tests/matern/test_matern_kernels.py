"""Matérn and arc-cosine kernels: sklearn's Matern, the naive arccos formula, PSD."""

import math

import numpy as np
import pytest
import torch
from sklearn.gaussian_process.kernels import Matern

from iclr25.matern import arccos_kernel, matern_kernel

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5, math.inf])
@pytest.mark.parametrize("h", [0.1, 0.5, 2.0])
def test_matern_equals_sklearn(nu, h):
    rng = np.random.default_rng(0)
    X, Y = rng.uniform(-0.5, 0.5, (40, 3)), rng.uniform(-0.5, 0.5, (30, 3))
    ours = matern_kernel(X, Y, nu="inf" if nu == math.inf else nu, length_scale=h)
    assert ours.dtype == torch.float64 and ours.shape == (40, 30)
    np.testing.assert_allclose(ours.numpy(), Matern(length_scale=h, nu=nu)(X, Y), atol=1e-12)


def test_matern_symmetric_default_and_float32():
    X = torch.rand(20, 3)
    K = matern_kernel(X)
    assert K.dtype == torch.float32
    torch.testing.assert_close(K, K.T)
    torch.testing.assert_close(K.diagonal(), torch.ones(20))


def _naive_arccos(X, Y, variance):
    Xh = np.hstack([X, np.ones((len(X), 1))])
    Yh = np.hstack([Y, np.ones((len(Y), 1))])
    nx, ny = np.linalg.norm(Xh, axis=1)[:, None], np.linalg.norm(Yh, axis=1)[None]
    theta = np.arccos(np.clip(Xh @ Yh.T / (nx * ny), -1, 1))
    return nx * ny * (np.sin(theta) + (1 + variance) * (np.pi - theta) * np.cos(theta)) / np.pi


@pytest.mark.parametrize("variance", [1.0, 0.001])
def test_arccos_equals_naive_formula(variance):
    rng = np.random.default_rng(1)
    X, Y = rng.uniform(-0.5, 0.5, (25, 3)), rng.uniform(-0.5, 0.5, (15, 3))
    np.testing.assert_allclose(arccos_kernel(X, Y, variance=variance).numpy(),
                               _naive_arccos(X, Y, variance), rtol=1e-9, atol=1e-12)


def test_arccos_psd_and_stable_on_diagonal():
    X = torch.rand(200, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) - 0.5
    K = arccos_kernel(X)
    torch.testing.assert_close(K, K.T)
    assert float(torch.linalg.eigvalsh(K).min()) > -1e-9 * float(K.diagonal().max())
    # theta = 0 exactly on the diagonal: k(x, x) = (1 + variance) |x~|^2
    xn2 = X.square().sum(1) + 1
    torch.testing.assert_close(K.diagonal(), 2 * xn2)


@pytest.mark.parametrize("kw, arg", [
    (dict(nu=1.0), "nu"), (dict(nu="two"), "nu"), (dict(length_scale=0.0), "length_scale"),
    (dict(length_scale=-1.0), "length_scale"),
])
def test_matern_errors(kw, arg):
    with pytest.raises((ValueError, TypeError), match=arg):
        matern_kernel(torch.rand(3, 3), **kw)


def test_kernel_input_errors():
    with pytest.raises(ValueError, match="variance"):
        arccos_kernel(torch.rand(3, 3), variance=0.0)
    with pytest.raises(TypeError, match="X"):
        matern_kernel(torch.ones(3, 3, dtype=torch.int64))
    with pytest.raises(ValueError, match="X"):
        matern_kernel(torch.tensor([[float("nan"), 0.0, 0.0]]))
    with pytest.raises(ValueError, match="columns"):
        matern_kernel(torch.rand(3, 3), torch.rand(3, 2))


def _trig_arccos(X, Y, variance):
    """The stable half-angle form with torch's cos and sin (the formula before issue 60)."""
    def units(Z):
        Zh = torch.cat([Z, torch.ones_like(Z[:, :1])], 1)
        return Zh / Zh.norm(dim=1, keepdim=True), Zh.norm(dim=1, keepdim=True)
    (ux, nx), (uy, ny) = units(X), units(Y)
    theta = 2 * torch.atan2(torch.cdist(ux, uy), torch.cdist(ux, -uy))
    return (torch.sin(theta) + (1 + variance) * (torch.pi - theta) * torch.cos(theta)) \
        * nx * ny.T / torch.pi


def test_arccos_apply_equals_the_trig_formula_times_alpha():
    from iclr25.matern.kernels import arccos_apply
    g = torch.Generator().manual_seed(3)
    Q = torch.rand(700, 3, dtype=torch.float64, generator=g) - 0.5
    C = torch.rand(90, 3, dtype=torch.float64, generator=g) - 0.5
    Q[:5] = C[:5]                       # queries on centres: theta = 0
    Q[5:10] = C[5:10] + 1e-7            # and next to them
    a = torch.randn(90, dtype=torch.float64, generator=g)
    K = _trig_arccos(Q, C, 1.0)
    torch.testing.assert_close(arccos_kernel(Q, C), K, rtol=1e-13, atol=1e-13)
    # off the centres (on one, cdist's product form leaves ~1e-8 in theta in any block size)
    want = K[10:] @ a
    for rows in (1, 64, 10_000):  # blocks of one row, several, all
        torch.testing.assert_close(arccos_apply(Q[10:], C, a, 1.0, rows), want, rtol=1e-12,
                                   atol=1e-12 * float(want.abs().max()))
