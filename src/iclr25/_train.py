"""Seeded networks, the minibatch loop and accuracy: shared by every method that trains.

None of these touches the global RNG: initialisation and shuffling draw from generators
built from ``seed``, so two calls with the same seed give the same result on one device.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import nn

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_int,
    check_labels,
    check_same_length,
    resolve_seed,
)
from iclr25._progress import progress_bar

__all__ = ["accuracy", "fit_minibatch", "seeded_mlp", "shuffled_batches"]



@contextmanager
def seeded_init(seed: int | torch.Generator | None) -> Iterator[None]:
    """Build modules inside this block to initialise them from ``seed`` (an int, a Generator's
    ``initial_seed``, or None: fresh); the caller's RNG is left as it was.

    Modules are initialised on the CPU and moved afterwards, so only the CPU generator is
    forked and seeded: no CUDA device is touched.
    """
    gen = resolve_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(gen.initial_seed())
        yield


def seeded_mlp(
    sizes: Sequence[int],
    *,
    seed: int | torch.Generator | None = 0,
    activation: Callable[[], nn.Module] = nn.ReLU,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> nn.Sequential:
    """An MLP ``sizes[0] -> ... -> sizes[-1]`` (activation between layers, none at the end).

    Initialised with PyTorch's default (Kaiming-uniform) scheme from ``seed``: the global RNG
    is forked, seeded and restored, so the caller's random state is untouched.

    Args:
        sizes: layer widths, at least (in, out).
        seed: int, Generator (its ``initial_seed`` is used) or None (fresh).
        activation: a zero-argument module constructor placed between linear layers.

    Returns:
        ``nn.Sequential`` of ``Linear``/activation modules on ``device`` with ``dtype``.
    """
    sizes = [check_int(s, "sizes", 1) for s in sizes]
    if len(sizes) < 2:
        raise ValueError(f"sizes needs at least input and output widths, got {sizes}")
    layers: list[nn.Module] = []
    with seeded_init(seed):
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            layers.append(nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(activation())
    return nn.Sequential(*layers).to(device=device, dtype=dtype)


def shuffled_batches(n: int, batch_size: int, generator: torch.Generator,
                     device: torch.device | str = "cpu") -> list[torch.Tensor]:
    """One epoch of index batches: a permutation of ``range(n)`` cut into ``batch_size`` pieces.

    The permutation is drawn on the CPU generator, so the order is the same on every device.
    """
    return list(torch.randperm(n, generator=generator).to(device).split(batch_size))


def fit_minibatch(
    model: nn.Module,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    epochs: int,
    batch_size: int,
    optimizer: torch.optim.Optimizer,
    seed: int | torch.Generator | None = 0,
    callback: Callable[[torch.Tensor, torch.Tensor], torch.Tensor | None] | None = None,
    batches: Callable[[int], Iterable[torch.Tensor]] | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    on_epoch_end: Callable[[int], bool | None] | None = None,
    progress: str | None = None,
    verbose: bool | None = None,
) -> list[float]:
    """Train ``model`` on in-memory tensors with minibatches; return each epoch's mean loss.

    Args:
        model: the network, already on X's device; put in train mode here.
        loss_fn: ``(output, y_batch) -> loss``, a scalar, or per-sample ``(b,)`` losses when
            ``callback`` reduces them.
        X: (n, ...) inputs. y: (n, ...) targets (labels, or regression targets).
        epochs, batch_size: the loop's length and batch size.
        optimizer: built on ``model``'s parameters.
        seed: shuffling seed (int, Generator or None).
        callback: per-batch hook ``(idx, loss) -> loss``: receives the batch's indices into
            X and ``loss_fn``'s output, returns the scalar to backpropagate, or None to skip
            the step (IES's masked loss, LOS's re-weighting use it).
        batches: ``epoch -> iterable of index tensors`` replacing the shuffled batches
            (a sampler over an active subset, for example).
        scheduler: stepped once per epoch.
        on_epoch_end: called with the epoch number after each epoch; returning True stops.
        progress: a description: shows a progress bar over the epochs
            (:func:`iclr25._progress.progress_bar`, per ``verbose``); None: no bar.
        verbose: the bar's visibility (default: only on a terminal).

    Returns:
        Mean of the backpropagated batch losses per epoch (NaN for an epoch with no step).
    """
    epochs = check_int(epochs, "epochs", 1)
    batch_size = check_int(batch_size, "batch_size", 1)
    n = check_same_length(X=X, y=y)
    gen = resolve_seed(seed)
    history: list[float] = []
    bar = progress_bar(epochs, progress or "", verbose=verbose if progress else False)
    with bar as advance:
        for epoch in range(epochs):
            model.train()
            it = batches(epoch) if batches is not None else shuffled_batches(
                n, batch_size, gen, X.device)
            history.append(_epoch(model, loss_fn, X, y, it, optimizer, callback))
            if scheduler is not None:
                scheduler.step()
            advance(loss=history[-1])
            if on_epoch_end is not None and on_epoch_end(epoch):
                break
    return history


def _epoch(model: nn.Module, loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
           X: torch.Tensor, y: torch.Tensor, index_batches: Iterable[torch.Tensor],
           optimizer: torch.optim.Optimizer,
           callback: Callable[[torch.Tensor, torch.Tensor], torch.Tensor | None] | None,
           ) -> float:
    """One pass over ``index_batches``: the mean backpropagated loss (NaN with no step)."""
    total, steps = 0.0, 0
    for idx in index_batches:
        loss = loss_fn(model(X[idx]), y[idx])
        if callback is not None:
            loss = callback(idx, loss)
            if loss is None:
                continue
        elif loss.ndim:
            loss = loss.mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += float(loss.detach())
        steps += 1
    return total / steps if steps else float("nan")


@torch.no_grad()
def accuracy(model: nn.Module | Callable[[torch.Tensor], torch.Tensor], X: ArrayLike, y: ArrayLike,
             *, batch_size: int = 4096) -> float:
    """Fraction in [0, 1] of rows of ``X`` whose argmax output equals ``y``.

    A module is evaluated in eval mode and its mode restored. ``X`` is cast to the model's
    dtype and device (numpy float64 works); ``y`` must be 1-D integer labels.
    """
    first = next(iter(model.parameters()), None) if isinstance(model, nn.Module) else None
    X = as_tensor(X, "X", dtype=first.dtype if first is not None else None,
                  device=first.device if first is not None else None)
    y = check_labels(y, "y", n=len(X), device=X.device)
    was = getattr(model, "training", False)
    if isinstance(model, nn.Module):
        model.eval()
    try:
        correct = sum(int((model(xb).argmax(1) == yb).sum())
                      for xb, yb in zip(X.split(batch_size), y.split(batch_size), strict=True))
    finally:
        if isinstance(model, nn.Module):
            model.train(was)
    return correct / len(X)
