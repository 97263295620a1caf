"""``CoMMEmbedder``: CoMM on row-aligned vector modalities as a scikit-learn-style estimator
(``fit`` on a list of arrays or streamed from Datasets, ``transform`` with modalities possibly
missing, save/load)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from torch.utils.data import Dataset

from iclr25._checks import as_tensor, check_int, check_range, resolve_seed
from iclr25._contract import checked
from iclr25._engine import EngineOptions, Unpack
from iclr25._io import FittedIO
from iclr25.comm.augment import Compose, GaussianNoise, RandomDrop
from iclr25.comm.model import CoMM, FeatureTokenizer, mlp_encoder
from iclr25.comm.rows import Modalities, Scaled, is_streamed, moments, transform_windows
from iclr25.comm.training import pretrain

__all__ = ["CoMMEmbedder"]

_BLOCK = 4096    # rows the network embeds at once in transform


def _modalities(Xs: object, name: str, allow_missing: bool, widths: Sequence[int] | None = None
                ) -> list[torch.Tensor | None]:
    """Check a list of (n, d_i) arrays: 2-D, finite, same n; None only if allowed."""
    if isinstance(Xs, (np.ndarray, torch.Tensor)) or not isinstance(Xs, Sequence):
        raise TypeError(f"{name} must be a list of (n, d_i) arrays, one per modality, got "
                        f"{type(Xs).__name__}")
    if widths is None and len(Xs) < 2:
        raise ValueError(f"{name} must hold at least 2 modalities, got {len(Xs)}")
    if widths is not None and len(Xs) != len(widths):
        raise ValueError(f"{name} must hold {len(widths)} modalities (as in fit), got {len(Xs)}")
    out: list[torch.Tensor | None] = []
    for i, X in enumerate(Xs):
        if X is None:
            if not allow_missing:
                raise ValueError(f"{name}[{i}] is None: fit needs every modality")
            out.append(None)
            continue
        t = as_tensor(X, f"{name}[{i}]", ndim=2)
        if not t.is_floating_point():
            if t.dtype == torch.bool:
                raise TypeError(f"{name}[{i}] must be numeric, got {t.dtype}")
            t = t.double()
        if widths is not None and t.shape[1] != widths[i]:
            raise ValueError(f"{name}[{i}] must have {widths[i]} columns (as in fit), got "
                             f"{t.shape[1]}")
        out.append(t)
    lengths = {i: len(t) for i, t in enumerate(out) if t is not None}
    if not lengths:
        raise ValueError(f"{name}: every modality is absent (None); at least one is needed")
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{name}: modalities have different numbers of rows {lengths}")
    return out


@checked
class CoMMEmbedder(FittedIO, TransformerMixin, BaseEstimator):
    """Learn a fused embedding of row-aligned vector modalities with CoMM (self-supervised).

    Each modality (n, d_i) is standardised, encoded by a 2-layer MLP into ``n_tokens``
    features, tokenised one token per feature (FT-Transformer) and fused by a 1-layer
    transformer; training uses CoMM's loss with MultiBench's ``noise + drop`` augmentations.
    ``transform`` accepts None for a missing modality: its tokens are dropped from the fusion.
    ``fit`` also streams its rows from map-style Datasets (on-disk tables), batch by batch.

    Args:
        dim: embedding width. epochs, batch_size, lr, weight_decay: AdamW training.
        temperature: tau of the loss. n_tokens, hidden: per-modality MLP encoder.
        noise: std of the Gaussian noise augmentation (on standardised features).
        drop: largest fraction of features zeroed by the drop augmentation.
        seed: initialisation, shuffling and augmentation seed. device: None (CPU) or a device.

    Attributes:
        model_ (CoMM), widths_ (list of d_i), mean_/scale_ (standardisation), history_.

    Examples:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> A, B = rng.normal(size=(64, 5)), rng.normal(size=(64, 3))
        >>> emb = CoMMEmbedder(dim=16, epochs=2, batch_size=32).fit([A, B])
        >>> emb.transform([A, B]).shape, emb.transform([A, None]).shape
        ((64, 16), (64, 16))
    """

    def __init__(self, *, dim: int = 64, epochs: int = 100, batch_size: int = 128,
                 lr: float = 1e-3, weight_decay: float = 1e-2, temperature: float = 0.1,
                 n_tokens: int = 8, hidden: int = 128, noise: float = 0.1, drop: float = 0.5,
                 seed: int | torch.Generator | None = 0, device: str | torch.device | None = None,
                 ) -> None:
        self.dim = dim
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.temperature = temperature
        self.n_tokens = n_tokens
        self.hidden = hidden
        self.noise = noise
        self.drop = drop
        self.seed = seed
        self.device = device

    def _build(self, widths: Sequence[int]) -> CoMM:
        s = resolve_seed(self.seed).initial_seed()
        dim = check_int(self.dim, "dim", 1)
        heads = 4 if dim % 4 == 0 else 1
        enc = [mlp_encoder(w, self.n_tokens, self.hidden, seed=s + 10 * i + 3)
               for i, w in enumerate(widths)]
        tok = [FeatureTokenizer(self.n_tokens, dim, seed=s + 10 * i + 4)
               for i in range(len(widths))]
        return CoMM(enc, tok, dim, n_heads=heads, temperature=self.temperature, seed=s)

    def fit(self, Xs: Sequence[object] | Dataset, y: object = None,
            **engine: Unpack[EngineOptions]) -> CoMMEmbedder:
        """Train on ``Xs``, a list of n >= 2 arrays (N, d_i) with aligned rows; returns self.

        ``Xs`` may also be streamed from a map-style ``Dataset``: a Dataset whose items are
        n-tuples of rows ``(x_1, ..., x_n)``, or a list whose entries (modalities) are arrays
        or Datasets of rows, such as :class:`~iclr25.datasets.files.TableRows` of Parquet
        files or Hugging Face ``save_to_disk`` folders (a row of any shape is flattened, as
        the CLI flattens an image). Memory is then bounded by the batch and the tables'
        caches: the standardisation statistics are computed in ONE streaming pass over every
        row (float64 accumulation, :func:`iclr25.comm.rows.moments`; they equal the arrays'
        float32 ``mean``/``std`` to about 1e-6 relative), and training reads batch by batch,
        in the arrays' shuffled batches (tables: their streaming order,
        :meth:`~iclr25.datasets.files.TableRows.batches`). Arrays alone keep the in-memory
        path.

        ``**engine``: how the loop runs (:class:`iclr25._engine.EngineOptions`: devices,
        strategy, precision, checkpoint, checkpoint_every, resume), as :func:`pretrain`'s.

        Raises:
            ValueError: fewer than 2 modalities, differing row counts, NaN/inf, None entries,
                fewer than 2 rows, bad hyper-parameters; a Dataset's item of the wrong shape
                (naming ``Xs``, the modality and the row).
            TypeError: not a list, or non-numeric arrays.
        """
        check_int(self.dim, "dim", 1)
        check_int(self.epochs, "epochs", 1)
        check_int(self.batch_size, "batch_size", 2)
        check_int(self.n_tokens, "n_tokens", 1)
        check_int(self.hidden, "hidden", 1)
        check_range(self.noise, "noise", 0.0)
        check_range(self.drop, "drop", 0.0, 1.0)
        check_range(self.temperature, "temperature", 0.0, low_open=True)
        if is_streamed(Xs):
            data = Xs if isinstance(Xs, Modalities) else Modalities(Xs, "Xs")
            return self._fit_streamed(data, engine)
        xs = _modalities(Xs, "Xs", allow_missing=False)
        if len(xs[0]) < 2:  # type: ignore[arg-type]
            raise ValueError(f"Xs needs at least 2 rows, got {len(xs[0])}")  # type: ignore
        device = torch.device(self.device) if self.device is not None else torch.device("cpu")
        xs32 = [x.to(device, torch.float32) for x in xs]  # type: ignore[union-attr]
        self.widths_ = [x.shape[1] for x in xs32]
        self.mean_ = [x.mean(0) for x in xs32]
        self.scale_ = [x.std(0).clamp_min(1e-8) if len(x) > 1 else torch.ones_like(x[0])
                       for x in xs32]
        z = [(x - m) / s for x, m, s in zip(xs32, self.mean_, self.scale_, strict=True)]
        self.model_ = self._build(self.widths_).to(device)
        aug = [Compose(GaussianNoise(self.noise), RandomDrop(self.drop)) for _ in z]
        self.history_ = pretrain(self.model_, z, augment=aug, epochs=self.epochs,
                                 batch_size=min(self.batch_size, len(z[0])), lr=self.lr,
                                 weight_decay=self.weight_decay, seed=self.seed, **engine)
        return self

    def _fit_streamed(self, data: Modalities, engine: dict) -> CoMMEmbedder:
        """:meth:`fit` on a Dataset: statistics in one pass, then batch-by-batch training."""
        device = torch.device(self.device) if self.device is not None else torch.device("cpu")
        mean, std = moments(data)
        self.widths_ = list(data.widths or [])
        self.mean_ = [m.to(device) for m in mean]
        self.scale_ = [s.clamp_min(1e-8).to(device) for s in std]
        self.model_ = self._build(self.widths_).to(device)
        aug = [Compose(GaussianNoise(self.noise), RandomDrop(self.drop)) for _ in mean]
        scaled = Scaled(data, mean, [s.clamp_min(1e-8) for s in std])
        self.history_ = pretrain(self.model_, scaled, augment=aug, epochs=self.epochs,
                                 batch_size=min(self.batch_size, len(data)), lr=self.lr,
                                 weight_decay=self.weight_decay, seed=self.seed, **engine)
        return self

    def _check_fitted(self) -> None:
        check_is_fitted(self, "model_")

    def transform(self, Xs: Sequence[object | None] | Dataset) -> np.ndarray | torch.Tensor:
        """Fused embeddings (N, dim), float32; None marks a missing modality. In the input's
        kind: a tensor on the first given modality's device when every given modality is a
        tensor, else a numpy array (numpy arrays, lists, a mix of kinds, Datasets).

        ``Xs`` may also be read from map-style Datasets as in :meth:`fit` (a Dataset of
        modality tuples, or a list of Datasets of rows, arrays and None): window by window
        (:func:`~iclr25.comm.rows.transform_windows`, multiples of 4,096 rows), so memory
        is bounded by the window and the (N, dim) result; the embeddings equal the arrays'
        bit for bit (the network sees the same 4,096-row batches). A Dataset's bad row
        (another width, NaN) is one ``ValueError`` naming ``Xs``, the modality and the row.

        Raises:
            ValueError: not fitted, wrong number of modalities or columns, all modalities
                missing, differing row counts, NaN/inf.
        """
        self._check_fitted()
        if is_streamed(Xs):     # numpy, whatever kind the windows' slices are
            return np.concatenate([self._embed(w).cpu().numpy()
                                   for w in self._windows(Xs, "Xs")])
        out = self._embed(Xs)
        given = [X for X in Xs if X is not None]
        if all(isinstance(X, torch.Tensor) for X in given):
            return out.to(given[0].device)
        return out.cpu().numpy()

    @torch.no_grad()   # transform's one use of the network
    def _embed(self, Xs: Sequence[object | None]) -> torch.Tensor:
        """The fused embeddings (N, dim) of in-memory modalities, on the model's device."""
        xs = _modalities(Xs, "Xs", allow_missing=True, widths=self.widths_)
        dev = self.mean_[0].device
        z = [None if x is None else (x.to(dev, torch.float32) - m) / s
             for x, m, s in zip(xs, self.mean_, self.scale_, strict=True)]
        self.model_.eval()
        n = next(len(x) for x in z if x is not None)
        return torch.cat([self.model_([None if x is None else x[i:i + _BLOCK] for x in z])
                          for i in range(0, n, _BLOCK)])

    def _windows(self, Xs: object, name: str) -> Iterator[list[torch.Tensor | None]]:
        """The windows of streamed modalities :meth:`transform` reads in turn (what
        ``comm embed`` writes window by window)."""
        self._check_fitted()
        return transform_windows(Xs, name, self.widths_, _BLOCK)

    def _new_module(self, name: str) -> CoMM:
        return self._build(self.widths_)
