"""iclr25.datasets.images: bundled images, crops, degradations by closed form, metrics, files."""

import numpy as np
import pytest
import torch

pytest.importorskip("skimage")
pytest.importorskip("PIL")

from PIL import Image  # noqa: E402
from scipy import ndimage  # noqa: E402
from skimage import metrics  # noqa: E402

from iclr25.datasets import images as im  # noqa: E402


@pytest.fixture(scope="module")
def cat():
    return im.load_image("chelsea", max_side=64)


def test_load_image_shapes_and_range():
    x = im.load_image("astronaut")
    assert x.shape == (3, 512, 512) and x.dtype == torch.float32
    assert 0 <= float(x.min()) and float(x.max()) <= 1
    g = im.load_image("camera", max_side=100)
    assert g.shape == (3, 100, 100) and torch.equal(g[0], g[1])
    logo = im.load_image("logo", max_side=50)
    assert logo.shape == (3, 50, 50)
    assert set(im.TEST_IMAGES) <= set(im.RGB_IMAGES)


def test_load_image_errors():
    with pytest.raises(ValueError, match="name"):
        im.load_image("lena")
    with pytest.raises(ValueError, match="max_side"):
        im.load_image("camera", max_side=2)


def test_random_crops_seeded_and_inside(cat):
    a = im.random_crops([cat], 20, 16, seed=3)
    b = im.random_crops([cat], 20, 16, seed=3)
    assert a.shape == (20, 3, 16, 16) and torch.equal(a, b)
    assert not torch.equal(a, im.random_crops([cat], 20, 16, seed=4))
    # without augmentation every crop is a window of the image
    c = im.random_crops([cat], 5, 16, seed=0, augment=False)
    windows = cat.unfold(1, 16, 1).unfold(2, 16, 1)          # (3, h, w, 16, 16)
    for crop in c:
        diff = (windows - crop[:, None, None]).abs().amax((0, 3, 4))
        assert float(diff.min()) == 0


def test_random_crops_errors(cat):
    with pytest.raises(ValueError, match="size"):
        im.random_crops([cat], 2, 1000)
    with pytest.raises(ValueError, match="images"):
        im.random_crops([], 2, 8)
    with pytest.raises(ValueError, match="n"):
        im.random_crops([cat], 0, 8)


def test_blur_matches_scipy_gaussian_filter(cat):
    y = im.degrade(cat, "blur", seed=0, sigma=1.7)
    ref = np.stack([ndimage.gaussian_filter(cat[c].double().numpy(), 1.7, mode="mirror",
                                            truncate=4.0) for c in range(3)])
    np.testing.assert_allclose(y.double().numpy(), ref, atol=1e-6)


def test_blur_per_image_sigma_matches_scipy(cat):
    batch = torch.stack([cat, cat.flip(-1)])
    y = im.degrade(batch, "blur", seed=5)
    # recover each image's sigma by refitting: the draw is uniform in [1.5, 2.5]
    for b in range(2):
        errs = {}
        for s in np.linspace(1.5, 2.5, 101):
            ref = ndimage.gaussian_filter(batch[b, 0].double().numpy(), s, mode="mirror")
            errs[s] = np.abs(ref - y[b, 0].double().numpy()).max()
        assert min(errs.values()) < 2e-3


def test_jpeg_is_a_pillow_round_trip(cat):
    y = im.degrade(cat, "jpeg", seed=0, quality=10)
    import io
    a = (cat.permute(1, 2, 0).double() * 255).round().to(torch.uint8).numpy()
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, format="JPEG", quality=10)
    ref = np.asarray(Image.open(buf).convert("RGB")).astype(np.float64) / 255
    np.testing.assert_allclose(y.permute(1, 2, 0).double().numpy(), ref, atol=1e-6)


def test_noise_std():
    x = torch.full((4, 3, 64, 64), 0.5)
    y = im.degrade(x, "noise", seed=0)
    assert abs(float((y - x).std()) - 25 / 255) < 2e-3
    assert abs(float((y - x).mean())) < 2e-3


def test_low_light_mean_is_k_j_gamma():
    J = torch.linspace(0.3, 1.0, 8).repeat(2000, 1)[None, None].expand(1, 3, -1, -1)
    J = J.reshape(1, 3, 2000, 8).contiguous()
    y = im.degrade(J, "low_light", seed=1, k=0.2, gamma=2.0)
    want = 0.2 * J[0, 0, 0] ** 2
    got = y[0].mean((0, 1))
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1.5e-3)


def test_haze_closed_form():
    J = 0.5 * torch.rand(2, 3, 24, 24, generator=torch.Generator().manual_seed(0))
    y = im.degrade(J, "haze", seed=2, beta=1.0, airlight=0.9)
    t = (y - 0.9) / (J - 0.9)        # t = exp(-ramp), the same for all channels
    assert torch.allclose(t[:, 0], t[:, 1], atol=1e-4)
    ramp = -torch.log(t[:, 0])
    assert float(ramp.min()) > -1e-4 and float(ramp.max()) < 1 + 1e-4
    assert float(ramp.amax((1, 2)).min()) > 0.99            # ramps span [0, 1]


@pytest.mark.parametrize("kind", im.KINDS)
def test_every_kind_shape_range_determinism(kind, cat):
    x = im.random_crops([cat], 3, 32, seed=0)
    before = x.clone()
    a = im.degrade(x, kind, seed=7)
    b = im.degrade(x, kind, seed=7)
    assert a.shape == x.shape and a.dtype == x.dtype
    assert torch.equal(a, b) and torch.equal(x, before)
    assert 0 <= float(a.min()) and float(a.max()) <= 1
    assert not torch.equal(a, x)
    single = im.degrade(x[0].double(), kind, seed=7)
    assert single.shape == x[0].shape and single.dtype == torch.float64


def test_degrade_errors(cat):
    with pytest.raises(ValueError, match="kind"):
        im.degrade(cat, "snow")
    with pytest.raises(ValueError, match="sigma"):
        im.degrade(cat, "noise", sigma=float("nan"))
    with pytest.raises(ValueError, match="not parameters"):
        im.degrade(cat, "noise", quality=3)
    with pytest.raises(TypeError, match="x"):
        im.degrade((cat * 255).to(torch.uint8), "noise")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        im.degrade(cat * 2, "noise")
    with pytest.raises(ValueError, match="x"):
        im.degrade(cat[:2], "noise")
    bad = cat.clone()
    bad[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        im.degrade(bad, "blur")
    with pytest.raises(ValueError, match="empty"):
        im.degrade(torch.zeros(0, 3, 8, 8), "blur")


def test_all_in_one_pairs_balanced_and_replayable(cat):
    pairs = im.AllInOnePairs([cat], ("noise", "blur", "jpeg"), 16, 7, seed=1,
                             params={"noise": {"sigma": 0.2}})
    a = next(iter(pairs))
    b = next(iter(pairs))
    for u, v in zip(a, b, strict=True):
        assert torch.equal(u, v)
    lq, gt, y = a
    assert lq.shape == gt.shape == (7, 3, 16, 16) and y.dtype == torch.int64
    assert sorted(torch.bincount(y, minlength=3).tolist()) == [2, 2, 3]
    noisy = y == 0
    assert abs(float((lq[noisy] - gt[noisy]).std()) - 0.2) < 0.03
    lq2, _, y2 = pairs.take(10)
    assert lq2.shape[0] == 10 and len(y2) == 10


def test_all_in_one_pairs_errors(cat):
    with pytest.raises(ValueError, match="kinds"):
        im.AllInOnePairs([cat], ("noise", "fog"), 16, 4, seed=0)
    with pytest.raises(ValueError, match="not parameters"):
        im.AllInOnePairs([cat], ("noise",), 16, 4, seed=0, params={"noise": {"q": 1}})
    with pytest.raises(ValueError, match="images"):
        im.AllInOnePairs([cat], ("noise",), 400, 4, seed=0)


def test_psnr_ssim_match_skimage(cat):
    y = im.degrade(cat, "noise", seed=0)
    assert im.psnr(cat, y) == pytest.approx(
        metrics.peak_signal_noise_ratio(cat.numpy(), y.numpy(), data_range=1), rel=1e-9)
    ref = metrics.structural_similarity(cat.numpy(), y.numpy(), data_range=1, channel_axis=0,
                                        gaussian_weights=True, sigma=1.5,
                                        use_sample_covariance=False)
    assert im.ssim(cat, y) == pytest.approx(ref, abs=1e-6)
    batch = torch.stack([cat, y])
    per = im.psnr(batch, torch.stack([y, y]), reduction="none")
    assert per.shape == (2,) and torch.isinf(per[1])
    assert im.ssim(y.numpy(), y.numpy()) == pytest.approx(1.0)


def test_metric_errors(cat):
    with pytest.raises(ValueError, match="same shape"):
        im.psnr(cat, cat[:, :10])
    with pytest.raises(ValueError, match="data_range"):
        im.psnr(cat, cat, data_range=0)


def test_files_round_trip(tmp_path, cat):
    for suffix in (".png", ".bmp", ".tif"):
        im.save_image(cat, tmp_path / f"a{suffix}")
    im.save_image(cat, tmp_path / "b.jpg", quality=90)
    (tmp_path / "notes.txt").write_text("not an image")
    got = im.load_folder(tmp_path)
    assert list(got) == ["a.bmp", "a.png", "a.tif", "b.jpg"]
    assert (got["a.png"] - cat).abs().max() <= 0.5 / 255 + 1e-6
    assert (got["b.jpg"] - cat).abs().mean() < 0.03
    one = im.load_folder(tmp_path / "a.png", max_side=32)
    assert one["a.png"].shape[-1] == 32


def test_file_errors(tmp_path, cat):
    with pytest.raises(ValueError, match="does not exist"):
        im.load_folder(tmp_path / "missing")
    with pytest.raises(ValueError, match="no image files"):
        im.load_folder(tmp_path)
    (tmp_path / "bad.png").write_bytes(b"not a png")
    with pytest.raises(ValueError, match="bad.png"):
        im.load_folder(tmp_path)
    with pytest.raises(ValueError, match="path"):
        im.save_image(cat, tmp_path / "a.gif")
    with pytest.raises(ValueError, match="x"):
        im.save_image(cat[None].expand(2, -1, -1, -1), tmp_path / "a.png")


def test_degrade_keeps_device(device, cat):
    x = im.random_crops([cat.to(device)], 2, 16, seed=0)
    for kind in im.KINDS:
        assert im.degrade(x, kind, seed=0).device == x.device
