"""Issue 55: ``enhance`` checks its output against the input and the classical pipelines."""

import warnings

import pytest
import torch
from torch import nn

pytest.importorskip("skimage")

from typer.testing import CliRunner  # noqa: E402

from iclr25._train import seeded_init  # noqa: E402
from iclr25.datasets.images import load_folder, load_image, psnr, save_image  # noqa: E402
from iclr25.lowlight import (  # noqa: E402
    RestorationWarning,
    RetinexEnhancer,
    ZeroReferenceEnhancer,
    enhance,
)
from iclr25.lowlight.cli import app  # noqa: E402
from iclr25.lowlight.enhancement import CLASSICAL  # noqa: E402


@pytest.fixture(scope="module")
def clean():
    return load_image("chelsea", max_side=64)


@pytest.fixture(scope="module")
def net():
    with seeded_init(0):
        return RetinexEnhancer(width=4, l_width=3, lc_width=2)


class Untouchable(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        raise AssertionError("the model ran before the arguments were checked")


def test_classical_fallback_returns_the_classical_output_where_the_check_passes_it(net, clean):
    """A dark photo: the classical result (the best pipeline by the same measure) beats ours
    and the input by the margin, so "classical" returns it. A well-lit photo is not judged
    (h68fallback: main returned the best pipeline there too, though the check cannot tell
    brightening a well-lit photo from burning it): "classical" returns the input, as
    "input" does."""
    from iclr25._guard import lowlight_psnr

    dark = (0.1 * clean ** 2).clamp(0, 1)
    x = dark.clone()
    with pytest.warns(RestorationWarning, match=r"tones, colour cast and noise.*ours "
                      r".*classical (gamma|CLAHE).*returned the classical (gamma|CLAHE) result "
                      r"\(fallback='classical': it scores above ours and beats the input by 1 dB"):
        out = enhance(net, x, fallback="classical")
    scores = {k: float(lowlight_psnr(f(dark)[None], dark[None])) for k, f in CLASSICAL.items()}
    assert torch.equal(out, CLASSICAL[max(scores, key=scores.get)](dark))
    assert torch.equal(x, dark)                   # the input is not modified
    with pytest.warns(RestorationWarning, match=r"is not judged.*returned the input unchanged "
                      r"\(fallback='classical': the image is not judged"):
        assert torch.equal(enhance(net, clean, fallback="classical"), clean)
    with pytest.warns(RestorationWarning, match="returned ours"):
        assert torch.equal(enhance(net, clean, fallback="none"), enhance(net, clean,
                                                                         check=False))


class Brighten(nn.Module):
    """A stand-in enhancer, x ** 0.4: better than a dark input, burns a well-lit one."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        from types import SimpleNamespace
        return SimpleNamespace(enhanced=x.clamp(min=0) ** 0.4 + self.w)


def test_the_default_returns_the_input_where_ours_scores_below_it(clean):
    """Issue 68: with no fallback named, enhance (API, estimator, as DCPT's restore) returns
    the input wherever the check scores ours below it, ours elsewhere; check=False gives the
    plain output (no fallback to apply)."""
    from iclr25._guard import lowlight_psnr

    net = Brighten()
    dark = (0.08 * clean ** 2).clamp(0, 1)
    x = torch.stack([clean, dark])                # well-lit: ours is worse; dark: not
    plain = enhance(net, x, check=False)
    s_ours, s_in = lowlight_psnr(plain, x), lowlight_psnr(x, x)
    below = (s_ours < s_in).tolist()
    assert below == [True, False]                 # the case the default must handle
    with pytest.warns(RestorationWarning, match="image 0.*returned the input unchanged"):
        out = enhance(net, x)
    assert torch.equal(out[0], clean) and torch.equal(out[1], plain[1])
    est = ZeroReferenceEnhancer(width=4)
    est.model_ = net
    with pytest.warns(RestorationWarning, match="returned the input unchanged"):
        assert torch.equal(est.transform(clean), clean)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.equal(enhance(net, clean, check=False), plain[0])


def test_reference_picks_the_classical_pipeline_by_psnr(net, clean):
    dark = (0.1 * clean ** 2).clamp(0, 1)
    with pytest.warns(RestorationWarning, match="PSNR against the reference"):
        out = enhance(net, dark, reference=clean, fallback="classical")
    scores = {k: psnr(f(dark), clean) for k, f in CLASSICAL.items()}
    assert torch.equal(out, CLASSICAL[max(scores, key=scores.get)](dark))


def test_input_fallback_and_estimator(net, clean):
    with pytest.warns(RestorationWarning):
        assert torch.equal(enhance(net, clean, fallback="input"), clean)
    est = ZeroReferenceEnhancer(width=4, steps=1, crop=16, batch_size=1).fit(clean)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.transform(clean, check=False)


@pytest.mark.parametrize("kw, match", [
    (dict(fallback="gamma"), "fallback"),
    (dict(fallback="classical", check=False), "fallback"),
    (dict(check=1), "check"),
    (dict(reference=torch.rand(3, 8, 8)), "reference"),
    (dict(margin=-1), "margin"),
    (dict(margin=float("inf")), "margin"),
    (dict(margin=[1.0]), "margin"),
    (dict(margin=0.5, check=False), "margin"),
])
def test_bad_arguments_before_any_work(clean, kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        enhance(Untouchable(), clean, **kw)


class Fixed(nn.Module):
    """A stand-in enhancer that returns a fixed image."""

    def __init__(self, image):
        super().__init__()
        self.register_buffer("image", image)
        self.w = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        from types import SimpleNamespace
        return SimpleNamespace(enhanced=self.image.expand_as(x) + self.w)


def test_margin_known_answers(clean):
    """Issue 68, round 3: by default (no reference: 1 dB) ours is returned only where the
    check scores it at least 1 dB above the input, else the input; margin= moves the line;
    with a reference the margin is 0 (never below the input's PSNR)."""
    from iclr25._guard import lowlight_psnr

    dark = (0.1 * clean ** 2).clamp(0, 1)
    good = CLASSICAL["gamma"](dark)

    def gain(o):
        return float(lowlight_psnr(o[None], dark[None]) - lowlight_psnr(dark[None], dark[None]))
    assert gain(good) > 1
    # the blend towards the gamma result whose score lies a fraction of a dB above the input
    blends = [dark + w * (good - dark) for w in (0.005, 0.01, 0.02, 0.04, 0.08)]
    near = next(o for o in blends if 0 < gain(o) < 1)
    with pytest.warns(RestorationWarning, match="does not beat the input by the margin 1 dB"):
        assert torch.equal(enhance(Fixed(near), dark), dark)
    with pytest.warns(RestorationWarning, match="does not beat the input by the margin"):
        est = ZeroReferenceEnhancer(width=4)
        est.model_ = Fixed(good)
        assert torch.equal(est.transform(dark, margin=gain(good) + 0.1), dark)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                # below the classical result: warns
        assert torch.equal(enhance(Fixed(near), dark, margin=0.0), near)
        assert torch.equal(est.transform(dark, margin=gain(good) - 0.1), good)
        assert torch.equal(enhance(Fixed(good), dark, reference=clean), good)  # 0 dB margin
    worse = (dark * 0.5)                               # darker still: below the input
    with pytest.warns(RestorationWarning, match="returned the input"):
        assert torch.equal(enhance(Fixed(worse), dark, reference=clean), dark)


def test_cli_fallback(tmp_path, net, clean):
    est = ZeroReferenceEnhancer(width=4, steps=1, crop=16, batch_size=1).fit(clean)
    model = tmp_path / "m.pt"
    est.save(model)
    src = tmp_path / "c.png"
    save_image(clean, src)
    x = load_folder(src)["c.png"]
    for extra in ([], ["--fallback", "input"]):   # the default is input (issue 68)
        r = CliRunner().invoke(app, ["enhance", str(model), str(src), str(tmp_path / "o.png"),
                                     *extra])
        assert r.exit_code == 0, r.output
        assert "warning: c.png:" in r.output and "returned the input" in r.output
        # in the command line's words, not the API's (issue 68 walk)
        assert "(--fallback input; --fallback none returns ours)" in r.output
        assert "fallback='" not in r.output
        assert "lowlight.enhance" not in r.output
        assert (load_folder(tmp_path / "o.png")["o.png"] - x).abs().max() <= 0.5 / 255 + 1e-6
    r = CliRunner().invoke(app, ["enhance", str(model), str(src), str(tmp_path / "n.png"),
                                 "--fallback", "none"])
    assert r.exit_code == 0 and "returned ours" in r.output, r.output
    assert "--fallback input returns the input" in r.output, r.output
    assert (load_folder(tmp_path / "n.png")["n.png"] - x).abs().max() > 2 / 255
    for args, needle in ((["--fallback", "gamma"], "--fallback"),
                         (["--fallback", "input", "--no-check"], "--fallback"),
                         (["--reference", str(tmp_path / "nope.png")], "--reference"),
                         (["--margin", "-1"], "--margin"),
                         (["--margin", "1", "--no-check"], "--margin")):
        r = CliRunner().invoke(app, ["enhance", str(model), str(src), str(tmp_path / "p.png"),
                                     *args])
        lines = r.output.strip().splitlines()
        assert r.exit_code == 2 and len(lines) == 1 and needle in lines[0], r.output


def _phantom(side=64):
    """scikit-image's Shepp-Logan phantom (grey objects on black), side×side, 3 channels."""
    import skimage.data
    a = torch.from_numpy(skimage.data.shepp_logan_phantom())[None, None].float()
    return torch.nn.functional.interpolate(a, size=(side, side), mode="area")[0].expand(
        3, -1, -1).clone()


class GammaToMean(nn.Module):
    """A stand-in enhancer: the gamma curve to mean 0.5 (what a zero-reference network
    learns to do to a dark photo)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        from types import SimpleNamespace
        return SimpleNamespace(enhanced=CLASSICAL["gamma"](x) + self.w)


@pytest.mark.parametrize("scene", ["hubble_deep_field", "phantom"])
def test_a_darkened_dark_scene_is_not_judged_and_the_default_keeps_it(scene):
    """Issue 68, round 6: a star field or objects on black, darkened, is a low-key scene,
    not an under-exposed typical photo: the check gives no verdict and the default returns
    the input unchanged although the exposure measure scores the brightened output higher
    (the brightening is worse by the reference). At 64 px the star field at seed 1 gets
    the noise floor's reason instead (h68ll9: its noise-held log-average sits at 0.47 of
    its highlights, just above middle grey's 0.461); no verdict either way."""
    from iclr25._guard import lowlight_psnr, not_underexposed
    from iclr25.datasets.images import degrade

    clean = _phantom() if scene == "phantom" else load_image(scene, max_side=64)
    net = GammaToMean()
    for seed in range(3):
        dark = degrade(clean, "low_light", seed=seed)
        why = not_underexposed(dark[None])[0]
        assert "low-key scene" in why or (scene, seed) == ("hubble_deep_field", 1), why
        plain = enhance(net, dark, check=False)
        assert lowlight_psnr(plain[None], dark[None]) > lowlight_psnr(dark[None], dark[None]) + 1
        assert psnr(plain, clean) < psnr(dark, clean)     # what the default must not return
        x = dark.clone()
        with pytest.warns(RestorationWarning, match="not judged, (a low-key scene|most of it "
                                                    "below the noise floor).*returned "
                                                    "the input unchanged"):
            assert torch.equal(enhance(net, x), dark)
        assert torch.equal(x, dark)
        with pytest.warns(RestorationWarning, match="returned ours"):
            assert torch.equal(enhance(net, dark, fallback="none"), plain)


def _sunk(scene, seed):
    """``scene`` darkened as the issue-68 walk darkened its photos, 0.25·x^1.8 plus
    Gaussian noise (σ 0.012), clipped to [0, 1]."""
    g = torch.Generator().manual_seed(seed)
    return (0.25 * scene ** 1.8 + 0.012 * torch.randn(scene.shape, generator=g)).clamp(0, 1)


@pytest.mark.parametrize("scene", ["black", "dark"])
def test_a_frame_sunk_below_its_noise_floor_is_not_judged_and_the_default_keeps_it(scene,
                                                                                  clean):
    """Issue 68 (h68ll8): an all-black frame (the walk's corner of retina: input 40.3 dB,
    the network's output 9.2 dB) and a dark scene that is not low-key (the walk's rocket,
    14.0 -> 12.5 dB; here chelsea at 0.3 of its light), darkened until most of the frame
    lies under the limit of detection (3 σ): their tones are the noise's, the exposure
    measure scores a brightening above the input, and the reference finds it worse. No
    verdict: the default returns the input with a warning naming why."""
    from iclr25._guard import lowlight_psnr, not_underexposed, scene_key

    J = torch.zeros_like(clean) if scene == "black" else 0.3 * clean
    net = GammaToMean()
    for seed in range(3):
        dark = _sunk(J, seed)
        assert float(scene_key(dark[None])) >= 0             # not a low-key scene
        assert "below the noise floor" in not_underexposed(dark[None])[0]
        plain = enhance(net, dark, check=False)
        assert lowlight_psnr(plain[None], dark[None]) > lowlight_psnr(dark[None], dark[None]) + 1
        assert psnr(plain, J) < psnr(dark, J)                # what the default must not return
        x = dark.clone()
        with pytest.warns(RestorationWarning, match="not judged, most of it below the noise "
                                                    "floor.*returned the input unchanged"):
            assert torch.equal(enhance(net, x), dark)
        assert torch.equal(x, dark)


def _exposed(scene, seed, k=0.12, photons=60.0, read=0.004):
    """``scene`` photographed as issue 68's walk 5 did: the exposure scaled by ``k``,
    Poisson shot noise (``photons`` at white before the exposure), Gaussian read noise,
    clipped and written to 8 bits."""
    g = torch.Generator().manual_seed(seed)
    d = torch.poisson(scene.double() * k * photons, generator=g) / photons
    d = d + read * torch.randn(d.shape, generator=g, dtype=d.dtype)
    return ((d.clamp(0, 1) * 255).round() / 255).float()


def test_a_realistic_dark_photo_gets_ours_at_the_default():
    """Issue 68, walk 5: a typical photo at 12% exposure with shot noise (7 photons at
    white) was kept unchanged, its median under 3 σ of the frame's noise, which photon
    noise sets far above black's. Judged by black's noise, the brightened output is
    returned, and it is better by the reference."""
    from iclr25._guard import not_underexposed

    J = load_image("coffee", max_side=128)
    net = GammaToMean()
    for seed in range(3):
        dark = _exposed(J, seed)
        assert not_underexposed(dark[None]) == [None]
        plain = enhance(net, dark, check=False)
        assert psnr(plain, J) > psnr(dark, J) + 3
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")            # may score below the classical result
            assert torch.equal(enhance(net, dark), plain)


def test_a_black_frame_photographed_so_is_still_kept_with_a_warning():
    """The same camera on black (shot noise has nothing to count; read noise, 8 bits): no
    verdict, the input returned unchanged with a warning naming the noise floor."""
    dark = _exposed(torch.zeros(3, 48, 64), 0, read=0.01)
    with pytest.warns(RestorationWarning, match="not judged, most of it below the noise "
                                                "floor.*returned the input unchanged"):
        assert torch.equal(enhance(GammaToMean(), dark), dark)


def test_a_darkened_typical_photo_is_still_enhanced(clean):
    """The rule leaves an under-exposed typical photo to the measure: chelsea darkened by
    the library's low light is judged, and the brightened output is returned (seeds 0 and
    2; seed 1 sinks half of it under the noise floor, median luma 0.026 <= 3σ = 0.028,
    and gets no verdict, as a frame sunk below its noise floor does (above))."""
    from iclr25._guard import not_underexposed
    from iclr25.datasets.images import degrade

    net = Brighten()
    for seed in (0, 2):
        dark = degrade(clean, "low_light", seed=seed)
        assert not_underexposed(dark[None]) == [None]
        plain = enhance(net, dark, check=False)
        assert psnr(plain, clean) > psnr(dark, clean)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")            # may score below the classical result
            assert torch.equal(enhance(net, dark), plain)


def test_a_well_lit_photo_is_not_under_exposed(clean):
    """Highlights at middle grey or above: not a low-light photo, whatever its key."""
    from iclr25._guard import MIDDLE_GREY, not_underexposed

    assert "brightest 1% already reach middle grey" in not_underexposed(clean[None])[0]
    dimmed = clean * (0.98 * MIDDLE_GREY / torch.quantile(clean.mean(0), 0.99))
    assert not_underexposed(dimmed[None]) == [None]
    with pytest.warns(RestorationWarning, match="not under-exposed"):
        assert torch.equal(enhance(Brighten(), clean), clean)
