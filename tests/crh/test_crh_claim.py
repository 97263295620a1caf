"""CRH claims' verdicts on toy evidence: the probed networks must have learned, and an
untrained network (or the rotation null) must not meet the thresholds."""

import pytest

from iclr25.claims import ExperimentRecord, judge
from iclr25.crh.claim import (
    SweepEvidence,
    backward_above_null,
    backward_alignment,
    increases_with_weight_decay,
)

RECORD = ExperimentRecord(id="crh.sweep", method="crh", scale="full", seed=0, device="cpu",
                          seconds=1.0, setting={})
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
    r = judge(claim, _ev(), RECORD)
    assert r.status == "holds" and r.control_ok is True


@pytest.mark.parametrize("claim", CLAIMS)
def test_networks_that_did_not_learn_make_it_inconclusive(claim):
    # 15 points over random init: under the 20-point margin
    r = judge(claim, _ev(acc_min=0.25, acc0=0.10), RECORD)
    assert r.status == "inconclusive"
    assert r.control_read == {"train_acc_min": 0.25, "train_acc_untrained": 0.10}


def test_alignment_present_at_init_is_uninformative():
    r = judge(backward_alignment, _ev(b_init=0.8), RECORD)
    assert r.status == "uninformative" and r.trivial_value == pytest.approx(0.8)
    r = judge(backward_above_null, _ev(ratio_init=4.0), RECORD)
    assert r.status == "uninformative"


def test_a_rise_the_rotation_null_shares_is_uninformative():
    r = judge(increases_with_weight_decay, _ev(null_rising=1.0), RECORD)
    assert r.status == "uninformative"
    assert judge(increases_with_weight_decay, _ev(null_rising=0.5), RECORD).status == "holds"


def test_stacked_training_is_each_network_trained_alone():
    """The sweep's networks step together on stacked weights; each must be the network that
    fit_minibatch with torch.optim.SGD trains alone from the same init and minibatches (to
    float round-off), whatever its weight decay or data set."""
    import torch
    import torch.nn.functional as F

    from iclr25._train import fit_minibatch, seeded_mlp
    from iclr25.crh.claim import _train
    from iclr25.datasets import teacher_classification

    wds, steps = (0.0, 0.05), 30
    data = [(X, y, s) for s in (3, 4)
            for X, y in [teacher_classification(200, 6, 4, 8, seed=s, label_noise=0.2)]]
    got = _train(data, wds, steps)
    for (X, y, s), nets in zip(data, got, strict=True):
        for wd, net in zip(wds, nets, strict=True):
            alone = seeded_mlp([6, 64, 64, 4], seed=s)
            batches = torch.randint(0, len(X), (steps, 32),
                                    generator=torch.Generator().manual_seed(s))
            fit_minibatch(alone, F.cross_entropy, X, y, epochs=1, batch_size=32,
                          optimizer=torch.optim.SGD(alone.parameters(), lr=0.05,
                                                    weight_decay=wd),
                          batches=lambda epoch, b=batches: b)
            for a, b in zip(alone.parameters(), net.parameters(), strict=True):
                torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    # the weight decay reached its own network only
    assert not torch.allclose(got[0][0][0].weight, got[0][1][0].weight)
