"""A reference training loop on in-memory tensors: plain, IES, or loss-threshold removal.

It follows the IES paper's recipe (SGD lr 0.1, momentum 0.9, weight decay 5e-4,
``ExponentialLR(0.96)``, batch 64) and its bookkeeping: losses of trained samples are
recorded during the train-mode forward (before the optimizer step), excluded samples are
forward-evaluated after the epoch, then the active set is recomputed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import torch
from torch.utils.data import BatchSampler

from iclr25._checks import check_same_length, check_tensor
from iclr25.ies.sampler import IESSampler, per_sample_cross_entropy, record_losses
from iclr25.ies.stopping import InstanceEarlyStopping, LossThresholdStopping

Method = Literal["plain", "ies", "loss_threshold"]


def mlp(sizes: tuple[int, ...] = (64, 256, 256, 10), *, seed: int = 0) -> torch.nn.Sequential:
    """ReLU MLP with the given layer sizes, initialised from ``seed`` (global RNG untouched)."""
    if len(sizes) < 2:
        raise ValueError(f"sizes needs at least input and output sizes, got {sizes}")
    layers: list[torch.nn.Module] = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            layers.append(torch.nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


@dataclass
class TrainLog:
    """Curves and counts of one training run.

    Attributes:
        test_acc: test accuracy (%) after each epoch.
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


def train(
    X: torch.Tensor,
    y: torch.Tensor,
    X_test: torch.Tensor,
    y_test: torch.Tensor,
    *,
    method: Method = "ies",
    model: torch.nn.Module | None = None,
    epochs: int = 100,
    batch_size: int = 64,
    lr: float = 0.1,
    momentum: float = 0.9,
    weight_decay: float = 5e-4,
    gamma: float = 0.96,
    delta: float = 1e-3,
    window: int = 3,
    mode: str = "shipped",
    threshold: float = 1e-2,
    seed: int = 0,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    stopper: InstanceEarlyStopping | None = None,
) -> TrainLog:
    """Train a classifier with plain SGD, IES, or small-loss removal; log curves and counts.

    Args:
        X, y: (n, d) training inputs and (n,) int64 labels. X_test, y_test: the test split.
        method: ``"plain"`` (all samples every epoch), ``"ies"`` (:class:`IESSampler` with
            :class:`InstanceEarlyStopping`) or ``"loss_threshold"`` (drop samples whose latest
            loss is below ``threshold``; same sampler and bookkeeping as IES).
        model: the network (default: :func:`mlp` with ``(d, 256, 256, n_classes)``, seeded).
        epochs, batch_size, lr, momentum, weight_decay, gamma: the optimisation recipe.
        delta, window, mode: IES settings. threshold: loss threshold of the baseline.
        seed: seed of the default model's init and of the shuffling.
        loss_fn: per-sample loss ``(logits, y) -> (b,)``; default cross-entropy.
        stopper: a fresh stopper to use instead of the one ``method`` builds (e.g. a subclass
            with another exclusion rule); ``method`` must then not be ``"plain"``.

    Returns:
        TrainLog with per-epoch test accuracy, active counts and backprop totals.

    With ``mode="algorithm1"`` every sample is forward-evaluated (no grad) after each epoch
    and those losses form the history, as the paper's Algorithm 1 forwards all instances.
    """
    X = check_tensor(X, "X", ndim=2, floating=True)
    y = check_tensor(y, "y", ndim=1, integer=True)
    X_test = check_tensor(X_test, "X_test", ndim=2, floating=True)
    y_test = check_tensor(y_test, "y_test", ndim=1, integer=True)
    check_same_length(X=X, y=y)
    check_same_length(X_test=X_test, y_test=y_test)
    if method not in ("plain", "ies", "loss_threshold"):
        raise ValueError(f"method must be 'plain', 'ies' or 'loss_threshold', got {method!r}")
    if epochs < 1 or batch_size < 1:
        raise ValueError("epochs and batch_size must be >= 1")
    n = len(X)
    loss_fn = loss_fn or per_sample_cross_entropy
    if model is None:
        n_classes = int(torch.cat([y, y_test]).max()) + 1
        model = mlp((X.shape[1], 256, 256, n_classes), seed=seed).to(X.device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum,
                          weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=gamma)

    if stopper is not None:
        if not isinstance(stopper, InstanceEarlyStopping):
            raise TypeError(f"stopper must be an InstanceEarlyStopping, got "
                            f"{type(stopper).__name__}")
        if method == "plain" or stopper.n_samples != n or stopper.epochs or stopper.n_forward:
            raise ValueError("stopper must be fresh, have n_samples == len(X), and method "
                             "must not be 'plain'")
    elif method == "plain":
        # Everything active forever: the same loop with a stopper that never excludes.
        stopper = InstanceEarlyStopping(n, delta=0.0, device=X.device)
    elif method == "ies":
        stopper = InstanceEarlyStopping(n, delta=delta, window=window, mode=mode,  # type: ignore[arg-type]
                                        device=X.device)
    else:
        stopper = LossThresholdStopping(n, threshold=threshold, device=X.device)
    record_in_loop = not stopper.full_forward
    batches = BatchSampler(IESSampler(stopper, seed=seed), batch_size, drop_last=False)

    log = TrainLog(method=method)
    seconds = 0.0
    for _ in range(epochs):
        t0 = time.perf_counter()
        model.train()
        for b in batches:
            idx = torch.as_tensor(b, device=X.device)
            loss = stopper.masked_loss(loss_fn(model(X[idx]), y[idx]), idx,
                                       record=record_in_loop and method != "plain")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sched.step()
        if method != "plain":
            if record_in_loop:
                record_losses(stopper, model, X, y, loss_fn=loss_fn)
            else:
                record_losses(stopper, model, X, y, torch.arange(n, device=X.device),
                              loss_fn=loss_fn)
        stopper.step()
        seconds += time.perf_counter() - t0
        log.active.append(stopper.active_per_epoch[-1])
        log.backprop_cum.append(stopper.n_backprop)
        log.test_acc.append(accuracy(model, X_test, y_test))
    log.n_backprop = stopper.n_backprop
    if method == "plain":
        log.n_forward = n * epochs
    elif record_in_loop:
        log.n_forward = stopper.n_forward
    else:  # training forwards were not recorded, only the full evaluation pass
        log.n_forward = stopper.n_forward + stopper.n_backprop
    log.saved_fraction = stopper.saved_fraction
    log.seconds = seconds
    return log


@torch.no_grad()
def accuracy(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Test accuracy in percent, in eval mode (mode restored)."""
    was = model.training
    model.eval()
    acc = float((model(X).argmax(1) == y).float().mean()) * 100.0
    model.train(was)
    return acc
