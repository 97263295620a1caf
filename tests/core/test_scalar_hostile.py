"""Issue 56: arguments that used to be checked only by torch (a device string, a callback)
are refused by iclr25, naming them."""

from __future__ import annotations

import pytest
import torch

from iclr25.dcpt import UNet, finetune
from iclr25.ies import InstanceEarlyStopping
from iclr25.mother import pairwise_distances


@pytest.mark.parametrize("device", ["tpu", "cuda:x"])
def test_unknown_devices_are_value_errors_naming_the_argument(device):
    with pytest.raises(ValueError, match="device"):
        InstanceEarlyStopping(4, device=device)
    models = {"a": {"w": torch.eye(2)}, "b": {"w": torch.eye(2) * 2}}
    with pytest.raises(ValueError, match="device"):
        pairwise_distances(models, device=device)


def test_a_non_callable_callback_is_refused_before_training():
    x = torch.rand(1, 3, 8, 8)
    with pytest.raises(TypeError, match="callback"):
        finetune(UNet(width=4, depth=2), (x, x), steps=1, callback="print")
