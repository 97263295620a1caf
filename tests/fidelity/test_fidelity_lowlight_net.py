"""The whole low-light network with official-layout weights against huaqlili/
unsupervised-light-enhance-ICLR2025 ``net/lformer.py:net`` at an odd and an even size
(fixture ``lowlight_net``, see MANIFEST.toml): odd sides run unpadded, as the official."""

import re

import numpy as np
import pytest
import torch

import iclr25.lowlight.dct as dct
from iclr25.lowlight.official import load_official

ONES = ("norm1.body.weight", "norm2.body.weight", "skip_scale", "skip_scale2", "temperature")


def _state(g) -> dict[str, torch.Tensor]:
    """The fixture's weights: its recipe drawn in the official ``state_dict`` order."""
    gen = torch.Generator().manual_seed(0)
    sd = {}
    for name, shape in zip(g["names"], g["shapes"], strict=True):
        name = str(name)
        shape = tuple(int(s) for s in re.findall(r"\d+", str(shape)))
        sd[name] = ((1.0 if name.endswith(ONES) else 0.0) + 0.05 * torch.randn(
            shape, generator=gen, dtype=torch.float64)).float().double()
    sd["L_enhance_net.tail.2.bias"] = torch.tensor([0.7]).double()
    return sd


def _unshuffled(monkeypatch):
    """Our B2 shuffle made the identity, as the fixture's: its random keys (one
    ``torch.rand(n, generator=...)`` per call) replaced by increasing ones, so that each
    anti-diagonal keeps raster order."""
    rand = torch.rand

    def keys(*size, generator=None, **kw):
        if generator is None or len(size) != 1:
            return rand(*size, generator=generator, **kw)
        return torch.arange(size[0], dtype=kw.get("dtype")) / (size[0] + 1)
    monkeypatch.setattr(dct.torch, "rand", keys)


@pytest.mark.parametrize("tag, size", [("odd", (51, 71)), ("even", (48, 64))])
def test_official_net_at_odd_and_even_sizes(golden, tmp_path, monkeypatch, tag, size):
    g = golden("lowlight_net")
    torch.save(_state(g), tmp_path / "w.pth")
    net = load_official(tmp_path / "w.pth").model_.double()
    gi = torch.Generator().manual_seed(1)
    xs = [0.3 * torch.rand(1, 3, *s, generator=gi, dtype=torch.float64)
          for s in ((51, 71), (48, 64))]
    x = xs[0] if tag == "odd" else xs[1]
    assert x.shape[-2:] == size
    _unshuffled(monkeypatch)
    with torch.no_grad():
        out = net(x)
    # float32 storage: |I| <= 1.5 here, so the fixture rounds by < 1e-7
    np.testing.assert_allclose(out.enhanced.numpy(), g[f"I_{tag}"], rtol=0, atol=2e-7)
    np.testing.assert_allclose(out.reflectance.numpy(), g[f"R_{tag}"], rtol=0, atol=2e-7)
