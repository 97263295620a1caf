"""Matérn against mweiherer/matern-surface-reconstruction's ``MaternKernel`` (fixture ``matern``,
see MANIFEST.toml): Gram matrices, and the kernel ridge fit's predictions in float64 and in
our single-precision evaluation."""

import numpy as np
import pytest
import torch

from iclr25.matern import KernelSurface, matern_kernel


@pytest.mark.parametrize("tag,nu", [("05", 0.5), ("15", 1.5), ("25", 2.5), ("inf", "inf")])
def test_gram(golden, tag, nu):
    g = golden("matern")
    K = matern_kernel(torch.tensor(g["X"]), torch.tensor(g["Y"]), nu=nu, length_scale=0.5)
    np.testing.assert_allclose(K.numpy(), g[f"gram_{tag}"], rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("tag,nu,h", [("05", 0.5, 1.0), ("15", 1.5, 0.5)])
def test_fitted_field(golden, tag, nu, h):
    g = golden("matern")
    s = KernelSurface(nu=nu, length_scale=h, reg=1e-7, offset=0.005)
    s.fit(torch.tensor(g["points"]), torch.tensor(g["normals"]))
    Q = torch.tensor(g["queries"])
    ref = g[f"f_{tag}"]
    f = s.decision_function(Q).numpy()
    # both are float64 Cholesky solves of K + 1e-7 I (condition ~1e8): they differ in the
    # solve's rounding, ~1e-7 of the field's range; the occupancies are identical
    np.testing.assert_allclose(f, ref, rtol=0, atol=1e-6 * np.abs(ref).max())
    np.testing.assert_array_equal(f < 0, ref < 0)
    # float32 kernel evaluation: within its documented bound of the official float64 field
    f1 = s.decision_function(Q, precision="single").numpy()
    np.testing.assert_allclose(f1, ref, rtol=0, atol=s.single_error_bound(Q))
