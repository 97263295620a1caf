"""SchNet's energy/force training of SCHull's claim (``claim._train``) on the package's loop
(the engine): DDP over the batch's conformers, resume, bf16, bad checkpoints."""

from dataclasses import replace

import pytest
from _engine_checks import check_bf16, check_ddp, check_refused, check_resume, tensors

from iclr25._train import seeded_init
from iclr25.schull import claim
from iclr25.schull.model import SchNetCHA

pytest.importorskip("rdkit")
pytest.importorskip("lightning_fabric")


@pytest.fixture(scope="module")
def molecules():
    """14 ethanol conformers (MMFF94 energies and forces), 8 for training."""
    setting = replace(claim.energy.quick, n_conf=14, n_train=8, smiles="CCO")
    return setting, claim._molecules(setting, 0, "cpu")


def _trainer(molecules, hidden=8, epochs=7, batch=3):
    """8 conformers in batches of 3: 3 steps per epoch (3, 3, 2 rows; split 2/1 and 1/1
    under DDP); 7 epochs = 21 steps. SchNetCHA with its SCHull branch (cha_rate 0.5)."""
    setting, d = molecules
    setting = replace(setting, epochs=epochs, batch=batch, lr=1e-2)

    def train(**engine):
        with seeded_init(0):
            model = SchNetCHA(hidden, 1, setting.cutoff, 0.5)
        h = claim._train(model, d, setting, 1.0, 0, **engine)
        return h, tensors(model)
    return train


def test_ddp_two_processes_equal_one(one_thread, molecules):
    check_ddp(_trainer(molecules))


@pytest.mark.parametrize("k", [4, 6])       # mid-epoch, an epoch's end
def test_resumed_training_equals_uninterrupted(one_thread, tmp_path, molecules, k):
    check_resume(_trainer(molecules, epochs=3), k, tmp_path)


def test_bf16_mixed_training_lowers_the_loss(one_thread, molecules):
    check_bf16(_trainer(molecules, epochs=20, batch=8))     # the whole set: one step each


def test_checkpoint_of_another_size_or_a_bad_file_is_refused(one_thread, tmp_path, molecules):
    check_refused(_trainer(molecules, epochs=1), _trainer(molecules, hidden=6, epochs=1),
                  tmp_path, "model does not fit this one: .* has shape")
