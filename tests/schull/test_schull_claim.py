"""schull.energy_mae's verdicts: the control makes an uninformative run inconclusive."""

import pytest

pytest.importorskip("rdkit")

from iclr25.claims import ExperimentRecord, judge  # noqa: E402
from iclr25.schull.claim import LearnEvidence, energy_mae  # noqa: E402

RECORD = ExperimentRecord(id="schull.energy", method="schull", scale="full", seed=0,
                          device="cpu", seconds=1.0, setting={})


def _ev(schnet, cha, median):
    return LearnEvidence(gain=1 - cha / schnet, mae_schnet=schnet, mae_cha=cha,
                         mae_median=median, force_mae_schnet=1.0, force_mae_cha=1.0,
                         params_schnet=1, params_cha=1)


@pytest.mark.parametrize("schnet, cha, median, status", [
    (1.0, 0.8, 2.0, "holds"),          # SchNet learned (1.0 <= 1.5), gain 0.2
    (1.0, 0.95, 2.0, "fails"),         # learned, gain 0.05 < 0.10
    (1.0, 1.2, 2.0, "fails"),          # learned, CHA worse: a negative gain, not clamped
    (1.6, 0.8, 2.0, "inconclusive"),   # SchNet above 0.75 x median: uninformative
])
def test_energy_mae_verdicts(schnet, cha, median, status):
    r = judge(energy_mae, _ev(schnet, cha, median), RECORD)
    assert r.status == status
    assert r.measured == pytest.approx(1 - cha / schnet)
    assert (r.ours, r.baseline_value) == (pytest.approx(cha), pytest.approx(schnet))
    assert set(r.control_read) == {"mae_schnet", "mae_median"}   # never the method's own MAE
