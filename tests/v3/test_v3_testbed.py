"""PhoneNums pages (the paper's controlled setting) and the claims' testbed readers."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from iclr25.datasets.views import OOD_COLORS, TRAIN_COLORS
from iclr25.v3.testbed import _blur, _blur_matrix, _column_kernels, _gaussian, phone_numbers


@pytest.fixture(scope="module")
def page():
    return phone_numbers(6, TRAIN_COLORS, seed=3)


def test_each_page_prints_every_digit_once_in_one_colour(page):
    x, content, style = page
    assert x.shape == (6, 10, 3, 48, 32) and x.dtype == torch.float32
    assert content.shape == (6, 10) and style.shape == (6,)
    assert (content.sort(1).values == torch.arange(10)).all()
    assert int(style.min()) >= 0 and int(style.max()) < len(TRAIN_COLORS)
    assert float(x.min()) >= 0 and float(x.max()) <= 1
    # every value is a uint8 level, as the official PNGs hold
    assert float((x * 255 - (x * 255).round()).abs().max()) < 1e-3


def test_ink_takes_the_page_colour():
    # inside the glyph's strokes a page shows its ink, int(240 rgb + 8), channel by channel
    # (the median: the official uint8 noise wraps a minority of pixels, e.g. 248 + 9 -> 1)
    from iclr25.v3.testbed import _glyphs

    x, content, style = phone_numbers(40, TRAIN_COLORS, seed=1)
    names = list(TRAIN_COLORS)
    g = _glyphs()[:, :48, :32] > 0.99
    strokes = g.clone()  # stroke pixels with ink 3 rows above and below: the blur keeps them
    for d in (1, 2, 3):
        strokes[:, d:] &= g[:, :-d]
        strokes[:, :-d] &= g[:, d:]
    for i in range(40):
        rgb = torch.tensor(TRAIN_COLORS[names[int(style[i])]])
        mask = strokes[content[i]]                               # (10, 48, 32)
        ink = x[i].permute(1, 0, 2, 3)[:, mask].median(1).values  # (3,)
        assert float((ink - (rgb * 240 + 8) / 255).abs().max()) < 0.15, names[int(style[i])]


def test_seeded_and_pool_is_average_pooling():
    a = phone_numbers(3, OOD_COLORS, seed=7)
    b = phone_numbers(3, OOD_COLORS, seed=7)
    assert all(torch.equal(u, v) for u, v in zip(a, b, strict=True))
    assert not torch.equal(a[0], phone_numbers(3, OOD_COLORS, seed=8)[0])
    p2 = phone_numbers(3, OOD_COLORS, seed=7, pool=2)
    assert p2[0].shape == (3, 10, 3, 24, 16) and torch.equal(p2[1], a[1])
    pooled = F.avg_pool2d(a[0].reshape(30, 3, 48, 32), 2).reshape(3, 10, 3, 24, 16)
    assert torch.allclose(p2[0], pooled, atol=1e-6)


def test_opencv_kernels_and_reflect_101_border():
    # getGaussianKernel(k, 0): fixed tables for k <= 7, the sigma rule beyond
    assert torch.allclose(_gaussian(5), torch.tensor([1, 4, 6, 4, 1.0], dtype=torch.float64)
                          / 16)
    sigma = 0.3 * ((9 - 1) * 0.5 - 1) + 0.8
    g = torch.exp(-torch.arange(-4, 5.0, dtype=torch.float64) ** 2 / (2 * sigma ** 2))
    assert torch.allclose(_gaussian(9), g / g.sum())
    for k in (5, 7, 9, 11, 13):
        m = _blur_matrix(k)
        assert torch.allclose(m.sum(1), torch.ones(48))  # a constant column stays constant
    # reflect-101 at the top row: taps at -2..2 read rows 2, 1, 0, 1, 2
    assert torch.allclose(_blur_matrix(5)[0, :3], torch.tensor([6, 8, 2.0]) / 16)
    # an impulse in the middle of a column spreads as the kernel itself
    col = torch.zeros(1, 3, 48, 320)
    col[..., 24, :] = 160.0
    k = torch.full((1, 320), 9)
    out = _blur(col, k)
    assert torch.allclose(out[0, 0, 20:29, 0], (160 * _gaussian(9)).round().float())


def test_blur_levels_follow_the_official_draw():
    k = _column_kernels(2000, torch.Generator().manual_seed(0))
    assert k.shape == (2000, 320) and bool((k % 2 == 1).all())
    assert int(k.min()) >= 5 and int(k.max()) <= 13
    starts = k[:, ::32].flatten()  # each strip's own level, in {5, 9, 13}
    freq = torch.stack([(starts == v).float().mean() for v in (5, 9, 13)])
    # randint(1, randint(2, 5)): P(1) = 11/18, P(2) = 5/18, P(3) = 2/18
    assert torch.allclose(freq, torch.tensor([11, 5, 2.0]) / 18, atol=0.01)
    assert bool((k[:, -32:] == k[:, -32:-31]).all())  # the last strip keeps one level


def test_noise_wraps_like_uint8():
    # the official canvas += np.uint8(noise) wraps: white background + positive noise turns
    # dark (salt); with no wrap every background pixel would stay >= 235 / 255
    x, _, _ = phone_numbers(30, {"black": (0.0, 0.0, 0.0)}, seed=0)
    top = x[..., :2, :]  # above the glyphs: background only (the blur reaches 6 rows)
    assert float((top < 0.5).float().mean()) > 0.01


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="pool"):
        phone_numbers(2, TRAIN_COLORS, pool=5)
    with pytest.raises(ValueError, match="n"):
        phone_numbers(0, TRAIN_COLORS)
    with pytest.raises(ValueError, match="colors"):
        phone_numbers(2, {})
    colors = dict(TRAIN_COLORS)
    phone_numbers(2, colors, seed=0)
    assert colors == TRAIN_COLORS  # the caller's dict untouched


def test_testbed_reads_separate_digits_on_printed_pages():
    # the codebook claim's control reads the data: on printed pages a labelled kNN names
    # the digits; on pages whose fragments carry no digit (shuffled pixels per fragment, a
    # fresh permutation each) it cannot
    from iclr25.v3.claim import testbed_reads

    test = phone_numbers(30, TRAIN_COLORS, seed=11, pool=4)
    ood = phone_numbers(30, OOD_COLORS, seed=12, pool=4)
    reads = testbed_reads(test, ood, 30, 0)
    assert reads["knn_raw"] >= 0.9
    x = test[0].reshape(300, -1)
    gen = torch.Generator().manual_seed(0)
    scrambled = torch.stack([r[torch.randperm(r.numel(), generator=gen)] for r in x])
    bad = (scrambled.reshape(test[0].shape), *test[1:])
    assert testbed_reads(bad, ood, 30, 0)["knn_raw"] < 0.3
    assert 0 <= reads["kmeans"] <= 1 and np.isfinite(reads["km_ood"])
