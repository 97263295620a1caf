"""DCPT's claims at laptop scale: pre-training by degradation classification helps restoration.

The paper pre-trains restorers (Restormer, NAFNet, ...) with DCPT, then fine-tunes them for
all-in-one restoration and beats the same network trained from scratch (5D: Restormer
27.60 -> 30.04 dB; 10D: NAFNet +2.55 dB, README tables). Here: a width-12 U-Net on crops of
scikit-image's bundled photos with five synthetic degradations, the two arms seeing the same
batches in the same order for the same total number of iterations and starting from the
same initial weights. Held-out crops come from whole images never trained on.

What would make it uninformative: a task either arm solves trivially, or one neither can
learn. Five kinds whose inputs sit near 13-30 dB leave both room to improve, and the gain
is reported as NaN (failing) when the scratch arm does not even beat its inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from iclr25.claims import Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.datasets.images import (
    RGB_IMAGES,
    TEST_IMAGES,
    AllInOnePairs,
    load_image,
    psnr,
    ssim,
)
from iclr25.dcpt.networks import FeatureTap, UNet
from iclr25.dcpt.training import finetune, pretrain, restore


@dataclass(frozen=True)
class AllInOne(Setting):
    seeds: tuple[int, ...]          # arms share seeds: same init, same batches
    pretrain_steps: int             # DCPT arm: this many DCPT steps ...
    finetune_steps: int             # ... then this many L1 steps; scratch: the sum
    n_test: int                     # fixed held-out crops (from TEST_IMAGES only)
    kinds: tuple[str, ...] = ("noise", "blur", "jpeg", "haze", "low_light")
    size: int = 40                  # crop side (issue: 40)
    batch_size: int = 12            # issue: 12
    width: int = 12                 # UNet(width=12), ~0.1 M parameters
    max_side: int = 256             # images shrunk so crops hold whole objects
    lr: float = 1e-3                # Adam, both arms
    num_res_blocks: int = 1         # classifier bottlenecks per stage (spec §1.5)
    low_light_k: tuple[float, float] = (0.25, 0.5)    # so low light does not dominate L1
    low_light_gamma: tuple[float, float] = (1.2, 1.6)


@dataclass
class AllInOneEvidence(Evidence):
    gain: float = scalar("dB", "mean over kinds and seeds of PSNR(DCPT) - PSNR(scratch)")
    accuracy: float = scalar("fraction", "held-out top-1 of the DCPT classifier")
    input_psnr: float = scalar("dB")
    scratch_psnr: float = scalar("dB")
    dcpt_psnr: float = scalar("dB")
    scratch_ssim: float = scalar("")
    dcpt_ssim: float = scalar("")
    stats_knn_accuracy: float = scalar("fraction", "5-NN on per-channel mean/std of the input")
    reason: str = scalar("", "why the gain is NaN, if it is")
    per_kind: Table = None
    per_seed: Table = None
    confusion: Table = None


# Issue 14 asks for 300 + 600 vs 900 iterations (full) and 60 (quick). Measured before any
# claim run, one DCPT step costs ~3x an L1 step (two network passes + the classifier), so on
# 2 shared cores that full setting takes ~1 h; both arms are cut alike (to 60 + 120 vs 180,
# and 4 + 8 vs 12 for quick), as the issue says to do when over budget.
QUICK = AllInOne(seeds=(0,), pretrain_steps=4, finetune_steps=8, n_test=60)
FULL = AllInOne(seeds=(0, 1, 2), pretrain_steps=60, finetune_steps=120, n_test=400)


def _stats(x: torch.Tensor) -> np.ndarray:
    return torch.cat([x.mean((-2, -1)), x.std((-2, -1))], 1).cpu().double().numpy()


@experiment(quick=QUICK, full=FULL)
def all_in_one(setting: AllInOne, ctx: Context) -> AllInOneEvidence:
    from sklearn.neighbors import KNeighborsClassifier

    s, dev = setting, ctx.device
    K = len(s.kinds)
    params = {"low_light": {"k": s.low_light_k, "gamma": s.low_light_gamma}}
    train = [load_image(n, max_side=s.max_side).to(dev) for n in RGB_IMAGES
             if n not in TEST_IMAGES]
    test = [load_image(n, max_side=s.max_side).to(dev) for n in TEST_IMAGES]
    lq, gt, y = AllInOnePairs(test, s.kinds, s.size, s.n_test, seed=10 ** 6,
                              params=params).take(s.n_test)
    in_psnr = psnr(lq, gt, reduction="none")

    # the motivating baseline: can the kinds be told apart from simple input statistics?
    ref_lq, _, ref_y = AllInOnePairs(train, s.kinds, s.size, 8 * K, seed=10 ** 6 + 1,
                                     params=params).take(s.n_test)
    knn = KNeighborsClassifier(5).fit(_stats(ref_lq), ref_y.cpu().numpy())
    stats_acc = float(knn.score(_stats(lq), y.cpu().numpy()))

    per: dict[str, list[torch.Tensor]] = {"scratch": [], "dcpt": []}
    ssims: dict[str, list[float]] = {"scratch": [], "dcpt": []}
    accs, seed_rows = [], []
    confusion = np.zeros((K, K), dtype=np.int64)
    for seed in s.seeds:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            init = UNet(width=s.width).to(dev)           # both arms start here
        pairs = AllInOnePairs(train, s.kinds, s.size, s.batch_size, seed=seed, params=params)
        stream = iter(pairs)                              # DCPT arm: batches 0..P-1, P..P+F-1
        pre = pretrain(init, stream, n_classes=K, steps=s.pretrain_steps, lr=s.lr,
                       num_res_blocks=s.num_res_blocks, seed=seed)
        with torch.no_grad(), FeatureTap(pre.model.eval(), pre.layers) as tap:
            pre.model(lq)
            pred = pre.classifier(tap.features).argmax(1)
        accs.append(float((pred == y).double().mean()))
        np.add.at(confusion, (y.cpu().numpy(), pred.cpu().numpy()), 1)
        dcpt = finetune(pre.model, stream, steps=s.finetune_steps, lr=s.lr, seed=seed).model
        scratch = finetune(init, iter(pairs), steps=s.pretrain_steps + s.finetune_steps,
                           lr=s.lr, seed=seed).model
        row = [seed, accs[-1]]
        for arm, net in (("scratch", scratch), ("dcpt", dcpt)):
            out = restore(net, lq)
            per[arm].append(psnr(out, gt, reduction="none"))
            ssims[arm].append(ssim(out, gt))
            row.append(float(per[arm][-1].mean()))
        seed_rows.append((*row, row[3] - row[2]))

    def by_kind(v: torch.Tensor) -> np.ndarray:
        return np.array([float(v[y == k].mean()) for k in range(K)])

    inp_k = by_kind(in_psnr)
    arms = {a: np.stack([by_kind(v) for v in per[a]]) for a in per}   # (seeds, K)
    gain_k = (arms["dcpt"] - arms["scratch"]).mean(0)
    scratch_mean, input_mean = float(arms["scratch"].mean()), float(inp_k.mean())
    reason = ""
    gain = float(gain_k.mean())
    if not scratch_mean > input_mean:
        reason = (f"scratch arm ({scratch_mean:.2f} dB) does not beat its inputs "
                  f"({input_mean:.2f} dB): neither net restores, the comparison says nothing")
        gain = float("nan")

    rows = [(kind, inp_k[k], arms["scratch"][:, k].mean(), arms["scratch"][:, k].std(),
             arms["dcpt"][:, k].mean(), arms["dcpt"][:, k].std(), gain_k[k])
            for k, kind in enumerate(s.kinds)]

    fig = ctx.figure("psnr_by_kind", figsize=(7, 3.2))
    ax = fig.subplots()
    xs = np.arange(K)
    ax.bar(xs - 0.27, inp_k, 0.27, label="input")
    ax.bar(xs, arms["scratch"].mean(0), 0.27, yerr=arms["scratch"].std(0), label="scratch")
    ax.bar(xs + 0.27, arms["dcpt"].mean(0), 0.27, yerr=arms["dcpt"].std(0), label="DCPT")
    ax.set_xticks(xs, s.kinds)
    ax.set_ylabel("PSNR (dB), held-out crops")
    ax.legend(fontsize=8)
    fig2 = ctx.figure("confusion", figsize=(3.6, 3.2))
    ax2 = fig2.subplots()
    ax2.imshow(confusion, cmap="Blues")
    ax2.set_xticks(xs, s.kinds, rotation=45, fontsize=7)
    ax2.set_yticks(xs, s.kinds, fontsize=7)
    ax2.set_xlabel("predicted")
    ax2.set_ylabel("true")
    for i in range(K):
        for j in range(K):
            ax2.text(j, i, str(confusion[i, j]), ha="center", va="center", fontsize=7)

    return AllInOneEvidence(
        gain=gain, accuracy=float(np.mean(accs)), input_psnr=input_mean,
        scratch_psnr=scratch_mean, dcpt_psnr=float(arms["dcpt"].mean()),
        scratch_ssim=float(np.mean(ssims["scratch"])), dcpt_ssim=float(np.mean(ssims["dcpt"])),
        stats_knn_accuracy=stats_acc, reason=reason,
        per_kind=Table("PSNR by kind (dB, mean and sd over seeds)",
                       ("kind", "input", "scratch", "scratch sd", "DCPT", "DCPT sd", "gain"),
                       rows),
        per_seed=Table("per seed", ("seed", "accuracy", "scratch PSNR", "DCPT PSNR", "gain"),
                       seed_rows),
        confusion=Table("confusion (rows true, columns predicted, summed over seeds)",
                        ("true", *s.kinds),
                        [(kind, *confusion[k].tolist()) for k, kind in enumerate(s.kinds)]),
    )


@claim("dcpt.all_in_one_gain", experiment=all_in_one,
       sentence="DCPT then fine-tuning restores better than training the same network from "
                "scratch for as many iterations.",
       metric="mean PSNR gain of the DCPT arm over the scratch arm, over kinds and seeds",
       unit="dB",
       paper_figure="+2.44 dB (Restormer 5D all-in-one, 27.60 -> 30.04) and +2.55 dB (NAFNet "
                    "10D, 27.17 -> 29.72), official README tables",
       threshold=0.2, direction=">=")
def all_in_one_gain(ev: AllInOneEvidence) -> float:
    return ev.gain


@claim("dcpt.degradation_classification", experiment=all_in_one,
       sentence="The classifier names the degradation from the restorer's features alone.",
       metric="held-out top-1 accuracy over 5 kinds after pre-training (chance 0.2)",
       unit="fraction",
       paper_figure="unverified (the paper reports no held-out classification accuracy)",
       threshold=0.90, direction=">=")
def degradation_classification(ev: AllInOneEvidence) -> float:
    return ev.accuracy
