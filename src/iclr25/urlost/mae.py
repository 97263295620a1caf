"""The self-organizing layer and the masked autoencoder over self-organized tokens
(URLOST §3.3-3.4), and the ``URLOST`` estimator that puts clustering and MAE together.

Tokens are variable-size groups of input dimensions padded to one size m. The
self-organizing layer gives every group its own linear map (``GroupLinear``, the paper's
non-shared projection g^(c)); ``shared=True`` is the ablation a standard patch MAE uses
(one projection for every patch). The decoder's output head is per group too, and the
reconstruction loss is taken in signal space on the masked tokens, padding ignored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from torch import nn
from torch.utils.data import Dataset

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_batch,
    check_choice,
    check_int,
    check_range,
    like_input,
    resolve_seed,
)
from iclr25._contract import Ints2D, RealArray, Reals1D, checked
from iclr25._engine import Engine, EngineOptions, Unpack, gather, local_rows
from iclr25._io import FittedIO
from iclr25._train import fit_minibatch, seeded_init
from iclr25.datasets.files import TableRows
from iclr25.datasets.rows import moments as row_moments
from iclr25.datasets.rows import read_row, row_windows, sample_rows, stack_rows
from iclr25.urlost.organize import (
    Dependence,
    SelfOrganizingClusters,
    _check_q,
    _check_X,
    group_tokens,
)

__all__ = ["URLOST", "URLOSTMAE", "GroupLinear", "grid_patches"]


@checked
def grid_patches(height: int, width: int, patch: int) -> torch.Tensor:
    """Index groups of the ``patch`` x ``patch`` tiles of a row-major ``height`` x ``width``
    grid: the tokens of a standard ViT/MAE.

    Returns:
        (G, patch²) int64 indices into the flattened grid, tiles in row-major order.
    """
    height, width = check_int(height, "height", 1), check_int(width, "width", 1)
    patch = check_int(patch, "patch", 1)
    if height % patch or width % patch:
        raise ValueError(f"patch={patch} must divide height={height} and width={width}")
    idx = torch.arange(height * width).reshape(height // patch, patch, width // patch, patch)
    return idx.permute(0, 2, 1, 3).reshape(-1, patch * patch)


def _check_groups(groups: ArrayLike) -> torch.Tensor:
    g = as_tensor(groups, "groups", ndim=2)
    if g.is_floating_point() or g.dtype == torch.bool:
        raise TypeError(f"groups must hold integer indices, got {g.dtype}")
    g = g.long()
    if int(g.min()) < -1:
        raise ValueError("groups must hold indices >= 0 (or -1 for padding)")
    if bool((g >= 0).sum(1).eq(0).any()):
        raise ValueError("groups has an empty group (a row of padding only)")
    real = g[g >= 0]
    if len(torch.unique(real)) != len(real):
        raise ValueError("groups must not repeat a dimension")
    return g


@checked
class GroupLinear(nn.Module):
    """The self-organizing layer: one linear map per token group (URLOST §3.3).

    ``forward(X)`` gathers the columns of each group (zero at padding) and applies that
    group's weight: ``(n, d) -> (n, G, out_dim)`` with one einsum. Padding entries are zero,
    so the weights they meet never affect the output nor receive gradient.

    Args:
        groups: (G, m) int64 dimension indices, -1 at padding (``SelfOrganizingClusters
            .groups_`` or :func:`grid_patches`).
        out_dim: embedding width.
        shared: one weight for every group (a standard patch embedding; the ablation).
    """

    def __init__(self, groups: ArrayLike, out_dim: int, shared: bool = False) -> None:
        super().__init__()
        g = _check_groups(groups)
        out_dim = check_int(out_dim, "out_dim", 1)
        G, m = g.shape
        self.register_buffer("groups", g)
        self.shared = bool(shared)
        bound = 1 / math.sqrt(m)
        shape = (1 if shared else G, m, out_dim)
        self.weight = nn.Parameter(torch.empty(shape).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(shape[0], out_dim).uniform_(-bound, bound))

    @property
    def d(self) -> int:
        """Number of input dimensions the groups index (max index + 1)."""
        return int(self.groups.max()) + 1

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        check_batch(X, "X", ndim=2)
        tok = group_tokens(X, self.groups)  # (n, G, m)
        return torch.einsum("ngm,gmo->ngo", tok, self.weight.expand(
            len(self.groups), -1, -1)) + self.bias


class _Block(nn.TransformerEncoderLayer):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__(dim, heads, 4 * dim, dropout=0.0, activation="gelu",
                         batch_first=True, norm_first=True)


@checked
class URLOSTMAE(nn.Module):
    """A masked autoencoder over self-organized tokens (URLOST §3.4; He et al., 2022).

    Tokens are embedded by :class:`GroupLinear` plus a learned position embedding per
    group; a fraction ``mask_ratio`` of tokens is dropped per sample; a pre-LN transformer
    encodes the kept tokens with a CLS token; a lighter decoder sees mask tokens in place of
    the dropped ones and a per-group linear head maps each token back to its m signal
    values. The loss is the mean squared error over the real (non-padding) entries of the
    masked tokens.

    Args:
        groups: (G, m) int64 token groups, -1 padded.
        dim: token width. depth, heads: encoder blocks and attention heads.
        decoder_depth: decoder blocks. mask_ratio: fraction of tokens masked, in (0, 1).
        shared: share the input projection and output head across groups (patch MAE).
        seed: initialisation (the global RNG is forked, not touched).
    """

    def __init__(self, groups: ArrayLike, dim: int = 64, depth: int = 2, heads: int = 4,
                 decoder_depth: int = 1, mask_ratio: float = 0.75, shared: bool = False,
                 *, seed: int | torch.Generator | None = 0) -> None:
        super().__init__()
        g = _check_groups(groups)
        dim = check_int(dim, "dim", 1)
        depth = check_int(depth, "depth", 1)
        heads = check_int(heads, "heads", 1)
        decoder_depth = check_int(decoder_depth, "decoder_depth", 1)
        if dim % heads:
            raise ValueError(f"dim={dim} must be divisible by heads={heads}")
        self.mask_ratio = check_range(mask_ratio, "mask_ratio", 0, 1, low_open=True,
                                      high_open=True)
        G, m = g.shape
        with seeded_init(seed):
            self.embed = GroupLinear(g, dim, shared)
            self.pos = nn.Parameter(0.02 * torch.randn(1, G, dim))
            self.cls = nn.Parameter(0.02 * torch.randn(1, 1, dim))
            self.encoder = nn.ModuleList(_Block(dim, heads) for _ in range(depth))
            self.norm = nn.LayerNorm(dim)
            self.mask_token = nn.Parameter(0.02 * torch.randn(1, 1, dim))
            self.dec_pos = nn.Parameter(0.02 * torch.randn(1, G + 1, dim))
            self.decoder = nn.ModuleList(_Block(dim, heads) for _ in range(decoder_depth))
            self.dec_norm = nn.LayerNorm(dim)
            b = 1 / math.sqrt(dim)
            self.head_w = nn.Parameter(torch.empty(1 if shared else G, dim, m).uniform_(-b, b))
            self.head_b = nn.Parameter(torch.zeros(1 if shared else G, m))
        self.register_buffer("valid", g >= 0)

    @property
    def groups(self) -> torch.Tensor:
        return self.embed.groups

    def _encode_tokens(self, tok: torch.Tensor) -> torch.Tensor:
        h = torch.cat([self.cls.expand(len(tok), -1, -1), tok], 1)
        for blk in self.encoder:
            h = blk(h)
        return self.norm(h)

    def encode(self, X: torch.Tensor) -> torch.Tensor:
        """Token features of unmasked input: (n, d) -> (n, G, dim) (CLS left out)."""
        return self._encode_tokens(self.embed(X) + self.pos)[:, 1:]

    def forward(self, X: torch.Tensor, *, generator: torch.Generator | None = None
                ) -> torch.Tensor:
        """The masked reconstruction loss (a scalar) of a batch X (n, d); the mask is drawn
        from ``generator`` (CPU). Under a DDP :meth:`URLOST.fit` every process draws the
        whole batch's mask, encodes its own rows, and the loss is the whole batch's."""
        n_all = len(X)
        X = local_rows(X)
        tok = self.embed(X) + self.pos
        n, G, dim = tok.shape
        keep = max(1, int(round(G * (1 - self.mask_ratio))))
        noise = local_rows(torch.rand(n_all, G, generator=generator).to(X.device))
        order = noise.argsort(1)
        kept = order[:, :keep]
        h = self._encode_tokens(torch.gather(tok, 1, kept[:, :, None].expand(-1, -1, dim)))
        full = self.mask_token.expand(n, G, dim).clone()
        full = full.scatter(1, kept[:, :, None].expand(-1, -1, dim), h[:, 1:])
        z = torch.cat([h[:, :1], full], 1) + self.dec_pos
        for blk in self.decoder:
            z = blk(z)
        z = self.dec_norm(z)[:, 1:]
        pred = torch.einsum("ngo,gom->ngm", z, self.head_w.expand(G, -1, -1)) + self.head_b
        target = group_tokens(X, self.groups)
        masked = torch.ones(n, G, dtype=torch.bool, device=X.device)
        masked[torch.arange(n, device=X.device)[:, None], kept] = False
        weight = (masked[:, :, None] & self.valid[None]).to(pred.dtype)
        return gather((pred - target) ** 2 * weight).sum() / gather(weight).sum()


class _Step(nn.Module):
    """A batch -> the MAE's loss, its mask drawn from the training's generator."""

    def __init__(self, mae: URLOSTMAE, gen: torch.Generator) -> None:
        super().__init__()
        self.mae, self.gen = mae, gen

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.mae(X, generator=self.gen)


CLUSTER_ROWS = 20_000
"""Rows of a Dataset that :meth:`URLOST.fit` clusters the columns on (a seeded uniform
sample without replacement; every row when there are fewer): the dependence graph needs the
rows in memory, (CLUSTER_ROWS, d) float32."""


class _Rows(Dataset):
    """A fit's Dataset of rows, checked item by item: :meth:`row` is row ``i`` as a flat
    float32 row; an item is ``((row - mean) / scale, i)`` once :attr:`scale` is set."""

    def __init__(self, data: Dataset, name: str) -> None:
        if not hasattr(data, "__len__"):
            raise TypeError(f"{name} must be a map-style Dataset (with __len__)")
        self.data, self.name, self.n = data, name, len(data)  # type: ignore[arg-type]
        if self.n < 2:
            raise ValueError(f"{name} needs at least 2 samples (rows), got {self.n}")
        self.width: int | None = None
        self.scale: tuple[torch.Tensor, torch.Tensor] | None = None
        self.width = len(self.row(0))
        if self.width < 2:
            raise ValueError(f"{name} rows have 1 value; URLOST groups the columns "
                             f"(dimensions) into tokens, so it needs at least 2")
        self.fingerprint = getattr(data, "fingerprint", None)

    def __len__(self) -> int:
        return self.n

    def row(self, i: int) -> torch.Tensor:
        return read_row(self.data, i, self.name, self.width)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        assert self.scale is not None
        return (self.row(i) - self.scale[0]) / self.scale[1], i


def _cluster_sample(rows: _Rows, seed: int) -> torch.Tensor:
    """The rows of a Dataset the columns are clustered on, (min(n, CLUSTER_ROWS), d):
    every row when there are at most :data:`CLUSTER_ROWS`, else a uniform sample without
    replacement drawn from ``seed + 1``, read in row order (chunk by chunk). What a
    streamed :meth:`URLOST.fit` and ``urlost cluster`` on a table read."""
    pick = sample_rows(len(rows), CLUSTER_ROWS, seed + 1)
    return stack_rows(rows.row, pick.tolist(), rows.name)


@checked
class URLOST(FittedIO, TransformerMixin, BaseEstimator):
    """URLOST: self-organized tokens plus a masked autoencoder, for data with no known
    topology (Yun et al., ICLR 2025).

    ``fit`` standardises the columns, clusters them with :class:`SelfOrganizingClusters`
    and trains a :class:`URLOSTMAE` (AdamW, cosine schedule); ``transform`` returns the
    mean-pooled token features.

    Args:
        n_clusters, n_neighbors, dependence, density, w: of the clustering.
        groups: (G, m) token groups to use instead of clustering (a baseline: grid patches).
        shared: share the token projection across groups (ablation / patch MAE).
        dim, depth, heads, decoder_depth, mask_ratio: of the MAE.
        epochs, batch_size, lr, weight_decay: training.
        seed: clustering, initialisation, masks and batch order.

    Attributes:
        clusters_: the fitted :class:`SelfOrganizingClusters` (None when ``groups`` given).
        groups_: (G, m) token groups. model_: the trained :class:`URLOSTMAE`.
        mean_, scale_: (d,) column standardisation. loss_curve_: mean loss per epoch.

    Examples:
        >>> from iclr25.datasets.views import digit_images, permute_features
        >>> X = digit_images(16, 0).X_train.reshape(-1, 256)
        >>> Xp, _ = permute_features(X + 1e-3 * torch.randn(X.shape), seed=0)
        >>> model = URLOST(n_clusters=16, epochs=1).fit(Xp)
        >>> model.transform(Xp[:5]).shape
        torch.Size([5, 64])
    """

    def __init__(self, n_clusters: int = 16, *, n_neighbors: int = 10,
                 dependence: Dependence = "corr", density: Reals1D | None = None, w: float = 1.0,
                 groups: Ints2D | None = None, shared: bool = False, dim: int = 64, depth: int = 2,
                 heads: int = 4, decoder_depth: int = 1, mask_ratio: float = 0.75,
                 epochs: int = 20, batch_size: int = 256, lr: float = 2e-3,
                 weight_decay: float = 0.05, seed: int | torch.Generator | None = 0) -> None:
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.dependence = dependence
        self.density = density
        self.w = w
        self.groups = groups
        self.shared = shared
        self.dim = dim
        self.depth = depth
        self.heads = heads
        self.decoder_depth = decoder_depth
        self.mask_ratio = mask_ratio
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.seed = seed

    def _check_params(self, d: int) -> None:
        if self.groups is None:
            check_int(self.n_clusters, "n_clusters", 2, d)
            check_int(self.n_neighbors, "n_neighbors", 1, d - 1)
            check_choice(self.dependence, "dependence", Dependence)
            check_range(self.w, "w", 0)
        else:
            g = _check_groups(self.groups)
            if int(g.max()) >= d:
                raise ValueError(f"groups index column {int(g.max())} but X has {d} columns")
        check_int(self.epochs, "epochs", 1)
        check_int(self.batch_size, "batch_size", 1)
        check_range(self.lr, "lr", 0, low_open=True)
        check_range(self.weight_decay, "weight_decay", 0)
        check_int(self.dim, "dim", 1)
        check_int(self.heads, "heads", 1)
        check_range(self.mask_ratio, "mask_ratio", 0, 1, low_open=True, high_open=True)

    def fit(self, X: RealArray | Dataset, y: object = None, **engine: Unpack[EngineOptions]
            ) -> URLOST:
        """Cluster X's columns and train the MAE on X (n, d). Returns self.

        ``X`` may also be a map-style ``Dataset`` of rows (d,) (each flattened), such as a
        :class:`~iclr25.datasets.files.TableRows` of Parquet files or a Hugging Face
        ``save_to_disk`` folder, streamed batch by batch on the CPU in float32: the column
        standardisation is computed in ONE streaming pass over every row (float64
        accumulation, :func:`iclr25.datasets.rows.moments`; equal to the arrays' float32
        ``mean``/``std`` to about 1e-6 relative); the column clustering (dependence graph,
        and the ``density`` check) is fitted on a BOUNDED SAMPLE of :data:`CLUSTER_ROWS`
        rows (seeded, uniform without replacement; all rows when there are fewer, then the
        groups are the arrays'); training reads the rows in the arrays' shuffled batches (a
        table: its streaming order, :meth:`~iclr25.datasets.files.TableRows.batches`).
        Memory is bounded by the sample, the batch and the table's cache. A bad item (a
        pair, another width, a scalar, NaN) is one ``ValueError`` naming ``X`` and the row.

        ``**engine``: how the MAE's loop runs (:class:`iclr25._engine.EngineOptions`:
        devices, strategy, precision, checkpoint, checkpoint_every, resume); under DDP each
        process encodes its share of every batch and the loss is the whole batch's."""
        if isinstance(X, Dataset):
            return self._fit_streamed(X if isinstance(X, _Rows) else _Rows(X, "X"), engine)
        x = _check_X(X)
        n, d = x.shape
        self._check_params(d)
        Engine.of(engine, x.device.type)
        if self.density is not None and self.groups is None:
            _check_q(self.density, d, x)
        self.mean_ = x.mean(0)
        self.scale_ = x.std(0).clamp_min(1e-8)
        self._group(x, x.device)
        gen = resolve_seed(self.seed)
        return self._train((x - self.mean_) / self.scale_, n, d, gen, engine)

    def _group(self, x: torch.Tensor | None, device: torch.device | None = None) -> None:
        """``clusters_`` and ``groups_``: the columns of ``x`` (the rows, or a fit's bounded
        sample of them) clustered, or the given ``groups`` checked (on ``device``)."""
        if self.groups is None:
            self.clusters_ = SelfOrganizingClusters(
                self.n_clusters, n_neighbors=self.n_neighbors, dependence=self.dependence,
                density=self.density, w=self.w, seed=self.seed).fit(x)
            self.groups_ = self.clusters_.groups_
        else:
            self.clusters_ = None
            groups = _check_groups(self.groups)
            self.groups_ = groups if device is None else groups.to(device)

    def _train(self, z: torch.Tensor | Dataset, n: int, d: int, gen: torch.Generator,
               engine: dict, order: Callable | None = None) -> URLOST:
        """Train the MAE on standardised rows ``z`` (a tensor, or a Dataset of ``(z_i, i)``
        items read in ``order``'s batches, None: the tensors' shuffle)."""
        self.n_features_in_ = d
        ref = z if isinstance(z, torch.Tensor) else torch.empty(0)
        self.model_ = URLOSTMAE(self.groups_, self.dim, self.depth, self.heads,
                                self.decoder_depth, self.mask_ratio, self.shared,
                                seed=gen).to(device=ref.device, dtype=ref.dtype)
        # foreach: the same update bit for bit, without the per-parameter Python loop
        opt = torch.optim.AdamW(self.model_.parameters(), lr=self.lr, betas=(0.9, 0.95),
                                weight_decay=self.weight_decay, foreach=True)
        steps = self.epochs * math.ceil(n / self.batch_size)
        sched = torch.optim.lr_scheduler.OneCycleLR(
            opt, self.lr, total_steps=steps, pct_start=min(0.1, 1 / self.epochs),
            anneal_strategy="cos")
        X, y = (z, z) if isinstance(z, torch.Tensor) else (z, None)
        per_step = fit_minibatch(
            _Step(self.model_, gen), lambda loss, _: loss, X, y, epochs=self.epochs,
            batch_size=self.batch_size, optimizer=opt, seed=gen, scheduler=sched,
            batches=order, interval="step", gathered=True, progress="URLOST training",
            steps=steps, **engine)
        k = math.ceil(n / self.batch_size)      # each epoch's mean, summed in step order
        self.loss_curve_ = [sum(per_step[e * k:(e + 1) * k]) / k for e in range(self.epochs)]
        self.model_.eval()
        return self

    def _fit_streamed(self, rows: _Rows, engine: dict) -> URLOST:
        """:meth:`fit` on a Dataset: statistics in one pass, the clustering on a bounded
        sample, then batch-by-batch training (on the CPU, in float32)."""
        n, d = len(rows), rows.width
        self._check_params(d)
        Engine.of(engine, "cpu")
        gen = resolve_seed(self.seed)
        if self.groups is None:
            sample = _cluster_sample(rows, gen.initial_seed())
            if self.density is not None:
                _check_q(self.density, d, sample)
        (mean,), (std,) = row_moments(lambda i: (rows.row(i),), n, [rows.name])
        self.mean_, self.scale_ = mean, std.clamp_min(1e-8)
        self._group(sample if self.groups is None else None)
        rows.scale = (self.mean_, self.scale_)
        order = rows.data.batches(self.batch_size, gen.initial_seed()) \
            if isinstance(rows.data, TableRows) else None
        return self._train(rows, n, d, gen, engine, order)

    def _check_fitted(self) -> None:
        check_is_fitted(self, "model_")

    def transform(self, X: RealArray | Dataset, batch_size: int = 1024
                  ) -> torch.Tensor | np.ndarray:
        """Mean-pooled token features (n, dim) of X (n, d) in X's dtype: a tensor on X's
        device for a tensor X, a numpy array for a numpy array, a list or a Dataset.

        ``X`` may also be a map-style ``Dataset`` of rows (d,), as in :meth:`fit` (a
        :class:`~iclr25.datasets.files.TableRows`): read window by window
        (:func:`~iclr25.datasets.rows.row_windows`, multiples of ``batch_size`` rows), so
        memory is bounded by the window and the (n, dim) float32 result, which
        equals the arrays' bit for bit (the network sees the same batches). A bad row (a
        pair, another width, NaN) is one ``ValueError`` naming ``X`` and the row."""
        return like_input(self._embed(X, batch_size), X)

    @torch.no_grad()
    def _embed(self, X: RealArray | Dataset, batch_size: int) -> torch.Tensor:
        """:meth:`transform` as a tensor on X's device (the windows' for a Dataset)."""
        self._check_fitted()
        if isinstance(X, Dataset):
            return torch.cat([self._embed(w, batch_size)
                              for w in self._windows(X, "X", batch_size)])
        x = _check_X(X, min_rows=1)
        if x.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {x.shape[1]} features, but URLOST was fitted with "
                             f"{self.n_features_in_}")
        p = next(self.model_.parameters())
        z = ((x.to(p.device, p.dtype) - self.mean_.to(p.device, p.dtype))
             / self.scale_.to(p.device, p.dtype))
        out = torch.cat([self.model_.encode(b).mean(1) for b in z.split(batch_size)])
        return out.to(x.device, x.dtype)

    def _windows(self, X: Dataset, name: str, batch_size: int = 1024
                 ) -> Iterator[torch.Tensor]:
        """The rows of a Dataset ``X`` as the (m, d) float32 windows :meth:`transform`
        reads in turn (what ``urlost embed`` writes window by window)."""
        self._check_fitted()
        return row_windows(X, name, self.n_features_in_, batch_size)

    _unsaved = ("clusters_",)  # the clustering's own fit; its groups_ are saved

    def _new_module(self, name: str) -> URLOSTMAE:
        return URLOSTMAE(self.groups_, self.dim, self.depth, self.heads, self.decoder_depth,
                         self.mask_ratio, self.shared, seed=0)
