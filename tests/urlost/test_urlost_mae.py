"""GroupLinear = per-group nn.Linear with inert padding; the MAE's loss ignores padding and
unmasked tokens; URLOST is seeded, clonable, saves and loads; retina sampler and foveation."""

import numpy as np
import pytest
import torch
from sklearn.base import clone
from torch import nn

from iclr25.urlost import (
    URLOST,
    URLOSTMAE,
    GroupLinear,
    foveate,
    grid_patches,
    groups_from_labels,
    retina_sampler,
)

GROUPS, _ = groups_from_labels(torch.tensor([0, 1, 0, 2, 1, 0, 2, 2, 2]))


def test_group_linear_equals_per_group_linear():
    layer = GroupLinear(GROUPS, 5)
    X = torch.randn(7, 9)
    out = layer(X)
    assert out.shape == (7, 3, 5)
    for g in range(3):
        idx = GROUPS[g][GROUPS[g] >= 0]
        lin = nn.Linear(len(idx), 5)
        lin.weight.data = layer.weight[g, :len(idx)].T
        lin.bias.data = layer.bias[g]
        assert torch.allclose(out[:, g], lin(X[:, idx]), atol=1e-6)


def test_group_linear_padding_inert():
    layer = GroupLinear(GROUPS, 4)
    X = torch.randn(6, 9)
    before = layer(X)
    pad = GROUPS < 0
    with torch.no_grad():
        layer.weight[pad] = 100.0
    assert torch.allclose(layer(X), before)
    layer(X).sum().backward()
    assert torch.all(layer.weight.grad[pad] == 0)


def test_group_linear_shared_is_one_weight():
    layer = GroupLinear(grid_patches(4, 4, 2), 3, shared=True)
    X = torch.randn(2, 16)
    assert layer.weight.shape == (1, 4, 3)
    tok = X[:, grid_patches(4, 4, 2)]
    assert torch.allclose(layer(X), tok @ layer.weight[0] + layer.bias[0], atol=1e-6)


def test_grid_patches():
    p = grid_patches(4, 4, 2)
    assert p.tolist()[0] == [0, 1, 4, 5] and p.tolist()[3] == [10, 11, 14, 15]


def test_mae_loss_ignores_padding_and_visible_tokens():
    torch.manual_seed(0)
    mae = URLOSTMAE(GROUPS, dim=8, heads=2, mask_ratio=0.5, seed=0)
    X = torch.randn(4, 9)
    gen = lambda: torch.Generator().manual_seed(1)  # noqa: E731
    loss = mae(X, generator=gen())
    assert loss.ndim == 0 and torch.isfinite(loss)
    with torch.no_grad():  # changing the head's padding outputs must not change the loss
        mae.head_b[GROUPS < 0] = 50.0
    assert torch.allclose(mae(X, generator=gen()), loss)
    assert mae.encode(X).shape == (4, 3, 8)


def test_mae_seeded_init_leaves_global_rng():
    state = torch.get_rng_state()
    a, b = URLOSTMAE(GROUPS, 8, heads=2, seed=3), URLOSTMAE(GROUPS, 8, heads=2, seed=3)
    assert torch.equal(torch.get_rng_state(), state)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


def _data(n=120, d=24, seed=0):
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, 4, generator=g)
    return z.repeat_interleave(d // 4, 1) + 0.5 * torch.randn(n, d, generator=g)


def test_urlost_fit_transform_deterministic_and_clone(tmp_path):
    X = _data()
    X0 = X.clone()
    m = URLOST(n_clusters=4, n_neighbors=4, dim=16, heads=2, epochs=2, batch_size=32, seed=0)
    Z = m.fit(X).transform(X)
    assert Z.shape == (120, 16) and torch.equal(X, X0)
    Z2 = clone(m).fit(X).transform(X)
    assert torch.allclose(Z, Z2)
    assert len(m.loss_curve_) == 2
    m.save(tmp_path / "m.pt")
    m3 = URLOST.load(tmp_path / "m.pt")
    assert torch.allclose(m3.transform(X), Z, atol=1e-6)
    Zd = m.transform(X.double().numpy())   # numpy in, numpy out, in X's dtype
    assert isinstance(Zd, np.ndarray) and Zd.dtype == np.float64
    assert torch.allclose(torch.from_numpy(Zd).float(), Z, atol=1e-5)


def test_urlost_given_groups_baseline():
    X = _data(d=16)
    m = URLOST(groups=grid_patches(4, 4, 2), shared=True, dim=8, heads=2, epochs=1,
               batch_size=64).fit(X)
    assert m.clusters_ is None and m.transform(X).shape == (120, 8)


def test_retina_sampler_and_foveate():
    coords, radii = retina_sampler(48, 24, 24, 7)
    assert coords.shape[1] == 2 and len(coords) == len(radii)
    assert len(torch.unique(coords[:, 0] * 48 + coords[:, 1])) == len(coords)
    ecc = ((coords.float() - 23.5) ** 2).sum(1).sqrt()
    assert radii.min() == 0.5 and radii.max() == 3.5
    assert ecc[radii == 3.5].min() > ecc[radii == 0.5].max()  # blur grows outward
    img = torch.rand(3, 48, 48)
    out = foveate(img, coords, radii)
    assert out.shape == (3, len(coords))
    sharp = radii == 0.5
    assert torch.equal(out[:, sharp], img[:, coords[sharp, 0], coords[sharp, 1]])
    const = foveate(torch.ones(1, 2, 48, 48), coords, radii)
    inside = ((coords >= 3) & (coords <= 44)).all(1)
    assert const.shape == (1, 2, len(coords))
    assert torch.allclose(const[..., inside], torch.ones(1, 2, int(inside.sum())), atol=1e-5)


@pytest.mark.parametrize("kwargs, match", [
    ({"image_size": 1}, "image_size"), ({"max_kernel": 4}, "max_kernel"),
    ({"n_rings": 1}, "n_rings"),
])
def test_retina_errors(kwargs, match):
    args = {"image_size": 48, "n_rings": 10, "n_angles": 10, "max_kernel": 7} | kwargs
    with pytest.raises(ValueError, match=match):
        retina_sampler(**args)
