"""The content/style autoencoder with a content codebook, and the V3 estimator that trains it
(official ``model/autoencoder.py::CSAE``; Sec. 3 of the paper)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal

import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from torch import nn
from torch.utils.data import Dataset

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_choice,
    check_int,
    like_input,
    resolve_seed,
)
from iclr25._contract import checked
from iclr25._engine import Engine, EngineOptions, Unpack, gather, local_rows
from iclr25._io import FittedIO
from iclr25._train import fit_minibatch, seeded_init, shuffled_batches
from iclr25.datasets.files import TableRows
from iclr25.datasets.rows import item_tensor, windows
from iclr25.v3.loss import TERMS, v3_loss
from iclr25.v3.quantizer import EMAVectorQuantizer

__all__ = ["BUNDLES", "V3", "ContentStyleAE", "check_sequences", "mlp_fragment_nets"]

#: Hyper-parameter bundles (spec 3.2): the official configs ("repo") and paper App. B.2.
BUNDLES = {
    "repo": dict(v3_weight=1.0, commitment=0.1, decay=0.98, dead_code_threshold=16.0,
                 weight_decay=0.1, optimizer="adamw"),
    "paper": dict(v3_weight=0.1, commitment=0.01, decay=0.95, dead_code_threshold=3.2,
                  weight_decay=0.0, optimizer="adam"),
}


@checked
def check_sequences(X: ArrayLike, name: str = "X", *, min_samples: int = 2,
                    min_fragments: int = 2) -> torch.Tensor:
    """A floating (B, N, ...) batch of sequences, all finite (B >= 2, N >= 2 by default)."""
    X = as_tensor(X, name)
    if not X.is_floating_point():
        raise TypeError(f"{name} must be floating point, got {X.dtype}")
    if X.ndim < 3:
        raise ValueError(f"{name} must be (B, N, ...) with ndim >= 3, got shape {tuple(X.shape)}")
    if X.shape[0] < min_samples or X.shape[1] < min_fragments:
        raise ValueError(f"{name} needs B >= {min_samples} samples and N >= {min_fragments} "
                         f"fragments, "
                         f"got shape {tuple(X.shape)}")
    return X


class _Sequences(Dataset):
    """A fit's Dataset of sequences (N, *fragment), checked item by item against item 0's
    shape (float, finite); an item is ``(sequence, i)`` for ``fit_minibatch``."""

    def __init__(self, data: Dataset, name: str, least: int = 2) -> None:
        if not hasattr(data, "__len__"):
            raise TypeError(f"{name} must be a map-style Dataset (with __len__)")
        self.data, self.name, self.n = data, name, len(data)  # type: ignore[arg-type]
        if self.n < least:       # least: 2 sequences of 2 fragments to fit, 1 to encode
            raise ValueError(f"{name} needs B >= {least} sequences, got {self.n}")
        self.shape: tuple[int, ...] | None = None
        first = self.sequence(0)
        if first.ndim < 2 or first.shape[0] < least:
            raise ValueError(f"{name} items must be sequences (N, *fragment) with N >= "
                             f"{least} fragments, got shape {tuple(first.shape)}")
        self.shape = tuple(first.shape)
        self.fingerprint = getattr(data, "fingerprint", None)

    def __len__(self) -> int:
        return self.n

    def sequence(self, i: int) -> torch.Tensor:
        item = self.data[i]
        if isinstance(item, (tuple, list)):
            raise ValueError(f"{self.name} item {i} is a {type(item).__name__}: its items must "
                             f"be sequences (N, *fragment) (a table read without a target)")
        x = item_tensor(item)
        if not x.is_floating_point():
            raise TypeError(f"{self.name} item {i} must be floating point, got {x.dtype}")
        if self.shape is not None and tuple(x.shape) != self.shape:
            raise ValueError(f"{self.name} item {i} has shape {tuple(x.shape)}, item 0 "
                             f"{self.shape}: the sequences must share one shape")
        if not torch.isfinite(x).all():
            raise ValueError(f"{self.name} item {i} holds NaN or inf")
        return x.to(torch.float32)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        return self.sequence(i), i


@checked
def mlp_fragment_nets(fragment_shape: tuple[int, ...], d_content: int, d_style: int,
                      hidden: int = 256, *, groups: int = 8,
                      seed: int = 0) -> tuple[nn.Module, nn.Module]:
    """An MLP encoder (fragment -> d_content + d_style) and decoder (back to the fragment).

    GroupNorm, not BatchNorm, between layers: the replication traced instability to a
    BatchNorm train/eval mismatch. Initialised from ``seed`` without the global RNG.
    """
    shape = tuple(check_int(s, "fragment_shape", 1) for s in fragment_shape)
    d_in, d_lat = math.prod(shape), check_int(d_content, "d_content", 1) + check_int(
        d_style, "d_style", 1)
    hidden = check_int(hidden, "hidden", groups)
    with seeded_init(check_int(seed, "seed", 0)):
        enc = nn.Sequential(nn.Flatten(), nn.Linear(d_in, hidden), nn.GroupNorm(groups, hidden),
                            nn.GELU(), nn.Linear(hidden, hidden), nn.GroupNorm(groups, hidden),
                            nn.GELU(), nn.Linear(hidden, d_lat))
        dec = nn.Sequential(nn.Linear(d_lat, hidden), nn.GroupNorm(groups, hidden), nn.GELU(),
                            nn.Linear(hidden, hidden), nn.GroupNorm(groups, hidden), nn.GELU(),
                            nn.Linear(hidden, d_in), nn.Unflatten(1, shape))
    return enc, dec


@checked
class ContentStyleAE(nn.Module):
    """Per-fragment encoder -> (z_c, z_s), EMA VQ on z_c, decoder on (z_c^vq, z_s).

    As in the official CSAE, the encoder output goes through GELU, splits into content and
    style, and each part gets its own Linear; each decoder branch gets Linear + GELU.

    Args:
        encoder: maps fragments (M, *fragment) -> (M, d_content + d_style).
        decoder: maps (M, d_content + d_style) -> (M, *fragment).
        d_content, d_style: latent widths.
        codebook_size: K content symbols.
        quantizer: options of :class:`EMAVectorQuantizer` (decay, commitment, ...).
        seed: initialises the heads and the codebook.

    Forward:
        ``x`` (B, N, *fragment) -> dict with ``x_hat`` (like x), ``z_c``, ``z_c_q`` (B, N, d_c),
        ``z_s`` (B, N, d_s), ``codes`` (B, N) and the scalar ``commit`` loss.
    """

    def __init__(self, encoder: nn.Module, decoder: nn.Module, d_content: int, d_style: int,
                 codebook_size: int, *, quantizer: dict | None = None, seed: int = 0) -> None:
        super().__init__()
        dc, ds = check_int(d_content, "d_content", 1), check_int(d_style, "d_style", 1)
        self.encoder, self.decoder, self.d_content, self.d_style = encoder, decoder, dc, ds
        self.vq = EMAVectorQuantizer(codebook_size, dc, seed=seed, **(quantizer or {}))
        with seeded_init(check_int(seed, "seed", 0) + 7):
            self.head_c, self.head_s = nn.Linear(dc, dc), nn.Linear(ds, ds)
            self.dec_c = nn.Sequential(nn.Linear(dc, dc), nn.GELU())
            self.dec_s = nn.Sequential(nn.Linear(ds, ds), nn.GELU())

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, N, *fragment) -> continuous (z_c, z_s), each (B, N, d)."""
        b, n = x.shape[:2]
        h = nn.functional.gelu(self.encoder(x.reshape(b * n, *x.shape[2:])))
        zc, zs = self.head_c(h[:, : self.d_content]), self.head_s(h[:, self.d_content:])
        return zc.reshape(b, n, -1), zs.reshape(b, n, -1)

    def decode(self, z_c_q: torch.Tensor, z_s: torch.Tensor) -> torch.Tensor:
        """(B, N, d_c), (B, N, d_s) -> reconstructed fragments (B, N, *fragment)."""
        b, n = z_c_q.shape[:2]
        h = torch.cat([self.dec_c(z_c_q.reshape(b * n, -1)), self.dec_s(z_s.reshape(b * n, -1))],
                      1)
        out = self.decoder(h)
        return out.reshape(b, n, *out.shape[1:])

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        zc, zs = self.encode(x)
        zq, codes, commit = self.vq(zc)
        return dict(x_hat=self.decode(zq, zs), z_c=zc, z_c_q=zq, z_s=zs, codes=codes,
                    commit=commit)


#: The loss terms ``V3.history_`` holds per epoch, in the order the training records them.
_TERMS = ("loss", "recon", "v3", "commit")


class _Terms:
    """Each training step's loss terms (floats, :data:`_TERMS`), kept as checkpoint state."""

    def __init__(self) -> None:
        self.steps: list[list[float]] = []

    def state_dict(self) -> dict[str, Any]:
        return {"steps": [list(s) for s in self.steps]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = [list(s) for s in state["steps"]]


class _Draws:
    """The quantiser's generator (k-means start, dead-code re-seeding) as checkpoint state;
    its EMA (codebook, cluster sizes, sums) are buffers, saved with the model."""

    def __init__(self, vq: EMAVectorQuantizer) -> None:
        self.vq = vq

    def state_dict(self) -> dict[str, Any]:
        return {"generator": self.vq._generator().get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.vq._generator().set_state(state["generator"])


class _Step(nn.Module):
    """A batch of sequences (B, N, *fragment) -> V3's scalar loss, its terms recorded.

    In a gathered DDP loop each process is given the batch's shape, encodes its rows
    (:func:`~iclr25._engine.local_rows`) and gathers the latents and reconstructions, so the
    loss is the global batch's (the V3 hinges compare samples across the batch)."""

    def __init__(self, ae: ContentStyleAE, v3: bool, options: dict[str, Any]) -> None:
        super().__init__()
        self.ae, self.v3, self.options, self.terms = ae, v3, options, _Terms()

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        out = self.ae(local_rows(X))
        # the global batch's target, X itself in one process (under DDP a Dataset's batch
        # holds only this process's rows: the engine's Loop._local_read)
        recon = nn.functional.mse_loss(gather(out["x_hat"]), gather(local_rows(X)))
        loss = recon + out["commit"]
        v3_part = torch.zeros((), dtype=X.dtype, device=X.device)
        if self.v3:
            v3_part = v3_loss(gather(out["z_c"]), gather(out["z_c_q"]), gather(out["z_s"]),
                              **self.options).total
            loss = loss + v3_part
        self.terms.steps.append([float(v.detach()) for v in (loss, recon, v3_part,
                                                              out["commit"])])
        return loss


@checked
class V3(FittedIO, BaseEstimator):
    """Unsupervised content/style disentanglement with a content codebook (V3).

    A scikit-learn estimator: keyword-only parameters, ``get_params(deep=True)``,
    ``set_params`` and ``sklearn.base.clone`` work.

    Trains :class:`ContentStyleAE` (MLP fragment nets) on reconstruction + commitment + the
    four V3 hinges (:func:`~iclr25.v3.loss.v3_loss`); ``v3=False`` drops the hinges, which
    is the plain VQ-AE ablation.

    Args:
        n_codes: K content symbols.
        d_content, d_style: latent widths.
        epochs, batch_size: training length; batch in samples (each of N fragments).
        bundle: ``"repo"`` (official config: AdamW wd 0.1, V3 weights 1, commit 0.1, EMA 0.98,
            dead 16) or ``"paper"`` (App. B.2: Adam, V3 weights 0.1, commit 0.01, EMA 0.95,
            dead 3.2).
        v3: include the V3 terms.
        seed: int, ``torch.Generator`` or None (OS entropy); seeds initialisation and
            shuffling (never the global RNG). A Generator is drawn from, so two fits differ.
        lr, hidden, relativity, variant: learning rate, MLP width, r, V3 variant.

    Attributes (after ``fit``): ``model_``, ``codebook_`` (K, d_content), ``history_`` (one
    dict of mean losses per epoch), ``fragment_shape_``.

    Agreement with the official training (issue 54): the official ``Trainer`` loop
    (``vector_quantize_pytorch.VectorQuantize`` 1.18.0, ``V3Loss``, AdamW with its
    exponential schedule) run on the same MLP nets, initial weights, 1,000 training
    sequences, batch order and 40 epochs (``bundle="repo"``), seeds 0 / 1. Only the VQ's
    k-means draws differ (its global RNG), so the runs match in distribution, not per step:
    mean epoch loss at epoch 0 2.253 / 2.228 here vs 2.232 / 2.365 official, at epoch 40
    0.067 / 0.046 vs 0.096 / 0.071 (largest per-epoch gap 0.51, from loss spikes both show);
    all 10 codes in use in both; test macro purity 0.289 / 0.354 here vs 0.371 / 0.284
    official (k-means on raw fragments 0.388 / 0.413). At this budget neither learns the
    digits; the divergence is not in the training.

    Examples:
        >>> from iclr25.datasets.views import digit_sequences
        >>> X, content, style = digit_sequences(64, seed=0)
        >>> codes = V3(epochs=1, seed=0).fit(X).predict(X)
        >>> tuple(codes.shape)
        (64, 10)
    """

    def __init__(self, *, n_codes: int = 10, d_content: int = 32, d_style: int = 32,
                 epochs: int = 40, batch_size: int = 32,
                 bundle: Literal["repo", "paper"] = "repo", v3: bool = True,
                 seed: int | torch.Generator | None = 0, lr: float = 1e-3, hidden: int = 256,
                 relativity: float = 15.0, variant: Literal["pure", "adapted"] = "pure") -> None:
        self.n_codes = n_codes
        self.d_content = d_content
        self.d_style = d_style
        self.epochs = epochs
        self.batch_size = batch_size
        self.bundle = bundle
        self.v3 = v3
        self.seed = seed
        self.lr = lr
        self.hidden = hidden
        self.relativity = relativity
        self.variant = variant

    def _validate(self) -> None:
        check_int(self.n_codes, "n_codes", 2)
        check_int(self.d_content, "d_content", 1)
        check_int(self.d_style, "d_style", 1)
        check_int(self.epochs, "epochs", 1)
        check_int(self.batch_size, "batch_size", 2)
        if not isinstance(self.seed, torch.Generator):
            resolve_seed(self.seed)  # names the argument when it is not a seed
        check_int(self.hidden, "hidden", 8)
        check_choice(self.bundle, "bundle", tuple(BUNDLES))
        check_choice(self.variant, "variant", ("pure", "adapted"))
        if not (isinstance(self.lr, (int, float)) and self.lr > 0):
            raise ValueError(f"lr must be positive, got {self.lr!r}")
        if not (isinstance(self.relativity, (int, float)) and self.relativity > 0):
            raise ValueError(f"relativity must be positive, got {self.relativity!r}")

    def _build(self, fragment_shape: tuple[int, ...], seed: int = 0) -> ContentStyleAE:
        b = BUNDLES[self.bundle]
        enc, dec = mlp_fragment_nets(fragment_shape, self.d_content, self.d_style, self.hidden,
                                     seed=seed)
        q = dict(decay=b["decay"], commitment=b["commitment"],
                 dead_code_threshold=b["dead_code_threshold"])
        return ContentStyleAE(enc, dec, self.d_content, self.d_style, self.n_codes,
                              quantizer=q, seed=seed)

    def _initial_model(self, X: torch.Tensor, gen: torch.Generator) -> ContentStyleAE:
        """The untrained network ``fit`` starts from (drawn from ``gen``), on X's device."""
        init = int(torch.randint(0, 2**31 - 1, (1,), generator=gen))
        return self._build(tuple(X.shape[2:]), init).to(device=X.device, dtype=X.dtype)

    def fit(self, X: ArrayLike | Dataset, y: object = None, **engine: Unpack[EngineOptions]
            ) -> V3:
        """Train on sequences ``X`` (B, N, *fragment), float, B >= 2, N >= 2; returns self.

        ``X`` may also be a map-style ``Dataset`` of sequences (N, *fragment), such as a
        :class:`~iclr25.datasets.files.TableRows` whose one column holds each sequence as
        nested lists: streamed batch by batch on the CPU in float32, memory bounded by the
        batch (and a table's cache). Every item is checked in one streaming pass before
        training (shape, dtype, finite: a bad item is one error naming ``X`` and the item);
        no statistic is taken: the codebook's k-means start reads the first training batch's
        latents, as for arrays. The batches are the
        arrays' (the same seed gives the same model bit for bit); a table is read in its
        streaming order (:meth:`~iclr25.datasets.files.TableRows.batches`).

        ``**engine``: how the loop runs (:class:`iclr25._engine.EngineOptions`: devices,
        strategy, precision, checkpoint, checkpoint_every, resume). ``batch_size`` is the
        global batch: under DDP each process encodes its share of the sequences and the loss,
        the V3 hinges and the codebook's EMA read the whole batch (gathered). A checkpoint
        holds the codebook's EMA state (buffers of the model), its k-means / dead-code
        generator and the loss terms so far, so a resumed fit equals the uninterrupted one."""
        self._validate()
        data = None
        if isinstance(X, Dataset):
            data = X if isinstance(X, _Sequences) else _Sequences(X, "X")
            for i in range(1, len(data)):       # every item checked before any training
                data.sequence(i)
            X = torch.empty(0, *data.shape)     # shape, device (CPU) and dtype of the data
        else:
            X = check_sequences(X)
        Engine.of(engine, X.device.type)
        b = BUNDLES[self.bundle]
        self.fragment_shape_ = tuple(X.shape[2:])
        gen = resolve_seed(self.seed)
        model = self._initial_model(X, gen)
        opt_cls = torch.optim.AdamW if b["optimizer"] == "adamw" else torch.optim.Adam
        # foreach: the same update bit for bit, without CPU's per-parameter Python loop
        opt = opt_cls(model.parameters(), lr=self.lr, weight_decay=b["weight_decay"],
                      foreach=True)
        step = _Step(model, self.v3, dict(relativity=self.relativity, variant=self.variant,
                                          weights={t: b["v3_weight"] for t in TERMS}))
        n, bs = (X.shape[0] if data is None else len(data)), self.batch_size
        per_epoch = n // bs + (n % bs >= 2)     # a last batch of one sequence is dropped
        table = data.data if data is not None and isinstance(data.data, TableRows) else None
        order = table.batches(bs, gen.initial_seed()) if table is not None else \
            (lambda _: shuffled_batches(n, bs, gen, X.device))
        fit_minibatch(
            step, lambda loss, _: loss, *((X, X) if data is None else (data, None)),
            epochs=self.epochs, batch_size=bs, optimizer=opt, seed=gen, gathered=True,
            progress="V3 training",
            batches=lambda e: [i for i in order(e) if i.numel() >= 2],
            extra_state={"codebook_draws": _Draws(model.vq), "terms": step.terms},
            **engine)
        history = []
        for e in range(self.epochs):      # each term's epoch mean, summed in step order
            sums = dict.fromkeys(_TERMS, 0.0)
            for values in step.terms.steps[e * per_epoch:(e + 1) * per_epoch]:
                for k, v in zip(_TERMS, values, strict=True):
                    sums[k] += v / per_epoch
            history.append(sums)
        model.eval()
        self.model_, self.history_ = model, history
        return self

    def _check_fitted(self, X: ArrayLike) -> torch.Tensor:
        check_is_fitted(self, "model_")
        X = check_sequences(X, min_samples=1, min_fragments=1)
        if tuple(X.shape[2:]) != self.fragment_shape_:
            raise ValueError(f"X fragments must have shape {self.fragment_shape_}, "
                             f"got {tuple(X.shape[2:])}")
        return X

    @torch.no_grad()
    def _latents(self, X: ArrayLike) -> tuple[torch.Tensor, torch.Tensor]:
        X = self._check_fitted(X)
        p = next(self.model_.parameters())
        zc, zs = self.model_.encode(X.to(device=p.device, dtype=p.dtype))
        return zc.to(X.device), zs.to(X.device)

    def transform(self, X: ArrayLike | Dataset) -> tuple[Any, Any]:
        """Continuous latents ``(z_c (B, N, d_content), z_s (B, N, d_style))`` of ``X``
        (tensors for a tensor X, numpy arrays for a numpy array, a list or a Dataset).

        ``X`` may also be a map-style ``Dataset`` of sequences (N, *fragment), as in
        :meth:`fit`: read window by window (:meth:`_windows`), memory bounded by the window
        and the result, equal to the arrays' (bit for bit on the CPU in our tests: each
        fragment is encoded on its own, GroupNorm per fragment). A bad item (another shape,
        NaN) is one ``ValueError`` naming ``X`` and the item."""
        if isinstance(X, Dataset):
            parts = [self._latents(w) for w in self._windows(X, "X")]
            return tuple(torch.cat(p).numpy() for p in zip(*parts, strict=True))
        return like_input(self._latents(X), X)

    @torch.no_grad()
    def predict(self, X: ArrayLike | Dataset) -> Any:
        """Content symbol of each fragment: (B, N) int64 in [0, n_codes) (a tensor for a
        tensor X, a numpy array for a numpy array, a list or a Dataset of sequences, read
        window by window as in :meth:`transform`)."""
        if isinstance(X, Dataset):
            return torch.cat([self.predict(w) for w in self._windows(X, "X")]).numpy()
        zc, _ = self._latents(X)  # checks fitted first
        return like_input(self.model_.vq.quantize(zc), X)

    def _windows(self, X: Dataset, name: str) -> Iterator[torch.Tensor]:
        """A Dataset of sequences as the (b, N, *fragment) float32 windows
        :meth:`transform`/:meth:`predict` read in turn (what ``v3 encode`` writes window by
        window, :func:`~iclr25.datasets.rows.windows`); every item checked as in
        :meth:`fit` (its shape against item 0's, float, finite), item 0's fragment against
        the fitted one before any work."""
        check_is_fitted(self, "model_")
        data = X if isinstance(X, _Sequences) else _Sequences(X, name, least=1)
        if data.shape[1:] != self.fragment_shape_:    # type: ignore[index]
            raise ValueError(f"{name} fragments must have shape {self.fragment_shape_}, "
                             f"got {data.shape[1:]}")  # type: ignore[index]
        return (torch.stack([data.sequence(i) for i in rows])
                for rows in windows(len(data), 4 * math.prod(data.shape or ())))

    @torch.no_grad()
    def reconstruct(self, X: ArrayLike, style_from: ArrayLike | None = None) -> Any:
        """Decode X's quantised content with its own style, or with ``style_from``'s
        (same shape as X): the style swap (X's kind: tensor or numpy)."""
        zc, zs = self._latents(X)
        if style_from is not None:
            _, zs = self._latents(style_from)
            if zs.shape[:2] != zc.shape[:2]:
                raise ValueError("style_from must have X's (B, N)")
        zq = self.model_.vq.codebook.to(zc.dtype)[self.model_.vq.quantize(zc)]
        return like_input(self.model_.decode(zq, zs), X)

    @property
    def codebook_(self) -> torch.Tensor:
        if not hasattr(self, "model_"):
            raise AttributeError("codebook_ exists only after fit")
        return self.model_.vq.codebook.detach().clone()

    def _new_module(self, name: str) -> ContentStyleAE:
        return self._build(self.fragment_shape_)
