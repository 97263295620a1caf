"""Sampler that yields only the samples IES still trains, and the forward-only hook."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset, Sampler, default_collate

from iclr25._checks import (
    as_tensor,
    check_class_targets,
    check_int,
    check_same_length,
    resolve_seed,
    run_model,
)
from iclr25._contract import checked
from iclr25.ies.stopping import InstanceEarlyStopping


@checked
class IESSampler(Sampler[int]):
    """Yield the active indices of an :class:`InstanceEarlyStopping` once per epoch, shuffled.

    Mastered samples are never yielded, so they cost no forward or backward pass in the
    training loop; forward-evaluate them with :func:`record_losses` after the epoch (before
    ``ies.step()``) so their loss history continues and they can re-enter. The active set is
    read when iteration starts, so changing it mid-epoch has no effect until the next epoch.

    Use with ``DataLoader(dataset, batch_size=..., sampler=IESSampler(ies))`` where the dataset
    returns each sample's index, or with ``BatchSampler`` for index-based tensor loops.

    Args:
        stopper: the IES state whose ``active_indices`` are yielded.
        shuffle: permute the active indices each epoch.
        seed: seed of the shuffling generator (int, or a CPU ``torch.Generator`` used as
            is); each iteration draws a new permutation.
    """

    def __init__(self, stopper: InstanceEarlyStopping, *, shuffle: bool = True,
                 seed: int | torch.Generator | None = 0) -> None:
        if not isinstance(stopper, InstanceEarlyStopping):
            raise TypeError(f"stopper must be an InstanceEarlyStopping, got "
                            f"{type(stopper).__name__}")
        self.stopper = stopper
        self.shuffle = shuffle
        self.generator = resolve_seed(seed)

    def __iter__(self) -> Iterator[int]:
        idx = self.stopper.active_indices.cpu()
        if self.shuffle:
            idx = idx[torch.randperm(idx.numel(), generator=self.generator)]
        return iter(idx.tolist())

    def __len__(self) -> int:
        return int(self.stopper.active_mask.sum())


@checked
def per_sample_cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy per sample, ``(b, C), (b,) -> (b,)``; the default loss of the hooks.

    Integer labels of any dtype (int32, uint8, ...) are read as int64 class indices; (b, C)
    floating targets are class probabilities.
    """
    logits = as_tensor(logits, "logits", ndim=2, floating=True)
    y = check_class_targets(y, "y", len(logits), logits.shape[1], device=logits.device)
    return F.cross_entropy(logits, y, reduction="none")


def _dataset_rows(ds: Dataset, model: torch.nn.Module
                  ) -> Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """``indices -> (x batch on the model's device, y batch)`` read from a Dataset (``x`` a
    tensor, or a dict of tensors: a Hugging Face model's inputs)."""
    def rows(b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        xb, yb = default_collate([tuple(ds[i])[:2] for i in b.tolist()])
        xb = _to_model(xb, model)
        first = next(iter(xb.values())) if isinstance(xb, Mapping) else xb
        return xb, yb.to(first.device)
    return rows


def _to_model(X: torch.Tensor, model: torch.nn.Module) -> torch.Tensor:
    """``X`` on the model's device, floating input cast to its dtype (float64 numpy works);
    a dict of tensors entry by entry."""
    if isinstance(X, Mapping):
        return {k: _to_model(v, model) for k, v in X.items()}  # type: ignore[return-value]
    first = next(iter(model.parameters()), None)
    if first is None:
        return X
    return X.to(device=first.device, dtype=first.dtype if X.is_floating_point() else X.dtype)


@checked
@torch.no_grad()
def record_losses(
    stopper: InstanceEarlyStopping,
    model: torch.nn.Module,
    X: torch.Tensor | Dataset,
    y: torch.Tensor | None,
    indices: torch.Tensor | None = None,
    *,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = per_sample_cross_entropy,
    batch_size: int = 1024,
    eval_mode: bool = True,
) -> torch.Tensor:
    """Forward-only pass over ``indices`` (default: the excluded samples); record their losses.

    This is the hook that keeps mastered samples' loss histories going (the released code
    evaluates excluded samples after every epoch) so they can re-enter training.

    Args:
        stopper: the IES state to update.
        model: maps ``X[i]`` batches to outputs accepted by ``loss_fn``.
        X: (n_samples, ...) training inputs, indexed by dataset index; or a map-style
            ``Dataset`` whose items begin with ``(x, y)`` (more fields, such as the index,
            are ignored), read ``batch_size`` items at a time.
        y: (n_samples, ...) training targets; None with a Dataset.
        indices: (m,) dataset indices to evaluate; ``None`` means ``stopper.excluded_indices``.
        loss_fn: ``(outputs, targets) -> (b,)`` per-sample losses.
        batch_size: forward batch size.
        eval_mode: run the model in ``eval()`` mode (as the released code does), restoring its
            previous mode afterwards.

    Returns:
        (m,) the recorded losses, on the model output's device (an empty tensor on
        ``X.device`` when there is nothing to evaluate).
    """
    if isinstance(X, Dataset):
        if y is not None:
            raise ValueError("y must be None when X is a Dataset (its items hold the targets)")
        rows = _dataset_rows(X, model)
    else:
        X = _to_model(as_tensor(X, "X", min_ndim=1), model)
        y = as_tensor(y, "y", finite=False, device=X.device, min_ndim=1)
        check_same_length(X=X, y=y)
        rows = lambda b: (X[b], y[b])  # noqa: E731
    if len(X) != stopper.n_samples:
        raise ValueError(f"X must have n_samples={stopper.n_samples} rows, got {len(X)}")
    batch_size = check_int(batch_size, "batch_size", 1)
    idx = (stopper.excluded_indices if indices is None
           else stopper.check_indices(indices, unique=True))
    device = X.device if isinstance(X, torch.Tensor) else torch.device("cpu")
    if idx.numel() == 0:
        return torch.zeros(0, device=device)
    idx = idx.to(device)
    was_training = model.training
    if eval_mode:
        model.eval()
    try:
        out = [loss_fn(run_model(model, xb, "X"), yb).detach()
               for xb, yb in map(rows, idx.split(batch_size))]
    finally:
        model.train(was_training)
    losses = torch.cat(out)
    stopper.update(idx, losses)
    return losses
