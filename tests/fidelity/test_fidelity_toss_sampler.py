"""ToSS's testbed against vita-epfl/TIC-TAC's multivariate sampler (fixture ``toss_sampler``,
see MANIFEST.toml): the same E[y|x] and Σ(x) from the official draws of the parameters."""

import numpy as np
import torch

from iclr25.toss.testbed import _conditional


def test_conditional_moments(golden):
    g = golden("toss_sampler")
    t = {k: torch.tensor(v) for k, v in g.items() if k != "_source"}
    mean, cov = _conditional(t["x"], t["mean"], t["sigma_corr"], t["z_sigma"])
    np.testing.assert_allclose(mean.numpy(), g["y_mean"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cov.numpy(), g["q_covariance"], rtol=1e-12, atol=1e-12)


def test_inputs_fill_our_box(golden):
    # make_heteroscedastic's copula puts x in [μ_x − √(12 q)/2, μ_x + √(12 q)/2]
    g = golden("toss_sampler")
    q = g["x"].shape[1]
    half = np.sqrt(12 * q) / 2
    assert (np.abs(g["x"] - g["mean"][q:]) <= half).all()
