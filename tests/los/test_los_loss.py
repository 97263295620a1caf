import math

import pytest
import torch
from torch.nn import functional as F

from iclr25.los import LabelOverSmoothingLoss, label_over_smoothing_loss, smoothed_targets


@pytest.mark.parametrize("eps", [0.05, 0.5, 0.9, 0.98])
@pytest.mark.parametrize("K", [2, 10, 100])
def test_equals_torch_label_smoothing(eps, K):
    g = torch.Generator().manual_seed(K)
    z = 4 * torch.randn(64, K, generator=g, dtype=torch.float64)
    y = torch.randint(0, K, (64,), generator=g)
    for red in ("mean", "sum", "none"):
        ours = label_over_smoothing_loss(z, y, eps, reduction=red)
        ref = F.cross_entropy(z, y, label_smoothing=eps, reduction=red)
        torch.testing.assert_close(ours, ref, rtol=1e-12, atol=1e-12)


def test_target_distribution_for_100_classes():
    q = smoothed_targets(torch.tensor([3, 0]), 100, 0.98)
    torch.testing.assert_close(q.sum(1), torch.ones(2))
    assert math.isclose(q[0, 3].item(), 0.02 + 0.0098, rel_tol=1e-6)
    assert math.isclose(q[0, 4].item(), 0.0098, rel_tol=1e-6)
    assert q[1].argmax() == 0


def test_gradient_is_softmax_minus_target():
    # d/dz of -sum q log softmax(z) is softmax(z) - q (per sample; mean divides by n)
    z = torch.randn(5, 7, dtype=torch.float64, requires_grad=True)
    y = torch.tensor([0, 6, 2, 2, 1])
    label_over_smoothing_loss(z, y, 0.3, reduction="sum").backward()
    expected = z.detach().softmax(1) - smoothed_targets(y, 7, 0.3, dtype=torch.float64)
    torch.testing.assert_close(z.grad, expected)


def test_minimum_is_at_the_smoothed_target():
    # the loss over probabilities p = softmax(z) is minimised at p = q: logits log q
    y = torch.tensor([1])
    q = smoothed_targets(y, 4, 0.6, dtype=torch.float64)
    z_opt = q.log().requires_grad_(True)
    label_over_smoothing_loss(z_opt, y, 0.6).backward()
    assert z_opt.grad.abs().max() < 1e-12


def test_inputs_not_modified():
    z, y = torch.randn(4, 3), torch.tensor([0, 1, 2, 0])
    z0, y0 = z.clone(), y.clone()
    label_over_smoothing_loss(z, y)
    assert torch.equal(z, z0) and torch.equal(y, y0)


@pytest.mark.parametrize("bad", [-1, 3])
def test_targets_outside_range(bad):
    with pytest.raises(ValueError, match=r"y must be (>= 0|< n_classes=3)"):
        label_over_smoothing_loss(torch.randn(2, 3), torch.tensor([0, bad]))


@pytest.mark.parametrize("eps", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_smoothing_outside_open_interval(eps):
    with pytest.raises(ValueError, match="smoothing"):
        label_over_smoothing_loss(torch.randn(2, 3), torch.tensor([0, 1]), eps)


def test_other_bad_inputs():
    with pytest.raises(TypeError, match="y must hold integer"):
        label_over_smoothing_loss(torch.randn(2, 3), torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="mismatched lengths: logits has 2, y has 3"):
        label_over_smoothing_loss(torch.randn(2, 3), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="y must be 1-D"):
        label_over_smoothing_loss(torch.randn(1, 3), torch.tensor(0))
    with pytest.raises(ValueError, match="logits must be 2-D"):
        label_over_smoothing_loss(torch.randn(3), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="NaN"):
        label_over_smoothing_loss(torch.tensor([[0.0, float("nan")]]), torch.tensor([0]))
    with pytest.raises(ValueError, match="reduction"):
        label_over_smoothing_loss(torch.randn(2, 3), torch.tensor([0, 1]), reduction="max")


def test_module_twin_matches_function():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(8, 5, generator=g, requires_grad=True)
    y = torch.randint(0, 5, (8,), generator=g)
    for red in ("mean", "sum", "none"):
        torch.testing.assert_close(LabelOverSmoothingLoss(0.7, red)(z, y),
                                   label_over_smoothing_loss(z, y, 0.7, red))
    LabelOverSmoothingLoss()(z, y).backward()
    assert z.grad is not None
    assert "smoothing=0.98" in repr(LabelOverSmoothingLoss())
    with pytest.raises(ValueError, match="smoothing"):
        LabelOverSmoothingLoss(1.0)
    with pytest.raises(ValueError, match="reduction"):
        LabelOverSmoothingLoss(reduction="max")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.int32])
def test_narrow_integer_labels(dtype):
    # used to pass validation, then crash in gather/scatter
    z, y = torch.randn(6, 4, generator=torch.Generator().manual_seed(1)), torch.arange(6) % 4
    ref = label_over_smoothing_loss(z, y)
    torch.testing.assert_close(label_over_smoothing_loss(z, y.to(dtype)), ref)
    torch.testing.assert_close(smoothed_targets(y.to(dtype), 4, 0.5), smoothed_targets(y, 4, 0.5))


def test_complex_or_integer_logits_refused():
    y = torch.tensor([0, 1])
    with pytest.raises(TypeError, match="logits must be real"):
        label_over_smoothing_loss(torch.randn(2, 3, dtype=torch.complex64), y)
    with pytest.raises(TypeError, match="logits must be a floating"):
        label_over_smoothing_loss(torch.ones(2, 3, dtype=torch.long), y)


def test_float64_numpy_logits_and_labels():
    z = torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    y = torch.tensor([0, 1, 2, 0, 1])
    got = label_over_smoothing_loss(z.numpy(), y.numpy())
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, F.cross_entropy(z, y, label_smoothing=0.98))
