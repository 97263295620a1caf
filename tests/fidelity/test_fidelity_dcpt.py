"""DCPT's classifier against MILab-PKU/dcpt's ``PromptIR_NoImg_DC`` (fixture ``dcpt``)."""

import re

import numpy as np
import torch

from iclr25.dcpt.networks import DegradationClassifier


def _ours(name: str) -> str:
    """Official parameter name -> ours."""
    name = re.sub(r"conv(\d)\.norm\.", r"norm\1.", name)
    name = re.sub(r"^bottleneck_layers\.", "stages.", name)
    name = re.sub(r"^downsample_layers\.(\d+)\.0\.", r"transitions.\1.", name)
    return {"mixing_weights": "level_logits", "fc.weight": "head.weight",
            "fc.bias": "head.bias"}.get(name, name)


def test_classifier_logits(golden):
    g = golden("dcpt")
    net = DegradationClassifier((4, 8, 16), 5, num_res_blocks=2).double().eval()
    gen = torch.Generator().manual_seed(0)
    sd = {}
    for name, shape in zip(g["param_names"], g["param_shapes"], strict=True):
        shape = tuple(int(s) for s in re.findall(r"\d+", str(shape)))
        base = 1.0 if str(name).endswith("norm.weight") else 0.0
        sd[_ours(str(name))] = base + 0.1 * torch.randn(shape, generator=gen,
                                                        dtype=torch.float64)
    net.load_state_dict(sd)      # strict: every official parameter has its counterpart
    with torch.no_grad():
        logits = net([torch.tensor(g[f"feature{i}"]) for i in range(3)]).numpy()
    np.testing.assert_allclose(logits, g["logits"], rtol=1e-12, atol=1e-13)
