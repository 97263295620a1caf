"""CRH claims' verdicts on toy evidence: the probed networks must have learned, and an
untrained network (or the rotation null) must not meet the thresholds."""

import pytest

from iclr25.crh.claim import (
    SweepEvidence,
    backward_above_null,
    backward_alignment,
    increases_with_weight_decay,
)
from iclr25.verdicts import judge

CLAIMS = [backward_alignment, increases_with_weight_decay, backward_above_null]


def _ev(*, acc_min=0.85, acc0=0.10, b_init=0.3, ratio_init=1.5, null_rising=0.0):
    return SweepEvidence(
        backward=0.85, backward_mean=0.9, backward_null=0.15, rising=1.0, six_at_wd0=0.5,
        six_at_claim=0.8, increase=0.3, above_null=5.0, above_null_alpha=0.8,
        above_null_null=0.16, backward_untrained=b_init, above_null_untrained=ratio_init,
        null_rising=null_rising, train_acc_min=acc_min, train_acc_untrained=acc0,
        backward_per_seed=[0.85], increase_per_seed=[0.3])


@pytest.mark.parametrize("claim", CLAIMS)
def test_holds_when_the_networks_learned(claim):
    r = judge(claim, _ev())
    assert r.status == "holds" and r.control_ok is True


@pytest.mark.parametrize("claim", CLAIMS)
def test_networks_that_did_not_learn_make_it_inconclusive(claim):
    # 15 points over random init: under the 20-point margin
    r = judge(claim, _ev(acc_min=0.25, acc0=0.10))
    assert r.status == "inconclusive"
    assert r.control_read == {"train_acc_min": 0.25, "train_acc_untrained": 0.10}


def test_alignment_present_at_init_is_uninformative():
    r = judge(backward_alignment, _ev(b_init=0.8))
    assert r.status == "uninformative" and r.trivial_value == pytest.approx(0.8)
    r = judge(backward_above_null, _ev(ratio_init=4.0))
    assert r.status == "uninformative"


def test_a_rise_the_rotation_null_shares_is_uninformative():
    r = judge(increases_with_weight_decay, _ev(null_rising=1.0))
    assert r.status == "uninformative"
    assert judge(increases_with_weight_decay, _ev(null_rising=0.5)).status == "holds"
