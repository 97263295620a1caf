import numpy as np
import pytest
import torch
import torch.nn.functional as F

from iclr25.ies import InstanceEarlyStopping, LossThresholdStopping


def feed(ies, traj):
    """Feed a (n, T) loss trajectory one epoch at a time; return the active masks after each."""
    masks = []
    n = traj.shape[0]
    for t in range(traj.shape[1]):
        ies.update(torch.arange(n), traj[:, t])
        ies.step()
        masks.append(ies.active_mask.clone())
    return masks


def reference_mastered(traj_np, delta, window, k, mode, patience):
    """Loop-per-sample reading of the rules, written from the docstring independently."""
    out = []
    for row in traj_np:
        d2 = [row[t] - 2 * row[t - 1] + row[t - 2] for t in range(2, len(row))]
        if mode == "shipped":
            if len(d2) < window + k:
                out.append(False)
                continue
            a = np.abs(d2)
            ma = [a[i - window:i].mean() for i in range(window, len(a) + 1)]
            out.append(sum(ma[-k:]) < delta)
        else:
            if len(d2) < patience:
                out.append(False)
                continue
            out.append(all(abs(v) < delta for v in d2[-patience:]))
    return np.array(out)


def test_linear_losses_are_mastered_once_eligible_quadratic_never():
    t = torch.arange(10, dtype=torch.float64)
    traj = torch.stack([1.0 - 0.05 * t, 0.01 * t**2])  # D = 0 and D = 0.02
    ies = InstanceEarlyStopping(2, delta=1e-3, window=3)
    masks = feed(ies, traj)
    # shipped rule needs window + k + 2 = 6 losses before a verdict
    assert [bool(m[0]) for m in masks] == [True] * 5 + [False] * 5
    assert all(bool(m[1]) for m in masks)
    assert ies.history_len == 6


def test_algorithm1_uses_single_latest_difference():
    # D sequence for sample 0: 0.1, 0.1, 0.0 (mastered), 0.1 (re-enters)
    traj = torch.tensor([[0.0, 0.0, 0.1, 0.3, 0.5, 0.8]], dtype=torch.float64)
    ies = InstanceEarlyStopping(1, delta=1e-3, mode="algorithm1")
    masks = feed(ies, traj)
    assert [bool(m[0]) for m in masks] == [True, True, True, True, False, True]
    assert ies.history_len == 3


@pytest.mark.parametrize(("mode", "window", "k", "patience"),
                         [("shipped", 3, 1, 1), ("shipped", 2, 2, 1), ("algorithm1", 3, 1, 2)])
def test_matches_loop_reference_on_random_trajectories(mode, window, k, patience):
    g = torch.Generator().manual_seed(0)
    n, T = 200, 12
    # decaying curves plus noise of several scales, so both verdicts occur
    base = torch.exp(-0.5 * torch.arange(T, dtype=torch.float64))[None, :]
    noise = torch.rand(n, 1, generator=g, dtype=torch.float64) ** 3 * 1e-2
    traj = base * torch.rand(n, 1, generator=g, dtype=torch.float64) + noise * torch.randn(
        n, T, generator=g, dtype=torch.float64)
    delta = 2e-3
    for t_end in range(3, T + 1):
        ies = InstanceEarlyStopping(n, delta=delta, window=window, k=k, mode=mode,
                                    patience=patience)
        for t in range(t_end):
            ies.update(torch.arange(n), traj[:, t])
        want = reference_mastered(traj[:, :t_end].numpy(), delta, window, k, mode, patience)
        np.testing.assert_array_equal(ies.mastered().numpy(), want)
    assert 0 < want.sum() < n


def test_batched_updates_equal_one_update_and_order_free():
    g = torch.Generator().manual_seed(1)
    n = 50
    traj = torch.rand(n, 8, generator=g, dtype=torch.float64)
    a = InstanceEarlyStopping(n, delta=0.5)
    b = InstanceEarlyStopping(n, delta=0.5)
    for t in range(8):
        a.update(torch.arange(n), traj[:, t])
        perm = torch.randperm(n, generator=g)
        for chunk in perm.split(7):
            b.update(chunk, traj[chunk, t])
    torch.testing.assert_close(a.losses, b.losses)
    assert torch.equal(a.mastered(), b.mastered()) and a.n_forward == b.n_forward == 8 * n


def test_second_differences_nan_until_reached():
    ies = InstanceEarlyStopping(2, window=3)
    ies.update(torch.tensor([0, 1]), torch.tensor([1.0, 1.0]))
    ies.update(torch.tensor([0, 1]), torch.tensor([0.5, 0.5]))
    ies.update(torch.tensor([0]), torch.tensor([0.4]))
    d2 = ies.second_differences()
    assert d2.shape == (2, 4)
    assert torch.isnan(d2[1]).all() and torch.isnan(d2[0, :3]).all()
    assert d2[0, 3].item() == pytest.approx(0.4 - 1.0 + 1.0)


def test_masked_loss_gradient_equals_mean_over_active():
    torch.manual_seed(0)
    ies = InstanceEarlyStopping(6, delta=1.0, mode="algorithm1")
    ies.active_mask = torch.tensor([True, False, True, True, False, True])
    logits = torch.randn(4, 3, requires_grad=True)
    y = torch.tensor([0, 1, 2, 1])
    idx = torch.tensor([4, 0, 1, 5])  # active: 0 and 5 -> batch positions 1 and 3
    loss = ies.masked_loss(F.cross_entropy(logits, y, reduction="none"), idx)
    (g,) = torch.autograd.grad(loss, logits)
    ref_logits = logits.detach().clone().requires_grad_(True)
    ref = F.cross_entropy(ref_logits[[1, 3]], y[[1, 3]])
    (g_ref,) = torch.autograd.grad(ref, ref_logits)
    torch.testing.assert_close(loss, ref)
    torch.testing.assert_close(g, g_ref)
    assert g[[0, 2]].abs().sum() == 0
    assert ies.n_backprop == 2 and ies.n_forward == 4
    assert torch.equal(ies.counts, torch.tensor([1, 1, 0, 0, 1, 1]))


def test_masked_loss_all_mastered_gives_zero_with_graph():
    ies = InstanceEarlyStopping(3)
    ies.active_mask[:] = False
    w = torch.ones(3, requires_grad=True)
    loss = ies.masked_loss(w * 2.0, torch.arange(3), record=False)
    loss.backward()
    assert loss.item() == 0.0 and w.grad.abs().sum() == 0 and ies.n_backprop == 0


def test_reentry_after_loss_jumps_and_saved_fraction():
    n = 2
    ies = InstanceEarlyStopping(n, delta=1e-3, window=3)
    for _ in range(6):
        ies.update(torch.arange(n), torch.tensor([0.1, 0.1]))
        ies.step()
    assert not ies.active_mask.any()
    ies.update(torch.arange(n), torch.tensor([0.1, 0.9]))  # sample 1 is disturbed
    ies.step()
    assert ies.active_indices.tolist() == [1]
    assert ies.excluded_indices.tolist() == [0]
    # epochs 1-6 fully active, epoch 7 trained with everything excluded
    assert ies.active_per_epoch == [2] * 6 + [0]
    assert ies.saved_fraction == pytest.approx(2 / 14)


def test_loss_threshold_baseline():
    lt = LossThresholdStopping(4, threshold=0.1)
    assert lt.mastered().sum() == 0  # no loss recorded yet
    lt.update(torch.tensor([0, 1, 2]), torch.tensor([0.05, 0.2, 0.1]))
    lt.step()
    assert lt.active_mask.tolist() == [False, True, True, True]
    lt.update(torch.tensor([0]), torch.tensor([0.5]))
    lt.step()
    assert lt.active_mask.all()


def test_inputs_not_modified():
    ies = InstanceEarlyStopping(5)
    idx = torch.tensor([3, 1, 4])
    losses = torch.tensor([0.3, 0.1, 0.4], requires_grad=True)
    idx0, l0 = idx.clone(), losses.detach().clone()
    ies.masked_loss(losses * 1.0, idx)
    ies.update(idx, losses.detach())
    assert torch.equal(idx, idx0) and torch.equal(losses.detach(), l0)


@pytest.mark.parametrize(("indices", "losses", "match", "exc"), [
    (torch.tensor([0, 1]), torch.tensor([0.1, 0.2, 0.3]), "mismatched lengths", ValueError),
    (torch.tensor([0, 1]), torch.tensor([0.1, float("nan")]), "losses contains 1 NaN",
     ValueError),
    (torch.tensor([0, 5]), torch.tensor([0.1, 0.2]), r"indices must lie in \[0, 5\), got 5",
     ValueError),
    (torch.tensor([-1, 2]), torch.tensor([0.1, 0.2]), "got -1", ValueError),
    (torch.tensor([1, 1]), torch.tensor([0.1, 0.2]), "must not repeat", ValueError),
    (torch.tensor([0.0, 1.0]), torch.tensor([0.1, 0.2]), "indices must be an integer",
     TypeError),
    (torch.tensor([0, 1]), torch.tensor([1, 2]), "losses must be a floating", TypeError),
    (torch.tensor([[0, 1]]), torch.tensor([0.1, 0.2]), "indices must be 1-D", ValueError),
])
def test_update_errors(indices, losses, match, exc):
    ies = InstanceEarlyStopping(5)
    with pytest.raises(exc, match=match):
        ies.update(indices, losses)
    with pytest.raises(exc, match=match.replace("losses", "loss_per_sample")):
        ies.masked_loss(losses, indices)
    assert ies.n_forward == 0 and ies.counts.sum() == 0  # nothing recorded


def test_constructor_errors():
    with pytest.raises(ValueError, match=r"n_samples must lie in \[1"):
        InstanceEarlyStopping(0)
    with pytest.raises(TypeError, match="n_samples must be an int"):
        InstanceEarlyStopping(3.0)
    with pytest.raises(ValueError, match="delta must lie"):
        InstanceEarlyStopping(3, delta=-1e-3)
    with pytest.raises(ValueError, match=r"window must lie in \[1"):
        InstanceEarlyStopping(3, window=0)
    with pytest.raises(ValueError, match="mode must be"):
        InstanceEarlyStopping(3, mode="fast")
    with pytest.raises(ValueError, match="threshold must lie"):
        LossThresholdStopping(3, threshold=float("nan"))


def test_state_dict_round_trip_resumes_identically():
    g = torch.Generator().manual_seed(2)
    traj = torch.rand(30, 10, generator=g, dtype=torch.float64) * 1e-3
    a = InstanceEarlyStopping(30, delta=5e-4)
    feed(a, traj[:, :5])
    b = InstanceEarlyStopping(30, delta=5e-4)
    b.load_state_dict(a.state_dict())
    ma, mb = feed(a, traj[:, 5:]), feed(b, traj[:, 5:])
    assert all(torch.equal(x, y) for x, y in zip(ma, mb, strict=True))
    assert a.saved_fraction == b.saved_fraction and a.n_forward == b.n_forward
    with pytest.raises(ValueError, match="must have shape"):
        InstanceEarlyStopping(30, delta=5e-4, mode="algorithm1").load_state_dict(a.state_dict())
    bad = {**a.state_dict(), "active_mask": torch.ones(29, dtype=torch.bool)}
    with pytest.raises(ValueError, match=r"state\['active_mask'\] must have length 30"):
        InstanceEarlyStopping(30, delta=5e-4).load_state_dict(bad)


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_infinite_or_nan_thresholds_are_refused(value):
    with pytest.raises(ValueError, match="delta"):
        InstanceEarlyStopping(3, delta=value)
    with pytest.raises(ValueError, match="threshold"):
        LossThresholdStopping(3, threshold=value)


def test_complex_losses_are_refused_not_truncated():
    ies = InstanceEarlyStopping(3)
    with pytest.raises(TypeError, match="losses must be real"):
        ies.update(torch.arange(3), torch.ones(3, dtype=torch.complex64))
    assert ies.n_forward == 0


def test_narrow_integer_indices_and_half_losses():
    # a uint8 index tensor would index as a boolean mask if it were not converted to int64
    a, b = InstanceEarlyStopping(4), InstanceEarlyStopping(4)
    a.update(torch.tensor([1, 2], dtype=torch.uint8), torch.tensor([0.5, 0.25]).half())
    b.update(torch.tensor([1, 2]), torch.tensor([0.5, 0.25]))
    assert torch.equal(a.losses, b.losses) and a.counts.tolist() == [0, 1, 1, 0]
    a.update(torch.tensor([0, 3], dtype=torch.int32), torch.tensor([1.0, 2.0]).double())
    assert a.counts.tolist() == [1, 1, 1, 1]
    loss = a.masked_loss(torch.tensor([1.0, 2.0], dtype=torch.float16, requires_grad=True),
                         np.array([0, 1], dtype=np.int16))
    assert loss.dtype == torch.float16


def _state():
    a = InstanceEarlyStopping(30, delta=5e-4)
    feed(a, torch.rand(30, 7, generator=torch.Generator().manual_seed(0),
                       dtype=torch.float64))
    return a.state_dict()


@pytest.mark.parametrize("key", ["losses", "counts", "active_mask", "n_forward", "n_backprop",
                                 "epochs", "active_per_epoch"])
def test_load_state_dict_names_a_missing_key_and_loads_nothing(key):
    state = _state()
    del state[key]
    fresh = InstanceEarlyStopping(30, delta=5e-4)
    before = fresh.state_dict()
    with pytest.raises(ValueError, match=f"missing key.*'{key}'"):
        fresh.load_state_dict(state)
    after = fresh.state_dict()
    assert all(torch.equal(before[k], after[k]) if isinstance(before[k], torch.Tensor)
               else before[k] == after[k] for k in before)


@pytest.mark.parametrize(("key", "value"), [
    ("n_forward", -1), ("n_backprop", -5), ("epochs", -1),
    ("counts", -torch.ones(30, dtype=torch.long)),
    ("active_per_epoch", [-1] * 7),
])
def test_load_state_dict_refuses_negative_counts(key, value):
    state = {**_state(), key: value}
    fresh = InstanceEarlyStopping(30, delta=5e-4)
    with pytest.raises(ValueError, match=key):
        fresh.load_state_dict(state)
    assert fresh.epochs == 0 and fresh.counts.sum() == 0
