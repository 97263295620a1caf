# ruff: noqa: B023  (closures are timed at once, inside their loop iteration)
"""CoMM benchmark: the loss against pytorch-metric-learning's NTXentLoss, a CoMM training step
against a Cross step on the same CNNs, and an R/U/S table for CoMM, Cross, Cross+Self and
SimCLR-on-fused on the same data and seeds.

    python benchmarks/comm.py [--quick]

Targets (issue 10): CoMMLoss equal to n+1 NTXentLoss calls to 1e-5 with time ratio <= 1.0
(B=512, d=256, n in {2, 3}); CoMM step <= 2.5x a Cross step. Cost: loss O((n+1) B^2 d),
fusion O((n+1) B T^2 dim).
"""

from __future__ import annotations

import argparse
import time

import torch

from iclr25.claims import torch_threads
from iclr25.comm import CoMMLoss, features, linear_probe, objective_loss, pretrain
from iclr25.comm.claim import _augment, _build
from iclr25.datasets.views import bimodal_digits


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


def step_table(quick: bool) -> None:
    print("\nTraining step (two augmented views, forward+backward), same CNNs and fusion")
    print(f"{'B':>5} {'comm ms':>9} {'cross ms':>9} {'ratio':>6}")
    data = bimodal_digits(256, biased=True, seed=0)
    aug = _augment()
    for B in (64, 128) if quick else (64, 128, 256):
        model = _build(0)
        x = [data.x1[:B], data.x2[:B]]
        g = torch.Generator().manual_seed(0)
        v1 = [a(t, seed=g) for a, t in zip(aug, x, strict=True)]
        v2 = [a(t, seed=g) for a, t in zip(aug, x, strict=True)]
        reps = 2 if quick else 5
        tc = _time(lambda: objective_loss(model, v1, v2, "comm").backward(), reps)
        tx = _time(lambda: objective_loss(model, v1, v2, "cross").backward(), reps)
        print(f"{B:>5} {1e3 * tc:>9.1f} {1e3 * tx:>9.1f} {tc / tx:>6.2f}")


def rus_table(quick: bool) -> None:
    n_pre, n_probe, n_test, epochs = (300, 300, 300, 2) if quick else (2000, 2000, 1000, 20)
    print(f"\nR/U/S balanced accuracy ({n_pre} biased pairs, {epochs} epochs, seed 0)")
    print(f"{'model':>12} {'R':>6} {'U':>6} {'S':>6} {'train s':>8}")
    pre = bimodal_digits(n_pre, biased=True, seed=0)
    fit = bimodal_digits(n_probe, biased=False, seed=1)
    test = bimodal_digits(n_test, biased=False, split="test", seed=2)
    for obj in ("comm", "cross", "cross_self", "simclr"):
        model = _build(0)
        t = time.perf_counter()
        pretrain(model, [pre.x1, pre.x2], augment=_augment(), objective=obj, epochs=epochs,
                 seed=3)
        secs = time.perf_counter() - t
        Ff, Ft = features(model, [fit.x1, fit.x2], obj), features(model, [test.x1, test.x2], obj)
        r = [linear_probe(Ff, a, Ft, b) for a, b in ((fit.digit, test.digit),
                                                     (fit.texture2, test.texture2),
                                                     (fit.synergy, test.synergy))]
        print(f"{obj:>12} {r[0]:>6.3f} {r[1]:>6.3f} {r[2]:>6.3f} {secs:>8.1f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes, seconds")
    args = p.parse_args()
    with torch_threads(1):
        loss_table(args.quick)
        step_table(args.quick)
        rus_table(args.quick)


if __name__ == "__main__":
    main()
