"""Benchmark: zero-reference low-light enhancement vs classical pipelines and Zero-DCE.

1. Training-step cost at the claim's size (width 16, batch 2, crop 64, one thread, CPU
   time): the step of main before issue 35 (its ``src`` taken from git) against today's,
   alternating processes, medians. TARGET (issue 35): >= 3x faster. Then the profile of
   what remains.
2. DCT cost growth: FFT vs matrix DCT at 64², 128² and 256² (``method="auto"`` picks the
   matrix up to 64 px a side).
3. Held-out synthetic low light (``degrade(..., "low_light")``) on the 3 whole test images at
   256² (``--quick``: 128², fewer steps). Peers, same inputs, same process: CLAHE, gamma to
   mean 0.5, gamma + NL-means, Zero-DCE and ours (both trained here on dark crops of the other
   images). PSNR and SSIM plain and GT-mean-matched, noise/signal, seconds per image, and a
   figure of input / each peer / ours / clean (``--figure PATH``).

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/lowlight.py --quick
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from _timing import PRODUCTS, profile_note, row

from iclr25.datasets.images import TEST_IMAGES, degrade, load_image, psnr, ssim
from iclr25.lowlight import dct_2d, enhance, noise_to_signal, train_enhancer
from iclr25.lowlight.claim import TRAIN_IMAGES, _net, gt_mean, peers
from iclr25.lowlight.training import build_model

M = "lowlight"

#: main before issue 35 (biased convs, LayerNorm on the prior, dw conv on the query).
OLD_COMMIT = "f9b91934edbe9cdea0268f2b2a8c6c63cc52ae41"

_STEP = """
import statistics, sys, time, torch
torch.set_num_threads(1)
from iclr25.lowlight.losses import zero_reference_loss
from iclr25.lowlight.networks import RetinexEnhancer
torch.manual_seed(0)
net = RetinexEnhancer(width=16, l_width=12, lc_width=16)
opt = torch.optim.Adam(net.parameters(), 5e-4)
x = torch.rand(2, 3, 64, 64, generator=torch.Generator().manual_seed(0)) * 0.2
def step():
    loss, _ = zero_reference_loss(net, x, seed=0, patch=16)
    opt.zero_grad(); loss.backward(); opt.step()
ts = []
for i in range(int(sys.argv[1]) + 2):
    t = time.process_time()
    step()
    ts.append(time.process_time() - t)
print(statistics.median(ts[2:]))
if len(sys.argv) > 2:  # then the operators' self CPU per step (benchmarks/_timing.py), JSON
    import json
    sys.path.insert(0, sys.argv[2])
    from _timing import op_times
    print(json.dumps(op_times(step, 3)))
"""


def _step_cpu(src: str, n: int, profile: bool = False) -> tuple[float, dict | None]:
    """Median CPU seconds of a training step of the package under ``src`` (``n`` steps after
    2), own process; with ``profile``, then its operators' self CPU seconds per step."""
    env = os.environ | {"PYTHONPATH": src, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _STEP, str(n)]
                         + ([str(Path(__file__).resolve().parent)] if profile else []),
                         env=env, check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    if profile:
        return float(lines[-2]), json.loads(lines[-1])
    return float(lines[-1]), None


def _conv_split(ops: dict[str, float]) -> tuple[float, float]:
    """(convolutions and matrix products, the rest) of an operator table, seconds (forward and
    backward): the 1x1 convolutions run as matrix products since issue 35."""
    conv = sum(v for k, v in ops.items() if "conv" in k or k in PRODUCTS)
    return conv, sum(ops.values()) - conv


def _step_note(old: dict[str, float], now: dict[str, float]) -> str:
    """Where the step's time went before and after issue 35: the profile and the split into
    convolutions with matrix products (the network's arithmetic) and everything else."""
    (c0, r0), (c1, r1) = _conv_split(old), _conv_split(now)
    return (f"{profile_note(now, old)}; convolutions and matrix products (forward + backward) "
            f"{c0 * 1e3:.3g} -> {c1 * 1e3:.3g} ms ({c0 / c1:.2f}x), the rest {r0 * 1e3:.3g} -> "
            f"{r1 * 1e3:.3g} ms ({r0 / r1:.2f}x), now {r1 / (c1 + r1):.0%} of the step: with "
            f"the convolutions and products free the step would be {(c0 + r0) / r1:.2f}x the old")


def step_times(reps: int) -> None:
    """Old (pre-issue-35 main, from git) vs current training step, alternating processes."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        tar = subprocess.run(["git", "-C", str(root), "archive", OLD_COMMIT, "src"],
                             check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=tar, check=True)
        ts: dict[str, list[float]] = {"old": [], "now": []}
        ops: dict[str, dict | None] = {}
        for i in range(reps):  # the last process of each side also profiles its step
            for side, src in (("old", f"{tmp}/src"), ("now", str(root / "src"))):
                t, ops[side] = _step_cpu(src, 5, i == reps - 1)
                ts[side].append(t)
    note = _step_note(ops["old"], ops["now"])
    old, now = statistics.median(ts["old"]), statistics.median(ts["now"])
    print(f"training step (width 16, batch 2, crop 64, 1 thread, CPU s, median of {reps} "
          f"alternating processes; load {os.getloadavg()[0]:.1f}): pre-issue-35 main "
          f"{old:.3f} s, now {now:.3f} s, speed-up {old / now:.2f}x")
    row(M, "training step (width 16, batch 2, crop 64)", now, old, unit="s CPU",
        peer_name="the same step on main before issue 35", target=3,
        agreement="same network, loss and batch",
        note=f"median of {reps} alternating processes; {note}")


def dct_growth() -> None:
    print(f"{'side':>5} {'fft ms':>8} {'matrix ms':>10}")
    for side in (64, 128, 256):
        x = torch.rand(2, 3, side, side)
        row = []
        for m in ("fft", "matrix"):
            ts = []
            for _ in range(5):
                t = time.perf_counter()
                dct_2d(x, method=m)
                ts.append(time.perf_counter() - t)
            row.append(1e3 * statistics.median(ts))
        print(f"{side:>5} {row[0]:8.2f} {row[1]:10.2f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--figure", default=None, help="write the test-image figure here (PNG)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    step_times(3 if args.quick else 5)
    dct_growth()
    side = 128 if args.quick else 256
    steps = args.steps or (20 if args.quick else 300)
    train = [degrade(load_image(n, max_side=256), "low_light", seed=i)
             for i, n in enumerate(TRAIN_IMAGES)]
    kw = dict(steps=steps, crop=64, batch_size=2, lr=5e-4, seed=0)
    ours, zdce = _net(16, 0), build_model("zero_dce", seed=0)
    for net in (ours, zdce):
        train_enhancer(net, train, **kw)
    clean = [load_image(n, max_side=side) for n in TEST_IMAGES]
    dark = [degrade(J, "low_light", seed=100 + i) for i, J in enumerate(clean)]
    t0 = time.perf_counter()
    classical = [peers(y) for y in dark]
    t_cls = (time.perf_counter() - t0) / len(dark)
    outs = {"input": dark} | {k: [c[k] for c in classical] for k in classical[0]}
    times = {}
    for name, net in (("Zero-DCE", zdce), ("ours", ours)):
        t0 = time.perf_counter()
        outs[name] = [enhance(net, y, check=False) for y in dark]
        times[name] = (time.perf_counter() - t0) / len(dark)
    print(f"\n{steps} training steps per network; test images at {side} px "
          f"(all 3 classical pipelines together: {t_cls:.3f} s/img)")
    print(f"{'method':>10} {'PSNR':>6} {'SSIM':>6} {'GTm PSNR':>9} {'GTm SSIM':>9} "
          f"{'NSR':>6} {'img/s':>7}")
    res = {}
    for name, o in outs.items():
        pairs = list(zip(o, clean, strict=True))
        g = [gt_mean(a, J) for a, J in pairs]
        res[name] = (np.mean([psnr(a, J) for a, J in pairs]),
                     np.mean([ssim(a, J) for a, J in pairs]),
                     np.mean([psnr(a, J) for a, J in zip(g, clean, strict=True)]),
                     np.mean([ssim(a, J) for a, J in zip(g, clean, strict=True)]),
                     np.mean([noise_to_signal(a) for a in o]))
        ips = 1 / times[name] if name in times else float("nan")
        print(f"{name:>10} " + " ".join(f"{v:6.3f}" if i % 2 else f"{v:6.2f}"
                                          for i, v in enumerate(res[name])) + f" {ips:7.2f}")
    best = max(("clahe", "gamma", "gamma_nlm"), key=lambda k: res[k][2])
    case = f"3 test images at {side} px, {steps} steps"
    row(M, f"{case}: GT-mean PSNR", res["ours"][2], res[best][2], better="higher", unit="dB",
        peer_name=f"best classical ({best})", agreement="same dark inputs", ratio=False)
    row(M, f"{case}: plain PSNR", res["ours"][0], res["Zero-DCE"][0], better="higher",
        unit="dB", peer_name="Zero-DCE (trained alike)", agreement="same dark inputs",
        ratio=False)
    row(M, f"{case}: enhancement time", times["ours"], times["Zero-DCE"], unit="s wall per image",
        peer_name="Zero-DCE", note="one pass over the 3 images each")
    if args.figure:
        from matplotlib.figure import Figure
        cols = (*outs, "clean")
        fig = Figure(figsize=(2 * len(cols), 2 * len(clean)))
        for i, axes in enumerate(fig.subplots(len(clean), len(cols), squeeze=False)):
            for ax, k in zip(axes, cols, strict=True):
                im = clean[i] if k == "clean" else outs[k][i]
                ax.imshow(im.permute(1, 2, 0).clamp(0, 1).numpy())
                ax.set_title(k if i == 0 else "", fontsize=8)
                ax.axis("off")
        fig.savefig(args.figure, dpi=80, bbox_inches="tight")
        print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
