"""Pre-training with CoMM or a baseline objective on the same encoders, frozen features, and
the linear probe of the paper's evaluation (balanced accuracy of ``LogisticRegressionCV``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, get_args

import numpy as np
import torch
from torch import nn
from torch.utils.data import Dataset

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_choice,
    check_int,
    check_labels,
    check_range,
    resolve_seed,
)
from iclr25._contract import checked
from iclr25._engine import Engine, EngineOptions, Unpack, gather, local_rows
from iclr25._train import fit_minibatch
from iclr25.comm.loss import _infonce, clip_loss
from iclr25.comm.model import CoMM
from iclr25.comm.rows import Modalities, Scaled

__all__ = ["OBJECTIVES", "Objective", "features", "linear_probe", "objective_loss", "pretrain",
           "features_many", "pretrain_together"]

Objective = Literal["comm", "cross", "cross_self", "simclr"]
OBJECTIVES: tuple[str, ...] = get_args(Objective)
"""``comm``: CoMM (n unimodal terms + fused SimCLR). ``cross``: CLIP-style cross-modal
InfoNCE between the unimodal embeddings (the paper's "Cross"). ``cross_self``: Cross plus a
SimCLR term per modality (SLIP-style "Cross+Self"). ``simclr``: SimCLR on the fused
embedding only (CoMM's last term)."""


def _unimodal(model: CoMM, v: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    n = model.n_modalities
    return model.embeddings(v, torch.eye(n, dtype=torch.bool))


@checked
def objective_loss(model: CoMM, v1: Sequence[torch.Tensor], v2: Sequence[torch.Tensor],
                   objective: Objective = "comm") -> torch.Tensor:
    """The loss of ``objective`` between two augmented views, on ``model``'s encoders and
    projector (so that every objective trains the same architecture).

    Cross: ``mean_{i<j} (clip(Z'_i, Z'_j) + clip(Z''_i, Z''_j)) / 2`` on projected unimodal
    embeddings; Cross+Self adds ``mean_i NCE(Z'_i, Z''_i)``; SimCLR is ``NCE(Z', Z'')`` on the
    fused embedding. Under a DDP training (:func:`pretrain` with ``devices > 1``) the views
    are this process's rows and the projected embeddings are gathered from every process
    before the loss (:func:`iclr25._engine.gather`), as the official code does.

    Raises:
        ValueError: unknown objective; bad views (as :meth:`CoMM.loss`).
    """
    check_choice(objective, "objective", OBJECTIVES)
    if objective == "comm":
        return model.loss(v1, v2)
    tau = model.criterion.temperature
    if objective == "simclr":
        full = torch.ones(1, model.n_modalities, dtype=torch.bool)
        (a,), (b,) = model.embeddings(v1, full), model.embeddings(v2, full)
        return _infonce(gather(model.projector(a)), gather(model.projector(b)), tau)
    p1 = [gather(model.projector(z)) for z in _unimodal(model, v1)]
    p2 = [gather(model.projector(z)) for z in _unimodal(model, v2)]
    n = len(p1)
    cross = torch.stack([(clip_loss(p1[i], p1[j], tau) + clip_loss(p2[i], p2[j], tau)) / 2
                         for i in range(n) for j in range(i + 1, n)]).mean()
    if objective == "cross":
        return cross
    return cross + torch.stack([_infonce(a, b, tau) for a, b in zip(p1, p2, strict=True)]
                               ).mean()


class _Step(nn.Module):
    """Batch indices -> every model's loss (stacked) on the batch's two augmented views,
    drawn once, so ``fit_minibatch`` steps the models together. Under DDP every process
    draws the whole batch's views (the same generator) and encodes its own rows of them."""

    def __init__(self, models: Sequence[CoMM], xs: list[torch.Tensor],
                 augment: Sequence[Callable], objectives: Sequence[str],
                 gen: torch.Generator) -> None:
        super().__init__()
        self.models, self.xs, self.augment = nn.ModuleList(models), xs, augment
        self.objectives, self.gen = objectives, gen

    def forward(self, rows: torch.Tensor | Sequence[torch.Tensor]) -> torch.Tensor:
        # index batches into in-memory xs, or a Dataset's collated modality rows
        batch = [x[rows] for x in self.xs] if isinstance(rows, torch.Tensor) else list(rows)
        v1 = [a(x, seed=self.gen) for a, x in zip(self.augment, batch, strict=True)]
        v2 = [a(x, seed=self.gen) for a, x in zip(self.augment, batch, strict=True)]
        v1, v2 = [local_rows(v) for v in v1], [local_rows(v) for v in v2]
        return torch.stack([objective_loss(m, v1, v2, o)  # type: ignore[arg-type]
                            for m, o in zip(self.models, self.objectives, strict=True)])


@checked
def pretrain(model: CoMM, xs: Sequence[object] | Dataset, *, augment: Sequence[Callable],
             objective: Objective = "comm", epochs: int = 20, batch_size: int = 128,
             lr: float = 1e-3, weight_decay: float = 1e-2,
             seed: int | torch.Generator | None = 0,
             on_epoch_end: Callable[[int], bool | None] | None = None,
             verbose: bool | None = None, **engine: Unpack[EngineOptions]) -> list[float]:
    """Self-supervised pre-training of ``model`` on row-aligned modalities with AdamW.

    Args:
        model: a :class:`CoMM` on the device of ``xs``.
        xs: n tensors (N, ...) of one sample per row; or a map-style ``Dataset`` whose
            items are n-tuples of rows ``(x_1 (d_1,), ..., x_n (d_n,))`` (each flattened;
            :class:`iclr25.comm.rows.Modalities` checks them), read batch by batch (memory
            bounded by the batch) in the same shuffled batches as tensors, so the result
            equals the tensors' bit for bit; a :class:`~iclr25.comm.rows.Modalities` of
            on-disk tables is read in their streaming order instead
            (:meth:`~iclr25.datasets.files.TableRows.batches`).
        augment: one callable per modality, ``aug(x, seed=generator) -> new tensor``.
        objective: ``"comm"`` (default) or a baseline of :data:`OBJECTIVES`.
        epochs, batch_size, lr, weight_decay: the optimisation (paper: AdamW, tau 0.1);
            ``batch_size`` is the global batch, whose rows are every anchor's negatives.
        seed: shuffling and augmentation seed.
        on_epoch_end: called with the epoch number; returning True stops (one process).
        verbose: progress bar over the epochs (default: only on a terminal).
        **engine: how the loop runs (:class:`iclr25._engine.EngineOptions`: ``devices``,
            ``strategy``, ``precision``, ``checkpoint``, ``checkpoint_every``, ``resume``).
            Under DDP each process encodes its share of the batch and the embeddings are
            gathered before the loss (the official code's ``all_gather_batch_with_grad``);
            the projector's BatchNorm normalises each process's share, as there.

    Returns:
        The mean loss of each epoch.

    Raises:
        ValueError: unknown objective, wrong number of modalities or augmentations,
            modalities of different lengths, batch_size < 2, bad engine options or a
            checkpoint that does not fit (named).
    """
    return pretrain_together([model], xs, augment=augment, objectives=[objective],
                             epochs=epochs, batch_size=batch_size, lr=lr,
                             weight_decay=weight_decay, seed=seed, on_epoch_end=on_epoch_end,
                             verbose=verbose, **engine)[0]


class _Record:
    """Every step's loss of each model and the steps of each epoch: the per-model history
    (a state of the run: checkpointed, and read back from a DDP worker)."""

    def __init__(self) -> None:
        self.per_batch: list[list[float]] = []
        self.counts: dict[int, int] = {}

    def state_dict(self) -> dict[str, Any]:
        return {"per_batch": torch.tensor(self.per_batch, dtype=torch.float64),
                "counts": torch.tensor(sorted(self.counts.items()), dtype=torch.long)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.per_batch = state["per_batch"].tolist()
        self.counts = {int(e): int(c) for e, c in state["counts"].reshape(-1, 2).tolist()}

    def history(self, n_models: int) -> list[list[float]]:
        return _epoch_means(self.per_batch, [self.counts[e] for e in sorted(self.counts)],
                            n_models)


class _Indexed(Dataset):
    """A Dataset of modality tuples as ``fit_minibatch``'s ``(x, y)`` items: ``(rows, i)``
    (the index is not read by the loss), its rows checked by :class:`Modalities`."""

    def __init__(self, xs: Dataset, name: str, m: int) -> None:
        self.data = xs if isinstance(xs, (Modalities, Scaled)) else Modalities(xs, name)
        got = self.data.data.m if isinstance(self.data, Scaled) else self.data.m
        if got != m:
            raise ValueError(f"{name} must hold {m} modalities, got {got}")
        self.fingerprint = self.data.fingerprint
        self.order = self.data.order

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int) -> tuple[tuple[torch.Tensor, ...], int]:
        return self.data[i], i


def pretrain_together(models: Sequence[CoMM], xs: Sequence[object] | Dataset, *,
                      augment: Sequence[Callable], objectives: Sequence[Objective],
                      epochs: int = 20, batch_size: int = 128, lr: float = 1e-3,
                      weight_decay: float = 1e-2, seed: int | torch.Generator | None = 0,
                      on_epoch_end: Callable[[int], bool | None] | None = None,
                      verbose: bool | None = None, **engine: Unpack[EngineOptions]
                      ) -> list[list[float]]:
    """:func:`pretrain` of several models (one objective each) on the same data and seed,
    stepped in lockstep: each batch's two augmented views are drawn once and every model
    takes its step on them. Each model ends exactly as :func:`pretrain` alone would leave it
    (same batches, same views, its own AdamW), at one augmentation cost instead of one per
    model.

    Returns:
        Each model's mean loss per epoch.

    Raises:
        ValueError: as :func:`pretrain`; ``models`` and ``objectives`` of different lengths.
    """
    if len(models) != len(objectives) or not models:
        raise ValueError(f"models and objectives must have one entry each (at least one), "
                         f"got {len(models)} and {len(objectives)}")
    for o in objectives:
        check_choice(o, "objective", OBJECTIVES)
    streamed = isinstance(xs, Dataset)
    if streamed:
        data = _Indexed(xs, "xs", models[0].n_modalities)
    else:
        xs = models[0]._check(xs, "xs", allow_missing=False)  # type: ignore[assignment]
    for m in models:
        if len(augment) != m.n_modalities:
            raise ValueError(f"augment must have one callable per modality "
                             f"({m.n_modalities}), got {len(augment)}")
    epochs = check_int(epochs, "epochs", 1)
    batch_size = check_int(batch_size, "batch_size", 2)
    lr = check_range(lr, "lr", 0.0, low_open=True)
    weight_decay = check_range(weight_decay, "weight_decay", 0.0)
    device = next(models[0].parameters()).device if streamed else xs[0].device
    Engine.of(engine, device.type)
    gen = resolve_seed(seed)
    n = len(data) if streamed else len(xs[0])
    step = _Step(models, [] if streamed else list(xs), augment, objectives, gen)
    # one AdamW over every model: its update is per element, so each model's is its own AdamW
    # (foreach: the same update bit for bit, without the per-parameter Python loop)
    opt = torch.optim.AdamW(step.parameters(), lr=lr, weight_decay=weight_decay, foreach=True)
    ids = torch.arange(n, device=device)
    record = _Record()
    stream = data.order(batch_size, gen.initial_seed()) if streamed else None

    def batches(epoch: int) -> list[torch.Tensor]:  # drop a last batch of one (BatchNorm, NCE)
        order = stream(epoch) if stream is not None else \
            torch.randperm(n, generator=gen).to(ids.device).split(batch_size)
        b = [i for i in order if len(i) >= 2]
        record.counts[epoch] = len(b)
        return b

    def losses_sum(losses: torch.Tensor, _: torch.Tensor) -> torch.Tensor:
        record.per_batch.append([float(v) for v in losses.detach()])
        return losses.sum()  # each model's gradient is its own loss's: they share no weight

    X, y = (data, None) if streamed else (ids, ids)
    fit_minibatch(step, losses_sum, X, y, epochs=epochs, batch_size=batch_size, optimizer=opt,
                  seed=gen, batches=batches, on_epoch_end=on_epoch_end,
                  progress=f"{'/'.join(objectives)} pre-training", verbose=verbose,
                  extra_state={"record": record}, gathered=True, **engine)
    for m in models:
        m.eval()
    return record.history(len(models))


def _epoch_means(per_batch: list[list[float]], counts: list[int], n_models: int
                 ) -> list[list[float]]:
    """Each model's mean loss per epoch, from every step's losses and the steps per epoch
    (NaN for an epoch without a step)."""
    history: list[list[float]] = [[] for _ in range(n_models)]
    ends = np.cumsum([0, *counts])
    for a, b in zip(ends[:-1], ends[1:], strict=True):
        for k, h in enumerate(history):
            h.append(sum(r[k] for r in per_batch[a:b]) / (b - a) if b > a else float("nan"))
    return history


@checked
def features(model: CoMM, xs: Sequence[object], objective: Objective = "comm", *,
             batch_size: int = 1024) -> torch.Tensor:
    """Frozen features for probing: the fused embedding (``comm``, ``simclr``) or the
    concatenated unimodal embeddings (``cross``, ``cross_self``), before the projector.

    Returns:
        (N, dim) or (N, n * dim) on the inputs' device.
    """
    return features_many(model, xs, (objective,), batch_size=batch_size)[0]


@torch.no_grad()
def features_many(model: CoMM, xs: Sequence[object], objectives: Sequence[Objective], *,
                  batch_size: int = 1024) -> list[torch.Tensor]:
    """:func:`features` read as each of ``objectives``, every modality encoded once (the
    fused and the unimodal reads share the encoders' tokens)."""
    for o in objectives:
        check_choice(o, "objective", OBJECTIVES)
    fused_only = all(o in ("comm", "simclr") for o in objectives)
    xs = model._check(xs, "xs", allow_missing=fused_only)
    was = model.training
    model.eval()
    n = next(len(x) for x in xs if x is not None)
    out: list[list[torch.Tensor]] = [[] for _ in objectives]
    eye = torch.eye(model.n_modalities, dtype=torch.bool)
    for s in range(0, n, batch_size):
        tokens = model.encode([None if x is None else x[s:s + batch_size] for x in xs])
        for o, dest in zip(objectives, out, strict=True):
            if o in ("comm", "simclr"):
                dest.append(model.fusion(tokens))
            else:
                dest.append(torch.cat([model.fuse(tokens, m) for m in eye], 1))
    model.train(was)
    return [torch.cat(c) for c in out]


@checked
def linear_probe(F_tr: ArrayLike, y_tr: ArrayLike, F_te: ArrayLike, y_te: ArrayLike, *,
                 max_iter: int = 200, cv: int = 3) -> float:
    """Balanced accuracy of a linear probe on frozen features (the paper's evaluation).

    Fits ``StandardScaler`` then ``LogisticRegressionCV(Cs=5, scoring="balanced_accuracy",
    class_weight="balanced")`` on ``(F_tr, y_tr)`` and scores ``(F_te, y_te)`` with balanced
    accuracy, so an imbalanced binary task (synergy, ~10% positives) has chance level 0.5.
    The classes are weighted by their inverse frequency in the fit as well as in the score:
    unweighted, the likelihood of a 10%-positive task is best met by predicting the majority
    class, and every encoder read 0.5 whatever its features held (issue 72).

    Args:
        F_tr, F_te: (n, d) features (tensors or arrays). y_tr, y_te: (n,) integer labels.

    Returns:
        Balanced accuracy in [0, 1] (a float).

    Raises:
        ValueError: mismatched lengths or widths, NaN, fewer than 2 classes in ``y_tr``.
        TypeError: non-integer labels.
    """
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    A = as_tensor(F_tr, "F_tr", ndim=2, dtype=torch.float64).cpu().numpy()
    B = as_tensor(F_te, "F_te", ndim=2, dtype=torch.float64).cpu().numpy()
    a = check_labels(y_tr, "y_tr", n=len(A)).cpu().numpy()
    b = check_labels(y_te, "y_te", n=len(B)).cpu().numpy()
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"F_tr and F_te must have the same width, got {A.shape[1]} and "
                         f"{B.shape[1]}")
    classes, counts = np.unique(a, return_counts=True)
    if len(classes) < 2:
        raise ValueError("y_tr must hold at least 2 classes")
    cv = max(2, min(check_int(cv, "cv", 2), int(counts.min())))
    clf = make_pipeline(StandardScaler(), LogisticRegressionCV(
        Cs=5, cv=cv, scoring="balanced_accuracy", class_weight="balanced",
        max_iter=check_int(max_iter, "max_iter", 1), tol=1e-3))
    import warnings

    from threadpoolctl import threadpool_limits

    # one BLAS thread: a 64-wide probe gains nothing from a pool, and a pool on a busy
    # machine spins (3-10x the CPU time of one thread, measured)
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")  # convergence / single-class-fold warnings
        clf.fit(A, a)
    return float(balanced_accuracy_score(b, clf.predict(B)))
