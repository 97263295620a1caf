"""schull.energy_mae's verdicts: the control makes an uninformative run inconclusive."""

import pytest

pytest.importorskip("rdkit")

from iclr25.schull.claim import LearnEvidence, energy_mae, pick_force_weight  # noqa: E402
from iclr25.verdicts import judge  # noqa: E402


def _ev(schnet, cha, median, init=3.0):
    return LearnEvidence(gain=1 - cha / schnet, mae_schnet=schnet, mae_cha=cha,
                         mae_median=median, mae_schnet_init=init, force_mae_schnet=1.0,
                         force_mae_cha=1.0, force_mae_schnet_init=2.0, force_gain=0.0,
                         params_schnet=1, params_cha=1)


@pytest.mark.parametrize("schnet, cha, median, status", [
    (1.0, 0.8, 2.0, "holds"),          # SchNet learned (1.0 <= 1.5), gain 0.2
    (1.0, 0.95, 2.0, "fails"),         # learned, gain 0.05 < 0.10
    (1.0, 1.2, 2.0, "fails"),          # learned, CHA worse: a negative gain, not clamped
    (1.6, 0.8, 2.0, "inconclusive"),   # SchNet above 0.75 x median: uninformative
])
def test_energy_mae_verdicts(schnet, cha, median, status):
    r = judge(energy_mae, _ev(schnet, cha, median))
    assert r.status == status
    assert r.measured == pytest.approx(1 - cha / schnet)
    assert (r.ours, r.baseline_value) == (pytest.approx(cha), pytest.approx(schnet))
    # never the method's own MAE
    assert set(r.control_read) == {"mae_schnet", "mae_median", "mae_schnet_init"}


def test_energy_mae_inconclusive_when_schnet_does_not_beat_its_untrained_self():
    # below 0.75 x the median, but not 0.75 x its own untrained MAE
    assert judge(energy_mae, _ev(1.0, 0.5, 2.0, init=1.2)).status == "inconclusive"


@pytest.mark.parametrize("mae, median, chosen", [
    ({100.0: 3.0, 30.0: 2.0, 10.0: 1.4, 3.0: 1.2, 1.0: 1.3}, 2.5, 10.0),  # <= 0.6 x 2.5
    ({1.0: 1.0, 100.0: 1.5, 10.0: 1.4}, 2.5, 100.0),  # the largest passing weight
    ({100.0: 2.0, 10.0: 2.1, 1.0: 2.2}, 2.5, 1.0),     # none passes: the smallest tried
])
def test_pick_force_weight_largest_weight_at_which_schnet_learns_energy(mae, median, chosen):
    assert pick_force_weight(mae, median) == chosen


def test_pick_force_weight_margin_and_empty():
    assert pick_force_weight({100.0: 2.0, 1.0: 1.0}, 2.5, margin=0.8) == 100.0
    with pytest.raises(ValueError, match="energy_mae"):
        pick_force_weight({}, 2.5)
