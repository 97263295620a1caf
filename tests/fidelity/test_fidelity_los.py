"""LOS against bilibili/LOS's stage-2 re-training (fixture ``los``, see MANIFEST.toml)."""

import numpy as np
import torch

from iclr25.los.training import retrain_classifier


def test_stage2_head(golden):
    g = golden("los")
    head = retrain_classifier(
        torch.tensor(g["X"]), torch.tensor(g["y"]), "los",
        init=(torch.tensor(g["W0"]), torch.tensor(g["b0"])), smoothing=float(g["smoothing"]),
        epochs=int(g["epochs"]), lr=float(g["lr"]), batch_size=int(g["batch_size"]), seed=0)
    np.testing.assert_allclose(head.weight.detach().numpy(), g["weight"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(head.bias.detach().numpy(), g["bias"], rtol=0, atol=1e-12)
    assert np.abs(g["weight"] - g["W0"]).max() > 0.05    # the head did move
