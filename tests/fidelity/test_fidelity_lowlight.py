"""Low-light networks against huaqlili/unsupervised-light-enhance-ICLR2025 ``net/lformer.py``
(fixture ``lowlight``, see MANIFEST.toml)."""

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from iclr25.lowlight.networks import CurveNet, NoiseNet, ReflectanceNet

ONES = ("norm1.body.weight", "norm2.body.weight", "skip_scale", "skip_scale2", "temperature")
RENAME = [(r"^patch_embed\.proj\.", "body.head."), (r"^output\.", "body.tail."),
          (r"^encoder\.(\d+)\.", r"body.blocks.\1."), (r"norm(\d)\.body\.", r"n\1."),
          (r"skip_scale2$", "s2"), (r"skip_scale$", "s1"), (r"attn\.kv\.", "attn.qkv."),
          (r"attn\.(qkv|kv)_dwconv\.", "attn.qkv_dw."), (r"attn\.project_out\.", "attn.proj."),
          (r"ffn\.project_in\.", "ffn.inp."), (r"ffn\.dwconv\.", "ffn.dw."),
          (r"ffn\.project_out\.", "ffn.out."),
          (r"^head\.", "features."), (r"^tail\.", "head.")]


def _weights(g, tag, net, seed=0):
    """The fixture's recipe, drawn in the official order, renamed to ours."""
    gen = torch.Generator().manual_seed(seed)
    ours = net.state_dict()
    sd = {}
    for name, shape in zip(g[f"{tag}_names"], g[f"{tag}_shapes"], strict=True):
        name = str(name)
        shape = tuple(int(s) for s in re.findall(r"\d+", str(shape)))
        w = (1.0 if name.endswith(ONES) else 0.0) + 0.1 * torch.randn(shape, generator=gen,
                                                                      dtype=torch.float64)
        for pat, rep in RENAME:
            name = re.sub(pat, rep, name)
        if name in ours:    # unused official parameters (R_net's q_dwconv, the curve
            sd[name] = w.reshape(ours[name].shape)      # net's dead encoder) are dropped
    net.load_state_dict(sd)
    return net


@pytest.mark.parametrize("fast", [True, False])
def test_noise_and_reflectance_nets(golden, fast):
    g = golden("lowlight")
    x, y = torch.tensor(g["x"]), torch.tensor(g["y"])
    noise = _weights(g, "noise", NoiseNet(8, 2).double())
    refl = _weights(g, "reflectance", ReflectanceNet(8, 2).double())
    noise.body.fast = refl.body.fast = fast
    with torch.no_grad():
        np.testing.assert_allclose(noise(x).numpy(), g["noise"], rtol=0, atol=1e-13)
        np.testing.assert_allclose(refl(x, y).numpy(), g["reflectance"], rtol=0, atol=1e-13)


def test_curve_exponent(golden):
    """Same pre-activation z; alpha = softplus(z) here, ReLU(z) officially (deliberate)."""
    g = golden("lowlight")
    L = torch.tensor(g["L"])
    for seed, ref in ((0, g["alpha"]), (5, g["alpha_dead"])):
        net = _weights(g, "alpha", CurveNet(32).double(), seed)
        with torch.no_grad():
            z = net.head(net.features(L).mean((-2, -1), keepdim=True))
            np.testing.assert_allclose(F.relu(z).numpy(), ref, rtol=0, atol=1e-14)
            alpha = net(L).numpy()
        np.testing.assert_allclose(alpha, F.softplus(z).numpy(), rtol=1e-15)
    # seed 5: z < 0, the official alpha is 0 (dead); ours stays positive (pinned)
    assert (g["alpha_dead"] == 0).all()
    np.testing.assert_allclose(alpha, g["ours_alpha_dead"], rtol=1e-13)
