"""IES as a Lightning callback on an existing training script."""

import pytest
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

pl = pytest.importorskip("pytorch_lightning")

from iclr25.ies import IESSampler, InstanceEarlyStopping  # noqa: E402
from iclr25.ies.callbacks import IESCallback  # noqa: E402


class Indexed(Dataset):
    """(x, y, index) items, as a user's training set with indices."""

    def __init__(self, n=96):
        g = torch.Generator().manual_seed(0)
        self.X = torch.randn(n, 4, generator=g)
        self.y = (self.X[:, 0] > 0).long()

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        return self.X[i], self.y[i], i


class Net(pl.LightningModule):
    def __init__(self, ies):
        super().__init__()
        torch.manual_seed(0)
        self.net, self.ies = torch.nn.Linear(4, 2), ies

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, _):
        x, y, idx = batch
        return self.ies.stopper.masked_loss(F.cross_entropy(self(x), y, reduction="none"), idx)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.5)


def _trainer(ies, epochs):
    return pl.Trainer(max_epochs=epochs, callbacks=[ies], accelerator="cpu", logger=False,
                      enable_checkpointing=False, enable_progress_bar=False,
                      enable_model_summary=False)


def _fit(ies, epochs):
    loader = DataLoader(ies.dataset, batch_size=32, sampler=IESSampler(ies.stopper, seed=1))
    trainer = _trainer(ies, epochs)
    with torch.random.fork_rng(devices=[]):
        trainer.fit(Net(ies), loader)
    return trainer


def test_callback_keeps_every_curve_going(one_thread):
    ies = IESCallback(Indexed(), delta=0.05, window=2)
    _fit(ies, 15)
    st = ies.stopper
    # every sample has one loss per epoch: trained ones from the masked loss, excluded ones
    # from the callback's forward pass over the Dataset
    assert st.epochs == 15 and st.counts.tolist() == [15] * st.n_samples
    assert 0 < st.saved_fraction < 1                     # samples were skipped, not all


def test_callback_stops_the_run_once_every_sample_is_mastered(one_thread):
    # delta this large masters each sample as soon as it is eligible: after window + k + 2
    # = 5 recorded losses, i.e. at the end of epoch 5, where the run must stop
    ies = IESCallback(Indexed(), delta=10.0, window=2)
    _fit(ies, 60)
    assert ies.stopper.epochs == 5 and int(ies.stopper.active_mask.sum()) == 0
    ies = IESCallback(Indexed(), delta=10.0, window=2, stop_when_mastered=False)
    _fit(ies, 7)
    assert ies.stopper.epochs == 7


def test_state_rides_in_checkpoints_and_bad_setups_are_named():
    ds = Indexed()
    a = IESCallback(ds, delta=0.1)
    a.stopper.update(torch.arange(len(ds)), torch.rand(len(ds)))
    b = IESCallback(ds, delta=0.1)
    b.load_state_dict(a.state_dict())
    assert torch.equal(b.stopper.losses, a.stopper.losses)
    with pytest.raises(ValueError, match="stopper has n_samples=5 but dataset has 96"):
        IESCallback(ds, InstanceEarlyStopping(5))
    with pytest.raises(TypeError, match="map-style Dataset"):
        IESCallback([1, 2, 3])
