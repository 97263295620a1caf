"""COX's training through the engine: DDP over the OOM rows, resume (across a re-matching
round too), bf16, bad checkpoints."""

import warnings

import pytest
import torch
import torch.nn.functional as F
from _engine_checks import check_bf16, check_ddp, check_refused, check_resume, tensors

from iclr25.cox import COX

pytest.importorskip("lightning_fabric")


def _data():
    g = torch.Generator().manual_seed(0)
    y = torch.arange(90) % 3
    c = F.normalize(torch.randn(3, 8, generator=g), dim=1)
    Z = F.normalize(c[y] + 0.2 * torch.randn(90, 8, generator=g), dim=1)
    X = torch.tanh(Z @ torch.randn(8, 6, generator=g)) + 0.05 * torch.randn(90, 6, generator=g)
    return X, {"a": Z, "b": Z.flip(1)}, {"a": y, "b": y}, torch.stack([torch.arange(15)] * 2, 1)


def _trainer(hidden=16, steps=21, paired=True):
    """21 steps of 15 labelled, 16 IM, 15 paired and 16 unlabelled rows (the OOM rows
    split 8/7 under DDP, every process drawing the whole batch); exploring from step 3.
    Unpaired: correspondences bootstrapped (GW) and re-matched after rounds of 4-5 steps."""
    X, im, lab, P = _data()

    def train(**engine):
        m = COX(3, bottleneck=4, hidden=hidden, steps=steps, batch_size=16, lr=1e-2,
                min_confidence=0.5, min_pairs=3, floor="off")
        m.fit(X, im, lab, pairs=P if paired else None, **engine)
        hist = m.loss_.tolist()
        if not paired:  # the pairs each round kept are part of the result
            hist += [p.tolist() for p in m.history_]
        return hist, tensors(m.net_)
    return train


def test_ddp_two_processes_equal_one(one_thread):
    check_ddp(_trainer())


@pytest.mark.parametrize("k", [5, 10])
def test_resumed_training_equals_uninterrupted(one_thread, tmp_path, k):
    check_resume(_trainer(), k, tmp_path)


@pytest.mark.parametrize("k", [6, 8])       # mid-round, a round's end (then a re-match)
def test_resumed_unpaired_training_equals_uninterrupted(one_thread, tmp_path, k):
    pytest.importorskip("ot")
    check_resume(_trainer(steps=20, paired=False), k, tmp_path)


def test_bf16_mixed_training_lowers_the_loss(one_thread):
    check_bf16(_trainer())


def test_checkpoint_of_another_size_or_a_bad_file_is_refused(one_thread, tmp_path):
    check_refused(_trainer(steps=2), _trainer(hidden=8, steps=2), tmp_path,
                  "model does not fit this one: .* has shape")


def test_the_floor_check_refits_without_the_checkpoint(one_thread, tmp_path):
    # the cross-validation fits take devices and precision, never the main fit's file
    X, im, lab, P = _data()
    ckpt = tmp_path / "run.ckpt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 4 steps: unconverged, the floor predicts
        m = COX(3, bottleneck=4, hidden=16, steps=4, batch_size=16).fit(
            X, im, lab, pairs=P, checkpoint=ckpt, checkpoint_every=2)
    saved = torch.load(ckpt, weights_only=True)
    assert saved["position"]["step"] == 4
    assert m.floor_accuracy_ == m.floor_accuracy_  # the check ran (not NaN)
    for name, t in saved["model"].items():
        assert torch.equal(t, m.net_.state_dict()[name.removeprefix("net.")])
