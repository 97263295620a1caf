"""Issue 56: the bounded discriminator holds its documented range [0, c] on huge inputs."""

from __future__ import annotations

import pytest
import torch

from iclr25.gsd import BoundedDiscriminator


def test_saturated_scores_stay_in_the_closed_range():
    d = BoundedDiscriminator(3, 2, clip=10.0, hidden=(8,)).double()
    with torch.no_grad():
        d.net[-1].weight.mul_(1e6)  # |f| in the thousands: sigmoid rounds to 0 or 1
    g = torch.Generator().manual_seed(0)
    obs = torch.randn(500, 3, generator=g, dtype=torch.float64) * 1e300
    act = torch.randn(500, 2, generator=g, dtype=torch.float64) * 1e300
    p = d.pure(obs, act)
    assert bool(((p >= 0) & (p <= 10)).all())
    assert bool((p == 10).any()) and bool((p == 0).any())  # the closed ends are reached


def test_inputs_that_overflow_are_refused_not_nan():
    d = BoundedDiscriminator(3, 2, clip=10.0, hidden=(8,))
    g = torch.Generator().manual_seed(0)
    obs = torch.randn(200, 3, generator=g) * 3e38
    act = torch.randn(200, 2, generator=g) * 3e38
    with pytest.raises(ValueError, match="obs and act give"):
        d.pure(obs, act)
