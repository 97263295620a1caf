"""IES as a Hugging Face Trainer callback on an existing training script (skipped without
transformers: the `transformers` extra, not in `all`)."""

import pytest
import torch
from torch.utils.data import Dataset

transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")  # the Trainer needs it (transformers[torch])

from iclr25.ies import IESSampler  # noqa: E402
from iclr25.ies.hf import IESTrainerCallback  # noqa: E402


class Indexed(Dataset):
    """Dict items as a tokenised dataset's, with labels and the item's index."""

    def __init__(self, n=96):
        g = torch.Generator().manual_seed(0)
        self.X = torch.randn(n, 4, generator=g)
        self.y = (self.X[:, 0] > 0).long()

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        return {"features": self.X[i], "labels": self.y[i], "index": i}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Linear(4, 2)

    def forward(self, features):
        return {"logits": self.net(features)}


def _fit(ies, epochs, tmp_path, sampler=True):
    class IESTrainer(transformers.Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
            return ies.compute_loss(model, inputs, return_outputs)

        def _get_train_sampler(self, *args):
            return IESSampler(ies.stopper, seed=1) if sampler else super()._get_train_sampler(
                *args)

    args = transformers.TrainingArguments(
        output_dir=str(tmp_path), num_train_epochs=epochs, per_device_train_batch_size=32,
        learning_rate=0.5, optim="sgd", lr_scheduler_type="constant", use_cpu=True,
        report_to=[], save_strategy="no", logging_strategy="no", disable_tqdm=True,
        remove_unused_columns=False, seed=0, dataloader_drop_last=False)
    trainer = IESTrainer(model=Net(), args=args, train_dataset=ies.dataset, callbacks=[ies])
    with torch.random.fork_rng(devices=[]):
        trainer.train()
    return trainer


def test_callback_keeps_every_curve_going(one_thread, tmp_path):
    ies = IESTrainerCallback(Indexed(), delta=0.05, window=2)
    trainer = _fit(ies, 15, tmp_path)
    st = ies.stopper
    # one loss per sample per epoch: trained ones from compute_loss, excluded ones from the
    # callback's forward pass over the Dataset
    assert st.epochs == 15 and st.counts.tolist() == [15] * st.n_samples
    assert 0 < st.saved_fraction < 1
    fractions = [h["ies/active_fraction"] for h in trainer.state.log_history
                 if "ies/active_fraction" in h]
    assert len(fractions) == 15 and min(fractions) < 1


def test_callback_stops_the_run_once_every_sample_is_mastered(one_thread, tmp_path):
    # as the Lightning callback: delta this large masters each sample once eligible, after
    # window + k + 2 = 5 recorded losses, so the run stops at the end of epoch 5
    ies = IESTrainerCallback(Indexed(), delta=10.0, window=2)
    _fit(ies, 60, tmp_path, sampler=False)
    assert ies.stopper.epochs == 5 and int(ies.stopper.active_mask.sum()) == 0


def test_items_without_labels_or_index_are_refused():
    class Plain(Indexed):
        def __getitem__(self, i):
            return {"features": self.X[i], "labels": self.y[i]}

    with pytest.raises(ValueError, match="'index'"):
        IESTrainerCallback(Plain())
    with pytest.raises(ValueError, match="n_samples=5"):
        from iclr25.ies import InstanceEarlyStopping

        IESTrainerCallback(Indexed(), InstanceEarlyStopping(5))
