"""Pre-training with CoMM or a baseline objective on the same encoders, frozen features, and
the linear probe of the paper's evaluation (balanced accuracy of ``LogisticRegressionCV``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, get_args

import numpy as np
import torch
from torch import nn

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_choice,
    check_int,
    check_labels,
    check_range,
    resolve_seed,
)
from iclr25._train import fit_minibatch
from iclr25.comm.loss import _infonce, clip_loss
from iclr25.comm.model import CoMM

__all__ = ["OBJECTIVES", "Objective", "features", "linear_probe", "objective_loss", "pretrain"]

Objective = Literal["comm", "cross", "cross_self", "simclr"]
OBJECTIVES: tuple[str, ...] = get_args(Objective)
"""``comm``: CoMM (n unimodal terms + fused SimCLR). ``cross``: CLIP-style cross-modal
InfoNCE between the unimodal embeddings (the paper's "Cross"). ``cross_self``: Cross plus a
SimCLR term per modality (SLIP-style "Cross+Self"). ``simclr``: SimCLR on the fused
embedding only (CoMM's last term)."""


def _unimodal(model: CoMM, v: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    n = model.n_modalities
    return model.embeddings(v, torch.eye(n, dtype=torch.bool))


def objective_loss(model: CoMM, v1: Sequence[torch.Tensor], v2: Sequence[torch.Tensor],
                   objective: Objective = "comm") -> torch.Tensor:
    """The loss of ``objective`` between two augmented views, on ``model``'s encoders and
    projector (so that every objective trains the same architecture).

    Cross: ``mean_{i<j} (clip(Z'_i, Z'_j) + clip(Z''_i, Z''_j)) / 2`` on projected unimodal
    embeddings; Cross+Self adds ``mean_i NCE(Z'_i, Z''_i)``; SimCLR is ``NCE(Z', Z'')`` on the
    fused embedding.

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
        return _infonce(model.projector(a), model.projector(b), tau)
    p1 = [model.projector(z) for z in _unimodal(model, v1)]
    p2 = [model.projector(z) for z in _unimodal(model, v2)]
    n = len(p1)
    cross = torch.stack([(clip_loss(p1[i], p1[j], tau) + clip_loss(p2[i], p2[j], tau)) / 2
                         for i in range(n) for j in range(i + 1, n)]).mean()
    if objective == "cross":
        return cross
    return cross + torch.stack([_infonce(a, b, tau) for a, b in zip(p1, p2, strict=True)]
                               ).mean()


class _Step(nn.Module):
    """Batch indices -> loss of two augmented views, so ``fit_minibatch`` drives training."""

    def __init__(self, model: CoMM, xs: list[torch.Tensor], augment: Sequence[Callable],
                 objective: str, gen: torch.Generator) -> None:
        super().__init__()
        self.model, self.xs, self.augment = model, xs, augment
        self.objective, self.gen = objective, gen

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        batch = [x[idx] for x in self.xs]
        v1 = [a(x, seed=self.gen) for a, x in zip(self.augment, batch, strict=True)]
        v2 = [a(x, seed=self.gen) for a, x in zip(self.augment, batch, strict=True)]
        return objective_loss(self.model, v1, v2, self.objective)  # type: ignore[arg-type]


def pretrain(model: CoMM, xs: Sequence[object], *, augment: Sequence[Callable],
             objective: Objective = "comm", epochs: int = 20, batch_size: int = 128,
             lr: float = 1e-3, weight_decay: float = 1e-2,
             seed: int | torch.Generator | None = 0,
             on_epoch_end: Callable[[int], bool | None] | None = None,
             verbose: bool | None = None) -> list[float]:
    """Self-supervised pre-training of ``model`` on row-aligned modalities with AdamW.

    Args:
        model: a :class:`CoMM` on the device of ``xs``.
        xs: n tensors (N, ...) of one sample per row.
        augment: one callable per modality, ``aug(x, seed=generator) -> new tensor``.
        objective: ``"comm"`` (default) or a baseline of :data:`OBJECTIVES`.
        epochs, batch_size, lr, weight_decay: the optimisation (paper: AdamW, tau 0.1).
        seed: shuffling and augmentation seed.
        on_epoch_end: called with the epoch number; returning True stops.
        verbose: progress bar over the epochs (default: only on a terminal).

    Returns:
        The mean loss of each epoch.

    Raises:
        ValueError: unknown objective, wrong number of modalities or augmentations,
            modalities of different lengths, batch_size < 2.
    """
    check_choice(objective, "objective", OBJECTIVES)
    xs = model._check(xs, "xs", allow_missing=False)  # type: ignore[assignment]
    if len(augment) != model.n_modalities:
        raise ValueError(f"augment must have one callable per modality "
                         f"({model.n_modalities}), got {len(augment)}")
    epochs = check_int(epochs, "epochs", 1)
    batch_size = check_int(batch_size, "batch_size", 2)
    lr = check_range(lr, "lr", 0.0, low_open=True)
    weight_decay = check_range(weight_decay, "weight_decay", 0.0)
    gen = resolve_seed(seed)
    n = len(xs[0])
    step = _Step(model, list(xs), augment, objective, gen)  # type: ignore[arg-type]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    ids = torch.arange(n, device=xs[0].device)

    def batches(_: int) -> list[torch.Tensor]:  # drop a last batch of one (BatchNorm, NCE)
        b = list(torch.randperm(n, generator=gen).to(ids.device).split(batch_size))
        return [i for i in b if len(i) >= 2]

    history = fit_minibatch(step, lambda loss, _: loss, ids, ids, epochs=epochs,
                            batch_size=batch_size, optimizer=opt, seed=gen, batches=batches,
                            on_epoch_end=on_epoch_end, progress=f"{objective} pre-training",
                            verbose=verbose)
    model.eval()
    return history


@torch.no_grad()
def features(model: CoMM, xs: Sequence[object], objective: Objective = "comm", *,
             batch_size: int = 1024) -> torch.Tensor:
    """Frozen features for probing: the fused embedding (``comm``, ``simclr``) or the
    concatenated unimodal embeddings (``cross``, ``cross_self``), before the projector.

    Returns:
        (N, dim) or (N, n * dim) on the inputs' device.
    """
    check_choice(objective, "objective", OBJECTIVES)
    xs = model._check(xs, "xs", allow_missing=objective in ("comm", "simclr"))
    was = model.training
    model.eval()
    n = next(len(x) for x in xs if x is not None)
    out = []
    for s in range(0, n, batch_size):
        chunk = [None if x is None else x[s:s + batch_size] for x in xs]
        if objective in ("comm", "simclr"):
            out.append(model(chunk))
        else:
            out.append(torch.cat(_unimodal(model, chunk), 1))  # type: ignore[arg-type]
    model.train(was)
    return torch.cat(out)


def linear_probe(F_tr: ArrayLike, y_tr: ArrayLike, F_te: ArrayLike, y_te: ArrayLike, *,
                 max_iter: int = 200, cv: int = 3) -> float:
    """Balanced accuracy of a linear probe on frozen features (the paper's evaluation).

    Fits ``StandardScaler`` then ``LogisticRegressionCV(Cs=5, scoring="balanced_accuracy")``
    on ``(F_tr, y_tr)`` and scores ``(F_te, y_te)`` with balanced accuracy, so an
    imbalanced binary task (synergy, ~10% positives) has chance level 0.5.

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
        Cs=5, cv=cv, scoring="balanced_accuracy", max_iter=check_int(max_iter, "max_iter", 1),
        tol=1e-3))
    import warnings

    from threadpoolctl import threadpool_limits

    # one BLAS thread: a 64-wide probe gains nothing from a pool, and a pool on a busy
    # machine spins (3-10x the CPU time of one thread, measured)
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")  # convergence / single-class-fold warnings
        clf.fit(A, a)
    return float(balanced_accuracy_score(b, clf.predict(B)))
