"""LOS claims' verdicts on toy evidence: the baseline must have learned, and a stage-1 head
that is not re-trained at all must not meet the gain claims' thresholds."""

import pytest

from iclr25.claims import Table
from iclr25.los.claim import (
    LongTailEvidence,
    balanced_accuracy_gain,
    beats_strongest_retraining,
    few_shot_gain,
)
from iclr25.verdicts import judge


def _ev(*, los=40.0, ce=35.0, stage1=35.0, untrained=1.0, best=38.0, los_few=20.0,
        ce_few=10.0, stage1_few=10.0):
    nan = float("nan")
    groups = Table("by group", ("method", "all", "many", "medium", "few", "mean LoMa",
                                "mean RSD"),
                   [("cbce", best, nan, nan, 15.0, nan, nan),
                    ("la", best - 1, nan, nan, 18.0, nan, nan),
                    ("lws", best - 2, nan, nan, 12.0, nan, nan)])
    return LongTailEvidence(
        gain=los - ce, few_gain=los_few - ce_few, loma_steps_down=1.0,
        margin_vs_best=los - best, strongest_baseline="cbce", los_acc=los, ce_acc=ce,
        los_few=los_few, ce_few=ce_few, best_acc=best, stage1_acc=stage1,
        stage1_few=stage1_few, untrained_acc=untrained, gain_per_seed=[los - ce],
        by_group=groups)


def test_gain_holds_when_ce_learned_and_stage1_does_not_meet_it():
    r = judge(balanced_accuracy_gain, _ev())
    assert r.status == "holds" and r.measured == pytest.approx(5.0)
    assert r.control_ok is True and r.trivial_value == pytest.approx(0.0)
    assert r.competitors == {"CB-CE": 38.0, "logit adj.": 37.0, "LWS": 36.0}


@pytest.mark.parametrize("claim", [balanced_accuracy_gain, few_shot_gain])
def test_ce_that_did_not_learn_is_inconclusive(claim):
    # CE re-training 4 points above the random-init MLP: under the 5-point margin
    r = judge(claim, _ev(ce=5.0, stage1=5.0, untrained=1.0))
    assert r.status == "inconclusive" and r.control_ok is False
    assert r.control_read == {"ce_acc": 5.0, "untrained_acc": 1.0}


def test_gain_is_uninformative_when_not_retraining_beats_ce_too():
    # CE re-training lost 3 points to the stage-1 head it started from
    r = judge(balanced_accuracy_gain, _ev(ce=32.0, stage1=35.0))
    assert r.status == "uninformative" and r.trivial_value == pytest.approx(3.0)


def test_few_shot_gain_trivial_arm_is_the_stage1_head():
    r = judge(few_shot_gain, _ev(stage1_few=10.05))
    assert r.status == "holds" and r.trivial_value == pytest.approx(0.05)
    assert r.competitors["logit adj."] == 18.0
    r = judge(few_shot_gain, _ev(stage1_few=12.0))
    assert r.status == "uninformative"


@pytest.mark.parametrize("best, stage1, status", [
    (38.0, 35.0, "holds"),          # re-balancing moved the stage-1 head by 3 points
    (36.5, 35.0, "inconclusive"),   # by 1.5: under the 2-point margin
    (5.0, 4.0, "inconclusive"),     # nothing learned at all (untrained 1%)
])
def test_strongest_baseline_must_beat_its_step0(best, stage1, status):
    r = judge(beats_strongest_retraining, _ev(best=best, stage1=stage1, los=40.0))
    assert r.status == status
    assert set(r.control_read) <= {"best_acc", "untrained_acc", "stage1_acc"}
