"""GSD's discriminator against CORE-Robotics-Lab/GSD's ``PairDiscriminator`` (fixture ``gsd``)."""

import numpy as np
import torch

from iclr25.gsd.networks import BoundedDiscriminator

NAMES = {"affine_layers.0": "net.0", "affine_layers.1": "net.2", "score_out": "net.4",
         "reward_offset": "offset"}


def test_discriminator_and_pure_score(golden):
    g = golden("gsd")
    net = BoundedDiscriminator(3, 2, clip=10.0, hidden=(64, 64)).double()
    sd = {}
    for k, v in g.items():
        if k.startswith("w."):
            head, _, tail = k[2:].rpartition(".")
            sd[f"{NAMES[head]}.{tail}" if head else NAMES[tail]] = torch.tensor(v)
    net.load_state_dict(sd)
    x = torch.tensor(g["x"], requires_grad=True)
    d = net(x[:, :3], x[:, 3:])
    d.sum().backward()
    np.testing.assert_allclose(d.detach().numpy(), g["D"][:, 0], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(x.grad.numpy(), g["grad_x"], rtol=1e-12, atol=1e-14)
    with torch.no_grad():
        pure = net.pure(x[:, :3], x[:, 3:]).numpy()
    np.testing.assert_allclose(pure, g["pure"][:, 0], rtol=1e-13, atol=1e-13)
