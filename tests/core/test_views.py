import pytest
import torch

from iclr25.datasets import views
from iclr25.datasets.bundled import digits


def test_digit_images_share_the_digits_split():
    d, ref = views.digit_images(8, seed=3), digits(seed=3, standardize=False)
    assert torch.equal(d.y_train, ref.y_train) and torch.equal(d.y_test, ref.y_test)
    assert torch.allclose(d.X_train.reshape(len(d.X_train), -1), ref.X_train)
    up = views.digit_images(16, seed=3)
    assert up.X_train.shape[1:] == (16, 16) and 0 <= up.X_train.min() <= up.X_train.max() <= 1


def test_jitter_shifts_without_changing_mass_inside_the_border():
    img = torch.zeros(2, 9, 9)
    img[:, 4, 4] = 1.0
    before = img.clone()
    out = views.jitter(img, copies=3, max_shift=2, seed=0)
    assert torch.equal(img, before) and out.shape == (6, 9, 9)
    assert torch.all(out.sum((1, 2)) == 1)  # a centred dot never leaves a 9x9 image
    pos = out.flatten(1).argmax(1)
    r, c = pos // 9, pos % 9
    assert ((r - 4).abs() <= 2).all() and ((c - 4).abs() <= 2).all()
    assert torch.equal(out, views.jitter(img, 3, 2, seed=0))
    assert torch.equal(views.jitter(img, 1, 0, seed=5), img)


def test_permute_features_is_a_column_permutation():
    X = torch.arange(12.0).reshape(3, 4)
    Xp, perm = views.permute_features(X, seed=1)
    assert torch.equal(Xp, X[:, perm]) and sorted(perm.tolist()) == [0, 1, 2, 3]


def test_tint_endpoints():
    ink = torch.tensor([[0.0, 1.0]])
    out = views.tint(ink, (1.0, 0.0, 0.0))
    assert out.shape == (3, 1, 2)
    assert torch.equal(out[:, 0, 0], torch.ones(3))  # no ink: white background
    assert torch.equal(out[:, 0, 1], torch.tensor([1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="rgb must end in a dimension of 3"):
        views.tint(ink, (1.0, 0.0))


def test_bimodal_digits_pairing_and_balance():
    b = views.bimodal_digits(50, biased=True, seed=0)
    assert torch.equal(b.color2, b.pairing[b.texture1]) and bool(b.synergy.all())
    u = views.bimodal_digits(3000, biased=False, seed=0)
    assert 0.07 < float(u.synergy.float().mean()) < 0.13
    assert u.x1.shape == (3000, 3, 24, 24) and float(u.x1.min()) >= 0 and float(u.x1.max()) <= 1
    assert not torch.equal(u.x1, u.x2)
    again = views.bimodal_digits(50, biased=True, seed=0)
    assert torch.equal(again.x1, b.x1)
    with pytest.raises(ValueError, match="split must be one of"):
        views.bimodal_digits(5, biased=False, split="val")


def test_digit_sequences_hold_each_digit_once():
    x, content, style = views.digit_sequences(20, seed=0)
    assert x.shape == (20, 10, 3, 8, 8)
    assert torch.equal(content.sort(1).values, torch.arange(10).expand(20, 10))
    assert int(style.max()) < len(views.TRAIN_COLORS)
    _, _, s_ood = views.digit_sequences(5, views.OOD_COLORS, "test", seed=0)
    assert int(s_ood.max()) < len(views.OOD_COLORS)


def test_digit_sequences_split_seed_draws_the_exemplar_split():
    a, _, _ = views.digit_sequences(30, seed=0)
    assert torch.equal(a, views.digit_sequences(30, seed=0, split_seed=0)[0])
    assert not torch.equal(a, views.digit_sequences(30, seed=0, split_seed=3)[0])
    with pytest.raises(ValueError, match="split_seed"):
        views.digit_sequences(3, seed=0, split_seed=-1)


def test_random_sensor_is_fixed_and_noisy():
    s1, s2 = views.random_sensor(4, 3, seed=0), views.random_sensor(4, 3, seed=0)
    X = torch.randn(5, 4)
    assert torch.equal(s1(X, seed=1), s2(X, seed=1))
    assert not torch.equal(s1(X, seed=1), s1(X, seed=2))
    quiet = views.random_sensor(4, 3, noise=0.0, seed=0)
    assert float(quiet(X).abs().max()) <= 1.0  # tanh output
    with pytest.raises(ValueError, match="X must have 4 columns"):
        s1(torch.randn(2, 5))
    with pytest.raises(ValueError, match="noise must"):
        views.random_sensor(4, 3, noise=-1.0)
