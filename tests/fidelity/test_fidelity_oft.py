"""OFT against the official ``EOFT/alg.py`` (fixture ``oft``, see MANIFEST.toml)."""

import numpy as np
import pytest
import torch

from iclr25.oft import oft_sinkhorn


def _balance(F, s):
    return np.abs(F.sum(1) - F.sum(0) - s).max()


@pytest.mark.parametrize("tag,r", [("r01", 0.01), ("r002", 0.002)])
def test_oft_sinkhorn_flow(golden, tag, r):
    g = golden("oft")
    # the official reg r is relative to 10 x the largest edge cost (read_netgen's non-edges)
    F = oft_sinkhorn(torch.tensor(g["s"]), torch.tensor(g["C"]), reg=10 * r, stopThr=1e-12,
                     numItermax=50000).numpy()
    # the official iteration stalls at a balance residual of ~1e-8 (its virtual flow d0);
    # ours converges to 1e-12, so they agree to within that residual
    res = float(g[f"balance_{tag}"])
    assert res < 2e-8
    np.testing.assert_allclose(F, g[f"F_{tag}"], rtol=0, atol=2 * res)


def test_small_reg_where_the_official_scalings_overflow(golden):
    """Deliberate deviation: at official r = 2e-4 its scalings overflow (non-finite plan);
    ours absorbs them into the kernel and converges. Pins our flow."""
    g = golden("oft")
    assert not g["overflow_official_finite"]
    F = oft_sinkhorn(torch.tensor(g["s"]), torch.tensor(g["C"]), reg=2e-3, stopThr=1e-12,
                     numItermax=50000).numpy()
    np.testing.assert_allclose(F, g["ours_overflow"], rtol=0, atol=1e-10)
    assert _balance(F, g["s"]) < 1e-9


def test_capacity_clip_not_transposed(golden):
    """Deliberate deviation: the official clip cap_ij / (u_j v_i) is transposed and its flow
    exceeds the caps; ours (cap_ij / (u_i v_j)) respects them. Pins our flow."""
    g = golden("oft")
    cap = g["cap"]
    F = oft_sinkhorn(torch.tensor(g["s"]), torch.tensor(g["C"]), reg=0.1,
                     capacity=torch.tensor(cap), stopThr=1e-12, numItermax=50000).numpy()
    np.testing.assert_allclose(F, g["ours_cap"], rtol=0, atol=1e-10)
    assert (F <= cap + 1e-9).all() and _balance(F, g["s"]) < 1e-9
    assert (g["F_cap_official"] - cap).max() > 0.05
