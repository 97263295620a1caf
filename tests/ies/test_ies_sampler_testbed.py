import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from iclr25._train import seeded_mlp as mlp
from iclr25.ies import IESSampler, InstanceEarlyStopping, LossThresholdStopping, record_losses
from iclr25.ies.testbed import accuracy, train


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    """Tiny models: extra threads only add contention on a shared machine."""


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


def _data(n=120, d=5, k=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g), torch.randint(0, k, (n,), generator=g)


def test_training_loop_counts_and_determinism():
    X, y = _data()
    Xt, yt = X[:30], y[:30]

    def ies():
        return InstanceEarlyStopping(120, delta=1e-2)

    a = train(X, y, Xt, yt, stopper=ies(), epochs=12, batch_size=16, seed=1)
    b = train(X, y, Xt, yt, stopper=ies(), epochs=12, batch_size=16, seed=1)
    assert a.test_acc == b.test_acc and a.active == b.active
    assert all(0.0 <= v <= 1.0 for v in a.test_acc)  # fractions, not percent
    # every sample is forwarded once per epoch; backprops = sum of active sets
    assert a.n_forward == 120 * 12
    assert a.n_backprop == sum(a.active) == a.backprop_cum[-1]
    assert a.saved_fraction == pytest.approx(1 - a.n_backprop / (120 * 12))
    assert a.active[:6] == [120] * 6  # no verdict before window + k + 2 = 6 losses
    p = train(X, y, Xt, yt, epochs=3, batch_size=16, seed=1)  # stopper=None: plain
    assert p.method == "plain" and p.n_backprop == p.n_forward == 360
    assert p.saved_fraction == 0.0
    al = train(X, y, Xt, yt, stopper=InstanceEarlyStopping(120, mode="algorithm1"), epochs=5,
               batch_size=16, seed=1)
    assert al.n_forward == 120 * 5 + al.n_backprop
    lt = train(X, y, Xt, yt, stopper=LossThresholdStopping(120, 10.0), epochs=3, seed=1)
    assert lt.active[1:] == [0, 0]  # every loss < 10 after the first epoch: nothing trains


def test_plain_training_equals_an_ies_run_that_never_excludes():
    X, y = _data()
    a = train(X, y, X, y, epochs=4, batch_size=16, seed=2)
    b = train(X, y, X, y, stopper=InstanceEarlyStopping(120, delta=0.0), epochs=4,
              batch_size=16, seed=2)
    assert a.test_acc == b.test_acc


def test_training_leaves_global_rng_alone_and_accepts_a_generator():
    X, y = _data()
    state = torch.get_rng_state()
    a = train(X, y, X, y, epochs=2, seed=torch.Generator().manual_seed(5))
    assert torch.equal(torch.get_rng_state(), state)
    assert a.test_acc == train(X, y, X, y, epochs=2, seed=5).test_acc


def test_training_accepts_float64_numpy_and_narrow_integer_labels():
    X, y = _data()
    ref = train(X, y, X, y, epochs=2, seed=0)
    for Xc, yc in ((X.double(), y.int()), (X.numpy().astype(np.float64), y.numpy()),
                   (X.half().float(), y.to(torch.uint8))):
        log = train(Xc, yc, Xc, yc, epochs=2, seed=0,
                    stopper=InstanceEarlyStopping(120, delta=1e-2))
        assert len(log.test_acc) == 2
    assert train(X.double(), y.int(), X.double(), y.int(), epochs=2, seed=0).test_acc == \
        ref.test_acc


def test_training_refuses_bad_input_before_work():
    X, y = _data()
    with pytest.raises(ValueError, match="X contains"):
        train(X * float("nan"), y, X, y)
    with pytest.raises(ValueError, match="y_test must be 1-D"):
        train(X, y, X, y[:, None])  # an (n, 1) label column is refused, not broadcast
    with pytest.raises(TypeError, match="X must be real"):
        train(X.to(torch.complex64), y, X, y)
    with pytest.raises(TypeError, match="stopper must be"):
        train(X, y, X, y, stopper="ies")
    with pytest.raises(ValueError, match="n_samples=7"):
        train(X, y, X, y, stopper=InstanceEarlyStopping(7))
    for name in ("lr", "momentum", "weight_decay"):
        with pytest.raises(ValueError, match=name):
            train(X, y, X, y, **{name: float("inf")})
    with pytest.raises(ValueError, match="epochs"):
        train(X, y, X, y, epochs=0)


def test_accuracy_refuses_a_label_column():
    model = mlp((5, 3), seed=0)
    X, y = _data()
    assert 0.0 <= accuracy(model, X, y) <= 1.0
    with pytest.raises(ValueError, match="y must be 1-D"):
        accuracy(model, X, y[:, None])


def test_record_losses_accepts_float64_input_and_int32_labels():
    model = mlp((5, 3), seed=0)
    X, y = _data(n=6)
    ies = InstanceEarlyStopping(6)
    got = record_losses(ies, model, X.double().numpy(), y.int(), torch.arange(6))
    want = torch.nn.functional.cross_entropy(model(X), y, reduction="none")
    torch.testing.assert_close(got, want.detach())


def test_sampler_accepts_a_generator_and_uses_only_public_checks():
    ies = InstanceEarlyStopping(10)
    a = list(IESSampler(ies, seed=torch.Generator().manual_seed(4)))
    assert a == list(IESSampler(ies, seed=4))
    with pytest.raises(ValueError, match="seed"):
        IESSampler(ies, seed=-1)
    with pytest.raises(ValueError, match="indices must lie in"):
        record_losses(ies, mlp((4, 2), seed=0), torch.randn(10, 4), torch.zeros(10).long(),
                      torch.tensor([3, 10]))


def test_teacher_split_is_one_seeded_teacher_draw_cut_in_two():
    from iclr25.datasets import teacher_classification
    from iclr25.ies.testbed import TEST_ROWS, teacher_split

    a, b, c = teacher_split(1500, seed=7), teacher_split(1500, seed=7), teacher_split(1500, seed=8)
    assert [tuple(t.shape) for t in a] == [(1500, 32), (1500,), (TEST_ROWS, 32), (TEST_ROWS,)]
    assert TEST_ROWS == 5000  # 1 accuracy point is 50 test rows
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not torch.equal(a.X_train, c.X_train)
    X, y = teacher_classification(1500 + TEST_ROWS, 32, 10, 64, seed=7)
    assert torch.equal(torch.cat([a.X_train, a.X_test]), X)
    assert torch.equal(torch.cat([a.y_train, a.y_test]), y)
    assert a.y_train.dtype == torch.int64 and set(a.y_test.unique().tolist()) == set(range(10))
    small = teacher_split(20, 30, seed=1)
    assert len(small.X_train) == 20 and len(small.X_test) == 30
    with pytest.raises(ValueError, match="n_train"):
        teacher_split(0)
