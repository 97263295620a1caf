"""Issue 53's IES rules: delta chosen on validation, the fixed-rate control, the verdicts."""

import pytest

from iclr25.ies.claim import (
    TrainingEvidence,
    _fixed_rate,
    accuracy_kept,
    backprop_saved,
    beats_random_removal,
    beats_small_loss,
    pick_delta,
)
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


def test_control_rate_is_fixed_not_ies():
    # everything for 5 epochs, then 70% of the samples, whatever IES does
    assert _fixed_rate(10, 8) == [10] * 5 + [7] * 3
    assert _fixed_rate(10, 3) == [10] * 3


def _ev(**kw):
    base = dict(saved=0.3, plain_acc=95.0, init_acc=10.0, ies_acc=94.8, random_acc=93.0,
                small_loss_acc=94.5, control_acc=93.5, random2_acc=93.2, acc_diff=-0.2,
                random_diff=-2.0, random_vs_random=0.2, random_vs_small_loss=-1.5,
                beats_random=1.8, beats_small_loss=0.3, random_cost=1.5, plain_gain=85.0,
                best_acc_diff=0.0, delta_per_seed=[1e-2], acc_diff_per_seed=[-0.2],
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
