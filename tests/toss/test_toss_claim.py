"""ToSS claims' verdicts: each baseline must beat the x-blind prediction (its untrained,
constant self) by 10%, or the verdict is inconclusive."""

import pytest

from iclr25.claims import Table
from iclr25.toss.claim import (
    MultivariateEvidence,
    SinusoidEvidence,
    self_supervised,
    supervised_bound,
    univariate_epochs,
    vs_tic,
)
from iclr25.verdicts import judge


def _ev(toss, tic, constant, nll=float("nan")):
    nan = float("nan")
    return MultivariateEvidence(
        supervised_ratio=nan, self_ratio=toss / nll, tic_ratio=toss / tic,
        supervised_tic_ratio=nan, cov_error_nll=nll, cov_error_tic=tic, cov_error_toss=toss,
        cov_error_bound=nan, cov_error_constant=constant, epoch_time_ratio=0.2,
        epoch_time_toss=0.1, epoch_time_tic=0.5, epoch_time_nll=0.1, pseudo_label_time=0.1,
        local_linear_ratio=nan, label_error=nan, label_error_local_linear=nan,
        by_method=Table("by method", ("method", "cov_error"),
                        [("NLL", nll), ("TIC", tic), ("ToSS", toss)]))


@pytest.mark.parametrize("toss, tic, constant, status", [
    (0.2, 0.25, 0.9, "holds"),
    (0.3, 0.25, 0.9, "fails"),
    (0.2, 0.95, 0.9, "inconclusive"),   # TIC no better than ignoring x
    (0.2, 0.85, 0.9, "inconclusive"),   # better, but not by the 10% margin
])
def test_vs_tic_verdicts(toss, tic, constant, status):
    r = judge(vs_tic, _ev(toss, tic, constant))
    assert r.status == status
    assert r.measured == pytest.approx(toss / tic)
    assert r.baseline == "TIC" and r.baseline_value == pytest.approx(tic)
    assert set(r.control_read) == {"cov_error_tic", "cov_error_constant"}


def test_self_supervised_needs_nll_to_learn_and_names_tic():
    r = judge(self_supervised, _ev(0.3, 0.2, 0.9, nll=0.5))
    assert r.status == "holds" and r.competitors == {"TIC": 0.2}
    r = judge(self_supervised, _ev(0.3, 0.2, 0.9, nll=0.85))
    assert r.status == "inconclusive"
    assert set(r.control_read) == {"cov_error_nll", "cov_error_constant"}
    assert judge(supervised_bound, _ev(0.3, 0.2, 0.9, nll=0.85)).status \
        == "inconclusive"


def _ev1d(toss, nll, constant):
    return SinusoidEvidence(
        ratio=toss / nll, ratio_tic=toss / 0.4, sigma_err_toss=toss, sigma_err_nll=nll,
        sigma_err_tic=0.4, sigma_err_beta_nll=0.3, sigma_err_constant=constant)


@pytest.mark.parametrize("toss, nll, constant, status", [
    (0.1, 0.4, 0.58, "holds"),
    (0.3, 0.4, 0.58, "fails"),
    (0.1, 0.55, 0.58, "inconclusive"),  # NLL within 10% of the constant σ̂ after its epochs
])
def test_univariate_control_is_nll_against_a_constant_sigma(toss, nll, constant, status):
    r = judge(univariate_epochs, _ev1d(toss, nll, constant))
    assert r.status == status
    assert set(r.control_read) == {"sigma_err_nll", "sigma_err_constant"}
    assert r.competitors == {"TIC": 0.4, "β-NLL": 0.3}


def test_pilot_choose_takes_the_smallest_scale_passing_on_every_seed():
    from iclr25.toss.pilot import choose

    def rows(scale, *passes):
        return [dict(het_scale=scale, seed=s, passes=p) for s, p in enumerate(passes)]

    assert choose(rows(1.0, True, False, True) + rows(2.0, True, True, True)
                  + rows(4.0, True, True, True)) == (2.0, True)
    assert choose(rows(1.0, False, False, True) + rows(2.0, True, False, True)) == (1.0, False)
