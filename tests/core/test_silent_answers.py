"""The held-out campaign's silent wrong answers: each is now an error naming the argument or
the right answer (issue 42)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from iclr25.crh import AlignmentProbe
from iclr25.dbtsw import tree_wasserstein
from iclr25.kmeans import dz_seeding
from iclr25.locodl import SimulatedComm
from iclr25.matern import KernelSurface
from iclr25.mother import build_forest
from iclr25.toss import gaussian_w2


def test_gaussian_w2_refuses_a_covariance_that_is_not_one():
    m, eye = torch.zeros(2), torch.eye(2)
    with pytest.raises(ValueError, match="cov1"):
        gaussian_w2(m, -eye, m, eye)
    with pytest.raises(ValueError, match="cov1"):
        gaussian_w2(m, torch.tensor([[1.0, 0.5], [0.0, 1.0]]), m, eye)


@pytest.mark.parametrize("k", [0, 5])
def test_dz_seeding_needs_1_to_n_centres(k):
    X, w = torch.randn(3, 2, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    with pytest.raises(ValueError, match="k"):
        dz_seeding(X, w, k, torch.Generator().manual_seed(0))


def test_tree_wasserstein_validates():
    c, m = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    with pytest.raises(ValueError, match="p"):
        tree_wasserstein(c, m, p=0)
    with pytest.raises(ValueError, match="same shape"):
        tree_wasserstein(c, m[..., :3])
    with pytest.raises(ValueError, match="coords"):
        tree_wasserstein(c.masked_fill(c > 1, float("nan")), m)
    # a known answer: one line, unit mass at 1 against the root: edge length 1 times mass 1
    one = tree_wasserstein(torch.tensor([[1.0]]), torch.tensor([[1.0]]))
    assert float(one) == pytest.approx(1.0)


def test_nystrom_with_every_point_a_centre_is_the_exact_solve():
    g = torch.Generator().manual_seed(0)
    P = torch.randn(60, 3, generator=g, dtype=torch.float64)
    P = P / P.norm(dim=1, keepdim=True)
    Q = torch.randn(50, 3, generator=g, dtype=torch.float64)
    exact = KernelSurface().fit(P, P).predict(Q)
    full = KernelSurface(n_centers=3 * len(P)).fit(P, P).predict(Q)
    torch.testing.assert_close(full, exact, rtol=0, atol=1e-6)


def test_simulated_comm_mean_needs_setup():
    with pytest.raises(ValueError, match="setup"):
        SimulatedComm().mean(torch.ones(2, 3))


def test_alignment_probe_refuses_nan_activations():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = torch.randn(8, 3)
    x[0, 0] = float("nan")
    batches = [(x, torch.randint(0, 2, (8,)))]
    with pytest.raises(ValueError, match="NaN"):
        AlignmentProbe(model, layers="0",
                       loss_fn=nn.CrossEntropyLoss(reduction="sum")).run(batches)


def test_build_forest_refuses_a_bool_distance_matrix():
    D = ~torch.eye(3, dtype=torch.bool)
    with pytest.raises(TypeError, match="D"):
        build_forest(D, None)
