import numpy as np
import pytest
import torch
import torch.nn.functional as F

from iclr25._checks import (
    as_tensor,
    check_choice,
    check_int,
    check_labels,
    check_range,
    resolve_seed,
)
from iclr25._train import accuracy, fit_minibatch, seeded_mlp


def _data(n=64, d=5, k=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g)
    y = (X[:, 0] > 0).long() + (X[:, 1] > 0.5).long()
    return X, y.clamp(max=k - 1)


def test_seeded_mlp_is_reproducible_and_leaves_global_rng_alone():
    state = torch.get_rng_state()
    a, b = seeded_mlp((5, 8, 3), seed=1), seeded_mlp((5, 8, 3), seed=1)
    assert torch.equal(state, torch.get_rng_state())
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)
    c = seeded_mlp((5, 8, 3), seed=torch.Generator().manual_seed(1))
    assert torch.equal(a[0].weight, c[0].weight)
    assert not torch.equal(a[0].weight, seeded_mlp((5, 8, 3), seed=2)[0].weight)
    assert [type(m).__name__ for m in a] == ["Linear", "ReLU", "Linear"]


def test_fit_minibatch_learns_and_is_deterministic():
    X, y = _data()
    runs = []
    for _ in range(2):
        state = torch.get_rng_state()
        m = seeded_mlp((5, 16, 3), seed=0)
        opt = torch.optim.SGD(m.parameters(), lr=0.5)
        hist = fit_minibatch(m, F.cross_entropy, X, y, epochs=30, batch_size=16,
                             optimizer=opt, seed=3)
        assert torch.equal(state, torch.get_rng_state())
        runs.append((hist, m[0].weight.detach().clone()))
    assert runs[0][0] == runs[1][0] and torch.equal(runs[0][1], runs[1][1])
    assert runs[0][0][-1] < runs[0][0][0]
    assert accuracy(m, X, y) > 0.9


def test_fit_minibatch_callback_sees_indices_and_can_skip():
    X, y = _data(n=10)
    seen = []

    def cb(idx, loss):
        seen.append(idx.clone())
        assert loss.shape == idx.shape  # per-sample losses reach the hook
        return None if len(seen) == 1 else loss.sum()

    m = seeded_mlp((5, 3), seed=0)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    hist = fit_minibatch(m, lambda o, t: F.cross_entropy(o, t, reduction="none"), X, y,
                         epochs=1, batch_size=4, optimizer=opt, callback=cb)
    assert sorted(torch.cat(seen).tolist()) == list(range(10))
    assert len(seen) == 3 and np.isfinite(hist[0])


def test_fit_minibatch_custom_batches_and_early_stop():
    X, y = _data(n=12)
    m = seeded_mlp((5, 3), seed=0)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    hist = fit_minibatch(m, F.cross_entropy, X, y, epochs=10, batch_size=4, optimizer=opt,
                         batches=lambda e: [torch.arange(3)], on_epoch_end=lambda e: e == 2)
    assert len(hist) == 3


def test_accuracy_is_a_fraction_and_accepts_numpy_float64():
    X, y = _data()
    m = seeded_mlp((5, 3), seed=0)
    a = accuracy(m, X.double().numpy(), y.int().numpy())
    assert isinstance(a, float) and 0.0 <= a <= 1.0
    assert a == accuracy(m, X, y)
    with pytest.raises(ValueError, match="y must be 1-D"):
        accuracy(m, X, y[:, None])
    with pytest.raises(ValueError, match="y must have 64 labels"):
        accuracy(m, X, y[:10])


def test_check_labels_converts_small_ints_and_refuses_bad():
    for dt in (torch.uint8, torch.int16, torch.int32):
        assert check_labels(torch.tensor([0, 2, 1], dtype=dt), n_classes=3).dtype == torch.int64
    with pytest.raises(TypeError, match="y must hold integer"):
        check_labels(torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="y must be 1-D"):
        check_labels(torch.zeros(3, 1, dtype=torch.long))
    with pytest.raises(ValueError, match="n_classes=2"):
        check_labels([0, 2], n_classes=2)
    with pytest.raises(ValueError, match=">= 0"):
        check_labels([0, -1])


def test_as_tensor_boundary_conversion():
    x = np.arange(6.0).reshape(2, 3)
    t = as_tensor(x, "X", ndim=2, dtype=torch.float32)
    assert t.dtype == torch.float32 and x.dtype == np.float64
    with pytest.raises(TypeError, match="X must be real"):
        as_tensor(torch.ones(2, dtype=torch.complex64), "X")
    with pytest.raises(ValueError, match="X contains 1 NaN"):
        as_tensor([1.0, float("inf")], "X")
    with pytest.raises(TypeError, match="X must be an integer"):
        as_tensor([1.5], "X", dtype=torch.int64)


def test_scalar_checks():
    assert check_int(np.int64(3), "k", 1) == 3
    for bad in (2.0, True, "3"):
        with pytest.raises(TypeError, match="k must be an int"):
            check_int(bad, "k")
    with pytest.raises(ValueError, match=r"k must lie in \[1, inf\]"):
        check_int(0, "k", 1)
    for bad in (float("inf"), float("nan")):
        with pytest.raises(ValueError, match="lr must"):
            check_range(bad, "lr", 0, low_open=True)
    assert check_choice("a", "mode", ("a", "b")) == "a"
    with pytest.raises(ValueError, match="mode must be one of 'a', 'b'"):
        check_choice("c", "mode", ("a", "b"))


def test_resolve_seed():
    g = torch.Generator().manual_seed(5)
    assert resolve_seed(g) is g
    assert torch.equal(torch.rand(3, generator=resolve_seed(7)),
                       torch.rand(3, generator=resolve_seed(7)))
    state = torch.get_rng_state()
    resolve_seed(None)
    assert torch.equal(state, torch.get_rng_state())
    with pytest.raises(ValueError, match="seed must lie"):
        resolve_seed(-1)
