"""Bimodal Trifeatures (the generator of CoMM's controlled experiment) and the SimCLR image
augmentations: known answers, the task's invariants, determinism, error paths."""

import numpy as np
import pytest
import torch

from iclr25.comm.augment import ColorJitter, Compose, ResizedCropFlip
from iclr25.datasets.views import (
    TRI_COLORS,
    bimodal_trifeatures,
    trifeatures,
)


def test_trifeatures_labels_and_pixels_are_consistent(one_thread):
    d = trifeatures(300, size=24, seed=0)
    assert d.x.shape == (300, 3, 24, 24) and d.x.dtype == torch.float32
    for lab in (d.shape, d.texture, d.color):
        counts = torch.bincount(lab, minlength=10)
        assert lab.dtype == torch.int64 and counts.min() >= 15  # every value drawn
    assert float(d.x.min()) >= 0 and float(d.x.max()) <= 1
    # the corners are background grey (shapes stay inside the image) ...
    assert torch.allclose(d.x[:, :, 0, 0], torch.full((300, 3), 0.5))
    # ... and a solid shape's inked pixels are exactly its colour
    palette = torch.tensor(list(TRI_COLORS.values()))
    for i in (d.texture == 0).nonzero()[:, 0].tolist():
        px = d.x[i].reshape(3, -1).T
        ink = px[(px - 0.5).abs().sum(1) > 1e-6]
        assert len(ink) > 40
        assert torch.allclose(ink, palette[d.color[i]].expand_as(ink))


def test_trifeatures_renders_the_requested_attributes_deterministically():
    want = torch.arange(10)
    a = trifeatures(10, shape=want, texture=want.flip(0), color=want, seed=3)
    b = trifeatures(10, shape=want, texture=want.flip(0), color=want, seed=3)
    c = trifeatures(10, shape=want, texture=want.flip(0), color=want, seed=4)
    assert torch.equal(a.shape, want) and torch.equal(a.texture, want.flip(0))
    assert torch.equal(a.x, b.x) and not torch.equal(a.x, c.x)
    # the same shape, texture and colour at a new position/rotation is a different image
    # with the same amount of colour in it (up to rotation/aliasing)
    assert not torch.equal(a.x[1], c.x[1])


def test_every_texture_survives_inside_the_silhouette():
    # all 1000 (shape, texture, colour) triples against the solid render of the same layout:
    # a texture changes pixels inside the silhouette and nothing outside (issue 51: a later
    # shape kind used to overwrite an earlier texture, 44% of images rendered solid)
    s, t, c = (torch.arange(1000) // 100, torch.arange(1000) // 10 % 10, torch.arange(1000) % 10)
    tex = trifeatures(1000, shape=s, texture=t, color=c, seed=7).x
    solid = trifeatures(1000, shape=s, texture=torch.zeros_like(t), color=c, seed=7).x
    inside = ((solid - 0.5).abs().sum(1) > 1e-6)[:, None].expand_as(solid)
    assert bool((inside.flatten(1).sum(1) > 40).all())
    assert torch.equal(tex[~inside], solid[~inside])  # grey outside, whatever the texture
    differs = ((tex - solid).abs() * inside).flatten(1).amax(1) > 0.1
    assert torch.equal(differs, t != 0), (s[differs != (t != 0)], t[differs != (t != 0)])


def _spectrum(x: torch.Tensor, part: str) -> np.ndarray:
    """Translation-invariant pixel features: the |FFT| (zero-padded to 64, 2x2-pooled) of the
    silhouette (``shape``) or of the texture's on-pixels minus their mean over the silhouette
    (``texture``, plus the on-fraction), read from colour-free ink thresholds."""
    ink = (x - 0.5).abs().sum(1)
    ink = ink / ink.amax((1, 2), keepdim=True)
    sil, on = (ink > 0.1).float(), (ink > 0.6).float()
    frac = on.sum((1, 2)) / sil.sum((1, 2))
    m = sil if part == "shape" else on - frac[:, None, None] * sil
    f = torch.nn.functional.avg_pool2d(torch.fft.rfft2(m, s=(64, 64)).abs()[:, None], 2)
    return torch.cat([f.flatten(1).log1p(), frac[:, None]], 1).numpy()


def test_a_pixel_oracle_reads_shape_and_texture(one_thread):
    # logistic regression on pixel spectra of 6,000 renders, scored on 2,000 others: every
    # attribute the claims probe is in the pixels (the old render capped texture at 0.64)
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    tr, te = trifeatures(6000, seed=1), trifeatures(2000, seed=2)
    for part in ("shape", "texture"):
        clf = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=300, tol=1e-3))
        clf.fit(_spectrum(tr.x, part), getattr(tr, part).numpy())
        assert clf.score(_spectrum(te.x, part), getattr(te, part).numpy()) >= 0.95, part


def test_bimodal_trifeatures_shares_shape_and_keeps_the_pairing(one_thread):
    d = bimodal_trifeatures(2000, seed=0)
    assert torch.equal(torch.sort(d.pairing).values, torch.arange(10))
    assert torch.equal(d.synergy, (d.color2 == d.pairing[d.texture1]).long())
    rate = float(d.synergy.float().mean())
    assert 0.07 < rate < 0.13  # unbiased: about 1 in 10 pairs is a synergy positive
    for lab in (d.shape, d.texture1, d.texture2, d.color1, d.color2):
        assert torch.bincount(lab, minlength=10).min() > 120
    assert torch.equal(d.labels("redundancy"), d.shape)
    assert torch.equal(d.labels("uniqueness"), d.texture1)
    b = bimodal_trifeatures(500, biased=True, seed=1)
    assert bool((b.synergy == 1).all())
    assert torch.equal(b.color2, b.pairing[b.texture1])
    # texture 2 and colour 1 stay independent of the pairing in the biased set
    assert torch.bincount(b.color1, minlength=10).min() > 20


def test_bimodal_trifeatures_splits_hold_out_combinations():
    def combos(d):
        s = d.shape.repeat(2)
        t = torch.cat([d.texture1, d.texture2])
        c = torch.cat([d.color1, d.color2])
        return set((100 * s + 10 * t + c).tolist())

    for layout in (0, 7):  # each draw of the testbed holds out its own combinations
        train, test = combos(bimodal_trifeatures(3000, seed=0, layout_seed=layout)), combos(
            bimodal_trifeatures(3000, split="test", seed=1, layout_seed=layout))
        assert not train & test
        assert len(train) > 700 and len(test) > 150  # 800 / 200 of the 1000 combinations
    other = combos(bimodal_trifeatures(3000, split="test", seed=1, layout_seed=7))
    assert other != combos(bimodal_trifeatures(3000, split="test", seed=1))


def test_layout_zero_is_the_fixed_default_layout():
    # the committed evidence's first draw was measured on this layout: it must not move
    pairing = torch.randperm(10, generator=torch.Generator().manual_seed(20250422))
    assert torch.equal(bimodal_trifeatures(5, seed=0).pairing, pairing)
    assert not torch.equal(bimodal_trifeatures(5, seed=0, layout_seed=1).pairing, pairing)


def test_bimodal_trifeatures_is_seeded_and_takes_a_pairing():
    p = torch.arange(10).roll(1)
    a = bimodal_trifeatures(50, pairing=p, biased=True, seed=5)
    b = bimodal_trifeatures(50, pairing=p.tolist(), biased=True, seed=5)
    assert torch.equal(a.x1, b.x1) and torch.equal(a.x2, b.x2)
    assert torch.equal(a.color2, (a.texture1 - 1) % 10)  # roll(1): t -> t - 1
    assert not torch.equal(a.x1, bimodal_trifeatures(50, pairing=p, biased=True, seed=6).x1)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=0), "n"), (dict(n=-3), "n"), (dict(n=4, size=15), "size"),
    (dict(n=4, split="val"), "split"),
    (dict(n=4, pairing=[0] * 10), "pairing"), (dict(n=4, pairing=list(range(9))), "pairing"),
    (dict(n=4, layout_seed=-1), "layout_seed"),
])
def test_bimodal_trifeatures_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bimodal_trifeatures(**kwargs)


def test_trifeatures_rejects_bad_input():
    with pytest.raises(ValueError, match="n"):
        trifeatures(0)
    with pytest.raises(ValueError, match="size"):
        trifeatures(3, size=8)
    with pytest.raises(ValueError, match="shape"):
        trifeatures(3, shape=[0, 1, 10])
    with pytest.raises(ValueError, match="texture"):
        trifeatures(3, texture=[0, 1])
    with pytest.raises(TypeError, match="n"):
        trifeatures(2.5)
    with pytest.raises(ValueError, match="task"):
        bimodal_trifeatures(3).labels("colour")


def test_trifeatures_device(device):
    d = bimodal_trifeatures(20, seed=0, device=device)
    cpu = bimodal_trifeatures(20, seed=0)
    assert d.x1.device.type == device.type and d.shape.device.type == device.type
    assert torch.equal(d.shape.cpu(), cpu.shape)
    assert torch.allclose(d.x1.cpu(), cpu.x1, atol=1e-4)


# --- augmentations ------------------------------------------------------------------------

def _images(n=16):
    return bimodal_trifeatures(n, seed=0).x1


def test_augmentations_are_seeded_and_leave_the_input_alone():
    x = _images()
    before = x.clone()
    aug = Compose(ResizedCropFlip(), ColorJitter())
    a, b, c = aug(x, seed=1), aug(x, seed=1), aug(x, seed=2)
    assert torch.equal(x, before)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert a.shape == x.shape and a.data_ptr() != x.data_ptr()
    assert float(a.min()) >= 0 and float(a.max()) <= 1


def test_identity_settings_are_identities():
    x = _images()
    crop = ResizedCropFlip(scale=(1.0, 1.0), ratio=(1.0, 1.0), flip=False)
    assert torch.allclose(crop(x, seed=0), x, atol=1e-5)
    jit = ColorJitter(0, 0, 0, 0, p=1.0, grayscale=0.0)
    assert torch.allclose(jit(x, seed=0), x, atol=1e-5)


def test_flip_and_grayscale_known_answers():
    x = _images()
    flipped = ResizedCropFlip(scale=(1.0, 1.0), ratio=(1.0, 1.0), flip=True)(x, seed=0)
    same = torch.isclose(flipped, x, atol=1e-5).flatten(1).all(1)
    mirrored = torch.isclose(flipped, x.flip(-1), atol=1e-5).flatten(1).all(1)
    assert bool((same | mirrored).all()) and 0 < int(mirrored.sum()) < len(x)
    grey = ColorJitter(0, 0, 0, 0, p=0.0, grayscale=1.0)(x, seed=0)
    assert torch.allclose(grey[:, 0], grey[:, 1]) and torch.allclose(grey[:, 1], grey[:, 2])
    lum = torch.tensor([0.299, 0.587, 0.114])[None, :, None, None]
    assert torch.allclose(grey[:, :1], (x * lum).sum(1, keepdim=True), atol=1e-6)


def test_hue_rotation_keeps_luminance():
    x = _images() * 0.5 + 0.25  # away from the clamp
    y = ColorJitter(0, 0, 0, 0.1, p=1.0, grayscale=0.0)(x, seed=0)
    lum = torch.tensor([0.299, 0.587, 0.114])[None, :, None, None]
    assert torch.allclose((y * lum).sum(1), (x * lum).sum(1), atol=1e-4)
    assert not torch.allclose(y, x, atol=1e-3)


def test_augmentations_reject_bad_input():
    with pytest.raises(ValueError, match="scale"):
        ResizedCropFlip(scale=(0.0, 1.0))
    with pytest.raises(ValueError, match="ratio"):
        ResizedCropFlip(ratio=(2.0, 1.0))
    with pytest.raises(ValueError, match="hue"):
        ColorJitter(hue=0.7)
    with pytest.raises(ValueError, match="RGB"):
        ColorJitter()(torch.rand(2, 1, 8, 8), seed=0)
    with pytest.raises(ValueError, match="x"):
        ResizedCropFlip()(torch.rand(8, 8), seed=0)
    with pytest.raises(TypeError, match="floating"):
        ColorJitter()(torch.zeros(2, 3, 4, 4, dtype=torch.long), seed=0)


def test_every_arm_and_the_control_share_one_normalising_encoder():
    from iclr25.comm.claim import _build, _encoder

    enc = _encoder(3)
    mean = torch.tensor([0.485, 0.456, 0.406])[None, :, None, None].expand(2, 3, 8, 8)
    assert torch.allclose(enc[0](mean), torch.zeros(2, 3, 8, 8), atol=1e-6)
    x = _images()
    before = x.clone()
    # the control's encoder is the arms' modality-1 encoder, weights included
    assert torch.equal(_build(3).encoders[0](x), enc(x))
    assert torch.equal(x, before) and enc(x).shape == (len(x), 64, 4, 4)
