# ruff: noqa: B023  (closures are timed at once, inside their loop iteration)
"""CoMM benchmark: the loss against pytorch-metric-learning's NTXentLoss, the bimodal
Trifeatures generator's speed, and a CoMM training step against a Cross step on the same CNNs
(the R/U/S table is the reproduction: ``iclr25 reproduce comm``).

    python benchmarks/comm.py [--quick]

Targets (issue 10): CoMMLoss equal to n+1 NTXentLoss calls to 1e-5 with time ratio <= 1.0
(B=512, d=256, n in {2, 3}); CoMM step <= 2.5x a Cross step; 10,000 Trifeatures pairs in
<= 5 s (issue 36). Cost: loss O((n+1) B^2 d),
fusion O((n+1) B T^2 dim).
"""

from __future__ import annotations

import argparse
import time

import torch
from _timing import cpu_median

from iclr25.claims import torch_threads
from iclr25.comm import CoMMLoss, objective_loss
from iclr25.comm.claim import _augment, _build
from iclr25.comm.claim import trifeatures as experiment
from iclr25.datasets.views import bimodal_trifeatures


def _time(fn, repeats: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - t) / repeats


def loss_table(quick: bool) -> None:
    try:
        from pytorch_metric_learning.losses import NTXentLoss
    except ImportError:
        print("pytorch-metric-learning not installed (pip install 'iclr25[test]'): skipped")
        return
    print("\nCoMMLoss vs 2(n+1) NTXentLoss calls (pytorch-metric-learning), forward+backward")
    print("(PML's cost grows about as B^3 on CPU: one call is timed and multiplied by 2(n+1))")
    print(f"{'B':>5} {'d':>5} {'n':>3} {'|diff|':>10} {'ours ms':>9} {'PML ms':>10} {'ratio':>7}")
    pml = NTXentLoss(temperature=0.1)
    ours = CoMMLoss(0.1)
    for B in (128,) if quick else (128, 512):
        d = 256
        lab = torch.arange(B).repeat(2)
        g = torch.Generator().manual_seed(0)
        pair = torch.randn(2 * B, d, generator=g, requires_grad=True)
        t_call = _time(lambda: pml(pair, lab).backward(), 1)
        for n in (2, 3):
            z1 = [torch.randn(B, d, generator=g, requires_grad=True) for _ in range(n + 1)]
            z2 = [torch.randn(B, d, generator=g, requires_grad=True) for _ in range(n + 1)]
            if B <= 128:  # the equality check calls PML 2(n+1) times: small B only
                ref = torch.stack([(pml(torch.cat([a, z2[-1]]), lab)
                                    + pml(torch.cat([b, z1[-1]]), lab)) / 2
                                   for a, b in zip(z1, z2, strict=True)]).mean()
                diff = f"{abs(float(ours(z1, z2).detach()) - float(ref.detach())):.2e}"
            else:
                diff = "-"
            t_ours = _time(lambda: ours(z1, z2).backward(), 1 if quick else 3)
            t_ref = 2 * (n + 1) * t_call
            print(f"{B:>5} {d:>5} {n:>3} {diff:>10} {1e3 * t_ours:>9.1f} "
                  f"{1e3 * t_ref:>10.1f} {t_ours / t_ref:>7.4f}")


def _trainer(obj: str, x: list[torch.Tensor]):
    full = experiment.full  # the experiment's encoders and augmentation
    model = _build(0, full.widths)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    aug, g = _augment(full.crop_floor), torch.Generator().manual_seed(0)

    def step() -> None:
        v1 = [a(t, seed=g) for a, t in zip(aug, x, strict=True)]
        v2 = [a(t, seed=g) for a, t in zip(aug, x, strict=True)]
        loss = objective_loss(model, v1, v2, obj)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def step_table(quick: bool) -> None:
    print("\nTraining step on bimodal Trifeatures (32 px): SimCLR augmentation of two views "
          "+ forward + backward + AdamW, same CNNs and fusion (the experiment's step);")
    print("the two models take turns step by step; median CPU times (busy machines)")
    print(f"{'B':>5} {'comm CPU ms':>12} {'cross CPU ms':>13} {'ratio':>6}")
    data = bimodal_trifeatures(256, seed=0)
    for B in (64, 128) if quick else (64, 128, 256):
        x = [data.x1[:B], data.x2[:B]]
        steps = {obj: _trainer(obj, x) for obj in ("comm", "cross")}
        times: dict[str, list[float]] = {obj: [] for obj in steps}
        for _ in range(3 if quick else 9):
            for obj, step in steps.items():
                times[obj].append(cpu_median(step, 1))
        tc, tx = (sorted(times[o])[len(times[o]) // 2] for o in ("comm", "cross"))
        print(f"{B:>5} {1e3 * tc:>12.1f} {1e3 * tx:>13.1f} {tc / tx:>6.2f}")


def generator_table(quick: bool) -> None:
    n = 2000 if quick else 10000
    t, c = time.perf_counter(), time.process_time()
    bimodal_trifeatures(n, seed=0)
    print(f"\nbimodal_trifeatures({n}): {time.perf_counter() - t:.2f} s wall, "
          f"{time.process_time() - c:.2f} s CPU (target <= 5 s for 10,000 pairs)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes, seconds")
    args = p.parse_args()
    with torch_threads(1):
        loss_table(args.quick)
        generator_table(args.quick)
        step_table(args.quick)


if __name__ == "__main__":
    main()
