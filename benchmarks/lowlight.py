"""Benchmark: zero-reference low-light enhancement vs classical pipelines and Zero-DCE.

Held-out synthetic low light (``degrade(..., "low_light")``) on whole test images at 256² and
512² (``--quick``: 128² and 256², fewer training steps). Peers, same inputs, same process:
CLAHE (``skimage.exposure.equalize_adapthist``), gamma to mean 0.5 + ``denoise_nl_means``,
Zero-DCE and the Retinex network (both trained here on dark crops of the other images).
TARGET (issue 15): PSNR >= best classical pipeline + 1.0 dB; at 512² as fast as gamma +
NL-means. Prints PSNR, SSIM, noise_to_signal, seconds per image and peak RSS growth.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/lowlight.py --quick
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch
import torch.nn.functional as F

from iclr25.datasets.images import TEST_IMAGES, degrade, load_image, psnr, ssim
from iclr25.lowlight import enhance, noise_to_signal, train_enhancer
from iclr25.lowlight.baselines import clahe, gamma_nl_means
from iclr25.lowlight.claim import TRAIN_IMAGES, _net
from iclr25.lowlight.training import build_model


def _square(name: str, side: int) -> torch.Tensor:
    x = load_image(name)
    s = min(x.shape[1:])
    x = x[:, :s, :s]
    return F.interpolate(x[None], size=(side, side), mode="bilinear", antialias=True)[0].clamp(
        0, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--steps", type=int, default=None)
    args = ap.parse_args()
    sides = (128, 256) if args.quick else (256, 512)
    steps = args.steps or (20 if args.quick else 200)
    torch.set_num_threads(1)
    train = [degrade(load_image(n, max_side=256), "low_light", seed=i)
             for i, n in enumerate(TRAIN_IMAGES)]
    kw = dict(steps=steps, crop=64, batch_size=2, lr=5e-4, seed=0)
    t0 = time.perf_counter()
    ours = _net(16, 0)
    train_enhancer(ours, train, **kw)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    zdce = build_model("zero_dce", seed=0)
    train_enhancer(zdce, train, **kw)
    t_zdce = time.perf_counter() - t0
    print(f"training: {steps} steps, ours {t_ours:.1f} s, Zero-DCE {t_zdce:.1f} s")
    methods = {"CLAHE": clahe, "gamma+NLM": gamma_nl_means,
               "Zero-DCE": lambda y: enhance(zdce, y), "ours": lambda y: enhance(ours, y)}
    print(f"{'side':>5} {'method':>10} {'PSNR':>7} {'SSIM':>6} {'NSR':>7} {'s/img':>7} "
          f"{'ΔRSS MB':>8}")
    summary = {}
    for side in sides:
        clean = [_square(n, side) for n in TEST_IMAGES]
        dark = [degrade(J, "low_light", seed=100 + i) for i, J in enumerate(clean)]
        for name, fn in methods.items():
            rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            t0 = time.perf_counter()
            outs = [fn(y) for y in dark]
            dt = (time.perf_counter() - t0) / len(dark)
            drss = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
            p = float(np.mean([psnr(o, J) for o, J in zip(outs, clean, strict=True)]))
            s = float(np.mean([ssim(o, J) for o, J in zip(outs, clean, strict=True)]))
            n = float(np.mean([noise_to_signal(o) for o in outs]))
            summary[side, name] = (p, dt)
            print(f"{side:>5} {name:>10} {p:7.2f} {s:6.3f} {n:7.3f} {dt:7.3f} {drss:8.1f}")
    big = sides[-1]
    best = max(summary[big, k][0] for k in ("CLAHE", "gamma+NLM"))
    p_ours, t_big = summary[big, "ours"]
    print(f"\nPSNR(ours) - best classical at {big}²: {p_ours - best:+.2f} dB (target >= +1.0)")
    print(f"time(ours) / time(gamma+NLM) at {big}²: {t_big / summary[big, 'gamma+NLM'][1]:.2f} "
          f"(target <= 1)")
    t_small = summary[sides[0], "ours"][1]
    print(f"time growth ours {sides[0]}²->{big}²: ×{t_big / t_small:.2f} "
          f"(pixels ×{(big / sides[0]) ** 2:.0f}; linear in H·W expected)")


if __name__ == "__main__":
    main()
