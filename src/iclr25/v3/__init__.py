"""V3: unsupervised content/style disentanglement of sequences by variance-versus-invariance
constraints, with a discrete content codebook (Wu, Wang, Raj, Xia, ICLR 2025)."""

from iclr25.claims import Paper
from iclr25.v3.loss import TERMS, V3Loss, V3Terms, mpd, v3_loss
from iclr25.v3.metrics import codebook_accuracy, confusion, kmeans_codes, leakage_report
from iclr25.v3.model import BUNDLES, V3, ContentStyleAE, check_sequences, mlp_fragment_nets
from iclr25.v3.quantizer import EMAVectorQuantizer, kmeans

PAPER = Paper(
    number=14,
    short="v3",
    title="Unsupervised Disentanglement of Content and Style via Variance-Invariance "
          "Constraints",
    authors="Yuxuan Wu, Ziyu Wang, Bhiksha Raj, Gus Xia",
    arxiv="2407.03824",
    openreview="Lut5t3qElA",  # openreview.net/forum?id=Lut5t3qElA, ICLR 2025 poster
    code="Irislucent/variance-versus-invariance",
)

__all__ = [
    "BUNDLES", "PAPER", "TERMS", "V3", "ContentStyleAE", "EMAVectorQuantizer", "V3Loss",
    "V3Terms", "check_sequences", "codebook_accuracy", "confusion", "kmeans", "kmeans_codes",
    "leakage_report", "mlp_fragment_nets", "mpd", "v3_loss",
]
