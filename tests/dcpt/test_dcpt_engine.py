"""DCPT's pre-training and fine-tuning through the engine: DDP over each batch's rows,
resume (the stream, the parts log, the EMA and the snapshots), bf16, bad checkpoints."""

from __future__ import annotations

import pytest
import torch
from _engine_checks import check_bf16, check_ddp, check_refused, check_resume, tensors

from iclr25.datasets.images import AllInOnePairs, load_image
from iclr25.dcpt.networks import UNet
from iclr25.dcpt.training import finetune, pretrain

pytest.importorskip("lightning_fabric")

IMAGES = [load_image("astronaut", max_side=48)]


def _pairs(batch_size=5, seed=0):
    """Seeded all-in-one crops: a fresh object reads the same batches again."""
    return AllInOnePairs(IMAGES, ("noise", "blur"), size=16, batch_size=batch_size, seed=seed)


def _val():
    g = torch.Generator().manual_seed(1)
    return torch.rand(6, 3, 16, 16, generator=g), torch.tensor([0, 1, 0, 1, 0, 1])


def _pretrainer(width=4, steps=6, seed=0, lr=1e-3):
    """``steps`` steps of 5 crops (split 3/2 under DDP), validated every 2 steps."""

    def train(**engine):
        res = pretrain(UNet(width=width, seed=0), _pairs(seed=seed), n_classes=2,
                       steps=steps, lr=lr, num_res_blocks=1, val=_val(), check_every=2,
                       target_accuracy=1.0, **engine)
        h = [v for part in res.history.values() for v in part] + [res.steps]
        return h, tensors(res.model) + tensors(res.classifier)
    return train


def _finetuner(width=4, steps=6, ema=0.999, lr=1e-3):
    """``steps`` L1 steps of 5 crops with the warmed-up EMA and two snapshots kept."""

    def train(**engine):
        res = finetune(UNet(width=width, seed=0), _pairs(), steps=steps, lr=lr, ema=ema,
                       snapshots=[2, steps - 1], **engine)
        kept = [t for n in sorted(res.snapshots) for t in tensors(res.snapshots[n])]
        return res.history["loss"], tensors(res.model) + tensors(res.raw_model) + kept
    return train


def test_pretraining_ddp_two_processes_equal_one(one_thread):
    check_ddp(_pretrainer())


def test_finetuning_ddp_two_processes_equal_one(one_thread):
    check_ddp(_finetuner())


@pytest.mark.parametrize("k", [2, 5])
def test_resumed_pretraining_equals_uninterrupted(one_thread, tmp_path, k):
    check_resume(_pretrainer(), k, tmp_path)


@pytest.mark.parametrize("k", [1, 4])      # before and after the first snapshot
def test_resumed_finetuning_equals_uninterrupted(one_thread, tmp_path, k):
    check_resume(_finetuner(), k, tmp_path)


def test_bf16_mixed_pretraining_and_finetuning_lower_the_loss(one_thread):
    batch = next(iter(_pairs(batch_size=6)))     # one batch again and again: the loss falls

    def pretrainer(**engine):
        res = pretrain(UNet(width=4, seed=0), batch, n_classes=2, steps=10, lr=3e-3,
                       num_res_blocks=1, **engine)
        return res.history["loss"], tensors(res.model) + tensors(res.classifier)
    check_bf16(pretrainer)

    def finetuner(**engine):
        res = finetune(UNet(width=4, seed=0), batch, steps=10, lr=3e-3, **engine)
        return res.history["loss"], tensors(res.model) + tensors(res.raw_model)
    check_bf16(finetuner)


def test_checkpoint_of_another_size_or_a_bad_file_is_refused(one_thread, tmp_path):
    check_refused(_finetuner(steps=2), _finetuner(width=8, steps=2), tmp_path,
                  "model does not fit this one: .* has shape")
    check_refused(_pretrainer(steps=2), _pretrainer(width=8, steps=2), tmp_path,
                  "model does not fit this one: .* has shape")


def test_a_finetuning_checkpoint_is_refused_by_pretraining(one_thread, tmp_path):
    ckpt = tmp_path / "ft.ckpt"
    _finetuner(steps=2)(checkpoint=ckpt)
    raw = ckpt.read_bytes()
    with pytest.raises(ValueError, match="^resume: the checkpoint ") as err:
        _pretrainer(steps=2)(checkpoint=ckpt, resume=ckpt)
    assert "\n" not in str(err.value) and ckpt.read_bytes() == raw


def test_resuming_on_other_data_is_refused(one_thread, tmp_path):
    ckpt = tmp_path / "run.ckpt"
    _pretrainer(steps=2)(checkpoint=ckpt)
    with pytest.raises(ValueError, match="trained with dataset .*fingerprint"):
        _pretrainer(steps=2, seed=1)(resume=ckpt)


def test_a_callback_needs_one_process():
    with pytest.raises(ValueError, match="callback= is not supported with devices > 1"):
        finetune(UNet(width=4), _pairs(), steps=1, callback=print, devices=2)


@pytest.mark.parametrize("verb", ["pretrain", "finetune"])
def test_cli_verbs_take_checkpoint_every_and_resume(one_thread, tmp_path, verb):
    from safetensors.torch import load_file
    from typer.testing import CliRunner

    from iclr25.datasets.images import save_image
    from iclr25.dcpt.cli import app

    (tmp_path / "img").mkdir()
    for i in range(2):
        save_image(torch.rand(3, 16, 16, generator=torch.Generator().manual_seed(i)),
                   tmp_path / "img" / f"{i}.png")
    runner = CliRunner()
    common = ["--steps", "3", "--size", "8", "--batch", "3"]
    if verb == "finetune":
        r = runner.invoke(app, ["pretrain", str(tmp_path / "img"), "--kinds", "noise,blur",
                                "--width", "4", *common, "--out", str(tmp_path / "p.safetensors")])
        assert r.exit_code == 0, r.output
        base = [verb, str(tmp_path / "p.safetensors"), str(tmp_path / "img"),
                "--degradation", "noise", *common]
    else:
        base = [verb, str(tmp_path / "img"), "--kinds", "noise,blur", "--width", "4", *common]
    r = runner.invoke(app, [*base, "--out", str(tmp_path / "a.safetensors"),
                            "--checkpoint-every", "2"])
    assert r.exit_code == 0 and (tmp_path / "a.ckpt").is_file(), r.output
    r = runner.invoke(app, [*base, "--out", str(tmp_path / "b.safetensors"),
                            "--resume", str(tmp_path / "a.ckpt")])
    assert r.exit_code == 0, r.output
    a, b = (load_file(tmp_path / f"{n}.safetensors") for n in "ab")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    (tmp_path / "bad.ckpt").write_bytes(b"garbage")
    for flags, says in ((["--resume", str(tmp_path / "bad.ckpt")], "not a readable checkpoint"),
                        (["--checkpoint-every", "0"], "--checkpoint-every must lie in")):
        r = runner.invoke(app, [*base, "--out", str(tmp_path / "c.safetensors"), *flags])
        assert r.exit_code == 2 and r.output.count("\n") == 1 and says in r.output, r.output
        assert not (tmp_path / "c.safetensors").exists()
    assert (tmp_path / "bad.ckpt").read_bytes() == b"garbage"
