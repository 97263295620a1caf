"""COX: learn an out-of-modal (OOM) encoder from few or no cross-modal pairs through aligned,
labelled in-modal (IM) embeddings (Huang et al., ICLR 2025)."""

from iclr25.claims import Paper
from iclr25.cox.explore import entropy_discrepancy, prior_kl, select_agreement
from iclr25.cox.match import MATCHERS, emergent_correspondences, match_purity
from iclr25.cox.model import (
    COX,
    COXConvergenceWarning,
    COXFloorWarning,
    COXMatchingWarning,
    COXNamingWarning,
)
from iclr25.cox.vib import VIB, VIBLoss, vib_loss

PAPER = Paper(
    number=15,
    short="cox",
    title="Towards Out-of-Modal Generalization without Instance-level Modal Correspondence",
    authors="Zhuo Huang, Gang Niu, Bo Han, Masashi Sugiyama, Tongliang Liu",
    openreview="LuVulfPgZN",  # the official README links openreview.net/pdf?id=LuVulfPgZN
    code="zhuohuangai/Out-of-Modal-Generalization",
)

__all__ = [
    "COX",
    "COXConvergenceWarning",
    "COXFloorWarning",
    "COXMatchingWarning",
    "COXNamingWarning",
    "MATCHERS",
    "PAPER",
    "VIB",
    "VIBLoss",
    "emergent_correspondences",
    "entropy_discrepancy",
    "match_purity",
    "prior_kl",
    "select_agreement",
    "vib_loss",
]
