"""The removal baselines of the IES claim: IES's budget epoch by epoch, the right samples."""

import torch

from iclr25.ies.claim import _MatchedRemoval


def test_random_removal_trains_the_scheduled_count_and_is_seeded():
    a = _MatchedRemoval(10, [10, 6, 3], "random", seed=5)
    b = _MatchedRemoval(10, [10, 6, 3], "random", seed=5)
    counts = []
    for _ in range(4):
        a.update(torch.arange(10), torch.rand(10))
        counts.append(len(a.step()))
        b.step()
        assert torch.equal(a.active_mask, b.active_mask)
    # schedule[e] is trained in epoch e; past its end the last entry holds
    assert counts == [6, 3, 3, 3]


def test_small_loss_removal_drops_the_lowest_latest_losses():
    r = _MatchedRemoval(5, [5, 2], "small_loss", seed=0)
    r.update(torch.arange(5), torch.tensor([0.9, 0.1, 0.5, 0.05, 0.7]))
    assert r.step().tolist() == [0, 4]  # the two largest losses stay
    # only the latest loss counts
    r.update(torch.tensor([1, 3]), torch.tensor([2.0, 3.0]))
    assert sorted(r.step().tolist()) == [1, 3]
