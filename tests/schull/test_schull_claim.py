"""schull.energy_mae and schull.force_mae verdicts (the controls make an uninformative run
inconclusive) and the testbed pilot's rule."""

import pytest

pytest.importorskip("rdkit")

from iclr25.schull.claim import LearnEvidence, energy_mae, force_mae  # noqa: E402
from iclr25.schull.pilot import CANDIDATES, choose  # noqa: E402
from iclr25.verdicts import judge  # noqa: E402


def _ev(schnet, cha, median, init=3.0, f_schnet=1.0, f_cha=1.0, f_zero=2.0, f_init=2.0):
    return LearnEvidence(gain=1 - cha / schnet, mae_schnet=schnet, mae_cha=cha,
                         mae_median=median, mae_schnet_init=init, force_mae_schnet=f_schnet,
                         force_mae_cha=f_cha, force_mae_schnet_init=f_init,
                         force_mae_zero=f_zero, force_gain=1 - f_cha / f_schnet,
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


@pytest.mark.parametrize("f_schnet, f_cha, f_zero, status", [
    (1.0, 0.9, 2.0, "holds"),          # SchNet learned the forces (1.0 <= 1.5), CHA better
    (1.0, 1.1, 2.0, "fails"),          # CHA's forces worse: a negative gain
    (1.6, 0.5, 2.0, "inconclusive"),   # SchNet above 0.75 x zero forces: uninformative
])
def test_force_mae_verdicts(f_schnet, f_cha, f_zero, status):
    r = judge(force_mae, _ev(1.0, 0.8, 2.0, f_schnet=f_schnet, f_cha=f_cha, f_zero=f_zero))
    assert r.status == status
    assert r.measured == pytest.approx(1 - f_cha / f_schnet)
    assert (r.ours, r.baseline_value) == (pytest.approx(f_cha), pytest.approx(f_schnet))
    assert set(r.control_read) == {"force_mae_schnet", "force_mae_zero",
                                   "force_mae_schnet_init"}


def _row(name, seed, e_ratio, f_ratio=0.5, cpu=10.0):
    return dict(candidate=name, seed=seed, energy_ratio=e_ratio, force_ratio=f_ratio, cpu_s=cpu,
                learned=e_ratio <= 0.75 and f_ratio <= 0.75)


def test_pilot_takes_the_first_candidate_learned_on_every_seed():
    a, b, c = (x.name for x in CANDIDATES[:3])
    rows = [_row(a, 1, 0.7), _row(a, 2, 0.8),              # one seed misses: a fails
            _row(b, 1, 0.6, cpu=15), _row(b, 2, 0.7, cpu=15),
            _row(c, 1, 0.5), _row(c, 2, 0.5)]
    assert choose(rows) == (b, True)
    # forces count too
    rows[2:4] = [_row(b, 1, 0.6, 0.8), _row(b, 2, 0.7)]
    assert choose(rows) == (c, True)


def test_pilot_time_bound_and_fallback():
    a, b, c = (x.name for x in CANDIDATES[:3])
    # b learned but costs over 2x a's CPU time: not eligible
    rows = [_row(a, 1, 0.9), _row(b, 1, 0.5, cpu=21.0), _row(c, 1, 0.85, 0.9)]
    assert choose(rows) == (c, False)   # fallback: smallest worst-seed energy ratio in time
    rows.append(_row(c, 2, 0.95))
    assert choose(rows) == (a, False)
