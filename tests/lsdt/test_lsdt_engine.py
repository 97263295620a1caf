"""LSDT's training through the engine: DDP over windows, resume, bf16, bad checkpoints."""

import pytest
import torch
from _engine_checks import check_bf16, check_ddp, check_refused, check_resume

pytest.importorskip("gymnasium")
pytest.importorskip("lightning_fabric")

from iclr25.lsdt import LongShortDecisionTransformer, delayed_cue_dataset, train  # noqa: E402


def _trainer(hidden=16, dropout=0.0, steps=21, batch_size=9):
    """21 steps of 9 windows (split 5/4 under DDP: the masked mean is the global batch's)."""
    ds = delayed_cue_dataset(40, 3, seed=0)

    def run(**engine):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            m = LongShortDecisionTransformer(2, 1, hidden=hidden, n_blocks=1, context=3,
                                             dropout=dropout)
        h = train(m, ds, steps=steps, batch_size=batch_size, lr=1e-3, warmup=3,
                  rtg_scale=1.0, seed=0, **engine)
        return h, [t.detach().clone() for t in m.state_dict().values()]
    return run


def test_ddp_two_processes_equal_one(one_thread):
    check_ddp(_trainer())       # no dropout: its masks are drawn per process


@pytest.mark.parametrize("k", [7, 20])
def test_resumed_training_equals_uninterrupted(one_thread, tmp_path, k):
    check_resume(_trainer(dropout=0.1), k, tmp_path)    # dropout: the RNG is resumed too


def test_bf16_mixed_training_lowers_the_loss(one_thread):
    check_bf16(_trainer(steps=30))


def test_checkpoint_of_another_size_or_a_bad_file_is_refused(one_thread, tmp_path):
    check_refused(_trainer(steps=2), _trainer(hidden=8, steps=2), tmp_path,
                  "model does not fit this one: .* has shape")
