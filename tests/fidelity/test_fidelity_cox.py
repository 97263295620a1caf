"""COX's bottleneck against the official ``models/vib.py:VIB`` (fixture ``cox``, MANIFEST)."""

import numpy as np
import torch

from iclr25.cox.vib import VIB


def test_vib_forward(golden):
    g = golden("cox")
    vib = VIB(16, 8, 1024).double().train()
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():   # the fixture's weight recipe, in the official state_dict order
        for p in vib.state_dict().values():
            p.copy_(0.02 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
        pred, mu, logvar = vib(torch.tensor(g["h"]), generator=torch.Generator().manual_seed(2))
    np.testing.assert_allclose(mu.numpy(), g["mu"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(logvar.numpy(), g["logvar"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(pred.numpy(), g["pred"], rtol=1e-12, atol=1e-15)
