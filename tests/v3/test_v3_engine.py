"""V3's training through the engine: the codebook's EMA and dead-code draws over the global
batch under DDP, resume with the codebook state, bf16, bad checkpoints, the CLI's options."""

import numpy as np
import pytest
import torch
from _engine_checks import check_bf16, check_ddp, check_refused, check_resume, tensors
from torch.utils.data import Dataset
from typer.testing import CliRunner

from iclr25._checks import resolve_seed
from iclr25.cli import app
from iclr25.datasets.views import digit_sequences
from iclr25.v3 import V3
from iclr25.v3.model import _Draws

pytest.importorskip("lightning_fabric")

X = digit_sequences(21, seed=0)[0]      # (21, 10, 3, 8, 8)


def _v3(v3=True, d=8, epochs=7, bundle="repo"):
    return V3(epochs=epochs, batch_size=7, hidden=32, d_content=d, d_style=d, v3=v3,
              bundle=bundle, seed=0)


class _Seqs(Dataset):
    """The sequences as a Dataset, read one by one (as from disk)."""

    def __len__(self):
        return len(X)

    def __getitem__(self, i):
        return X[i]


def _trainer(stream=False, **kw):
    """21 sequences in batches of 7: 3 steps per epoch (split 4/3 under DDP); 7 epochs = 21
    steps. ``bundle="repo"``: 70 fragments per batch for 10 codes under a dead-code threshold
    of 16, so codes are re-seeded from the batch at every step. ``stream``: X read from a
    Dataset."""
    def train(**engine):
        m = _v3(**kw).fit(_Seqs() if stream else X, **engine)
        return [h[k] for h in m.history_ for k in ("loss", "recon", "v3", "commit")], \
            tensors(m.model_)
    return train


@pytest.mark.parametrize("bundle", ["repo", "paper"])
def test_ddp_two_processes_equal_one_with_the_codebook_over_the_global_batch(one_thread,
                                                                             bundle):
    # the VQ-AE (V3's ablation): k-means start, EMA, dead-code re-seeding and commitment all
    # read the gathered batch, so the codebook and the weights are one process's to 1e-5
    check_ddp(_trainer(v3=False, bundle=bundle))


def test_ddp_with_the_v3_hinges_stays_near_one_process(one_thread):
    # stated tolerance: the hinges' distances between fragments quantised to one code are
    # rounding residues of the straight-through z + (q - z).detach(), so their gradient
    # directions are rounding noise (not the same in one process and two), which Adam turns
    # into moves of about lr; the runs end closer to each other than to their start by 10x
    train = _trainer(v3=True)
    start = tensors(_v3()._initial_model(X, resolve_seed(0)))
    s1, s2 = check_ddp(train, atol=float("inf"))

    def dist(a, b):
        return sum(float((x.float() - y.float()).norm()) for x, y in zip(a, b, strict=True))
    assert dist(s1, s2) < 0.1 * dist(s1, start)


@pytest.mark.parametrize("k", [4, 6])       # mid-epoch, an epoch's end
def test_resumed_training_equals_uninterrupted_codebook_included(one_thread, tmp_path, k):
    check_resume(_trainer(epochs=3), k, tmp_path)


def test_a_streamed_dataset_under_ddp_and_resumed_equals_one_process(one_thread, tmp_path):
    check_ddp(_trainer(stream=True, v3=False, epochs=3))
    check_resume(_trainer(stream=True, epochs=3), 4, tmp_path)


def test_resume_needs_the_codebook_generator(one_thread, tmp_path, monkeypatch):
    # the test above can fail: without the dead-code draws' state the resumed run differs
    monkeypatch.setattr(_Draws, "load_state_dict", lambda self, state: None)
    with pytest.raises(AssertionError):
        check_resume(_trainer(epochs=3), 4, tmp_path)


def test_bf16_mixed_training_lowers_the_loss(one_thread):
    check_bf16(_trainer(epochs=5))


def test_checkpoint_of_another_size_or_a_bad_file_is_refused(one_thread, tmp_path):
    check_refused(_trainer(epochs=1), _trainer(d=4, epochs=1), tmp_path,
                  "model does not fit this one: .* has shape")


def test_cli_fit_takes_the_engine_options(tmp_path, one_thread):
    """--checkpoint-every writes <out>.ckpt; --resume from it gives the same model."""
    np.save(tmp_path / "s.npy", X[:8, :4].reshape(8, 4, -1).numpy())
    base = ["v3", "fit", str(tmp_path / "s.npy"), "--codes", "3", "--epochs", "2",
            "--batch-size", "4"]
    runner = CliRunner()
    r = runner.invoke(app, [*base, "--out", str(tmp_path / "a.pt"), "--checkpoint-every", "3"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a.ckpt").is_file()
    r = runner.invoke(app, [*base, "--out", str(tmp_path / "b.pt"),
                            "--resume", str(tmp_path / "a.ckpt")])
    assert r.exit_code == 0, r.output
    a, b = V3.load(tmp_path / "a.pt"), V3.load(tmp_path / "b.pt")
    assert all(torch.equal(p, q) for p, q in zip(a.model_.state_dict().values(),
                                                 b.model_.state_dict().values(), strict=True))
