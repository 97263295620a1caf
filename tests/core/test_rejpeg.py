"""JPEG judged by the restorer's own round trip on a re-compressed copy (issue 68,
h68rejpeg): the pseudo pair's construction, the scores' order on known restorers, and the
inputs it must not judge."""

from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pytest
import torch

Image = pytest.importorskip("PIL.Image")
skimage_data = pytest.importorskip("skimage.data")

from iclr25._dequantise import dequantise, jpeg_read  # noqa: E402
from iclr25._guard import MARGINS, RestorationWarning, guarded  # noqa: E402
from iclr25._rejpeg import (  # noqa: E402
    HARSH,
    MIN_SIDE,
    PSEUDO,
    harsher,
    not_rejpeg,
    pseudo_clean,
    pseudo_pairs,
    rejpeg_psnr,
)


def _photo() -> np.ndarray:
    """(120, 160, 3) uint8: astronaut's face and shoulder, Lanczos-reduced by 3."""
    a = skimage_data.astronaut()[:360, 40:520]
    return np.asarray(Image.fromarray(a).resize((160, 120), Image.LANCZOS))


def _jpeg(a: np.ndarray, q: int) -> np.ndarray:
    """Pillow's JPEG round trip at quality ``q``, its defaults (4:2:0)."""
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(a)).save(buf, format="JPEG", quality=q)
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB"))


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(a / 255.0).permute(2, 0, 1)


def _u8(x: torch.Tensor) -> np.ndarray:
    return (x.permute(1, 2, 0).numpy() * 255).round().astype(np.uint8)


def test_harsher_is_one_step_of_coarser_tables():
    assert [harsher(q) for q in (100, 90, 50, 10, 2, 1)] == [99, 85, 33, 7, 1, 1]


@pytest.mark.parametrize("q", [20, 50])
def test_the_pair_is_the_shifted_crop_and_its_jpeg_at_the_read_quality(q):
    # the decoded JPEG cropped by (3, 5): its grid lies at rows 5 + 8k, columns 3 + 8k
    x = _t(_jpeg(_photo(), q)[3:, 5:])
    read = jpeg_read(x)
    assert read.judged and (read.quality, read.offset) == (q, (5, 3))
    H, W = x.shape[-2:]
    idx, yt, yh = pseudo_pairs(x[None], [read], "shift")
    assert idx == [0] and yt.shape == yh.shape == (1, 3, H - 11, W - 11)
    assert torch.equal(yh[0], x[:, 9:9 + H - 11, 7:7 + W - 11].double())   # 4 past the grid
    assert torch.equal(yt[0], _t(_jpeg(_u8(yh[0]), q)))                    # Pillow at q, 4:2:0
    again = jpeg_read(yt[0])
    assert (again.quality, again.offset) == (q, (0, 0))
    _, yt_h, _ = pseudo_pairs(x[None], [read], "shift", harsh=True)
    assert jpeg_read(yt_h[0]).quality == harsher(q) < q


def test_the_half_pair_area_downsamples_the_shifted_crop():
    x = _t(_jpeg(_photo(), 40))
    read = jpeg_read(x)
    assert read.offset == (0, 0)
    yh = pseudo_clean(x, read, "half")
    assert yh.shape == (3, (120 - 11) // 2, (160 - 11) // 2)
    assert torch.allclose(yh[:, 3, 5], x[:, 4 + 6:4 + 8, 4 + 10:4 + 12].double().mean((1, 2)))


def test_the_identity_arm_scores_the_pair_itself():
    x = _t(_jpeg(_photo(), 30))[None]
    reads = [jpeg_read(x[0])]
    _, yt, yh = pseudo_pairs(x, reads, PSEUDO, HARSH)
    want = -10 * math.log10(float(((yt - yh) ** 2).mean()))
    got = float(rejpeg_psnr(lambda b: b.clamp(0, 1), x, reads, pseudo=PSEUDO, harsh=HARSH)[0])
    assert got == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("q", [15, 40])
def test_deblocking_scores_above_the_input_and_a_tint_or_blur_below(q):
    from scipy.ndimage import gaussian_filter

    x = _t(_jpeg(_photo(), q))[None]
    reads = [jpeg_read(x[0])]

    def score(f):
        return float(rejpeg_psnr(f, x, reads, pseudo=PSEUDO, harsh=HARSH)[0])

    tint = torch.tensor([0.04, 0.0, -0.04], dtype=torch.float64)[:, None, None]
    inp = score(lambda b: b.clamp(0, 1))
    assert score(dequantise) > inp
    assert score(lambda b: (b + tint).clamp(0, 1)) < inp
    assert score(lambda b: torch.from_numpy(gaussian_filter(b.numpy(), (0, 0, 2, 2)))) < inp


def test_a_never_compressed_photo_is_not_judged_and_guarded_keeps_it():
    x = _t(_photo())[None]
    why = not_rejpeg(x, [jpeg_read(x[0])])[0]
    assert why is not None and "no JPEG quantisation comb" in why
    calls = []

    def f(b):
        calls.append(tuple(b.shape))
        return b.clamp(0, 1)

    ours = (x + 0.01).clamp(0, 1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = guarded(x, ours, f, {}, measure="rejpeg", fallback="input")
    assert torch.equal(out, x)
    assert calls == []        # no pair: the restorer is not run on a re-compressed copy
    msg = [str(m.message) for m in w if issubclass(m.category, RestorationWarning)]
    assert len(msg) == 1 and "is not judged" in msg[0]


def test_a_jpeg_too_small_for_a_pair_is_not_judged():
    x = _t(_jpeg(_photo()[:MIN_SIDE - 1, :40], 30))[None]
    assert "too small" in not_rejpeg(x, [jpeg_read(x[0])])[0]
    assert math.isnan(float(rejpeg_psnr(lambda b: b, x, [jpeg_read(x[0])], pseudo="shift")[0]))
    with pytest.warns(RestorationWarning, match="is not judged, it is under 19 px"):
        assert torch.equal(guarded(x, dequantise(x), dequantise, {}, measure="rejpeg",
                                   fallback="input"), x)


@pytest.mark.parametrize("measure", ["rejpeg", "quantisation", "quantisation_rgb"])
def test_the_check_reads_each_jpeg_once(measure, monkeypatch):
    # the reasons an input is not judged come from the check's own read: main read each
    # input twice (once to score, once again for the reasons)
    import iclr25._dequantise as dq

    x = torch.stack([_t(_jpeg(_photo(), 30)), _t(_photo())])
    ours, calls, read = dequantise(x), [], dq._read
    monkeypatch.setattr(dq, "_read", lambda y, clip: calls.append(y.shape) or read(y, clip))
    with pytest.warns(RestorationWarning, match="image 1 is not judged, its DCT shows no JPEG"):
        guarded(x, ours, dequantise, {}, measure=measure, fallback="input")
    # the restorer's own reads are of the smaller pseudo pairs
    assert calls.count(tuple(x.shape[-2:])) == len(x)


def test_guarded_returns_the_deblocked_jpeg_and_keeps_a_tinted_one():
    x = _t(_jpeg(_photo(), 15))[None]
    tint = torch.tensor([0.04, 0.0, -0.04], dtype=x.dtype)[:, None, None]

    def tinted(b):
        return (b + tint).clamp(0, 1)

    with warnings.catch_warnings():
        warnings.simplefilter("error", RestorationWarning)   # ours clears 0 dB: no warning
        ours = dequantise(x)
        assert torch.equal(guarded(x, ours, dequantise, {}, measure="rejpeg",
                                   fallback="input", margin=0.0), ours)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RestorationWarning)
        kept = guarded(x, tinted(x), tinted, {}, measure="rejpeg", fallback="input")
    assert torch.equal(kept, x)
    assert MARGINS["rejpeg"] == 0.5


def test_a_restorer_giving_nan_scores_nan_and_guarded_keeps_the_input():
    # the merge scored a NaN output +inf (as the blur round trip did before hreview11)
    x = _t(_jpeg(_photo(), 30))[None]
    reads = [jpeg_read(x[0])]

    def one_nan(b):
        b = b.clone()
        b[..., 0, 0] = float("nan")
        return b

    assert math.isnan(float(rejpeg_psnr(one_nan, x, reads, pseudo=PSEUDO, harsh=HARSH)[0]))
    with pytest.warns(RestorationWarning, match="not estimable"):
        kept = guarded(x, one_nan(x), one_nan, {}, measure="rejpeg", fallback="input")
    assert torch.equal(kept, x)


def test_bad_pairs_are_refused_by_name():
    x = _t(_jpeg(_photo(), 30))
    with pytest.raises(ValueError, match="x must be"):
        pseudo_pairs(x, [jpeg_read(x)], "shift")
    with pytest.raises(ValueError, match="reads must"):
        pseudo_pairs(x[None], [], "shift")
    with pytest.raises(ValueError, match="pseudo must"):
        pseudo_clean(x, jpeg_read(x), "blur")
