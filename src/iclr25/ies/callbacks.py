"""IES in a training script you already have: a PyTorch Lightning callback.

The script keeps its model, data and ``Trainer``; two lines change. The ``training_step``
backpropagates the stopper's masked loss over the batch's dataset indices, and the callback
does the epoch's bookkeeping: it forward-evaluates the samples excluded this epoch
(:func:`~iclr25.ies.record_losses`, from the training ``Dataset``) so their loss curves go
on and they can re-enter, then computes the next active set (``stopper.step()``), logs the
active fraction, and stops the run once every sample is mastered. Its state rides in
Lightning's checkpoints, so a resumed run continues the same curves::

    ies = IESCallback(train_set)            # items (x, y, index)
    class Net(L.LightningModule):
        def training_step(self, batch, _):
            x, y, idx = batch
            losses = F.cross_entropy(self(x), y, reduction="none")
            return ies.stopper.masked_loss(losses, idx)
    L.Trainer(callbacks=[ies]).fit(Net(), DataLoader(train_set, batch_size=128,
                                                     sampler=IESSampler(ies.stopper)))

With :class:`~iclr25.ies.IESSampler` the mastered samples cost no forward pass in training
either (the paper's saving); without it they are forwarded and masked. One process: under
DDP each process would keep its own loss curves (not supported here).

The Hugging Face ``Trainer`` callback is :class:`iclr25.ies.hf.IESTrainerCallback` (the
``transformers`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils.data import Dataset

from iclr25.ies.sampler import per_sample_cross_entropy, record_losses
from iclr25.ies.stopping import InstanceEarlyStopping, stopper_for

try:  # the unified package first, then the standalone one: the same Callback
    from lightning.pytorch import Callback
except ImportError:  # pragma: no cover - depends on what is installed
    try:
        from pytorch_lightning import Callback
    except ImportError as exc:
        raise ImportError("iclr25.ies.callbacks needs PyTorch Lightning: "
                          "pip install 'iclr25[lightning]'") from exc

__all__ = ["IESCallback"]


class IESCallback(Callback):
    """Instance-dependent early stopping for a Lightning ``Trainer``.

    Args:
        dataset: the training set, a map-style ``Dataset`` whose items begin with
            ``(x, y)``: read (``batch_size`` items at a time) to forward-evaluate the
            excluded samples after each epoch. Its length is the stopper's ``n_samples``.
        stopper: the IES state (default: ``InstanceEarlyStopping(len(dataset), **kwargs)``).
        loss_fn: ``(outputs, y) -> (b,)`` per-sample losses, the training loss unreduced.
        batch_size: forward batch size of that evaluation.
        stop_when_mastered: end training (``trainer.should_stop``) once no sample is active.
        **kwargs: ``InstanceEarlyStopping`` settings (``delta``, ``window``, ``mode`` ...)
            when ``stopper`` is None.

    Attributes:
        stopper: the :class:`~iclr25.ies.InstanceEarlyStopping` the training step masks with.
    """

    def __init__(self, dataset: Dataset, stopper: InstanceEarlyStopping | None = None, *,
                 loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] =
                 per_sample_cross_entropy, batch_size: int = 1024,
                 stop_when_mastered: bool = True, **kwargs: Any) -> None:
        if not isinstance(dataset, Dataset) or not hasattr(dataset, "__len__"):
            raise TypeError(f"dataset must be a map-style Dataset with __len__, got "
                            f"{type(dataset).__name__}")
        stopper = stopper_for(len(dataset), stopper, kwargs)
        self.dataset, self.stopper, self.loss_fn = dataset, stopper, loss_fn
        self.batch_size, self.stop_when_mastered = batch_size, stop_when_mastered

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        """Record the excluded samples' losses, compute the next active set, log, stop."""
        record_losses(self.stopper, pl_module, self.dataset, None, loss_fn=self.loss_fn,
                      batch_size=self.batch_size)
        fraction = len(self.stopper.step()) / self.stopper.n_samples
        pl_module.log("ies/active_fraction", fraction, on_epoch=True, prog_bar=False)
        if self.stop_when_mastered and fraction == 0.0:
            trainer.should_stop = True

    def state_dict(self) -> dict[str, Any]:
        return self.stopper.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.stopper.load_state_dict(state_dict)
