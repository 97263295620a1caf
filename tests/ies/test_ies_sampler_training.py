import math

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from iclr25 import claims
from iclr25.claims import Scale
from iclr25.ies import IESSampler, InstanceEarlyStopping, mlp, record_losses, train


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models: extra threads only add contention on a shared machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_sampler_yields_exactly_the_active_set_and_is_seeded():
    ies = InstanceEarlyStopping(20)
    ies.active_mask[torch.tensor([2, 3, 11, 19])] = False
    s1, s2 = IESSampler(ies, seed=3), IESSampler(ies, seed=3)
    a, b = list(s1), list(s2)
    assert a == b and len(s1) == 16
    assert sorted(a) == [i for i in range(20) if i not in (2, 3, 11, 19)]
    assert list(s1) != a  # a new permutation each epoch
    assert list(IESSampler(ies, shuffle=False)) == sorted(a)
    with pytest.raises(TypeError, match="stopper must be an InstanceEarlyStopping"):
        IESSampler([1, 2, 3])


def test_sampler_works_with_dataloader():
    ies = InstanceEarlyStopping(10)
    ies.active_mask[5:] = False
    ds = TensorDataset(torch.arange(10), torch.zeros(10))
    seen = torch.cat([i for i, _ in DataLoader(ds, batch_size=3, sampler=IESSampler(ies))])
    assert sorted(seen.tolist()) == [0, 1, 2, 3, 4]


def test_record_losses_evaluates_excluded_and_restores_mode():
    model = mlp((4, 8, 3), seed=0)
    model.train()
    X, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
    ies = InstanceEarlyStopping(6)
    ies.active_mask[torch.tensor([1, 4])] = False
    losses = record_losses(ies, model, X, y, batch_size=1)
    want = torch.nn.functional.cross_entropy(model(X[[1, 4]]), y[[1, 4]], reduction="none")
    torch.testing.assert_close(losses, want.detach())
    assert model.training and ies.n_forward == 2 and ies.counts.tolist() == [0, 1, 0, 0, 1, 0]
    with pytest.raises(ValueError, match="X must have n_samples=6 rows"):
        record_losses(ies, model, X[:5], y[:5])


def test_record_losses_rejects_repeated_indices_before_any_forward():
    calls = []
    model = mlp((4, 8, 3), seed=0)
    model.register_forward_hook(lambda *a: calls.append(1))
    ies = InstanceEarlyStopping(6)
    X, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError, match="indices must not repeat"):
        record_losses(ies, model, X, y, torch.tensor([1, 3, 1]))
    assert not calls and ies.n_forward == 0


def test_training_loop_counts_and_determinism():
    g = torch.Generator().manual_seed(0)
    X, y = torch.randn(120, 5, generator=g), torch.randint(0, 3, (120,), generator=g)
    Xt, yt = X[:30], y[:30]
    a = train(X, y, Xt, yt, method="ies", epochs=12, batch_size=16, seed=1, delta=1e-2)
    b = train(X, y, Xt, yt, method="ies", epochs=12, batch_size=16, seed=1, delta=1e-2)
    assert a.test_acc == b.test_acc and a.active == b.active
    # every sample is forwarded once per epoch; backprops = sum of active sets
    assert a.n_forward == 120 * 12
    assert a.n_backprop == sum(a.active) == a.backprop_cum[-1]
    assert a.saved_fraction == pytest.approx(1 - a.n_backprop / (120 * 12))
    assert a.active[:6] == [120] * 6  # no verdict before window + k + 2 = 6 losses
    p = train(X, y, Xt, yt, method="plain", epochs=3, batch_size=16, seed=1)
    assert p.n_backprop == p.n_forward == 360 and p.saved_fraction == 0.0
    al = train(X, y, Xt, yt, method="ies", mode="algorithm1", epochs=5, batch_size=16, seed=1)
    assert al.n_forward == 120 * 5 + al.n_backprop
    with pytest.raises(ValueError, match="method must be"):
        train(X, y, Xt, yt, method="infobatch")
    with pytest.raises(ValueError, match="X contains"):
        train(X * float("nan"), y, Xt, yt)


@pytest.mark.parametrize("cid", ["ies.backprop_saved", "ies.accuracy_kept"])
def test_quick_claims_run(cid, tmp_path):
    r = claims.run(claims.discover()[cid], Scale.quick, 0, tmp_path)
    assert r.status != "error", r.error
    assert math.isfinite(r.measured)
    assert r.figures and all(p.endswith(".png") for p in r.figures)
    assert len(r.details["acc_diff_per_seed"]) == 3
