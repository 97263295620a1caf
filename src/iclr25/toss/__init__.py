"""ToSS: heteroscedastic regression with a 2-Wasserstein-bound covariance loss and
neighbourhood pseudo-labels (Shukla, Shameem, Salzmann, Alahi, ICLR 2025)."""

from iclr25.claims import Paper
from iclr25.toss.losses import (
    BetaNLLLoss,
    GaussianNLLLoss,
    W2BoundLoss,
    beta_nll_loss,
    gaussian_nll_loss,
    gaussian_w2,
    sqrtm_psd,
    w2_bound,
)
from iclr25.toss.metrics import cov_error, gaussian_nll, tac
from iclr25.toss.model import CovarianceHead, HeteroscedasticRegressor
from iclr25.toss.pseudo import pseudo_covariance, whiten
from iclr25.toss.testbed import HeteroscedasticData, make_heteroscedastic, make_sinusoid

PAPER = Paper(
    number=7,
    short="toss",
    title="Towards Self-Supervised Covariance Estimation in Deep Heteroscedastic "
          "Regression",
    authors="Megh Shukla, Aziz Shameem, Mathieu Salzmann, Alexandre Alahi",
    arxiv="2502.10587",
    openreview="Q1kPHLUbhi",
    code="vita-epfl/ToSS",
)

__all__ = [
    "PAPER",
    "BetaNLLLoss",
    "CovarianceHead",
    "GaussianNLLLoss",
    "HeteroscedasticData",
    "HeteroscedasticRegressor",
    "W2BoundLoss",
    "beta_nll_loss",
    "cov_error",
    "gaussian_nll",
    "gaussian_nll_loss",
    "gaussian_w2",
    "make_heteroscedastic",
    "make_sinusoid",
    "pseudo_covariance",
    "sqrtm_psd",
    "tac",
    "w2_bound",
    "whiten",
]
