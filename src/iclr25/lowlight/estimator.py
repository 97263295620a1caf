"""The scikit-learn-style :class:`ZeroReferenceEnhancer`: ``fit`` trains, ``transform``
enhances, ``save``/``load`` (:class:`~iclr25._io.FittedIO`) keep it."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from torch import nn

from iclr25._checks import check_choice, check_int, check_range, like_input, resolve_seed
from iclr25._contract import Images as ImageBatch
from iclr25._contract import Positive, checked
from iclr25._engine import EngineOptions, Unpack
from iclr25._guard import Fallback
from iclr25._io import FittedIO
from iclr25.lowlight.enhancement import enhance
from iclr25.lowlight.networks import RetinexEnhancer
from iclr25.lowlight.training import Images, Method, _image_list, build_model, train_enhancer

__all__ = ["ZeroReferenceEnhancer"]


@checked
class ZeroReferenceEnhancer(FittedIO, BaseEstimator, TransformerMixin):
    """scikit-learn-style estimator: ``fit`` on dark images (no references), ``transform``.

    Args:
        method: "retinex" (the paper's joint network) or "zero_dce" (the baseline).
        width: network width (None = paper: 64 for retinex, 32 for Zero-DCE).
        steps, crop, batch_size, lr: training schedule (Adam).
        seed: weights, crops and pairing draws (an int, a torch.Generator or None: fresh).
        pairing: False = the no-pairing ablation (retinex only).

    Attributes:
        model_: the trained network; history_: loss per step.

    Examples:
        >>> x = torch.rand(2, 3, 16, 16) * 0.1
        >>> est = ZeroReferenceEnhancer(width=8, steps=2, crop=8, batch_size=1).fit(x)
        >>> est.transform(x).shape
        torch.Size([2, 3, 16, 16])
    """

    def __init__(self, method: Method = "retinex", *, width: int | None = None, steps: int = 600,
                 crop: int = 128, batch_size: int = 4, lr: Positive = 1e-4,
                 seed: int | torch.Generator | None = 0, pairing: bool = True) -> None:
        self.method = method
        self.width = width
        self.steps = steps
        self.crop = crop
        self.batch_size = batch_size
        self.lr = lr
        self.seed = seed
        self.pairing = pairing

    def fit(self, images: Images, y: object = None,
            **engine: Unpack[EngineOptions]) -> ZeroReferenceEnhancer:
        """Train a fresh network on ``images`` (dark images, no references; ``y`` ignored).

        ``**engine``: how the training runs (:class:`iclr25._engine.EngineOptions`:
        ``devices``, ``strategy``, ``precision``, ``checkpoint``, ``checkpoint_every``,
        ``resume``), as :func:`~iclr25.lowlight.train_enhancer` takes them.
        """
        check_choice(self.method, "method", ("retinex", "zero_dce"))
        if self.width is not None:
            check_int(self.width, "width", 1)
        check_int(self.steps, "steps", 1)
        check_range(self.lr, "lr", 0, low_open=True)
        ims = _image_list(images)
        # an int seed seeds the weights with itself
        model = build_model(self.method, self.width, seed=resolve_seed(self.seed).initial_seed())
        self.history_ = train_enhancer(model, ims, steps=self.steps, crop=self.crop,
                                       batch_size=self.batch_size, lr=self.lr,
                                       pairing=self.pairing, seed=self.seed, **engine)
        self.model_ = model
        return self

    def _check_fitted(self) -> None:
        check_is_fitted(self, "model_")

    def transform(self, images: ImageBatch, *, reference: ImageBatch | None = None,
                  fallback: Fallback | None = None, margin: float | None = None,
                  check: bool = True, tile: int | None = None) -> torch.Tensor | np.ndarray:
        """:func:`enhance` with the fitted model (same check, warning, ``fallback`` and
        ``margin``): a tensor for tensor images, a numpy array for a numpy array or a list."""
        self._check_fitted()
        return like_input(enhance(self.model_, images, reference=reference, fallback=fallback,
                                  margin=margin, check=check, tile=tile), images)

    def _new_module(self, name: str) -> nn.Module:
        config = getattr(self, "config_", None)  # set by load_official: the file's sizes
        if config:
            return RetinexEnhancer(**config)
        return build_model(self.method, self.width, seed=resolve_seed(self.seed).initial_seed())
