"""Issue 53's testbed rule and the claims' controls and trivial arms, on known toys."""
from types import SimpleNamespace

import pytest

pytest.importorskip("gymnasium")

from iclr25 import claims  # noqa: E402
from iclr25.gsd.claim import choose_testbed, separable  # noqa: E402
from iclr25.verdicts import judge  # noqa: E402

# the pilot's table (held-out seed 7): (name, IG+M VL10 on its lanes, untrained, IG+M VL10 on
# the targets, experts on uniform lanes)
PILOT = [("current", 0.126, 0.481, 0.073, 0.090),
         ("wide gap", 0.143, 0.718, 0.127, 0.089)]


def test_rule_needs_a_learned_baseline_and_room_for_the_gain():
    assert not separable(0.126, 0.481, 0.073, 0.090)   # experts no better than IG+M
    assert separable(0.143, 0.718, 0.127, 0.089)       # experts 30 % better
    assert not separable(0.40, 0.48, 0.127, 0.089)     # IG+M barely beat its untrained self
    assert separable(0.24, 0.48, 0.10, 0.08)           # both margins met exactly


def test_rule_takes_the_first_separable_candidate_in_order():
    assert choose_testbed(PILOT) == "wide gap"
    assert choose_testbed([*PILOT[1:], ("smaller K", 0.1, 0.5, 0.5, 0.1)]) == "wide gap"
    assert choose_testbed(PILOT[:1]) is None


def _judge(cid, **fields):
    c = claims.discover()[cid]
    return judge(c, SimpleNamespace(**fields))


LANE = dict(vl10_gsd=0.08, vl10_igm=0.127, vl10_ratio=0.08 / 0.127, vl10_igm_sn=0.12,
            vl10_bc=0.2, vl10_lanes_igm=0.143, vl10_lanes_igm_untrained=0.718,
            vl10_uniform_experts=0.089, uniform_experts_success=1.0,
            selected_success_gsd=1.0, selected_success_igm=0.5)


def test_interpolation_control_reads_the_baselines():
    assert _judge("gsd.interpolation_recovery", **LANE).status == "holds"
    # experts on uniform lanes no better than IG+M: the testbed cannot show the gain
    r = _judge("gsd.interpolation_recovery", **{**LANE, "vl10_uniform_experts": 0.12})
    assert r.status == "inconclusive"
    assert r.control_read["vl10_uniform_experts"] == 0.12
    # IG+M did not learn
    r = _judge("gsd.interpolation_recovery", **{**LANE, "vl10_lanes_igm": 0.5})
    assert r.status == "inconclusive"


def test_selected_behaviours_are_uninformative_when_ig_m_succeeds_too():
    assert _judge("gsd.selected_behaviours_succeed", **LANE).status == "holds"
    r = _judge("gsd.selected_behaviours_succeed", **{**LANE, "selected_success_igm": 0.99})
    assert r.status == "uninformative" and r.trivial_value == 0.99


def _row(name, seed, igm, experts=0.09, lanes_igm=0.1, lanes_untrained=0.7):
    from iclr25.gsd.claim import separable
    return dict(candidate=name, seed=seed, lanes_igm=lanes_igm,
                lanes_untrained=lanes_untrained, igm=igm, experts=experts,
                passes=separable(lanes_igm, lanes_untrained, igm, experts))


def test_issue72_pilot_needs_every_seed_and_falls_back_to_the_most_room():
    from iclr25.gsd.pilot import CANDIDATES, choose
    a, b, c, d = (x.name for x in CANDIDATES)
    # a passes on two seeds of three: not chosen; b passes on all three
    rows = [_row(a, 7, 0.2), _row(a, 8, 0.2), _row(a, 9, 0.1),
            *(_row(b, s, 0.12) for s in (7, 8, 9)), *(_row(c, s, 0.2) for s in (7, 8, 9))]
    assert choose(rows) == (b, True)
    # none passes: the smallest seed-mean experts / IG+M among the learned ones (c did not
    # learn on seed 9, so its larger room does not count)
    rows = [*(_row(a, s, 0.1) for s in (7, 8, 9)), *(_row(b, s, 0.105) for s in (7, 8, 9)),
            _row(c, 7, 0.3), _row(c, 8, 0.3), _row(c, 9, 0.3, lanes_igm=0.5),
            *(_row(d, s, 0.09) for s in (7, 8, 9))]
    assert choose(rows) == (b, False)
    # nothing learned: the current testbed stays
    assert choose([_row(a, 7, 0.3, lanes_igm=0.6)]) == (a, False)
