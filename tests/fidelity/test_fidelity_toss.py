"""ToSS's TIC baseline against vita-epfl/TIC-TAC's ``get_tic_covariance`` (fixture ``toss``,
see MANIFEST.toml)."""

import numpy as np
import torch

from iclr25.toss.model import _Net


def test_tic_covariance(golden):
    g = golden("toss")
    net = _Net(4, 3, (16, 16), seed=1, tic=True).double()   # weights replaced below
    net.load_state_dict({k[2:]: torch.tensor(v) for k, v in g.items() if k.startswith("w.")})
    with torch.no_grad():
        cov = _Net.tic_cov(net(torch.tensor(g["x"]))).numpy()
    np.testing.assert_allclose(cov, g["cov"], rtol=1e-12, atol=1e-15)
