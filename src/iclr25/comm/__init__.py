"""CoMM: multimodal contrastive pre-training on augmented fused views, which keeps redundant,
unique and synergistic information (Dufumier, Castillo-Navarro et al., ICLR 2025)."""

from iclr25.claims import Paper
from iclr25.comm.augment import (
    BrightnessContrast,
    ColorJitter,
    Compose,
    GaussianNoise,
    RandomDrop,
    RandomShift,
    ResizedCropFlip,
)
from iclr25.comm.embedder import CoMMEmbedder
from iclr25.comm.loss import (
    ClipLoss,
    CoMMLoss,
    InfoNCELoss,
    clip_loss,
    comm_loss,
    infonce,
    modality_masks,
)
from iclr25.comm.model import (
    CoMM,
    FeatureTokenizer,
    FusionTransformer,
    PatchTokenizer,
    conv_encoder,
    mlp_encoder,
)
from iclr25.comm.training import OBJECTIVES, features, linear_probe, objective_loss, pretrain

PAPER = Paper(
    number=12,
    short="comm",
    title="What to align in multimodal contrastive learning?",
    authors="Benoit Dufumier, Javiera Castillo-Navarro, Devis Tuia, Jean-Philippe Thiran",
    arxiv="2409.07402",
    openreview=None,  # ICLR 2025 poster; its OpenReview id was not found (search, official README)
    code="Duplums/CoMM",
)

__all__ = [
    "OBJECTIVES",
    "PAPER",
    "BrightnessContrast",
    "ClipLoss",
    "ColorJitter",
    "CoMM",
    "CoMMEmbedder",
    "CoMMLoss",
    "Compose",
    "FeatureTokenizer",
    "FusionTransformer",
    "GaussianNoise",
    "InfoNCELoss",
    "PatchTokenizer",
    "RandomDrop",
    "RandomShift",
    "ResizedCropFlip",
    "clip_loss",
    "comm_loss",
    "conv_encoder",
    "features",
    "infonce",
    "linear_probe",
    "mlp_encoder",
    "modality_masks",
    "objective_loss",
    "pretrain",
]
