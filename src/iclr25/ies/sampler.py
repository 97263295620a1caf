"""Sampler that yields only the samples IES still trains, and the forward-only hook."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F
from torch.utils.data import Sampler

from iclr25._checks import check_same_length, check_tensor
from iclr25.ies.stopping import InstanceEarlyStopping


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
        seed: seed of the shuffling generator (each iteration draws a new permutation).
    """

    def __init__(self, stopper: InstanceEarlyStopping, *, shuffle: bool = True,
                 seed: int = 0) -> None:
        if not isinstance(stopper, InstanceEarlyStopping):
            raise TypeError(f"stopper must be an InstanceEarlyStopping, got "
                            f"{type(stopper).__name__}")
        self.stopper = stopper
        self.shuffle = shuffle
        self.generator = torch.Generator().manual_seed(int(seed))

    def __iter__(self) -> Iterator[int]:
        idx = self.stopper.active_indices.cpu()
        if self.shuffle:
            idx = idx[torch.randperm(idx.numel(), generator=self.generator)]
        return iter(idx.tolist())

    def __len__(self) -> int:
        return int(self.stopper.active_mask.sum())


def per_sample_cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy per sample, ``(b, C), (b,) -> (b,)``; the default loss of the hooks."""
    return F.cross_entropy(logits, target, reduction="none")


@torch.no_grad()
def record_losses(
    stopper: InstanceEarlyStopping,
    model: torch.nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
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
        X: (n_samples, ...) training inputs, indexed by dataset index.
        y: (n_samples, ...) training targets.
        indices: (m,) dataset indices to evaluate; ``None`` means ``stopper.excluded_indices``.
        loss_fn: ``(outputs, targets) -> (b,)`` per-sample losses.
        batch_size: forward batch size.
        eval_mode: run the model in ``eval()`` mode (as the released code does), restoring its
            previous mode afterwards.

    Returns:
        (m,) the recorded losses, on the model output's device (an empty tensor on
        ``X.device`` when there is nothing to evaluate).
    """
    X = check_tensor(X, "X", finite=False)
    y = check_tensor(y, "y", finite=False)
    check_same_length(X=X, y=y)
    if len(X) != stopper.n_samples:
        raise ValueError(f"X must have n_samples={stopper.n_samples} rows, got {len(X)}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    idx = (stopper.excluded_indices if indices is None
           else stopper._check_indices(indices, unique=True))
    if idx.numel() == 0:
        return torch.zeros(0, device=X.device)
    idx = idx.to(X.device)
    was_training = model.training
    if eval_mode:
        model.eval()
    try:
        out = [loss_fn(model(X[b]), y[b]).detach() for b in idx.split(batch_size)]
    finally:
        model.train(was_training)
    losses = torch.cat(out)
    stopper.update(idx, losses)
    return losses
