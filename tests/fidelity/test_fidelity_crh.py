"""CRH against hand-solved cases (fixture ``crh``; no official code, see MANIFEST.toml)."""

import numpy as np
import pytest
import torch

from iclr25.crh import alignment_score, power_law_exponent


def test_alignment_score(golden):
    g = golden("crh")
    A, B = torch.tensor(g["A3"]), torch.tensor(g["B3"])
    assert alignment_score(A, B) == pytest.approx(float(g["alpha_offdiag"]), abs=1e-14)
    assert alignment_score(A, B, offdiag=False) == pytest.approx(float(g["alpha_full"]),
                                                                 abs=1e-14)


@pytest.mark.parametrize("case", ["mixed", "power"])
def test_power_law_exponent(golden, case):
    g = golden("crh")
    fit = power_law_exponent(torch.tensor(g[f"A_{case}"]), torch.tensor(g["Z"]))
    # eigh on the float64 Z: the slope is exact to ~10 eps of the log eigenvalues
    np.testing.assert_allclose([fit.exponent, fit.intercept, fit.r2], g[f"{case}_fit"],
                               rtol=0, atol=1e-12)
    assert fit.n_used == 4
