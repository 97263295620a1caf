"""Low light's training through the engine: each step's crops and pairing draws are one
global batch (DDP takes its rows of both), resume, bf16, bad checkpoints."""

from __future__ import annotations

import pytest
import torch
from _engine_checks import check_bf16, check_ddp, check_refused, check_resume, tensors

from iclr25.lowlight import RetinexEnhancer, ZeroReferenceEnhancer, train_enhancer
from iclr25.lowlight.training import build_model

pytest.importorskip("lightning_fabric")


def _images(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(3, 24, 20, generator=g) * 0.3 for _ in range(2)]


def _trainer(method="retinex", width=8, steps=6, pairing=True, lr=1e-3, seed=0):
    """``steps`` steps of 5 crops of 8 px (split 3/2 under DDP)."""

    def train(**engine):
        if method == "retinex":
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(0)
                model = RetinexEnhancer(width=width, l_width=8, lc_width=8, n_blocks=1)
        else:
            model = build_model("zero_dce", width, seed=0)
        h = train_enhancer(model, _images(seed), steps=steps, crop=8, batch_size=5, lr=lr,
                           pairing=pairing, seed=0, **engine)
        return h, tensors(model)
    return train


@pytest.mark.parametrize(("method", "pairing"), [("retinex", True), ("retinex", False),
                                                 ("zero_dce", True)])
def test_ddp_two_processes_equal_one(one_thread, method, pairing):
    check_ddp(_trainer(method, pairing=pairing))


@pytest.mark.parametrize("k", [2, 5])
def test_resumed_training_equals_uninterrupted(one_thread, tmp_path, k):
    check_resume(_trainer(), k, tmp_path)


def test_bf16_mixed_training_lowers_the_loss(one_thread):
    check_bf16(_trainer(steps=12, lr=3e-3))


def test_checkpoint_of_another_size_or_a_bad_file_is_refused(one_thread, tmp_path):
    check_refused(_trainer(steps=2), _trainer(width=4, steps=2), tmp_path,
                  "model does not fit this one: .* has shape")


def test_resuming_on_other_images_is_refused(one_thread, tmp_path):
    ckpt = tmp_path / "run.ckpt"
    _trainer(steps=2)(checkpoint=ckpt)
    with pytest.raises(ValueError, match="trained with dataset .*fingerprint"):
        _trainer(steps=2, seed=1)(resume=ckpt)


def test_the_estimator_takes_the_engine_keywords(one_thread, tmp_path):
    kw = {"width": 4, "steps": 3, "crop": 8, "batch_size": 2}
    ref = ZeroReferenceEnhancer(**kw).fit(_images())
    ckpt = tmp_path / "est.ckpt"
    est = ZeroReferenceEnhancer(**kw).fit(_images(), checkpoint=ckpt, checkpoint_every=1)
    assert ckpt.exists() and est.history_ == ref.history_
    with pytest.raises(TypeError, match="'devcies'"):
        ZeroReferenceEnhancer(**kw).fit(_images(), devcies=2)


def test_cli_fit_takes_checkpoint_every_and_resume(one_thread, tmp_path):
    from typer.testing import CliRunner

    from iclr25.datasets.images import save_image
    from iclr25.lowlight.cli import app

    (tmp_path / "img").mkdir()
    for i, im in enumerate(_images()):
        save_image(im, tmp_path / "img" / f"{i}.png")
    base = ["fit", str(tmp_path / "img"), "--steps", "3", "--crop", "8", "--width", "4"]
    runner = CliRunner()
    r = runner.invoke(app, [*base, "--out", str(tmp_path / "a.safetensors"),
                            "--checkpoint-every", "2"])
    assert r.exit_code == 0 and (tmp_path / "a.ckpt").is_file(), r.output
    r = runner.invoke(app, [*base, "--out", str(tmp_path / "b.safetensors"),
                            "--resume", str(tmp_path / "a.ckpt")])
    assert r.exit_code == 0, r.output
    a, b = (ZeroReferenceEnhancer.load(tmp_path / f"{n}.safetensors") for n in "ab")
    assert all(torch.equal(p, q) for p, q in zip(a.model_.parameters(), b.model_.parameters(),
                                                 strict=True))
    (tmp_path / "bad.ckpt").write_bytes(b"garbage")
    for flags, says in ((["--resume", str(tmp_path / "bad.ckpt")], "not a readable checkpoint"),
                        (["--checkpoint-every", "0"], "--checkpoint-every must lie in")):
        r = runner.invoke(app, [*base, "--out", str(tmp_path / "c.safetensors"), *flags])
        assert r.exit_code == 2 and r.output.count("\n") == 1 and says in r.output, r.output
        assert not (tmp_path / "c.safetensors").exists()
    assert (tmp_path / "bad.ckpt").read_bytes() == b"garbage"
