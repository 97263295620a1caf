"""Issues 53 and 72's IES rules: delta chosen on validation with a margin of >= 5 samples,
the control's grid of saved fractions, the verdicts."""

import pytest
import torch

from iclr25.ies.claim import (
    ARMS,
    CONTROL_SAVED,
    Training,
    TrainingEvidence,
    _control_arm,
    _evidence,
    _select_delta,
    accuracy_kept,
    backprop_saved,
    beats_random_removal,
    beats_small_loss,
    margin_samples,
    pick_delta,
    saved_schedule,
)
from iclr25.ies.testbed import TrainLog
from iclr25.verdicts import judge


@pytest.mark.parametrize("val_acc, plain, chosen", [
    ({1e-3: 90.0, 1e-2: 89.7, 5e-2: 89.0}, 90.0, 1e-2),   # 5e-2 loses 1.0 > 0.5 points
    ({5e-2: 91.0, 1e-3: 90.0, 1e-2: 89.6}, 90.0, 5e-2),   # order of the dict does not matter
    ({1e-3: 90.0, 1e-2: 88.0, 5e-2: 90.0}, 90.0, 1e-3),   # a lucky large delta does not win
    ({1e-3: 80.0, 1e-2: 85.0}, 90.0, 1e-3),               # none keeps accuracy: the smallest
    ({1e-3: 89.5}, 90.0, 1e-3),                           # exactly at the margin is kept
])
def test_pick_delta_largest_delta_that_keeps_validation_accuracy(val_acc, plain, chosen):
    assert pick_delta(val_acc, plain) == chosen


def test_pick_delta_margin_and_empty():
    assert pick_delta({1e-3: 90.0, 1e-2: 88.0}, 90.0, margin=2.0) == 1e-2
    with pytest.raises(ValueError, match="val_acc"):
        pick_delta({}, 90.0)


def test_pick_delta_margin_in_validation_samples():
    # issue 72: 0.5 points of a 337-row split is 1.7 samples, refused; of 1347 pooled, 6.7
    assert margin_samples(337) == pytest.approx(1.685)
    assert margin_samples(1347) == pytest.approx(6.735)
    with pytest.raises(ValueError, match=r"margin=0.5 points is 1\.6\d of n_val=337.*n_val >= "
                                         r"1000"):
        pick_delta({1e-3: 90.0}, 90.0, n_val=337)
    assert pick_delta({1e-3: 90.0, 1e-2: 89.6}, 90.0, n_val=1000) == 1e-2  # exactly 5
    with pytest.raises(ValueError, match="n_val=999"):
        pick_delta({1e-3: 90.0}, 90.0, n_val=999)


def test_delta_search_pools_every_training_row():
    from iclr25.datasets import digits

    split = digits(seed=3)
    setting = Training(epochs=2, n_seeds=1, lr=0.003, n_train=1347, deltas=(1e-3, 5e-2))
    chosen, rows = _select_delta(split, setting, 3, torch.device("cpu"))
    assert [r[1] for r in rows] == [1e-3, 5e-2] and chosen in (1e-3, 5e-2)
    for _, _, ies, plain, _, _ in rows:  # accuracies are counts out of all 1347 rows
        for acc in (ies, plain):
            assert acc * 1347 / 100 == pytest.approx(round(acc * 1347 / 100))


@pytest.mark.parametrize("n, epochs, saved, expect", [
    (10, 12, 0.25, [10] * 2 + [7] * 10),   # 2 full epochs, then 70%: 90 of 120 trained
    (10, 30, 0.5, [10] * 5 + [4] * 25),    # 5 full, then 40%: 150 of 300
    (100, 5, 0.2, [80] * 5),               # under 6 epochs nothing is trained in full
])
def test_control_schedule_saves_the_declared_fraction(n, epochs, saved, expect):
    sched = saved_schedule(n, epochs, saved)
    assert sched == expect
    assert 1 - sum(sched) / (n * epochs) == pytest.approx(saved)


def test_control_schedule_refuses_an_unreachable_fraction():
    with pytest.raises(ValueError, match="saved=0.9 cannot be reached in 5 of 6 epochs"):
        saved_schedule(10, 6, 0.9)


def test_control_grid_is_the_papers_range_not_ies():
    assert CONTROL_SAVED == (0.1, 0.2, 0.3, 0.4, 0.5)
    setting = Training(epochs=1, n_seeds=1, lr=0.1, n_train=100, deltas=(1e-3,))
    assert setting.control_saved == CONTROL_SAVED


def _log(acc: float, n: int = 100) -> TrainLog:
    return TrainLog("x", test_acc=[acc], active=[n], saved_fraction=0.0)


def test_control_reads_the_smallest_cost_over_the_grid():
    # two seeds; plain 0.95 / 0.93; grid costs (seed means): 10% -> 0.5, 30% -> 3.0
    setting = Training(epochs=1, n_seeds=2, lr=0.1, n_train=100, deltas=(1e-3,),
                       control_saved=(0.1, 0.3))
    runs = {a: [_log(0.9), _log(0.9)] for a in ARMS}
    runs["plain"] = [_log(0.95), _log(0.93)]
    runs[_control_arm(0.1)] = [_log(0.95), _log(0.92)]   # costs 0.0 and 1.0
    runs[_control_arm(0.3)] = [_log(0.92), _log(0.90)]   # costs 3.0 and 3.0
    ev = _evidence(setting, [0, 1], runs, [1e-3, 1e-3], [], [10.0, 10.0])
    assert ev.random_cost_per_rate == pytest.approx([0.5, 3.0])
    assert ev.random_cost == pytest.approx(0.5)  # the grid's weakest rate decides
    assert ev.random_cost_per_seed == pytest.approx([0.0, 1.0])
    assert ev.control_acc == pytest.approx([93.5, 91.0])
    assert ev.val_margin_samples == pytest.approx(0.5)  # 0.5 points of n = 100 rows
    for c in (accuracy_kept, beats_random_removal, beats_small_loss):
        assert judge(c, ev).status == "inconclusive"


def _ev(**kw):
    base = dict(saved=0.3, plain_acc=95.0, init_acc=10.0, ies_acc=94.8, random_acc=93.0,
                small_loss_acc=94.5, random2_acc=93.2, acc_diff=-0.2,
                random_diff=-2.0, random_vs_random=0.2, random_vs_small_loss=-1.5,
                plain_vs_small_loss=-0.1,  # removal regularised: plain below small-loss
                beats_random=1.8, beats_small_loss=0.3, random_cost=1.5, plain_gain=85.0,
                best_acc_diff=0.0, val_margin_samples=6.7, control_saved=[0.1, 0.5],
                control_acc=[93.5, 90.0], random_cost_per_rate=[1.5, 5.0],
                delta_per_seed=[1e-2], acc_diff_per_seed=[-0.2],
                beats_random_per_seed=[1.8], beats_small_loss_per_seed=[0.3],
                random_cost_per_seed=[1.5], saved_per_seed=[0.3])
    base.update(kw)
    return TrainingEvidence(**base)


def test_verdicts_hold_on_a_separating_run():
    for c in (backprop_saved, accuracy_kept, beats_random_removal, beats_small_loss):
        assert judge(c, _ev()).status == "holds", c.id


@pytest.mark.parametrize("kw", [dict(plain_gain=40.0), dict(random_cost=0.5)])
def test_control_makes_a_run_that_cannot_separate_inconclusive(kw):
    for c in (accuracy_kept, beats_random_removal, beats_small_loss):
        r = judge(c, _ev(**kw))
        assert r.status == "inconclusive", c.id
        # the control reads the baseline arms only, never IES's own result
        assert set(r.control_read) <= {"plain_gain", "random_cost"}
    # the saving claim asks only whether the baseline learned
    assert judge(backprop_saved, _ev(**kw)).status == (
        "inconclusive" if "plain_gain" in kw else "holds")


def test_accuracy_kept_is_uninformative_when_random_removal_keeps_it_too():
    r = judge(accuracy_kept, _ev(random_diff=-0.3))
    assert r.status == "uninformative"
    assert r.trivial_value == pytest.approx(-0.3)


def test_small_loss_is_named_beside_beats_random_and_gates_its_own_claim():
    ev = _ev(small_loss_acc=95.5, beats_small_loss=-0.7)
    r = judge(beats_random_removal, ev)
    assert r.status == "holds" and r.competitors == {
        "small-loss removal at IES's rate": 95.5}
    assert judge(beats_small_loss, ev).status == "fails"


def test_beats_random_is_uninformative_when_two_random_draws_differ_as_much():
    r = judge(beats_random_removal, _ev(random_vs_random=0.6))
    assert r.status == "uninformative" and r.trivial_value == pytest.approx(0.6)


def test_beats_small_loss_is_uninformative_when_random_removal_matches_small_loss():
    r = judge(beats_small_loss, _ev(random_vs_small_loss=0.0))
    assert r.status == "uninformative"


def test_beats_small_loss_is_uninformative_when_plain_training_ties_small_loss():
    # issue 74: with a small delta IES and small-loss removal both remove ~nothing and tie at
    # 0.0; plain training (nothing removed) meets ">= 0" the same way
    ev = _ev(ies_acc=95.0, small_loss_acc=95.0, beats_small_loss=0.0, plain_vs_small_loss=0.0)
    r = judge(beats_small_loss, ev)
    assert r.status == "uninformative" and r.trivial_value == 0.0
