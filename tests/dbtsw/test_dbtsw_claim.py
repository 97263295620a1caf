"""Db-TSW claims' verdicts on toy evidence: the baseline's flow must have moved at least one
decade of W2² from its start (its untrained, step-0 self) for the gap to count."""

import pytest

from iclr25.dbtsw.claim import FlowEvidence, flow_2d, flow_vs_sw, splitting_vs_tswsl
from iclr25.verdicts import judge


def _ev(drop=2.0):
    return FlowEvidence(auc_sw=-1.0, auc_tswsl=-1.1, auc_dbtsw=-1.5, auc_sw_2d=-2.0,
                        auc_tswsl_2d=-2.0, auc_dbtsw_2d=-2.2, drop_sw=drop, drop_tswsl=drop,
                        drop_sw_2d=drop)


@pytest.mark.parametrize("claim, field", [(flow_vs_sw, "drop_sw"),
                                          (splitting_vs_tswsl, "drop_tswsl"),
                                          (flow_2d, "drop_sw_2d")])
def test_a_baseline_that_did_not_move_is_inconclusive(claim, field):
    assert judge(claim, _ev(2.0)).status == "holds"
    r = judge(claim, _ev(0.9))  # under the one-decade margin
    assert r.status == "inconclusive" and r.control_read == {field: 0.9}
