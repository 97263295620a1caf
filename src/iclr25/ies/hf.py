"""IES in a Hugging Face ``Trainer`` script: a ``TrainerCallback`` (the ``transformers`` extra).

The counterpart of :class:`iclr25.ies.callbacks.IESCallback` (Lightning). The ``Trainer`` owns
the loss, so two things change in the script: the training loss is
:meth:`IESTrainerCallback.compute_loss` (each sample's loss, masked by the stopper over the
batch's dataset indices, which records the trained samples' losses), and the callback does the
epoch's bookkeeping: it forward-evaluates the samples excluded this epoch
(:func:`~iclr25.ies.record_losses`, from the training ``Dataset``), computes the next active
set, logs the active fraction and stops the run once every sample is mastered::

    ies = IESTrainerCallback(train_set)   # dict items with the model's inputs, "labels",
                                          # and "index" (the item's position in train_set)
    class IESTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
            return ies.compute_loss(model, inputs, return_outputs)
        def _get_train_sampler(self, *args):       # optional: skip the mastered samples'
            return IESSampler(ies.stopper)         # forward passes (the paper's saving)
    IESTrainer(model, TrainingArguments(..., remove_unused_columns=False),
               train_dataset=train_set, callbacks=[ies]).train()

``remove_unused_columns=False`` keeps the ``index`` field (the model's ``forward`` does not
take it); :meth:`~IESTrainerCallback.compute_loss` removes it before calling the model. One
process, as the Lightning callback; the stopper's state is not in the ``Trainer``'s
checkpoints (save ``ies.stopper.state_dict()`` beside them to resume).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils.data import Dataset

from iclr25._optional import require
from iclr25.ies.sampler import per_sample_cross_entropy, record_losses
from iclr25.ies.stopping import InstanceEarlyStopping, stopper_for

TrainerCallback = require("transformers", "transformers").TrainerCallback

__all__ = ["IESTrainerCallback"]


class _Pairs(Dataset):
    """A dict-item dataset seen as ``(inputs, labels)`` items, for :func:`record_losses`."""

    def __init__(self, dataset: Dataset, index: str) -> None:
        self.dataset, self.index = dataset, index

    def __len__(self) -> int:
        return len(self.dataset)  # type: ignore[arg-type]

    def __getitem__(self, i: int) -> tuple[dict[str, Any], Any]:
        item = dict(self.dataset[i])
        item.pop(self.index, None)
        return item, item.pop("labels")


class _Forward(torch.nn.Module):
    """``model(**inputs)``'s logits, as :func:`record_losses` calls ``model(x)``."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, inputs: dict[str, Any]) -> torch.Tensor:
        return _logits(self.model(**inputs))   # record_losses put them on its device


def _logits(outputs: Any) -> torch.Tensor:
    """The model output's logits: a ``ModelOutput``/dict's ``logits``, or the tensor."""
    if isinstance(outputs, torch.Tensor):
        return outputs
    return outputs["logits"]


class IESTrainerCallback(TrainerCallback):
    """Instance-dependent early stopping for a Hugging Face ``Trainer``.

    Args:
        dataset: the training set, a map-style ``Dataset`` of dict items holding the model's
            inputs, ``"labels"`` and ``index`` (the item's position): read ``batch_size``
            items at a time to forward-evaluate the excluded samples after each epoch. Its
            length is the stopper's ``n_samples``.
        stopper: the IES state (default: ``InstanceEarlyStopping(len(dataset), **kwargs)``).
        loss_fn: ``(logits, labels) -> (b,)`` per-sample losses, the training loss unreduced.
        index: the items' field holding their position in ``dataset``.
        batch_size: forward batch size of the evaluation.
        stop_when_mastered: end training (``control.should_training_stop``) once no sample
            is active.
        **kwargs: ``InstanceEarlyStopping`` settings (``delta``, ``window``, ``mode`` ...)
            when ``stopper`` is None.

    Attributes:
        stopper: the :class:`~iclr25.ies.InstanceEarlyStopping` the loss masks with.
    """

    def __init__(self, dataset: Dataset, stopper: InstanceEarlyStopping | None = None, *,
                 loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] =
                 per_sample_cross_entropy, index: str = "index", batch_size: int = 1024,
                 stop_when_mastered: bool = True, **kwargs: Any) -> None:
        if not isinstance(dataset, Dataset) and not hasattr(dataset, "__getitem__") \
                or not hasattr(dataset, "__len__"):
            raise TypeError(f"dataset must be a map-style Dataset with __len__, got "
                            f"{type(dataset).__name__}")
        stopper = stopper_for(len(dataset), stopper, kwargs)
        first = dataset[0]
        if not isinstance(first, dict) or index not in first or "labels" not in first:
            raise ValueError(f"dataset items must be dicts with 'labels' and {index!r} (the "
                             f"item's position), got {type(first).__name__}")
        self.dataset, self.stopper, self.loss_fn, self.index = dataset, stopper, loss_fn, index
        self.batch_size, self.stop_when_mastered = batch_size, stop_when_mastered

    def compute_loss(self, model: torch.nn.Module, inputs: dict[str, Any],
                     return_outputs: bool = False) -> Any:
        """``Trainer.compute_loss`` under IES: the batch's per-sample losses masked to its
        active samples (their mean; 0 with none), recorded in the stopper."""
        inputs = dict(inputs)
        idx, labels = inputs.pop(self.index), inputs.pop("labels")
        outputs = model(**inputs)
        losses = self.loss_fn(_logits(outputs), labels)
        loss = self.stopper.masked_loss(losses, idx)
        return (loss, outputs) if return_outputs else loss

    def on_epoch_end(self, args: Any, state: Any, control: Any, model: Any = None,
                     **kwargs: Any) -> Any:
        """Record the excluded samples' losses, compute the next active set, log, stop."""
        record_losses(self.stopper, _Forward(model), _Pairs(self.dataset, self.index), None,
                      loss_fn=self.loss_fn, batch_size=self.batch_size)
        fraction = len(self.stopper.step()) / self.stopper.n_samples
        state.log_history.append({"ies/active_fraction": fraction, "epoch": state.epoch,
                                  "step": state.global_step})
        if self.stop_when_mastered and fraction == 0.0:
            control.should_training_stop = True
        return control
