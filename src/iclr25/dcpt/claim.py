"""DCPT's claims at laptop scale: pre-training by degradation classification helps restoration.

The paper pre-trains restorers (Restormer, NAFNet, ...) with DCPT, then fine-tunes them for
all-in-one restoration and beats the same network trained from scratch (5D: Restormer
27.60 -> 30.04 dB; 10D: NAFNet +2.55 dB, README tables). Here: a width-12 U-Net on crops of
scikit-image's bundled photos with synthetic degradations, the arms seeing the same batches
in the same order and starting from the same initial weights. DCPT pre-trains for a fixed
number of steps written before the run (no stop at any accuracy: stopping at the claim's own
threshold capped the claim at it, issue 74); the classification claim is scored on a test
split (whole photos never trained on), the validation split (crops of the training photos)
reported beside it. Two comparisons: equal fine-tuning steps (the paper's
protocol: scratch trains as long as DCPT fine-tunes) and equal total steps (scratch also gets
the pre-training steps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from iclr25.claims import (
    Comparison,
    Context,
    Evidence,
    Setting,
    Table,
    claim,
    experiment,
    scalar,
)
from iclr25.datasets.images import (
    RGB_IMAGES,
    TEST_IMAGES,
    AllInOnePairs,
    load_image,
    psnr,
    ssim,
)
from iclr25.dcpt.networks import FeatureTap, UNet
from iclr25.dcpt.restoration import restore
from iclr25.dcpt.training import PretrainResult, finetune, pretrain


@dataclass(frozen=True)
class AllInOne(Setting):
    # budget: pre-training cap and fine-tuning (scratch trains P + F)
    budget_fields: ClassVar[tuple[str, ...]] = ("pretrain_steps", "finetune_steps")
    seeds: tuple[int, ...]          # arms share seeds: same init, same batches
    pretrain_steps: int             # P: DCPT pre-training steps, fixed (no early stop)
    finetune_steps: int             # F: DCPT fine-tunes F steps; scratch trains F and P + F
    n_val: int                      # validation crops (training photos, own seed)
    n_test: int                     # fixed held-out crops (from TEST_IMAGES only)
    # testbed (issue 35, fixed before measuring): the three kinds a small U-Net restores
    # within a few hundred steps, smaller crops and a higher lr than main's 5 kinds / 40 px /
    # 1e-3, where scratch reached only +0.17 dB over the input in 180 steps
    kinds: tuple[str, ...] = ("noise", "haze", "low_light")
    size: int = 32
    batch_size: int = 12            # issue 14: 12
    width: int = 12                 # UNet(width=12), ~0.1 M parameters
    max_side: int = 256             # images shrunk so crops hold whole objects
    lr: float = 2e-3                # Adam: fine-tuning and both scratch arms
    pretrain_lr: float = 5e-4       # Adam, DCPT pre-training (issue 54's pilot rule)
    num_res_blocks: int = 1         # classifier bottlenecks per stage (spec §1.5)
    low_light_k: tuple[float, float] = (0.25, 0.5)    # so low light does not dominate L1
    low_light_gamma: tuple[float, float] = (1.2, 1.6)


@dataclass
class AllInOneEvidence(Evidence):
    gain: float = scalar("dB", "PSNR(DCPT) - PSNR(scratch, F steps): equal fine-tuning steps")
    gain_equal_total: float = scalar("dB", "PSNR(DCPT) - PSNR(scratch, P + F steps)")
    accuracy: float = scalar("fraction", "test-split top-1 of the DCPT classifier")
    val_accuracy: float = scalar("fraction", "validation top-1 after pre-training")
    pretrain_steps: float = scalar("steps", "DCPT pre-training steps (fixed)")
    input_psnr: float = scalar("dB")
    scratch_psnr: float = scalar("dB", "scratch arm after F steps")
    scratch_total_psnr: float = scalar("dB", "scratch arm after P + F steps")
    dcpt_psnr: float = scalar("dB")
    scratch_gain_over_input: float = scalar("dB", "scratch (F steps) - input")
    init_psnr: float = scalar("dB", "the shared initial U-Net, untrained")
    scratch_ssim: float = scalar("")
    dcpt_ssim: float = scalar("")
    stats_knn_accuracy: float = scalar("fraction", "5-NN on per-channel mean/std of the input")
    per_kind: Table | None = None
    per_seed: Table | None = None
    confusion: Table | None = None


_DEV = ("a width-12 U-Net (~0.1 M parameters) on 32-px crops of scikit-image's photos with "
        "3 synthetic kinds (noise, haze, low light), not Restormer/NAFNet on the 5D/10D "
        "benchmarks (no downloads offline; issue 35's testbed so that scratch can learn)",
        "hours of GPU training cut to hundreds of CPU steps; Adam 2e-3, batch 12 (the "
        "official training configs are unreleased)")
_PILOT = ("DCPT pre-training at Adam 5e-4 (fine-tuning and scratch 2e-3) with a 300-step cap, "
          "by issue 54's rule written before its pilot: the largest of 2e-3, 1e-3, 5e-4, 2e-4 "
          "at which pre-training on the held-apart seed 7 reaches the 0.9 validation stop "
          "within 300 steps (validation split only; no fine-tuning, PSNR or test split). "
          "Pilot, best validation accuracy in 300 steps: 2e-3 0.78, 1e-3 0.87, 5e-4 stopped "
          "at step 110 (0.97). The pilot ran pre-training itself: its own stopping rule is "
          "what had to be validated")
_FIXED = ("pre-training runs a fixed 133 steps, written before the run (issue 74): the spec's "
          "600 scaled by the factor that takes its 900 fine-tuning steps to our 200 (x 2/9). "
          "It used to stop at the first validation reading >= 0.9, the classification "
          "claim's own threshold, which capped that claim at its threshold (0.884 on test)",)
QUICK = AllInOne(seeds=(0,), pretrain_steps=6, finetune_steps=8, n_val=30, n_test=45,
                 deviations=("6 pre-training + 8 fine-tuning steps, 1 seed: a smoke test of "
                             "the pipeline", *_DEV))
FULL = AllInOne(seeds=(0, 1, 2), pretrain_steps=133, finetune_steps=200, n_val=150, n_test=300,
                deviations=(*_FIXED, _PILOT, *_DEV))


def _stats(x: torch.Tensor) -> np.ndarray:
    return torch.cat([x.mean((-2, -1)), x.std((-2, -1))], 1).cpu().double().numpy()


@dataclass
class _Testbed:
    """What every seed's arms are scored on: photos, the held-out and validation crops."""

    train: list[torch.Tensor]
    params: dict
    lq: torch.Tensor
    gt: torch.Tensor
    y: torch.Tensor
    val_lq: torch.Tensor
    val_y: torch.Tensor


def _testbed(s: AllInOne, ctx: Context) -> _Testbed:
    """The training photos, the test crops (held-out photos) and the validation crops."""
    dev = ctx.device
    params = {"low_light": {"k": s.low_light_k, "gamma": s.low_light_gamma}}
    train = [load_image(n, max_side=s.max_side).to(dev) for n in RGB_IMAGES
             if n not in TEST_IMAGES]
    test = [load_image(n, max_side=s.max_side).to(dev) for n in TEST_IMAGES]
    root = 10 ** 6 + 10 * ctx.seed
    lq, gt, y = AllInOnePairs(test, s.kinds, s.size, s.n_test, seed=root,
                              params=params).take(s.n_test)
    val_lq, _, val_y = AllInOnePairs(train, s.kinds, s.size, s.n_val, seed=root + 2,
                                     params=params).take(s.n_val)
    return _Testbed(train, params, lq, gt, y, val_lq, val_y)


def _stats_knn(s: AllInOne, ctx: Context, tb: _Testbed) -> float:
    """The motivating baseline: can the kinds be told apart from simple input statistics?"""
    from sklearn.neighbors import KNeighborsClassifier

    ref_lq, _, ref_y = AllInOnePairs(tb.train, s.kinds, s.size, 8 * len(s.kinds),
                                     seed=10 ** 6 + 10 * ctx.seed + 1,
                                     params=tb.params).take(s.n_test)
    knn = KNeighborsClassifier(5).fit(_stats(ref_lq), ref_y.cpu().numpy())
    return float(knn.score(_stats(tb.lq), tb.y.cpu().numpy()))


_ARMS = ("scratch", "scratch_total", "dcpt")


@torch.no_grad()
def _classify(pre: PretrainResult, lq: torch.Tensor) -> torch.Tensor:
    """The pre-trained classifier's predicted kind of each crop, ``(N,)``."""
    with FeatureTap(pre.model.eval(), pre.layers) as tap:
        pre.model(lq)
        return pre.classifier(tap.features).argmax(1)


def _train_arms(s: AllInOne, ctx: Context, tb: _Testbed, seed: int
                ) -> tuple[PretrainResult, tuple[torch.Tensor, torch.Tensor],
                           dict[str, torch.nn.Module], torch.nn.Module]:
    """One seed: DCPT pre-training, its (test, validation) predictions, the three fine-tuned
    arms and the shared initial network."""
    base = ctx.seed * 1000 + seed
    init = UNet(width=s.width, seed=base).to(ctx.device)  # every arm starts here
    pairs = AllInOnePairs(tb.train, s.kinds, s.size, s.batch_size, seed=base, params=tb.params)
    stream = iter(pairs)                              # DCPT arm: batches 0..P-1, P..P+F-1
    pre = pretrain(init, stream, n_classes=len(s.kinds), steps=s.pretrain_steps,
                   lr=s.pretrain_lr, num_res_blocks=s.num_res_blocks, seed=base)
    pred = _classify(pre, tb.lq), _classify(pre, tb.val_lq)
    # scratch (F steps) is the first F steps of scratch_total (same init, batches and seed):
    # one run of P + F steps keeps its F-step weights
    total = finetune(init, iter(pairs), steps=pre.steps + s.finetune_steps, lr=s.lr,
                     seed=base, snapshots=(s.finetune_steps,))
    nets = {"dcpt": finetune(pre.model, stream, steps=s.finetune_steps, lr=s.lr,
                             seed=base).model,
            "scratch": total.snapshots[s.finetune_steps], "scratch_total": total.model}
    return pre, pred, nets, init


@experiment(quick=QUICK, full=FULL,
            random=(
                "test, validation and reference crops and their degradations",
                "the shared initial U-Net",
                "training batches and degradations",
            ),
            per_draw=("seeds",),
            cost=(2.3, 81))
def all_in_one(setting: AllInOne, ctx: Context) -> AllInOneEvidence:
    s = setting
    K = len(s.kinds)
    tb = _testbed(s, ctx)
    y = tb.y
    in_psnr = psnr(tb.lq, tb.gt, reduction="none")
    stats_acc = _stats_knn(s, ctx, tb)
    per: dict[str, list[torch.Tensor]] = {a: [] for a in _ARMS}
    ssims: dict[str, list[float]] = {a: [] for a in _ARMS}
    accs, vals, taken, seed_rows, init_psnrs = [], [], [], [], []
    confusion = np.zeros((K, K), dtype=np.int64)
    for seed in s.seeds:
        pre, pred, nets, init = _train_arms(s, ctx, tb, seed)
        init_psnrs.append(psnr(restore(init, tb.lq, check=False), tb.gt))
        taken.append(pre.steps)
        pred, val_pred = pred
        vals.append(float((val_pred == tb.val_y).double().mean()))
        accs.append(float((pred == y).double().mean()))
        np.add.at(confusion, (y.cpu().numpy(), pred.cpu().numpy()), 1)
        row = [seed, pre.steps, accs[-1]]
        for arm in _ARMS:
            out = restore(nets[arm], tb.lq, check=False)
            per[arm].append(psnr(out, tb.gt, reduction="none"))
            ssims[arm].append(ssim(out, tb.gt))
            row.append(float(per[arm][-1].mean()))
        seed_rows.append(tuple(row))

    def by_kind(v: torch.Tensor) -> np.ndarray:
        return np.array([float(v[y == k].mean()) for k in range(K)])

    inp_k = by_kind(in_psnr)
    arms = {a: np.stack([by_kind(v) for v in per[a]]) for a in per}   # (seeds, K)
    m = {a: float(v.mean()) for a, v in arms.items()}
    rows = [(kind, inp_k[k], *(arms[a][:, k].mean() for a in _ARMS))
            for k, kind in enumerate(s.kinds)]
    _figures(ctx, s.kinds, inp_k, arms, confusion)
    return AllInOneEvidence(
        gain=m["dcpt"] - m["scratch"], gain_equal_total=m["dcpt"] - m["scratch_total"],
        accuracy=float(np.mean(accs)), val_accuracy=float(np.mean(vals)),
        pretrain_steps=float(np.mean(taken)),
        input_psnr=float(inp_k.mean()), scratch_psnr=m["scratch"],
        scratch_total_psnr=m["scratch_total"], dcpt_psnr=m["dcpt"],
        scratch_gain_over_input=m["scratch"] - float(inp_k.mean()),
        init_psnr=float(np.mean(init_psnrs)),
        scratch_ssim=float(np.mean(ssims["scratch"])), dcpt_ssim=float(np.mean(ssims["dcpt"])),
        stats_knn_accuracy=stats_acc,
        per_kind=Table("PSNR by kind (dB, mean over seeds)",
                       ("kind", "input", "scratch F", "scratch P+F", "DCPT P+F"), rows),
        per_seed=Table("per seed", ("seed", "DCPT steps P", "test accuracy", "scratch F PSNR",
                                    "scratch P+F PSNR", "DCPT PSNR"), seed_rows),
        confusion=Table("confusion (rows true, columns predicted, summed over seeds)",
                        ("true", *s.kinds),
                        [(kind, *confusion[k].tolist()) for k, kind in enumerate(s.kinds)]),
    )


def _figures(ctx: Context, kinds: tuple[str, ...], inp_k: np.ndarray,
             arms: dict[str, np.ndarray], confusion: np.ndarray) -> None:
    K = len(kinds)
    fig = ctx.figure("psnr_by_kind", figsize=(7, 3.2))
    ax = fig.subplots()
    xs = np.arange(K)
    ax.bar(xs - 0.3, inp_k, 0.2, label="input")
    for off, (a, label) in zip((-0.1, 0.1, 0.3), (("scratch", "scratch F"),
                                                  ("scratch_total", "scratch P+F"),
                                                  ("dcpt", "DCPT P+F")), strict=True):
        ax.bar(xs + off, arms[a].mean(0), 0.2, yerr=arms[a].std(0), label=label)
    ax.set_xticks(xs, kinds)
    ax.set_ylabel("PSNR (dB), held-out crops")
    ax.legend(fontsize=8)
    fig2 = ctx.figure("confusion", figsize=(3.6, 3.2))
    ax2 = fig2.subplots()
    ax2.imshow(confusion, cmap="Blues")
    ax2.set_xticks(xs, kinds, rotation=45, fontsize=7)
    ax2.set_yticks(xs, kinds, fontsize=7)
    ax2.set_xlabel("predicted")
    ax2.set_ylabel("true")
    for i in range(K):
        for j in range(K):
            ax2.text(j, i, str(confusion[i, j]), ha="center", va="center", fontsize=7)


@claim("dcpt.all_in_one_gain", experiment=all_in_one,
       sentence="DCPT then fine-tuning restores better than training the same network from "
                "scratch for as many fine-tuning iterations.",
       metric="mean PSNR of the DCPT arm - the scratch arm trained the DCPT arm's fine-tuning "
              "steps, over kinds and seeds",
       unit="dB",
       paper_figure="+2.44 dB (Restormer 5D all-in-one, 27.60 -> 30.04) and +2.55 dB (NAFNet "
                    "10D, 27.17 -> 29.72), official README tables",
       threshold=0.2, direction=">=", baseline="scratch (equal fine-tuning steps)",
       control=lambda ev: (ev.scratch_gain_over_input >= 1.0
                           and ev.scratch_psnr >= ev.init_psnr + 1.0),
       control_doc="the baseline learned and the testbed can be learned: the scratch arm "
                   "beats its own untrained initial network by at least 1.0 dB and gains at "
                   "least 1.0 dB over the degraded input")
def all_in_one_gain(ev: AllInOneEvidence) -> Comparison:
    return Comparison(ours=ev.dcpt_psnr, baseline=ev.scratch_psnr, value=ev.gain)


@claim("dcpt.degradation_classification", experiment=all_in_one,
       sentence="The classifier names the degradation from the restorer's features alone.",
       metric="test-split top-1 accuracy over 3 kinds after a fixed pre-training budget "
              "(chance 0.33)",
       unit="fraction",
       paper_figure="none: the paper reports no held-out classification accuracy (its "
                    "README and tables give restoration PSNR only)",
       threshold=0.90, direction=">=",
       trivial=lambda ev: ev.stats_knn_accuracy,
       trivial_doc="a 5-NN on the input's per-channel mean and standard deviation (as many "
                   "reference crops of the training photos as test crops), scored on the "
                   "same test crops")
def degradation_classification(ev: AllInOneEvidence) -> float:
    return ev.accuracy
