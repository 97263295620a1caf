"""ToSS's W2 bound (Theorem 1) and the exact Gaussian W2 on hand-solved pairs (fixture
``toss_w2``; ToSS's repository cannot be had here, see MANIFEST.toml)."""

import pytest
import torch

from iclr25.toss import gaussian_w2, sqrtm_psd, w2_bound


def test_bound_and_exact_w2(golden):
    g = golden("toss_w2")
    m1, m2 = torch.tensor(g["mu1"]), torch.tensor(g["mu2"])
    S1, S2 = torch.tensor(g["S1"]), torch.tensor(g["S2"])
    assert float(w2_bound(m1, S1, m2, S2)) == pytest.approx(float(g["bound"]), abs=1e-14)
    exact = float(gaussian_w2(m1, S1 @ S1, m2, S2 @ S2))
    assert exact == pytest.approx(float(g["exact"]), abs=1e-12)
    C1, C2 = torch.tensor(g["C1"]), torch.tensor(g["C2"])
    for value in (float(w2_bound(m1, sqrtm_psd(C1), m1, sqrtm_psd(C2))),
                  float(gaussian_w2(m1, C1, m1, C2))):
        assert value == pytest.approx(float(g["commuting"]), abs=1e-12)
