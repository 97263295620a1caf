"""OFT claims' verdicts on toy evidence: HiGHS must have solved the instances (the solver's
"did the baseline learn?"), and a flow that ignores cost must not be near-optimal."""

import pytest

from iclr25.oft import flow_cost, flow_violations, make_layered, min_cost_flow
from iclr25.oft.claim import (
    INFEASIBLE,
    LayeredEvidence,
    _Arms,
    _blind_gaps,
    capacitated,
    near_optimal,
)
from iclr25.verdicts import judge


def _ev(*, gap=0.01, lp_violation=1e-12, lp_cost=0.5, blind=0.8, bind=0.05):
    return LayeredEvidence(
        worst_gap=gap, worst_cost=lp_cost * (1 + gap), worst_lp=lp_cost,
        worst_gap_capacitated=gap, worst_cost_capacitated=lp_cost * (1 + gap),
        worst_lp_capacitated=lp_cost, worst_gap_paper_clip=0.04, cap_cost_increase=bind,
        lp_violation=lp_violation, lp_cost_min=lp_cost, blind_gap=blind,
        blind_gap_capacitated=blind)


@pytest.mark.parametrize("claim", [near_optimal, capacitated])
def test_verdicts_read_the_lp_and_the_cost_blind_flow(claim):
    assert judge(claim, _ev()).status == "holds"
    assert judge(claim, _ev(gap=0.05)).status == "fails"
    # HiGHS's flow off balance by 1e-4 of the mass: no optimum to measure the gap against
    r = judge(claim, _ev(lp_violation=1e-4))
    assert r.status == "inconclusive" and r.control_read["lp_violation"] == 1e-4
    assert judge(claim, _ev(lp_cost=float("nan"))).status == "inconclusive"
    # a degenerate instance where ignoring cost is within 2% of the optimum
    r = judge(claim, _ev(blind=0.015))
    assert r.status == "uninformative" and r.trivial_value == 0.015


def test_capacitated_control_still_needs_binding_caps():
    r = judge(capacitated, _ev(bind=0.001))
    assert r.status == "inconclusive"


@pytest.mark.parametrize("layer", [6, 20])
def test_cost_blind_flow_is_balanced_and_far_from_optimal(layer):
    s, C = make_layered(layer, layer, layer, seed=3)
    s, C = s[None], C[None]
    F0, lp = min_cost_flow(s, C, log=True)
    caps = 0.25 * F0.amax(dim=(-2, -1))
    _, lp_cap = min_cost_flow(s, C, capacity=caps.view(-1, 1, 1), log=True)
    arms = _Arms(s, C, float(s.clamp_min(0).sum()), caps, lp, lp_cap, {}, {}, {}, 0.0)
    blind, blind_cap = _blind_gaps(arms)
    sup, dem = s.clamp_min(0), (-s).clamp_min(0)
    F = sup[:, :, None] * dem[:, None, :]
    assert float(flow_violations(F, s)["balance_violation"][0]) < 1e-12
    cost = float(flow_cost(F, C)[0])
    assert blind[0] == pytest.approx((cost - float(lp["cost"][0])) / float(lp["cost"][0]))
    assert blind[0] > 0.1  # far from optimal: the instance tells flows apart
    if layer == 6:  # few nodes: s_i d_k is above a quarter of the LP's largest edge flow
        assert float(F.amax()) > float(caps[0]) and blind_cap[0] == INFEASIBLE
    else:  # the claim's sizes: under the cap, judged against the capped optimum
        assert float(F.amax()) < float(caps[0])
        assert blind_cap[0] == pytest.approx((cost - float(lp_cap["cost"][0]))
                                             / float(lp_cap["cost"][0]))
