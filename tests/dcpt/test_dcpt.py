"""iclr25.dcpt: networks, taps, losses by hand, training determinism, checkpoints, CLI, errors."""

import copy
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image
from torch import nn

pytest.importorskip("skimage")

from typer.testing import CliRunner  # noqa: E402

from iclr25.datasets.images import AllInOnePairs, degrade, load_image, save_image  # noqa: E402
from iclr25.dcpt import (  # noqa: E402
    DegradationClassifier,
    FeatureTap,
    FocalLoss,
    UNet,
    classify,
    dcpt_loss,
    feature_probe,
    finetune,
    focal_loss,
    load,
    pretrain,
    restore,
    save,
)
from iclr25.dcpt.cli import app  # noqa: E402


@pytest.fixture(scope="module")
def img():
    return load_image("astronaut", max_side=48)


@pytest.fixture(scope="module")
def pairs(img):
    return AllInOnePairs([img], ("noise", "blur"), 16, 4, seed=0)


def small_unet():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return UNet(width=4, depth=3)


def test_unet_near_identity_at_init_any_size():
    net = small_unet()
    for shape in [(2, 3, 16, 16), (1, 3, 13, 7), (3, 16, 16)]:  # batched or a single image
        x = torch.rand(shape)
        out = net(x)
        assert out.shape == x.shape and 0 < (out - x).abs().mean() < 0.05
    assert net.tap_layers == ("decoders.0", "decoders.1", "decoders.2")


def test_pretrain_clean_image_term_trains_the_restorer(pairs):
    # a zero-initialised last conv made E(gt) = gt exactly: L1 = 0 with a zero subgradient,
    # so the clean-image term never trained anything (0.0 at all 150 steps, official loop too)
    net = small_unet()
    res = pretrain(net, pairs, n_classes=2, steps=3, num_res_blocks=1, seed=0)
    assert min(res.history["pixel"]) > 0
    assert not torch.equal(res.model.ending.weight, net.ending.weight)


def test_feature_tap_order_and_shapes():
    net = UNet(width=4, depth=3)
    with FeatureTap(net, ["decoders.2", "decoders.0"]) as tap:
        net(torch.rand(2, 3, 16, 16))
        f = tap.features
    assert [tuple(t.shape) for t in f] == [(2, 16, 4, 4), (2, 4, 16, 16)]
    assert not net.decoders[0]._forward_hooks  # removed on exit


def test_feature_tap_errors():
    net = UNet(width=4)
    with pytest.raises(ValueError, match="decoders.9"):
        FeatureTap(net, ["decoders.9"])
    with pytest.raises(ValueError, match="empty"):
        FeatureTap(net, [])
    flat = nn.Sequential(nn.Flatten(), nn.Identity())
    tap = FeatureTap(flat, ["0"])
    with pytest.raises(ValueError, match="4-D"):
        flat(torch.rand(1, 3, 4, 4))
    tap.remove()


def test_focal_loss_gamma0_is_cross_entropy_and_gamma2_numpy():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(7, 4, generator=g, dtype=torch.float64)
    y = torch.randint(4, (7,), generator=g)
    assert torch.allclose(focal_loss(z, y), F.cross_entropy(z, y))
    zn = z.numpy()
    p = np.exp(zn - zn.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    pt = p[np.arange(7), y.numpy()]
    want = np.mean(-(1 - pt) ** 2 * np.log(pt))
    assert float(focal_loss(z, y, gamma=2.0)) == pytest.approx(want, rel=1e-10)
    assert float(FocalLoss(2.0)(z, y)) == pytest.approx(want, rel=1e-10)


def test_focal_loss_errors():
    z = torch.zeros(3, 2)
    with pytest.raises(ValueError, match="gamma"):
        focal_loss(z, torch.tensor([0, 1, 0]), gamma=-1)
    with pytest.raises(ValueError, match="y"):
        focal_loss(z, torch.tensor([0, 2, 0]))
    with pytest.raises(ValueError, match="y"):
        focal_loss(z, torch.tensor([0, 1]))
    with pytest.raises(TypeError, match="y"):
        focal_loss(z, torch.tensor([0.0, 1.0, 0.0]))


class Tiny(nn.Module):
    """out = x + a * x: one tapped stage whose features are (x * b)."""

    def __init__(self):
        super().__init__()
        self.feat = nn.Conv2d(3, 2, 1, bias=False)
        self.a = nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        self.feat(x)
        return x * (1 + self.a)


def test_dcpt_loss_by_hand():
    torch.manual_seed(0)
    model = Tiny()
    clf = DegradationClassifier([2], 2, num_res_blocks=0)
    lq = torch.rand(3, 3, 4, 4) * 0.5
    gt = torch.rand(3, 3, 4, 4) * 0.5
    y = torch.tensor([0, 1, 1])
    loss, parts = dcpt_loss(model, clf, lq, gt, y, layers=["feat"])
    pixel = (gt * 1.5 - gt).abs().mean()              # L1(E(gt), gt), E(x) = 1.5 x
    feats = model.feat(lq)
    h = torch.softmax(clf.level_logits, 0)[0] * feats
    # the official last block: ReLU(MaxPool2(Conv1×1(h))), then GAP and the linear head
    h = F.relu(F.max_pool2d(F.conv2d(h, clf.transitions[0].weight), 2))
    logits = clf.head(h.mean((-2, -1)))
    cls = F.cross_entropy(logits, y)
    assert float(loss.detach()) == pytest.approx(float((pixel + cls).detach()), rel=1e-6)
    assert parts["pixel"] == pytest.approx(float(pixel), rel=1e-6)
    loss.backward()
    assert model.a.grad is not None and clf.head.weight.grad is not None
    assert not model.feat._forward_hooks


def test_dcpt_loss_errors():
    net = UNet(width=4)
    clf = DegradationClassifier(net.feature_dims, 2, 1)
    x = torch.rand(2, 3, 8, 8)
    y = torch.tensor([0, 1])
    with pytest.raises(ValueError, match="feature_dims"):
        dcpt_loss(net, clf, x, x, y, layers=["decoders.0"])
    with pytest.raises(ValueError, match="decoders.7"):
        dcpt_loss(net, clf, x, x, y, layers=["decoders.0", "decoders.1", "decoders.7"])
    with pytest.raises(ValueError, match="y"):
        dcpt_loss(net, clf, x, x, torch.tensor([0, 5]), layers=net.tap_layers)
    with pytest.raises(ValueError, match="y"):
        dcpt_loss(net, clf, x, x, torch.tensor([0]), layers=net.tap_layers)
    with pytest.raises(TypeError, match="lq"):
        dcpt_loss(net, clf, (x * 255).long(), x, y, layers=net.tap_layers)
    with pytest.raises(ValueError, match="gt"):
        dcpt_loss(net, clf, x, x * 3, y, layers=net.tap_layers)
    with pytest.raises(ValueError, match="focal_gamma"):
        dcpt_loss(net, clf, x, x, y, layers=net.tap_layers, focal_gamma=-0.5)
    with pytest.raises(ValueError, match="n_classes"):
        DegradationClassifier([4], 1)


def test_pretrain_deterministic_and_input_untouched(pairs):
    net = small_unet()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    a = pretrain(net, pairs, n_classes=2, steps=3, num_res_blocks=1, seed=1)
    b = pretrain(net, pairs, n_classes=2, steps=3, num_res_blocks=1, seed=1)
    assert a.history == b.history and len(a.history["loss"]) == 3
    for k, v in net.state_dict().items():
        assert torch.equal(v, before[k])
    assert not torch.equal(a.model.decoders[0].conv1.weight, net.decoders[0].conv1.weight)
    for (k, v), w in zip(a.classifier.state_dict().items(), b.classifier.state_dict().values(),
                         strict=True):
        assert torch.equal(v, w), k


def test_pretrain_consumes_an_iterator_exactly(pairs):
    it = iter(pairs)
    pretrain(small_unet(), it, n_classes=2, steps=2, num_res_blocks=1)
    third = next(it)
    ref = iter(pairs)
    [next(ref) for _ in range(2)]
    assert torch.equal(next(ref)[0], third[0])


def test_pretrain_errors(pairs):
    net = small_unet()
    for kw, match in [({"steps": 0}, "steps"), ({"lr": 0.0}, "lr"), ({"n_classes": 1},
                      "n_classes"), ({"focal_gamma": -1.0}, "focal_gamma"),
                      ({"layers": ["nope"]}, "nope")]:
        args = {"n_classes": 2, "steps": 1, **kw}
        with pytest.raises(ValueError, match=match):
            pretrain(net, pairs, **args)
    with pytest.raises(ValueError, match="y"):
        pretrain(net, pairs, n_classes=2, steps=1, layers=None) if False else pretrain(
            net, [(torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8), torch.tensor([0, 3]))],
            n_classes=2, steps=1)


def test_pretrain_stops_at_validation_target_or_cap(pairs):
    lq, _, y = pairs.take(8)
    # each crop under both labels: every classifier scores exactly 0.5 on this split
    lq2, y2 = torch.cat([lq, lq]), torch.cat([y, 1 - y])
    a = pretrain(small_unet(), pairs, n_classes=2, steps=9, num_res_blocks=1, val=(lq2, y2),
                 target_accuracy=0.5, check_every=2)
    assert (a.stopped, a.steps, len(a.history["loss"])) == ("target", 2, 2)
    assert a.history["val_accuracy"] == [0.5] == [a.val_accuracy]
    b = pretrain(small_unet(), pairs, n_classes=2, steps=4, num_res_blocks=1, val=(lq2, y2),
                 target_accuracy=1.0, check_every=3)
    assert (b.stopped, b.steps, len(b.history["val_accuracy"])) == ("cap", 4, 2)
    assert b.val_accuracy == pytest.approx(0.5)
    c = pretrain(small_unet(), pairs, n_classes=2, steps=2, num_res_blocks=1)
    assert c.stopped == "cap" and np.isnan(c.val_accuracy)
    for kw, err, match in [({"val": (lq, y[:3])}, ValueError, "val"),
                           ({"val": (lq, y + 5)}, ValueError, "val"),
                           ({"val": lq}, TypeError, "val"),
                           ({"val": (lq, y), "target_accuracy": 0.0}, ValueError, "target"),
                           ({"val": (lq, y), "check_every": 0}, ValueError, "check_every")]:
        with pytest.raises(err, match=match):
            pretrain(small_unet(), pairs, n_classes=2, steps=2, **kw)


def test_classifier_official_last_block_handles_a_one_pixel_map():
    clf = DegradationClassifier([4, 8], 3, num_res_blocks=1)
    assert [t.bias for t in clf.transitions] == [None, None] and len(clf.transitions) == 2
    logits = clf([torch.rand(2, 4, 2, 2), torch.rand(2, 8, 1, 1)])
    assert logits.shape == (2, 3) and bool(torch.isfinite(logits).all())


def _classifier_by_hand(clf, feats):
    """PromptIR_NoImg_DC's forward written out channels-first (LayerNorm over channels)."""
    def norm(x, n):
        mu, var = x.mean(1, keepdim=True), x.var(1, unbiased=False, keepdim=True)
        return (x - mu) / torch.sqrt(var + 1e-6) * n.weight[:, None, None] + n.bias[:, None, None]

    def bottleneck(b, x):
        h = F.relu(norm(F.conv2d(x, b.conv1.weight), b.norm1))
        h = F.relu(norm(F.conv2d(h, b.conv2.weight, padding=1), b.norm2))
        return F.relu(x + norm(F.conv2d(h, b.conv3.weight), b.norm3))

    w, h = torch.softmax(clf.level_logits, 0), 0
    for i, f in enumerate(feats):
        h = h + w[i] * f
        for b in clf.stages[i]:
            h = bottleneck(b, h)
        h = F.conv2d(h, clf.transitions[i].weight)
        h = F.relu(F.adaptive_max_pool2d(h, feats[i + 1].shape[-2:]) if i + 1 < len(feats)
                   else F.max_pool2d(h, 2, ceil_mode=True))
    for b in clf.last_stage:
        h = bottleneck(b, h)
    return clf.head(h.mean((-2, -1)))


def test_classifier_by_hand_in_any_memory_layout():
    torch.manual_seed(0)
    clf = DegradationClassifier([4, 8], 3, num_res_blocks=1)
    feats = [torch.randn(2, 4, 8, 8), torch.randn(2, 8, 4, 4)]
    ref64 = copy.deepcopy(clf).double()
    x64 = [f.double().requires_grad_() for f in feats]
    ref = _classifier_by_hand(ref64, x64)
    ref.square().sum().backward()
    layouts = {"contiguous": feats,
               "channels_last": [f.contiguous(memory_format=torch.channels_last) for f in feats],
               "strided view": [f.transpose(-1, -2).contiguous().transpose(-1, -2) for f in feats]}
    for name, fs in layouts.items():
        before = [f.clone() for f in fs]
        xs = [f.detach().requires_grad_() for f in fs]
        out = clf(xs)
        out.square().sum().backward()
        assert torch.allclose(out.double(), ref, atol=1e-5), name
        for a, b in zip(xs, x64, strict=True):
            assert torch.allclose(a.grad.double(), b.grad, rtol=1e-4, atol=1e-5), name
        assert all(torch.equal(a, b) for a, b in zip(fs, before, strict=True))


def test_finetune_lowers_loss_and_ema(pairs):
    net = small_unet()
    res = finetune(net, pairs, steps=30, lr=3e-3, seed=0)
    h = res.history["loss"]
    assert np.mean(h[-5:]) < np.mean(h[:5])
    assert not torch.equal(res.model.ending.weight, res.raw_model.ending.weight)
    again = finetune(net, pairs, steps=30, lr=3e-3, seed=0)
    assert again.history == res.history
    with pytest.raises(ValueError, match="ema"):
        finetune(net, pairs, steps=1, ema=1.0)
    with pytest.raises(ValueError, match="ran out"):
        finetune(net, iter([next(iter(pairs))]), steps=2)


@pytest.mark.parametrize("ema", [0.999, 0.0])
def test_finetune_snapshot_is_the_shorter_run(pairs, ema):
    # the claim keeps scratch (F steps) as scratch_total's (P + F steps) snapshot at F
    net = small_unet()
    long = finetune(net, iter(pairs), steps=7, lr=3e-3, ema=ema, seed=0, snapshots=(3, 7))
    short = finetune(net, iter(pairs), steps=3, lr=3e-3, ema=ema, seed=0)
    for got, want in ((long.snapshots[3], short.model), (long.snapshots[7], long.model)):
        assert not got.training
        sa, sb = got.state_dict(), want.state_dict()
        assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    assert long.history["loss"][:3] == short.history["loss"]
    assert long.snapshots[3] is not long.model
    with pytest.raises(ValueError, match="snapshots"):
        finetune(net, pairs, steps=2, snapshots=(3,))
    with pytest.raises(ValueError, match="snapshots"):
        finetune(net, pairs, steps=2, snapshots=(0,))
    with pytest.raises(TypeError, match="snapshots"):
        finetune(net, pairs, steps=2, snapshots=2)


def test_feature_probe_separates_dark_from_hazy(img):
    # low light darkens, haze brightens: even random features' means tell them apart
    lq, _, y = AllInOnePairs([img], ("low_light", "haze"), 16, 30, seed=0).take(30)
    acc = feature_probe(UNet(width=4), lq, y, layers=("decoders.0",))
    assert 0.9 <= acc <= 1.0
    with pytest.raises(ValueError, match="y"):
        feature_probe(UNet(width=4), lq, y[:5], layers=("decoders.0",))


def test_restore_tiles_match_whole(img):
    net = small_unet()
    with torch.no_grad():
        net.ending.weight.normal_(0, 0.01)
    x = degrade(img, "noise", seed=0).double()
    whole = restore(net, x, check=False)
    assert whole.dtype == torch.float64 and whole.shape == x.shape
    tiled = restore(net, x, tile=48, overlap=8, check=False)
    assert torch.allclose(tiled, whole, atol=1e-6)  # one tile covers a 48-px image
    many = restore(net, x, tile=24, overlap=8, check=False)
    assert (many - whole).abs().mean() < 0.01
    with pytest.raises(ValueError, match="images"):
        restore(net, x[:2])


def test_save_load_round_trip(tmp_path, pairs):
    res = pretrain(small_unet(), pairs, n_classes=2, steps=2, num_res_blocks=1)
    p = save(res.model, tmp_path / "m.safetensors", classifier=res.classifier,
             kinds=("noise", "blur"), layers=res.layers)
    ck = load(p)
    x = torch.rand(2, 3, 16, 16)
    assert torch.equal(ck.model(x), res.model.eval()(x))
    assert ck.kinds == ("noise", "blur")
    probs = classify(ck, x)
    assert probs.shape == (2, 2) and torch.allclose(probs.sum(1), torch.ones(2))
    with pytest.raises(ValueError, match="safetensors"):
        save(res.model, tmp_path / "m.pt")
    with pytest.warns(DeprecationWarning, match=r"save\(model, path\)"):  # the old order
        assert load(save(tmp_path / "old.safetensors", res.model)).kinds is None
    (tmp_path / "bad.safetensors").write_bytes(b"junk")
    with pytest.raises(ValueError, match="bad.safetensors"):
        load(tmp_path / "bad.safetensors")
    with pytest.raises(ValueError, match="do not match"):
        load(p, model=UNet(width=8))


def _fixed_logits(feature_dims, logits):
    """A classifier that gives every image the same logits (its head's bias)."""
    c = DegradationClassifier(feature_dims, len(logits), num_res_blocks=1)
    with torch.no_grad():
        c.head.weight.zero_()
        c.head.bias.copy_(torch.tensor(logits))
    return c


def test_classify_warns_once_near_chance(pairs):
    from iclr25.dcpt import Checkpoint
    from iclr25.dcpt.probe import unsure

    # the rule min(2/K, (1 + 1/K)/2): 0.75 for 2 kinds, 0.40 (twice chance) for 5
    assert unsure(torch.tensor([[0.74, 0.26], [0.76, 0.24]])).tolist() == [True, False]
    assert unsure(torch.tensor([[0.39, 0.2, 0.2, 0.11, 0.1],
                                [0.41, 0.2, 0.2, 0.1, 0.09]])).tolist() == [True, False]
    assert not unsure(torch.ones(1, 1)).any()  # one kind: nothing to be unsure of
    res = pretrain(small_unet(), pairs, n_classes=2, steps=1, num_res_blocks=1)
    x = torch.rand(3, 3, 16, 16)
    with torch.random.fork_rng():
        torch.manual_seed(0)  # an untrained classifier over 5 kinds: near chance
        fresh = DegradationClassifier(res.classifier.feature_dims, 5, num_res_blocks=1)
    ck = Checkpoint(res.model, fresh, ("noise", "blur", "jpeg", "haze", "low_light"),
                    res.layers)
    with pytest.warns(UserWarning, match=r"unsure of 3 of 3 image\(s\): top probability below "
                      r"0\.40 \(chance over 5 kinds: 0\.20.*degradation=KIND") as caught:
        p = classify(ck, x)
    assert len(caught) == 1 and caught[0].filename == __file__  # once per call, our line
    assert p.max(1).values.lt(0.4).all()
    dims = res.classifier.feature_dims
    sure = Checkpoint(res.model, _fixed_logits(dims, [0.0, 3.0]), ("noise", "blur"),
                      res.layers)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # p = 0.95: confident, no warning
        assert classify(sure, x).argmax(1).tolist() == [1, 1, 1]
    with pytest.warns(UserWarning, match="unsure of 3 of 3"):  # p = 0.62 < 0.75 for 2 kinds
        classify(Checkpoint(res.model, _fixed_logits(dims, [0.0, 0.5]), ("noise", "blur"),
                            res.layers), x)


def test_cli_classify_warns_once_per_command(tmp_path, img, pairs):
    res = pretrain(small_unet(), pairs, n_classes=2, steps=1, num_res_blocks=1)
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(3):
        save_image(degrade(img, "noise", seed=i), folder / f"{i}.png")
    for logits, warned in (([0.0, 0.5], True), ([0.0, 3.0], False)):
        model = save(res.model, tmp_path / "m.safetensors", kinds=("noise", "blur"),
                     classifier=_fixed_logits(res.classifier.feature_dims, logits),
                     layers=res.layers)
        r = CliRunner().invoke(app, ["classify", str(model), str(folder)])
        assert r.exit_code == 0, r.output
        assert r.output.count("warning:") == warned  # once for the 3 images, or never
        if warned:   # classify has no --degradation: the hint names restore's (issue 68)
            assert "unsure of 3 of 3 image(s)" in r.output
            assert "give `dcpt restore --degradation KIND`" in r.output
        # the columns named, then a line per image
        assert r.output.splitlines()[0] == "image\tdegradation\tprobability"
        assert [x.split("\t")[0] for x in r.output.splitlines()[1:4]] == ["0.png", "1.png",
                                                                         "2.png"]
        r = CliRunner().invoke(app, ["restore", str(model), str(folder), str(tmp_path / "o"),
                                     "--no-check"])
        assert r.exit_code == 0, r.output
        assert r.output.count("unsure of 3 of 3 image(s)") == warned


def test_cli_pretrain_restore_classify(tmp_path, img):
    clean = tmp_path / "clean"
    clean.mkdir()
    save_image(img, clean / "a.png")
    save_image(img.flip(-1), clean / "b.png")
    model = tmp_path / "m.safetensors"
    r = CliRunner().invoke(app, ["pretrain", str(clean), "--kinds", "noise,blur", "--steps",
                                 "2", "--width", "4", "--size", "16", "--batch", "4",
                                 "--out", str(model)])
    assert r.exit_code == 0, r.output
    noisy = tmp_path / "noisy.png"
    save_image(degrade(img, "noise", seed=0), noisy)
    out = tmp_path / "restored.png"
    r = CliRunner().invoke(app, ["restore", str(model), str(noisy), str(out)])
    assert r.exit_code == 0, r.output and out.exists()
    # issue 68: no --degradation: DCPT's own classifier names it, and --fallback classical
    # (refused before: "got None") then works with that kind's classical restorer
    r = CliRunner().invoke(app, ["restore", str(model), str(noisy), str(out), "--fallback",
                                 "classical"])
    assert r.exit_code == 0, r.output
    named = CliRunner().invoke(app, ["classify", str(model),
                                     str(noisy)]).output.splitlines()[1].split("\t")[1]
    assert f"noisy.png: degradation classified as {named} (" in r.output
    r = CliRunner().invoke(app, ["finetune", str(model), str(clean), "--steps", "1", "--out",
                                 str(tmp_path / "x.safetensors")])
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert r.output.startswith("error: give --degradation KIND")
    r = CliRunner().invoke(app, ["classify", str(model), str(noisy)])
    assert r.exit_code == 0 and "noisy.png" in r.output
    assert r.output.splitlines()[1].split("\t")[1] in ("noise", "blur")
    # --pairs layout
    for kind in ("noise", "blur"):
        for sub in ("lq", "gt"):
            (tmp_path / "pairs" / kind / sub).mkdir(parents=True)
        save_image(degrade(img, kind, seed=0), tmp_path / "pairs" / kind / "lq" / "x.png")
        save_image(img, tmp_path / "pairs" / kind / "gt" / "x.png")
    ft = tmp_path / "ft.safetensors"
    r = CliRunner().invoke(app, ["finetune", str(model), "--pairs", str(tmp_path / "pairs"),
                                 "--steps", "2", "--size", "16", "--batch", "2", "--out",
                                 str(ft)])
    assert r.exit_code == 0, r.output


def test_cli_errors(tmp_path):
    runner = CliRunner()
    empty = tmp_path / "empty"
    empty.mkdir()
    out = str(tmp_path / "m.safetensors")
    r = runner.invoke(app, ["pretrain", str(empty), "--steps", "1", "--out", out])
    assert r.exit_code == 2 and "no image files" in r.output
    r = runner.invoke(app, ["pretrain", str(empty), "--kinds", "fog", "--out", out])
    assert r.exit_code == 2 and "--kinds" in r.output
    r = runner.invoke(app, ["pretrain", str(empty), "--steps", "0", "--out", out])
    assert r.exit_code == 2 and "--steps" in r.output
    (tmp_path / "pairs" / "noise" / "lq").mkdir(parents=True)
    r = runner.invoke(app, ["pretrain", "--pairs", str(tmp_path / "pairs"), "--out", out])
    assert r.exit_code == 2 and "lq/ and gt/" in r.output
    r = runner.invoke(app, ["restore", str(tmp_path / "none.safetensors"), str(empty),
                            str(tmp_path / "o")])
    assert r.exit_code == 2 and "none.safetensors" in r.output


def test_device(device, pairs):
    net = small_unet().to(device)
    res = pretrain(net, pairs, n_classes=2, steps=1, num_res_blocks=1)
    assert next(res.classifier.parameters()).device.type == device.type
    x = torch.rand(1, 3, 16, 16, device=device)
    assert restore(res.model, x).device == x.device


def test_claims_control_and_trivial_arm():
    import dataclasses

    from iclr25.claims import discover
    from iclr25.dcpt.claim import AllInOneEvidence

    vals = {f.name: 0.0 for f in dataclasses.fields(AllInOneEvidence)
            if f.default is dataclasses.MISSING}
    reg = discover()
    gain = reg["dcpt.all_in_one_gain"]
    # scratch beats the input by 2 dB but its own untrained network by only 0.5 dB
    ev = AllInOneEvidence(**(vals | dict(scratch_gain_over_input=2.0, scratch_psnr=25.0,
                                         init_psnr=24.5, stats_knn_accuracy=0.8)))
    assert not gain.control(ev)
    ev.init_psnr = 23.0
    assert gain.control(ev)
    assert reg["dcpt.degradation_classification"].trivial(ev) == 0.8


_SMALL = ["--size", "16", "--batch", "2", "--steps", "1"]


def _pretrained(tmp_path, img, kinds: str):
    """A folder of one clean photo and a one-step `dcpt pretrain` on ``kinds`` from it."""
    clean, model = tmp_path / "clean", tmp_path / "m.safetensors"
    clean.mkdir()
    save_image(img, clean / "a.png")
    r = CliRunner().invoke(app, ["pretrain", str(clean), "--kinds", kinds, "--width", "4",
                                 *_SMALL, "--out", str(model)])
    assert r.exit_code == 0, r.output
    return clean, model


def test_cli_restore_classifies_among_the_finetuned_kinds_only(tmp_path, img):
    """Issue 68 walk: an all-in-one fine-tune records its kinds, and restore names each
    photo's degradation among them only (a weak classifier named blurred photos "jpeg", a
    kind the model never learned, and NIQE passed outputs worse than the input)."""
    clean, model = _pretrained(tmp_path, img, "noise,jpeg,haze")
    ft, small = tmp_path / "ft.safetensors", _SMALL
    r = CliRunner().invoke(app, ["finetune", str(model), str(clean), "--kinds", "haze",
                                 *small, "--out", str(ft)])
    assert r.exit_code == 0, r.output
    ck = load(ft)
    assert ck.finetuned == ("haze",) and ck.kinds == ("noise", "jpeg", "haze")
    assert load(model).finetuned is None
    for kind in ("noise", "jpeg"):
        x = tmp_path / f"{kind}.png"
        save_image(degrade(img, kind, seed=0), x)
        r = CliRunner().invoke(app, ["restore", str(ft), str(x), str(tmp_path / "o.png")])
        assert r.exit_code == 0, r.output
        assert f"{kind}.png: degradation classified as haze (1.00)" in r.output


def test_cli_finetune_note_names_kinds_the_classifier_cannot(tmp_path, img):
    """Issue 68 walk (h68walk12): all-in-one over kinds the pre-training did not see
    (defocus on a noise/jpeg classifier) said `restore` names each image's kind, which it
    never does for those; the note now names them and the remedy. A model without a
    classifier is told that `restore` needs --degradation."""
    clean, model = _pretrained(tmp_path, img, "noise,jpeg")
    ft, small = tmp_path / "ft.safetensors", _SMALL
    r = CliRunner().invoke(app, ["finetune", str(model), str(clean), "--kinds",
                                 "noise,defocus", *small, "--out", str(ft)])
    assert r.exit_code == 0, r.output
    note = r.output.splitlines()[-1]
    assert note.startswith("note: all-in-one: `restore` names")
    assert "pre-trained on noise, jpeg and cannot name defocus:" in note
    assert "--degradation KIND" in note
    r = CliRunner().invoke(app, ["finetune", str(model), str(clean), "--kinds", "jpeg,noise",
                                 *small, "--out", str(ft)])
    assert r.exit_code == 0, r.output
    assert "cannot name" not in r.output and "note: all-in-one: `restore` names" in r.output
    bare = tmp_path / "bare.safetensors"
    save(small_unet(), bare)
    r = CliRunner().invoke(app, ["finetune", str(bare), str(clean), "--kinds", "noise",
                                 *small, "--out", str(ft)])
    assert r.exit_code == 0, r.output
    assert "no degradation classifier" in r.output and "names each image" not in r.output
    # that note is what restore then does: no kind named, the input kept
    x = tmp_path / "noisy.png"
    save_image(degrade(img, "noise", seed=0), x)
    o = tmp_path / "o.png"
    r = CliRunner().invoke(app, ["restore", str(ft), str(x), str(o)])
    assert r.exit_code == 0, r.output
    assert "degradation classified" not in r.output
    assert np.array_equal(np.asarray(Image.open(o)), np.asarray(Image.open(x)))


def test_cli_restore_writes_a_kept_input_as_its_own_bytes(tmp_path, img):
    """Issue 68, walk 13: the check keeps a JPEG's input (NIQE judges no output), but the
    command wrote it to OUT/NAME.jpg compressed again at quality 95: 24 of 24 such photos came
    back 0.04-0.84 dB below their input against the clean photo. A kept input is now its
    file's bytes; a kept PNG too (a grey PNG was written back as RGB)."""
    model = save(small_unet(), tmp_path / "m.safetensors")
    src = tmp_path / "in"
    src.mkdir()
    Image.fromarray((img.permute(1, 2, 0).numpy() * 255).astype(np.uint8)).save(
        src / "a.jpg", quality=30)
    Image.fromarray((img[0].numpy() * 255).astype(np.uint8)).save(src / "grey.png")  # mode L
    r = CliRunner().invoke(app, ["restore", str(model), str(src), str(tmp_path / "out"),
                                 "--degradation", "jpeg"])
    assert r.exit_code == 0, r.output
    assert r.output.count("returned the input unchanged") == 2
    for name in ("a.jpg", "grey.png"):
        assert (tmp_path / "out" / name).read_bytes() == (src / name).read_bytes()
    # a file as OUT in another format is written from the decoded pixels, as before
    r = CliRunner().invoke(app, ["restore", str(model), str(src / "a.jpg"),
                                 str(tmp_path / "a.png"), "--degradation", "jpeg"])
    assert r.exit_code == 0, r.output
    assert np.array_equal(np.asarray(Image.open(tmp_path / "a.png")),
                          np.asarray(Image.open(src / "a.jpg")))


def test_cli_restore_kept_input_to_a_jpeg_name_or_a_hard_link_of_itself(tmp_path, img):
    """hreview12: a kept a.jpg written to OUT b.jpeg (the same format under its other suffix)
    was compressed again; OUT a hard link of IN (the input written over itself) raised
    shutil.SameFileError with a traceback."""
    import os

    model = save(small_unet(), tmp_path / "m.safetensors")
    src = tmp_path / "a.jpg"
    Image.fromarray((img.permute(1, 2, 0).numpy() * 255).astype(np.uint8)).save(src, quality=30)
    before = src.read_bytes()
    os.link(src, tmp_path / "same.jpg")
    for out in ("b.jpeg", "same.jpg"):
        r = CliRunner().invoke(app, ["restore", str(model), str(src), str(tmp_path / out),
                                     "--degradation", "jpeg"])
        assert r.exit_code == 0, r.output
        assert "returned the input unchanged" in r.output
        assert (tmp_path / out).read_bytes() == before and src.read_bytes() == before
