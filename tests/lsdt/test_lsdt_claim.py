"""Issue 53: lsdt.long_range reads DT as well as DC, and its control asks whether DT learned."""
from types import SimpleNamespace

import pytest

pytest.importorskip("gymnasium")

from iclr25 import claims  # noqa: E402
from iclr25.lsdt.claim import _long_range  # noqa: E402
from iclr25.verdicts import judge  # noqa: E402


def test_long_range_needs_both_margins():
    assert _long_range(1.0, 1.0, 0.5) == pytest.approx(0.35)   # both met
    assert _long_range(0.9, 1.0, 0.5) == pytest.approx(0.25)   # LSDT lost DT's ability
    assert _long_range(1.0, 1.0, 0.75) == pytest.approx(0.25)  # DC not far enough behind
    assert _long_range(0.95, 1.0, 0.5) == pytest.approx(0.3)   # exactly on the margin


CUE = dict(cue_success_lsdt=0.9, cue_success_dt=1.0, cue_success_dc=0.5,
           cue_untrained_dt=0.5, cue_untrained_lsdt=0.5)


def _judge(**fields):
    c = claims.discover()["lsdt.long_range"]
    ev = SimpleNamespace(**fields)
    ev.long_range = _long_range(ev.cue_success_lsdt, ev.cue_success_dt, ev.cue_success_dc)
    return judge(c, ev)


def test_lsdt_below_dt_fails_even_far_above_dc():
    r = _judge(**CUE)
    assert r.status == "fails" and r.ours == 0.9 and r.baseline_value == 0.5
    assert r.competitors == {"DT": 1.0}
    assert _judge(**{**CUE, "cue_success_lsdt": 1.0}).status == "holds"


def test_dt_that_did_not_learn_makes_it_inconclusive():
    r = _judge(**{**CUE, "cue_success_lsdt": 1.0, "cue_untrained_dt": 0.95})
    assert r.status == "inconclusive"
    assert r.control_read["cue_untrained_dt"] == 0.95


def test_an_untrained_lsdt_that_solves_the_cue_makes_it_uninformative():
    r = _judge(**{**CUE, "cue_success_lsdt": 1.0, "cue_untrained_lsdt": 1.0})
    assert r.status == "uninformative"
