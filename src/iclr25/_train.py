"""Seeded networks, the minibatch loop and accuracy: shared by every method that trains.

None of these touches the global RNG: initialisation and shuffling draw from generators
built from ``seed``, so two calls with the same seed give the same result on one device.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_int,
    check_labels,
    check_same_length,
    resolve_seed,
)
from iclr25._engine import Engine, Loop, Precision, Strategy, Stream, _Source
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
    X: torch.Tensor | Dataset | DataLoader | Stream,
    y: torch.Tensor | None,
    *,
    epochs: int,
    batch_size: int,
    optimizer: torch.optim.Optimizer,
    seed: int | torch.Generator | None = 0,
    callback: Callable[[torch.Tensor, torch.Tensor], torch.Tensor | None] | None = None,
    batches: Callable[[int], Iterable[torch.Tensor]] | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    on_epoch_end: Callable[[int], bool | None] | None = None,
    on_step: Callable[[int, float], bool | None] | None = None,
    progress: str | None = None,
    steps: int | None = None,
    verbose: bool | None = None,
    devices: int = 1,
    strategy: Strategy = "auto",
    precision: Precision = "32",
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int | None = None,
    resume: str | os.PathLike | None = None,
    ema: torch.optim.swa_utils.AveragedModel | None = None,
    extra_state: Mapping[str, Any] | None = None,
    gathered: bool = False,
    interval: Literal["epoch", "step"] = "epoch",
    grad_clip: float | None = None,
) -> list[float]:
    """Train ``model`` with minibatches; return each epoch's mean loss.

    The loop is :class:`iclr25._engine.Loop`: single process in float32 it is a plain PyTorch
    loop; devices, mixed precision and process groups go through Lightning Fabric.

    Args:
        model: the network, already on its device; put in train mode here.
        loss_fn: ``(output, y_batch) -> loss``, a scalar, or per-sample ``(b,)`` losses when
            ``callback`` reduces them.
        X: (n, ...) input tensor; or a map-style ``Dataset`` of ``(x, y)`` items, read batch
            by batch in the same order as tensors would be (memory bounded by the batch); or
            a ``DataLoader`` of ``(x, y)`` batches, iterated as it is (its own order; give it a
            seeded ``generator`` to resume it exactly); or a :class:`iclr25._engine.Stream`
            of ``(x, y)`` global batches drawn as the training goes (random crops).
        y: (n, ...) targets (labels, or regression targets); None with a Dataset, DataLoader
            or Stream.
        epochs, batch_size: the loop's length and (global) batch size.
        optimizer: built on ``model``'s parameters.
        seed: shuffling seed (int, Generator or None).
        callback: per-batch hook ``(idx, loss) -> loss``: receives the batch's indices into
            X and ``loss_fn``'s output, returns the scalar to backpropagate, or None to skip
            the step (IES's masked loss, LOS's re-weighting use it).
        batches: ``epoch -> iterable of index tensors`` replacing the shuffled batches
            (a sampler over an active subset, for example). Under DDP it runs in every
            process and must give the same batches there: draw only from ``seed``.
        scheduler: stepped once per epoch.
        on_epoch_end: called with the epoch number after each epoch; returning True stops.
        on_step: called as ``on_step(steps_done, loss)`` after every optimiser step (and
            EMA update), before its checkpoint; returning True stops. Under DDP it runs in
            every process: decide from what they share (the model, the loss).
        progress: a description: shows a progress bar over the epochs, or the steps with
            ``interval="step"`` (:func:`iclr25._progress.progress_bar`, per ``verbose``);
            None: no bar.
        steps: with ``interval="step"``, the optimiser steps the run will take, where the
            caller knows them (a Stream's or ``batches``' count): the bar's total, so it
            shows the time left (None: steps done only, no estimate).
        verbose: the bar's visibility (default: only on a terminal).
        devices: processes (CPU, gloo) or GPUs (NCCL) of data-parallel training.
        strategy: "auto" (DDP when devices > 1), "single" or "ddp".
        precision: "32" (default), "bf16-mixed", or "16-mixed" (CUDA only).
        checkpoint: file holding the whole training state, written every
            ``checkpoint_every`` optimiser steps and at the end.
        checkpoint_every: steps between checkpoints (needs ``checkpoint``).
        resume: a checkpoint of this same training (model, optimiser, batch size, dataset
            length) to continue from; the result equals the uninterrupted run.
        ema: an ``AveragedModel`` of ``model``, updated after every step and checkpointed.
        extra_state: more objects with ``state_dict``/``load_state_dict`` to checkpoint
            (a callback's state: required with ``callback`` and checkpoints).
        gathered: the model computes the whole batch's loss (a contrastive loss with its
            negatives from the global batch): under DDP every process is given the whole
            batch (from a Dataset: only its own rows read, zeros in the other processes'
            places, so the model must read it through ``local_rows``), encodes its
            :func:`iclr25._engine.local_rows` and gathers the embeddings with
            :func:`iclr25._engine.gather` (no effect in one process).
        interval: "epoch" (default): the scheduler steps and the history holds a mean per
            epoch; "step": both per optimiser step (a training counted in steps).
        grad_clip: clip the gradients' global norm to this before each step (None: no).

    Returns:
        Mean of the backpropagated batch losses per epoch (NaN for an epoch with no step).

    Raises:
        ValueError / TypeError: bad sizes or options, named, before any work; a ``resume``
            checkpoint that does not fit (the field named; nothing loaded or written).
    """
    epochs = check_int(epochs, "epochs", 1)
    batch_size = check_int(batch_size, "batch_size", 1)
    if isinstance(X, (Dataset, DataLoader, Stream)) and not isinstance(X, torch.Tensor):
        if y is not None:
            raise ValueError("y must be None when X is a Dataset, DataLoader or Stream (its "
                             "items are (x, y) pairs)")
        if isinstance(X, Dataset) and not hasattr(X, "__len__"):
            raise TypeError("X must be a map-style Dataset with __len__ (or a DataLoader)")
    else:
        check_same_length(X=X, y=y)
    kind = next(iter(model.parameters()), torch.empty(0)).device.type
    engine = Engine(devices=devices, strategy=strategy, precision=precision,
                    checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=resume,
                    device_kind=kind)
    total = epochs if interval == "epoch" else (
        None if steps is None else check_int(steps, "steps", 1))
    bar = progress_bar(total, progress or "",
                       verbose=verbose if progress else False)
    with bar as advance:
        return Loop(model, loss_fn, _Source(X, y), epochs, batch_size, optimizer,
                    resolve_seed(seed), engine, callback=callback, batches=batches,
                    scheduler=scheduler, ema=ema, extra_state=dict(extra_state or {}),
                    on_epoch_end=on_epoch_end, on_step=on_step, advance=advance, gathered=gathered,
                    interval=interval, grad_clip=grad_clip).run()


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
