"""URLOST's MAE through the engine: DDP over the batch's rows, resume, bf16, bad checkpoints."""

import pytest
import torch
from _engine_checks import check_bf16, check_ddp, check_refused, check_resume, tensors
from _rows import Rows

from iclr25.urlost import URLOST, grid_patches

pytest.importorskip("lightning_fabric")



def _trainer(dim=8, epochs=7, key_bias=True, stream=False):
    """45 rows in batches of 16: 3 steps per epoch (the last of 13 rows, split 7/6 under
    DDP, every process drawing the whole batch's mask); 7 epochs = 21 steps. ``stream``:
    the rows read from a Dataset."""
    X = torch.rand(45, 16, generator=torch.Generator().manual_seed(0))
    X = Rows(X) if stream else X

    def train(**engine):
        m = URLOST(groups=grid_patches(4, 4, 2), shared=True, dim=dim, depth=1, heads=2,
                   epochs=epochs, batch_size=16, seed=0).fit(X, **engine)
        return m.loss_curve_, tensors(m.model_, key_bias=key_bias)
    return train


def test_ddp_two_processes_equal_one(one_thread):
    check_ddp(_trainer(key_bias=False))     # see tensors()


@pytest.mark.parametrize("k", [4, 6])       # mid-epoch, an epoch's end
def test_resumed_training_equals_uninterrupted(one_thread, tmp_path, k):
    check_resume(_trainer(epochs=3), k, tmp_path)


def test_a_streamed_dataset_under_ddp_and_resumed_equals_one_process(one_thread, tmp_path):
    check_ddp(_trainer(epochs=3, key_bias=False, stream=True))
    check_resume(_trainer(epochs=3, stream=True), 4, tmp_path)


def test_bf16_mixed_training_lowers_the_loss(one_thread):
    check_bf16(_trainer(epochs=5))


def test_checkpoint_of_another_size_or_a_bad_file_is_refused(one_thread, tmp_path):
    check_refused(_trainer(epochs=1), _trainer(dim=4, epochs=1), tmp_path,
                  "model does not fit this one: .* has shape")
