"""DCPT: pre-train any image restorer by classifying degradations from its features.

Hu, Jin, Yao, Lu, "Universal Image Restoration Pre-training via Degradation
Classification", ICLR 2025. Data (bundled images, synthetic degradations, PSNR/SSIM) comes
from ``iclr25.datasets.images``; needs ``pip install 'iclr25[image]'``.
"""

from iclr25._optional import require

require("skimage", "image")
require("PIL", "image")

from iclr25.claims import Paper  # noqa: E402
from iclr25.datasets.images import psnr, ssim  # noqa: E402
from iclr25.dcpt.baselines import CLASSICAL, classical  # noqa: E402
from iclr25.dcpt.io import Checkpoint, load, save  # noqa: E402
from iclr25.dcpt.loss import FocalLoss, dcpt_loss, focal_loss  # noqa: E402
from iclr25.dcpt.nafnet import NAFNet  # noqa: E402
from iclr25.dcpt.networks import DegradationClassifier, FeatureTap, UNet  # noqa: E402
from iclr25.dcpt.official import load_official  # noqa: E402
from iclr25.dcpt.probe import classify, feature_probe  # noqa: E402
from iclr25.dcpt.restoration import RestorationWarning, restore  # noqa: E402
from iclr25.dcpt.restormer import Restormer  # noqa: E402
from iclr25.dcpt.training import FinetuneResult, PretrainResult, finetune, pretrain  # noqa: E402

PAPER = Paper(
    number=16,
    short="dcpt",
    title="Universal Image Restoration Pre-training via Degradation Classification",
    authors="JiaKui Hu, Lujia Jin, Zhengjian Yao, Yanye Lu",
    arxiv="2501.15510",
    code="MILab-PKU/dcpt",
)

__all__ = [
    "CLASSICAL",
    "PAPER",
    "Checkpoint",
    "DegradationClassifier",
    "FeatureTap",
    "FinetuneResult",
    "FocalLoss",
    "NAFNet",
    "PretrainResult",
    "RestorationWarning",
    "Restormer",
    "UNet",
    "classical",
    "classify",
    "dcpt_loss",
    "feature_probe",
    "finetune",
    "focal_loss",
    "load",
    "load_official",
    "pretrain",
    "psnr",
    "restore",
    "save",
    "ssim",
]
