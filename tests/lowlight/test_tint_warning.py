"""Issue 68, h68tint: a returned output whose colour balance turned from the input's by more
than one 8-bit level (``iclr25._guard.TINT_CAST``) is warned of as a tint, wherever the
exposure measure judges (``lowlight.enhance`` and DCPT's ``restore`` for low light); the
decision of what is returned stays the exposure check's."""

import math
import warnings

import pytest
import torch
from torch import nn

pytest.importorskip("skimage")

from iclr25._guard import colour_cast  # noqa: E402
from iclr25.datasets.images import load_image  # noqa: E402
from iclr25.dcpt import restore  # noqa: E402
from iclr25.lowlight import RestorationWarning, enhance  # noqa: E402

#: A tint: a cast above one 8-bit level (the benchmark's definition; ``_guard.TINT_CAST``).
TINT_CAST = 1 / 255
#: A cool tint of a brightening: red down, blue up (each channel's gain).
TINT = (0.94, 1.0, 1.06)


@pytest.fixture(scope="module")
def grey():
    """A dark grey photo (camera, its three channels equal) and its clean version."""
    clean = load_image("camera", max_side=64)
    clean = clean.mean(0, keepdim=True).expand(3, -1, -1).contiguous()
    return (0.1 * clean ** 2).clamp(0, 1), clean


def brighten(x: torch.Tensor, gains=(1.0, 1.0, 1.0)) -> torch.Tensor:
    """x ** 0.4 (better than a dark input), each channel times its gain."""
    return (x.clamp(min=0) ** 0.4 * torch.tensor(gains, dtype=x.dtype)[:, None, None]).clamp(0, 1)


class Enhancer(nn.Module):
    """lowlight's model interface (``.enhanced``) around :func:`brighten`."""

    def __init__(self, gains=(1.0, 1.0, 1.0)):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))
        self.gains = gains

    def forward(self, x):
        from types import SimpleNamespace
        return SimpleNamespace(enhanced=torch.stack([brighten(b, self.gains) for b in x]))


class Restorer(Enhancer):
    """DCPT's model interface (a tensor) around :func:`brighten`."""

    def forward(self, x):
        return super().forward(x).enhanced


def caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(m.message) for m in w]


def test_a_tinted_output_is_warned_of_as_a_tint_by_how_much_and_against_what(grey):
    x, _ = grey
    plain = brighten(x, TINT)
    cast = float(colour_cast(plain[None], x[None]))
    assert cast > TINT_CAST                              # the case the warning must name
    out, msgs = caught(lambda: enhance(Enhancer(TINT), x))
    assert torch.equal(out, plain)                      # the check's decision: ours
    tint = [m for m in msgs if "tinted" in m]
    assert len(tint) == 1, msgs
    assert f"colour balance turned {cast:.4f} from the input's" in tint[0]
    assert f"a tint is a cast above {TINT_CAST:.4f}, one 8-bit level" in tint[0]
    assert "the input is grey, the output is not" in tint[0]
    # what the user can do: the classical result passes the check and is grey; the warning
    # names how to get it once and the tint part says it is untinted (walk 14: named twice)
    assert tint[0].count("fallback='classical' returns the classical CLAHE result") == 1
    assert tint[0].endswith("the classical CLAHE result is not tinted (cast 0.0000)")


def test_the_threshold_is_one_8_bit_level():
    from iclr25 import _guard

    assert _guard.TINT_CAST == TINT_CAST


def test_a_tint_alone_is_warned_of_with_the_margin_that_keeps_the_input(grey):
    """Ours beats the input and there is no classical result: the tint is the only warning,
    and it names the margin above which the default keeps the input."""
    from iclr25._guard import guarded, lowlight_psnr

    x, _ = grey
    ours = brighten(x, TINT)[None]
    gain = float(lowlight_psnr(ours, x[None]) - lowlight_psnr(x[None], x[None]))
    with pytest.warns(RestorationWarning) as w:
        out = guarded(x[None], ours, lambda b: b, {}, measure="exposure", fallback="input",
                      category=RestorationWarning)
    assert torch.equal(out, ours) and len(w) == 1
    assert str(w[0].message).startswith("restore: the output is tinted: its colour balance")
    assert str(w[0].message).endswith(f"fallback='input' with margin= above "
                                      f"{math.ceil(gain * 100) / 100:.2f} dB "
                                      "returns the input unchanged")


def test_the_same_restorer_without_the_tint_is_not_warned_of_a_tint(grey):
    x, _ = grey
    out, msgs = caught(lambda: enhance(Enhancer(), x))
    assert float(colour_cast(out[None], x[None])) <= TINT_CAST
    assert not any("tint" in m for m in msgs), msgs


def test_a_kept_input_is_not_warned_of_a_tint(grey):
    """A well-lit grey photo is not judged: the default keeps the input, which has no cast
    against itself, so no tint is named; fallback="none" returns the tinted output and names
    it, with the fallback that returns the input."""
    _, clean = grey
    out, msgs = caught(lambda: enhance(Enhancer(TINT), clean))
    assert torch.equal(out, clean) and msgs
    assert not any("tint" in m for m in msgs), msgs
    out, msgs = caught(lambda: enhance(Enhancer(TINT), clean, fallback="none"))
    assert torch.equal(out, brighten(clean, TINT))
    assert any("is tinted" in m and "fallback='classical' or fallback='input' returns the input;"
               in m for m in msgs), msgs


def test_dcpt_low_light_warns_of_a_tint_too(grey):
    x, _ = grey
    out, msgs = caught(lambda: restore(Restorer(TINT), x, degradation="low_light"))
    cast = float(colour_cast(out[None], x[None]))
    assert cast > TINT_CAST
    assert any(m.startswith("dcpt.restore") and f"turned {cast:.4f}" in m for m in msgs), msgs
    _, msgs = caught(lambda: restore(Restorer(), x, degradation="low_light"))
    assert not any("tint" in m for m in msgs), msgs


def test_only_the_exposure_measure_warns_of_a_tint(grey):
    """With a reference the PSNR judges (its cast counted in full): no tint warning."""
    x, clean = grey
    _, msgs = caught(lambda: enhance(Enhancer(TINT), x, reference=clean, fallback="none"))
    assert not any("tint" in m for m in msgs), msgs


def test_a_returned_classical_result_that_is_tinted_is_named_in_plain_words(grey):
    """fallback="classical" returns the classical result where ours scores below it; where
    that result is tinted, the warning named it "the returned the classical gamma result"
    (hreview12)."""
    from iclr25._guard import guarded

    x, _ = grey
    ours = brighten(x[None] ** 2, (1.0, 1.0, 1.0))          # barely brighter: below gamma
    cls = {"gamma": lambda b: torch.stack([brighten(i, TINT) for i in b])}
    out, msgs = caught(lambda: guarded(x[None], ours, lambda b: b, cls, measure="exposure",
                                       fallback="classical"))
    assert torch.equal(out, cls["gamma"](x[None]))        # the classical result returned
    assert len(msgs) == 1 and "the returned classical gamma result is tinted: " in msgs[0]
    assert "the returned the" not in msgs[0]


def test_the_margin_named_to_keep_the_input_does_keep_it(grey):
    """The tint warning's "margin= above G" must hold for every margin above G: G printed
    to two decimals was rounded to nearest, so a margin between G and the true gain (4.9105
    dB here, printed 4.91) still returned the tinted output (hreview12)."""
    import re

    from iclr25._guard import guarded

    x, _ = grey
    ours = brighten(x, (0.96, 1.0, 1.04))[None]

    def run(margin=None):
        return caught(lambda: guarded(x[None], ours, lambda b: b, {}, measure="exposure",
                                      fallback="input", margin=margin))

    out, msgs = run()
    assert torch.equal(out, ours) and len(msgs) == 1
    g = float(re.search(r"margin= above ([0-9.]+) dB returns the input unchanged$",
                        msgs[0]).group(1))
    out, _ = run(g + 1e-4)
    assert torch.equal(out, x[None])
