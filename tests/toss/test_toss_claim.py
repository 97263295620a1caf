"""toss.vs_tic's verdicts: ToSS against TIC, inconclusive when TIC learned nothing."""

import pytest

from iclr25.claims import ExperimentRecord, judge
from iclr25.toss.claim import MultivariateEvidence, vs_tic

RECORD = ExperimentRecord(id="toss.multivariate", method="toss", scale="full", seed=0,
                          device="cpu", seconds=1.0, setting={})


def _ev(toss, tic, constant):
    nan = float("nan")
    return MultivariateEvidence(
        supervised_ratio=nan, self_ratio=nan, tic_ratio=toss / tic, supervised_tic_ratio=nan,
        cov_error_nll=nan, cov_error_tic=tic, cov_error_toss=toss, cov_error_bound=nan,
        cov_error_constant=constant, epoch_time_ratio=0.2, epoch_time_toss=0.1,
        epoch_time_tic=0.5, epoch_time_nll=0.1, pseudo_label_time=0.1, local_linear_ratio=nan,
        label_error=nan, label_error_local_linear=nan)


@pytest.mark.parametrize("toss, tic, constant, status", [
    (0.2, 0.25, 0.9, "holds"),
    (0.3, 0.25, 0.9, "fails"),
    (0.2, 0.95, 0.9, "inconclusive"),   # TIC no better than ignoring x
])
def test_vs_tic_verdicts(toss, tic, constant, status):
    r = judge(vs_tic, _ev(toss, tic, constant), RECORD)
    assert r.status == status
    assert r.measured == pytest.approx(toss / tic)
    assert r.baseline == "TIC" and r.baseline_value == pytest.approx(tic)
    assert set(r.control_read) == {"cov_error_tic", "cov_error_constant"}
