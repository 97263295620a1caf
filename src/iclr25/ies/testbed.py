"""The IES paper's training recipe on in-memory tensors, for the claims, tests and benchmark.

``train`` runs plain training (``stopper=None``) or training with any
:class:`~iclr25.ies.InstanceEarlyStopping` (IES, the loss-threshold baseline, a subclass) through
the shared minibatch loop (:func:`iclr25._train.fit_minibatch`). It follows the paper's recipe
(SGD lr 0.1, momentum 0.9, weight decay 5e-4, ``ExponentialLR(0.96)``, batch 64) and the
released code's bookkeeping: losses of trained samples are recorded during the train-mode
forward (before the optimizer step), excluded samples are forward-evaluated after the epoch,
then the active set is recomputed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_int,
    check_labels,
    check_range,
    check_same_length,
    resolve_seed,
)
from iclr25._train import accuracy, fit_minibatch, seeded_mlp
from iclr25.datasets import Split, teacher_classification
from iclr25.ies.sampler import per_sample_cross_entropy, record_losses
from iclr25.ies.stopping import InstanceEarlyStopping

__all__ = ["TEST_ROWS", "TrainLog", "accuracy", "teacher_split", "train"]

TEST_ROWS = 5000  # the teacher task's test split: 1 accuracy point is 50 rows (digits: 4.5)


@dataclass
class TrainLog:
    """Curves and counts of one training run.

    Attributes:
        method: ``"plain"`` or the stopper's class name.
        test_acc: test accuracy (fraction in [0, 1]) after each epoch.
        active: samples backpropagated in each epoch.
        backprop_cum: cumulative backpropagated instances after each epoch.
        n_backprop: total backpropagated instances; n_forward: total per-sample forwards
            (training + forward-only evaluation of excluded samples).
        saved_fraction: ``1 - n_backprop / (n_train * epochs)``.
        seconds: wall time of the training loop (test evaluation excluded).
    """

    method: str
    test_acc: list[float] = field(default_factory=list)
    active: list[int] = field(default_factory=list)
    backprop_cum: list[int] = field(default_factory=list)
    n_backprop: int = 0
    n_forward: int = 0
    saved_fraction: float = 0.0
    seconds: float = 0.0

    @property
    def final_acc(self) -> float:
        return self.test_acc[-1]

    @property
    def best_acc(self) -> float:
        return max(self.test_acc)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(final_acc=self.final_acc, best_acc=self.best_acc)
        return d


def teacher_split(n_train: int, n_test: int = TEST_ROWS, *, seed: int = 0,
                  device: torch.device | str | None = None) -> Split:
    """A random-teacher task (:func:`~iclr25.datasets.teacher_classification`: inputs
    ``N(0, I)`` in 32 dimensions, 10 classes from a width-64 tanh teacher, no label noise)
    drawn once and split into its first ``n_train`` rows and the next ``n_test``.

    Unlike digits (450 test rows), the test split can be as large as needed, so a
    difference of one accuracy point between two arms is ``n_test / 100`` rows, not 4.5.

    Args:
        n_train, n_test: rows of the training and test splits (>= 1).
        seed: seed of the teacher and the inputs (one task per seed).

    Returns:
        Split with ``X_*`` of shape (n, 32) float32 and ``y_*`` of shape (n,) int64.
    """
    n_train = check_int(n_train, "n_train", 1)
    n_test = check_int(n_test, "n_test", 1)
    X, y = teacher_classification(n_train + n_test, 32, 10, 64, seed=seed)
    X, y = X.to(device), y.to(device)
    return Split(X[:n_train], y[:n_train], X[n_train:], y[n_train:])


def _check_data(X: ArrayLike, y: ArrayLike, X_test: ArrayLike, y_test: ArrayLike,
                model: torch.nn.Module | None) -> tuple[torch.Tensor, ...]:
    """The four tensors converted once: inputs to the model's dtype (float32 by default)."""
    first = None if model is None else next(iter(model.parameters()), None)
    dtype = torch.float32 if first is None else first.dtype
    device = None if first is None else first.device
    X = as_tensor(X, "X", ndim=2, dtype=dtype, device=device)
    X_test = as_tensor(X_test, "X_test", ndim=2, dtype=dtype, device=X.device)
    y = check_labels(y, "y", n=len(X), device=X.device)
    y_test = check_labels(y_test, "y_test", device=X.device)
    check_same_length(X_test=X_test, y_test=y_test)
    return X, y, X_test, y_test


def _check_stopper(stopper: object, n: int) -> InstanceEarlyStopping | None:
    if stopper is None:
        return None
    if not isinstance(stopper, InstanceEarlyStopping):
        raise TypeError(f"stopper must be an InstanceEarlyStopping or None, got "
                        f"{type(stopper).__name__}")
    if stopper.n_samples != n:
        raise ValueError(f"stopper has n_samples={stopper.n_samples} but X has {n} rows")
    if stopper.epochs or stopper.n_forward:
        raise ValueError("stopper must be fresh (no recorded losses or epochs)")
    return stopper


def train(
    X: ArrayLike,
    y: ArrayLike,
    X_test: ArrayLike,
    y_test: ArrayLike,
    *,
    stopper: InstanceEarlyStopping | None = None,
    model: torch.nn.Module | None = None,
    epochs: int = 100,
    batch_size: int = 64,
    lr: float = 0.1,
    momentum: float = 0.9,
    weight_decay: float = 5e-4,
    gamma: float = 0.96,
    seed: int | torch.Generator | None = 0,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
) -> TrainLog:
    """Train a classifier with plain SGD (``stopper=None``) or with a per-instance stopper.

    Args:
        X, y: (n, d) training inputs (any float dtype, numpy works) and (n,) integer labels.
        X_test, y_test: the test split, scored after every epoch.
        stopper: ``None`` for plain training (every sample every epoch), or a fresh
            :class:`InstanceEarlyStopping` (or subclass, e.g. ``LossThresholdStopping``) with
            ``n_samples == len(X)`` on ``X``'s device; its active set picks each epoch's
            samples. In ``algorithm1`` mode every sample is forward-evaluated after each
            epoch and those losses form the history (the paper forwards all instances).
        model: the network (default: a seeded ReLU MLP ``(d, 256, 256, n_classes)``).
        epochs, batch_size, lr, momentum, weight_decay, gamma: the optimisation recipe.
        seed: seed of the default model's init and of the shuffling (int or Generator).
        loss_fn: per-sample loss ``(logits, y) -> (b,)``; default cross-entropy.

    Returns:
        TrainLog with per-epoch test accuracy (fraction), active counts and backprop totals.

    Raises:
        TypeError / ValueError naming the argument, before any training.
    """
    X, y, X_test, y_test = _check_data(X, y, X_test, y_test, model)
    stopper = _check_stopper(stopper, len(X))
    epochs = check_int(epochs, "epochs", 1)
    batch_size = check_int(batch_size, "batch_size", 1)
    for name, v in (("lr", lr), ("momentum", momentum), ("weight_decay", weight_decay)):
        check_range(v, name, 0.0)
    check_range(gamma, "gamma", 0.0, 1.0, low_open=True)
    gen = resolve_seed(seed)
    if model is None:
        n_classes = int(torch.cat([y, y_test]).max()) + 1
        model = seeded_mlp((X.shape[1], 256, 256, n_classes), seed=gen.initial_seed()).to(
            X.device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum,
                          weight_decay=weight_decay)
    loop = _Loop(model, opt, torch.optim.lr_scheduler.ExponentialLR(opt, gamma=gamma), stopper,
                 loss_fn or per_sample_cross_entropy, epochs, batch_size, gen)
    return _run(loop, X, y, X_test, y_test)


@dataclass(frozen=True)
class _Loop:
    """What :func:`_run` trains with: the checked options of :func:`train`."""

    model: torch.nn.Module
    opt: torch.optim.Optimizer
    sched: torch.optim.lr_scheduler.LRScheduler
    stopper: InstanceEarlyStopping | None   # None: plain training
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # per sample
    epochs: int
    batch_size: int
    gen: torch.Generator                     # shuffling


def _run(loop: _Loop, X: torch.Tensor, y: torch.Tensor, X_test: torch.Tensor,
         y_test: torch.Tensor) -> TrainLog:
    """The loop: ``fit_minibatch`` with the stopper's active set as batches, its masked loss
    as the per-batch hook, and the forward-only pass + verdict at the end of each epoch."""
    model, stopper, loss_fn, gen = loop.model, loop.stopper, loop.loss_fn, loop.gen
    epochs, batch_size = loop.epochs, loop.batch_size
    n = len(X)
    log = TrainLog(method="plain" if stopper is None else type(stopper).__name__)
    record_in_loop = stopper is not None and not stopper.full_forward
    clock = {"start": time.perf_counter(), "seconds": 0.0}

    def batches(epoch: int) -> list[torch.Tensor]:
        # the same draws as IESSampler: a permutation of the active indices from ``gen``
        idx = torch.arange(n) if stopper is None else stopper.active_indices.cpu()
        if idx.numel() == 0:  # every sample mastered: the epoch trains nothing
            return []
        return list(idx[torch.randperm(idx.numel(), generator=gen)].to(X.device)
                    .split(batch_size))

    def masked(idx: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
        if stopper is None:
            return loss.sum() / len(loss)
        return stopper.masked_loss(loss, idx, record=record_in_loop)

    def end_of_epoch(epoch: int) -> None:
        if stopper is not None:
            every = None if record_in_loop else torch.arange(n, device=X.device)
            record_losses(stopper, model, X, y, every, loss_fn=loss_fn)
            stopper.step()
        clock["seconds"] += time.perf_counter() - clock["start"]
        log.active.append(n if stopper is None else stopper.active_per_epoch[-1])
        log.backprop_cum.append(n * (epoch + 1) if stopper is None else stopper.n_backprop)
        log.test_acc.append(accuracy(model, X_test, y_test))
        clock["start"] = time.perf_counter()

    fit_minibatch(model, loss_fn, X, y, epochs=epochs, batch_size=batch_size, optimizer=loop.opt,
                  seed=gen, callback=masked, batches=batches, scheduler=loop.sched,
                  on_epoch_end=end_of_epoch)
    log.n_backprop = log.backprop_cum[-1]
    if stopper is None:
        log.n_forward = n * epochs
        log.saved_fraction = 0.0
    else:
        # in algorithm1 mode the training forwards were not recorded, only the full pass
        log.n_forward = stopper.n_forward + (0 if record_in_loop else stopper.n_backprop)
        log.saved_fraction = stopper.saved_fraction
    log.seconds = clock["seconds"]
    return log
