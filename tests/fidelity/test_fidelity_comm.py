"""CoMM against Duplums/CoMM's ``CoMMLoss`` (fixture ``comm``, see MANIFEST.toml)."""

import numpy as np
import torch

from iclr25.comm import comm_loss


def test_loss_and_gradients(golden):
    g = golden("comm")
    z1 = torch.tensor(g["z1"], requires_grad=True)
    z2 = torch.tensor(g["z2"], requires_grad=True)
    loss = comm_loss(list(z1), list(z2), temperature=0.1)
    loss.backward()
    np.testing.assert_allclose(loss.item(), g["loss"], rtol=1e-12)
    np.testing.assert_allclose(z1.grad.numpy(), g["grad_z1"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(z2.grad.numpy(), g["grad_z2"], rtol=1e-9, atol=1e-12)
    lw = comm_loss(list(torch.tensor(g["z1"])), list(torch.tensor(g["z2"])), 0.1, g["weights"])
    np.testing.assert_allclose(lw.item(), g["loss_weighted"], rtol=1e-12)
