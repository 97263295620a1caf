"""LSDT's block against the official ``decision_transformer/LSDT.py:Block`` (fixture ``lsdt``,
see MANIFEST.toml): attention + dynamic-convolution branches, hybrid fusion, post-LN MLP."""

import numpy as np
import torch

from iclr25.lsdt.model import Block, LongShortMixer

RENAME = {"attention.fmlp.0": "mixer.fusion.squeeze", "attention.fl1": "mixer.fusion.to_att",
          "attention.fl2": "mixer.fusion.to_conv", "attention.proj_net": "mixer.proj",
          "attention.Dynamicconv_layer.linear1": "mixer.conv.glu",
          "attention.Dynamicconv_layer.linear2": "mixer.conv.out",
          "attention.Dynamicconv_layer.linear_weight": "mixer.conv.weight"}


def _state(g):
    w = {k[2:]: torch.tensor(v) for k, v in g.items() if k.startswith("w.")}
    sd = {"mixer.conv.bias": w.pop("attention.Dynamicconv_layer.bias")}
    for t in ("weight", "bias"):
        sd[f"mixer.qkv.{t}"] = torch.cat([w.pop(f"attention.{n}_net.{t}") for n in "qkv"])
    for k, v in w.items():
        head, _, t = k.rpartition(".")
        sd[f"{RENAME.get(head, head)}.{t}"] = v
    return sd


def test_block_output_and_gradient(golden):
    g = golden("lsdt")
    block = Block(16, LongShortMixer(16, 2, 8, conv="dynamic", kernel_size=5)).double().eval()
    block.load_state_dict(_state(g))
    x = torch.tensor(g["x"], requires_grad=True)
    y = block(x)
    y.square().sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), g["y"], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(x.grad.numpy(), g["grad_x"], rtol=1e-11, atol=1e-12)
