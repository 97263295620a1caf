"""The paper's claims at laptop scale: joint zero-reference denoising + enhancement.

The paper trains its Retinex network with a frequency prior on dark images only and beats
Zero-DCE by +4.94 dB on LOLv1 (19.80 vs 14.86, README tab1). Here: dark versions of
scikit-image's bundled RGB photos (all but ``TEST_IMAGES``) made with ``degrade(...,
"low_light")`` (about 12 photons per pixel, so noise is strong), each arm trained on the same
crops of the dark images only; the clean images J only score. Arms: the full method, Zero-DCE
(loss4 only) and the no-pairing ablation (loss1 off, D̃2 = D2). Scored on the 3 whole test
images. On this machine a step of the full model costs about a second on one thread, so the
issue's 300 iterations are cut alike for every arm (see the settings).

Measured at this budget (full: 3 seeds × 30 steps): the Retinex network is under-trained —
its residual heads and the 500-weighted projection term keep X close to the dark input, so
its output stays dark (mean 0.06 vs 0.36 for J) while Zero-DCE's curves brighten within a
few steps. Both claims are reported as failing with their values; the thresholds were not
moved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from iclr25.claims import Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.datasets.images import RGB_IMAGES, TEST_IMAGES, degrade, load_image, psnr, ssim
from iclr25.lowlight.baselines import clahe, gamma_nl_means
from iclr25.lowlight.training import build_model, enhance, noise_to_signal, train_enhancer

TRAIN_IMAGES = tuple(n for n in RGB_IMAGES if n not in TEST_IMAGES)


@dataclass(frozen=True)
class LowLight(Setting):
    seeds: tuple[int, ...]      # arms share each seed: same init seed, same crops
    steps: int                  # issue: 300; cut alike (~1 s/step here) to fit < 5 min
    crop: int                   # issue: 64 full, 32 quick
    max_side: int = 256         # images shrunk to this (issue)
    test_side: int = 256        # test images scored whole at this size
    batch_size: int = 2         # issue
    lr: float = 5e-4            # issue: Adam 5e-4 (short schedule)
    width: int = 16             # RetinexEnhancer(width=16, l_width=12, lc_width=16)


@dataclass
class LowLightEvidence(Evidence):
    gain: float = scalar("dB", "mean PSNR(full) - PSNR(Zero-DCE) on the test images")
    nsr_ratio: float = scalar("", "noise_to_signal(full) / noise_to_signal(ablation)")
    psnr_full: float = scalar("dB")
    psnr_zero_dce: float = scalar("dB")
    psnr_ablation: float = scalar("dB")
    psnr_clahe: float = scalar("dB")
    psnr_gamma_nlm: float = scalar("dB")
    psnr_input: float = scalar("dB")
    ssim_full: float = scalar("")
    ssim_zero_dce: float = scalar("")
    brightness_full: float = scalar("", "mean of the enhanced test images")
    brightness_truth: float = scalar("", "mean of the clean test images")
    per_seed: Table = None


def _net(width: int, seed: int) -> torch.nn.Module:
    from iclr25.lowlight.networks import RetinexEnhancer

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return RetinexEnhancer(width=width, l_width=(3 * width) // 4, lc_width=width)


@experiment(quick=LowLight(seeds=(0,), steps=15, crop=32, test_side=128),
            full=LowLight(seeds=(0, 1, 2), steps=30, crop=64))
def lowlight_arms(setting: LowLight, ctx: Context) -> LowLightEvidence:
    dev = ctx.device
    clean_test = [load_image(n, max_side=setting.test_side).to(dev) for n in TEST_IMAGES]
    rows, shown = [], None
    agg: dict[str, list[float]] = {k: [] for k in
                                   ("full", "zdce", "abl", "clahe", "nlm", "in", "sf", "sz",
                                    "nsr_f", "nsr_a", "bright")}
    for seed in setting.seeds:
        base = ctx.seed * 1000 + seed
        train = [degrade(load_image(n, max_side=setting.max_side).to(dev), "low_light",
                         seed=base + i) for i, n in enumerate(TRAIN_IMAGES)]
        dark = [degrade(J, "low_light", seed=base + 100 + i) for i, J in enumerate(clean_test)]
        kw = dict(steps=setting.steps, crop=setting.crop, batch_size=setting.batch_size,
                  lr=setting.lr, seed=base)
        full = _net(setting.width, base).to(dev)
        train_enhancer(full, train, pairing=True, **kw)
        abl = _net(setting.width, base).to(dev)
        train_enhancer(abl, train, pairing=False, **kw)
        zdce = build_model("zero_dce", seed=base).to(dev)
        train_enhancer(zdce, train, **kw)
        outs = {"full": [enhance(full, y) for y in dark], "zdce": [enhance(zdce, y) for y in dark],
                "abl": [enhance(abl, y) for y in dark], "clahe": [clahe(y) for y in dark],
                "nlm": [gamma_nl_means(y) for y in dark], "in": dark}
        p = {k: float(np.mean([psnr(o, J) for o, J in zip(v, clean_test, strict=True)]))
             for k, v in outs.items()}
        for k in ("full", "zdce", "abl", "clahe", "nlm", "in"):
            agg[k].append(p[k])
        agg["sf"].append(float(np.mean([ssim(o, J) for o, J in
                                        zip(outs["full"], clean_test, strict=True)])))
        agg["sz"].append(float(np.mean([ssim(o, J) for o, J in
                                        zip(outs["zdce"], clean_test, strict=True)])))
        agg["nsr_f"].append(float(np.mean([noise_to_signal(o) for o in outs["full"]])))
        agg["nsr_a"].append(float(np.mean([noise_to_signal(o) for o in outs["abl"]])))
        agg["bright"].append(float(np.mean([float(o.mean()) for o in outs["full"]])))
        rows.append((seed, p["full"], p["zdce"], p["abl"], p["clahe"], p["nlm"], p["in"],
                     agg["nsr_f"][-1], agg["nsr_a"][-1]))
        if shown is None:
            shown = {k: v[0] for k, v in outs.items()} | {"truth": clean_test[0]}
    m = {k: float(np.mean(v)) for k, v in agg.items()}
    fig = ctx.figure("test_images", figsize=(12, 2.6))
    names = ("in", "clahe", "zdce", "abl", "full", "truth")
    titles = ("input", "CLAHE", "Zero-DCE", "no pairing", "full", "truth J")
    for ax, k, t in zip(fig.subplots(1, len(names)), names, titles, strict=True):
        ax.imshow(shown[k].detach().cpu().permute(1, 2, 0).clamp(0, 1).numpy())
        ax.set_title(t)
        ax.axis("off")
    fig2 = ctx.figure("psnr_bars")
    ax = fig2.subplots()
    keys = ("in", "clahe", "nlm", "zdce", "abl", "full")
    ax.bar(["input", "CLAHE", "γ+NLM", "Zero-DCE", "no pairing", "full"], [m[k] for k in keys])
    ax.set_ylabel("PSNR (dB)")
    return LowLightEvidence(
        gain=m["full"] - m["zdce"], nsr_ratio=m["nsr_f"] / m["nsr_a"], psnr_full=m["full"],
        psnr_zero_dce=m["zdce"], psnr_ablation=m["abl"], psnr_clahe=m["clahe"],
        psnr_gamma_nlm=m["nlm"], psnr_input=m["in"], ssim_full=m["sf"], ssim_zero_dce=m["sz"],
        brightness_full=m["bright"],
        brightness_truth=float(np.mean([float(J.mean()) for J in clean_test])),
        per_seed=Table("per seed", ("seed", "full", "zero_dce", "ablation", "clahe",
                                    "gamma_nlm", "input", "nsr_full", "nsr_ablation"), rows))


@claim("lowlight.beats_zero_dce", experiment=lowlight_arms,
       sentence="Without references, the joint network restores noisy low-light images better "
                "than Zero-DCE trained on the same images.",
       metric="PSNR(full) - PSNR(Zero-DCE) on the held-out test images", unit="dB",
       paper_figure="+4.94 dB LOLv1 (19.80 vs 14.86), +2.16 LOLv2-real, +3.86 SICE "
                    "(README tab1)",
       threshold=1.0, direction=">=")
def beats_zero_dce(ev: LowLightEvidence) -> float:
    return ev.gain


@claim("lowlight.pairing_denoises", experiment=lowlight_arms,
       sentence="Training on paired sub-images removes noise.",
       metric="noise_to_signal(full) / noise_to_signal(no-pairing ablation)", unit="ratio",
       paper_figure="nearest: SIDD BRISQUE 2.555 vs PairLIE 3.168 (README tab2; unverified)",
       threshold=0.75, direction="<=")
def pairing_denoises(ev: LowLightEvidence) -> float:
    return ev.nsr_ratio
