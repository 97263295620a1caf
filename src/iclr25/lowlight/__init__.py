"""Zero-reference joint denoising and low-light enhancement (Retinex + frequency prior, ICLR 2025).

Needs ``pip install 'iclr25[image]'`` (images, PSNR/SSIM from ``iclr25.datasets.images``).
"""

from iclr25._optional import require

require("skimage", "image")
require("PIL", "image")

from iclr25.claims import Paper  # noqa: E402
from iclr25.datasets.images import psnr, ssim  # noqa: E402
from iclr25.lowlight.dct import dct_2d, frequency_bands, idct_2d  # noqa: E402
from iclr25.lowlight.enhancement import RestorationWarning, enhance  # noqa: E402
from iclr25.lowlight.estimator import ZeroReferenceEnhancer  # noqa: E402
from iclr25.lowlight.losses import (  # noqa: E402
    ColorConstancyLoss,
    ExposureLoss,
    IlluminationTVLoss,
    SpatialConsistencyLoss,
    color_constancy_loss,
    exposure_loss,
    illumination_tv_loss,
    neighbor_subimages,
    relight,
    spatial_consistency_loss,
    zero_reference_loss,
)
from iclr25.lowlight.metrics import noise_to_signal  # noqa: E402
from iclr25.lowlight.networks import (  # noqa: E402
    CurveNet,
    EnhanceOutput,
    FrequencyPrior,
    IlluminationNet,
    NoiseNet,
    ReflectanceNet,
    RetinexEnhancer,
    ZeroDCE,
)
from iclr25.lowlight.official import load_official  # noqa: E402
from iclr25.lowlight.training import train_enhancer  # noqa: E402

PAPER = Paper(
    number=17,
    short="lowlight",
    title="Interpretable Unsupervised Joint Denoising and Enhancement for Real-World "
          "Low-Light Scenarios",
    authors="Huaqiu Li, Xiaowan Hu, Haoqian Wang",
    arxiv="2503.14535",
    openreview="PVHoELf5UN",
    code="huaqlili/unsupervised-light-enhance-ICLR2025",
)

__all__ = [
    "PAPER", "ColorConstancyLoss", "CurveNet", "EnhanceOutput", "ExposureLoss",
    "FrequencyPrior", "IlluminationNet", "IlluminationTVLoss", "NoiseNet", "ReflectanceNet",
    "RestorationWarning", "RetinexEnhancer", "SpatialConsistencyLoss", "ZeroDCE",
    "ZeroReferenceEnhancer",
    "color_constancy_loss", "dct_2d", "enhance", "exposure_loss", "frequency_bands",
    "idct_2d", "illumination_tv_loss", "load_official", "neighbor_subimages",
    "noise_to_signal", "psnr",
    "relight", "spatial_consistency_loss", "ssim", "train_enhancer", "zero_reference_loss",
]
