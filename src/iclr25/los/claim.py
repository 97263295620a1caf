"""Reproduction: LOS re-training balances a long-tailed 100-class classifier.

Task (the spec's pilot, a stand-in for CIFAR-100-LT since no 100-class data set is bundled):
``iclr25.datasets.gaussian_mixture`` with K=100 classes, d=64, centres 0.35·N(0, I), unit
noise, long-tailed training counts 500 -> 5 (IR=100, 10,847 samples), balanced test set.
Stage 1: MLP 64-128-128-100, CE + weight decay 5e-3, SGD lr 0.05, cosine. Stage 2 (the paper's
recipe): only the linear head, from the stage-1 head, SGD lr 5e-4 momentum 0.9 wd 0, cosine
over 20 epochs, instance-balanced batches of 64, on frozen features (the official stage 2
keeps BatchNorm in train mode with augmented images; an MLP on fixed data has neither). The
paper's claim at K=100 is about this re-training stage; the spec's notes found no gain at
K=10, so K=10 would make the claim uninformative in the other direction.

Every stage-2 method (CE, LOS sweep, CB-CE, logit adjustment, LWS) re-trains the same stage-1
head on the same frozen features with the same batches and epochs. We report the last
stage-2 epoch; the official code reports the best epoch on the test set, which is selection
on the test set.

Controls: the baseline learned (5 points over the same MLP at random init; a re-balancing
baseline also 2 points over the stage-1 head it re-trains). Trivial arm of the gain claims:
the stage-1 head itself, not re-trained at all.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from iclr25._train import seeded_mlp
from iclr25.claims import (
    Comparison,
    Context,
    Evidence,
    Setting,
    Table,
    claim,
    experiment,
    scalar,
    torch_threads,
)
from iclr25.los.metrics import (
    group_accuracy,
    logits_magnitude,
    per_class_accuracy,
    regularized_std,
)
from iclr25.los.testbed import Stage1Net, long_tailed_mixture, train_stage1
from iclr25.los.training import retrain_classifier

GROUPS = ("all", "many", "medium", "few")
LABELS = {"stage1": "stage 1", "eps=0": "CE re-train", "eps=0.98": "LOS ε=0.98",
          "cbce": "CB-CE", "la": "logit adj.", "lws": "LWS"}


_DEVIATIONS = (
    "a 100-class Gaussian mixture (IR=100) on an MLP stands in for CIFAR-100-LT on a "
    "ResNet-32: no 100-class image set is bundled offline",
    "stage 2 re-trains the head on fixed features, without the official augmentation and "
    "train-mode BatchNorm (an MLP on fixed data has neither)",
    "the last stage-2 epoch is reported; the official code reports the best epoch on the test "
    "set",
)


@dataclass(frozen=True)
class LongTail(Setting):
    # budget: stage 1 (shared); stage 2: the official 20 epochs
    budget_fields: ClassVar[tuple[str, ...]] = ("stage1_epochs",)
    n_seeds: int  # seeds seed .. seed + n_seeds - 1; the spec's pass criteria use 3
    stage1_epochs: int  # the pilot's 60; quick 20 (a weaker but still long-tailed stage 1)
    stage1_batch: int  # the pilot's 64; quick 128 (half the steps)
    test_per_class: int  # balanced test set; quick 30 (3,000 test samples)
    eps: tuple[float, ...]  # smoothing sweep, 0 = CE re-training, 0.98 = the paper's LOS
    baselines: tuple[str, ...]  # the re-training methods LOS is compared with


@dataclass
class LongTailEvidence(Evidence):
    gain: float = scalar("points", "balanced accuracy, LOS(ε=0.98) − CE re-training")
    few_gain: float = scalar("points", "few-shot accuracy, LOS(ε=0.98) − CE re-training")
    loma_steps_down: float = scalar("fraction", "ε steps where the mean LoMa decreases")
    margin_vs_best: float = scalar("points", "balanced accuracy, LOS − strongest baseline")
    strongest_baseline: str = scalar("", "baseline with the highest mean balanced accuracy")
    los_acc: float = scalar("%", "balanced accuracy of LOS(ε=0.98) re-training, seed mean")
    ce_acc: float = scalar("%", "balanced accuracy of CE re-training, seed mean")
    los_few: float = scalar("%", "few-shot accuracy of LOS(ε=0.98), seed mean")
    ce_few: float = scalar("%", "few-shot accuracy of CE re-training, seed mean")
    best_acc: float = scalar("%", "balanced accuracy of the strongest baseline, seed mean")
    stage1_acc: float = scalar("%", "balanced accuracy of the stage-1 head, no re-training")
    stage1_few: float = scalar("%", "few-shot accuracy of the stage-1 head, no re-training")
    untrained_acc: float = scalar("%", "balanced accuracy of the same MLP at random init")
    gain_per_seed: list = scalar("points")
    by_group: Table | None = None
    per_seed: Table | None = None
    sweep: Table | None = None


def _evaluate(z: torch.Tensor, y: torch.Tensor, counts: torch.Tensor) -> dict:
    return {"groups": group_accuracy(z.argmax(1), y, counts),
            "acc": per_class_accuracy(z.argmax(1), y, len(counts)).tolist(),
            "loma": logits_magnitude(z, y).tolist(), "rsd": regularized_std(z, y).tolist()}


def _one_seed(setting: LongTail, s: int, device: torch.device) -> dict:
    """Stage 1 once, then every stage-2 method on the same frozen features."""
    task = long_tailed_mixture(test_per_class=setting.test_per_class, seed=s)
    task = dataclasses.replace(task, X_train=task.X_train.to(device),
                               y_train=task.y_train.to(device), X_test=task.X_test.to(device),
                               y_test=task.y_test.to(device))
    model = train_stage1(task.X_train, task.y_train, task.n_classes,
                         epochs=setting.stage1_epochs, batch_size=setting.stage1_batch, seed=s)
    # the untrained self of every arm: the stage-1 MLP as initialised (seeded as stage 1)
    init = Stage1Net(seeded_mlp([task.X_train.shape[1], 128, 128, task.n_classes], seed=s,
                                device=device))
    with torch.no_grad():
        f_tr, f_te = model.features(task.X_train), model.features(task.X_test)
        res = {"stage1": _evaluate(model.fc(f_te), task.y_test, task.train_counts),
               "untrained": _evaluate(init(task.X_test), task.y_test, task.train_counts)}

    def fit(method: str, **kw: float) -> dict:
        head = retrain_classifier(f_tr, task.y_train, method, init=model.fc, seed=s, **kw)
        with torch.no_grad():
            return _evaluate(head(f_te), task.y_test, task.train_counts)

    for eps in setting.eps:
        res[f"eps={eps:g}"] = fit("ce") if eps == 0 else fit("los", smoothing=eps)
    for method in setting.baselines:
        res[method] = fit(method)
    return res


def _mean(runs: list[dict], key: str, group: str = "all") -> float:
    return float(np.mean([r[key]["groups"][group] for r in runs]))


def _mean_of(runs: list[dict], key: str, metric: str) -> float:
    return float(np.mean([np.mean(r[key][metric]) for r in runs]))


@experiment(
    quick=LongTail(n_seeds=1, stage1_epochs=20, stage1_batch=128, test_per_class=30,
                   eps=(0.0, 0.5, 0.98), baselines=("cbce", "la", "lws"),
                   deviations=(*_DEVIATIONS, "smoke test: 1 seed, stage 1 for 20 epochs at "
                               "batch 128, 30 test samples per class, 3 smoothing values")),
    full=LongTail(n_seeds=3, stage1_epochs=60, stage1_batch=64, test_per_class=100,
                  eps=(0.0, 0.1, 0.5, 0.9, 0.98), baselines=("cbce", "la", "lws"),
                  deviations=_DEVIATIONS),
    cost=(18, 84),
)
def long_tail(setting: LongTail, ctx: Context) -> LongTailEvidence:
    """Stage 1 and every stage-2 method on each seed; figures of groups, classes, sweep."""
    seeds = list(range(ctx.seed, ctx.seed + setting.n_seeds))
    with torch_threads(1):
        runs = [_one_seed(setting, s, ctx.device) for s in seeds]
    counts = long_tailed_mixture(test_per_class=1).train_counts
    keys = ["untrained", "stage1", *[f"eps={e:g}" for e in setting.eps], *setting.baselines]
    gains = [100 * (r["eps=0.98"]["groups"]["all"] - r["eps=0"]["groups"]["all"]) for r in runs]
    few = [100 * (r["eps=0.98"]["groups"]["few"] - r["eps=0"]["groups"]["few"]) for r in runs]
    loma = [_mean_of(runs, f"eps={e:g}", "loma") for e in setting.eps]
    best = max(setting.baselines, key=lambda k: _mean(runs, k))
    _figures(ctx, setting, runs, counts)
    return LongTailEvidence(
        gain=float(np.mean(gains)), few_gain=float(np.mean(few)),
        loma_steps_down=float(np.mean([b < a for a, b in zip(loma[:-1], loma[1:],
                                                              strict=True)])),
        margin_vs_best=100 * (_mean(runs, "eps=0.98") - _mean(runs, best)),
        strongest_baseline=best, los_acc=100 * _mean(runs, "eps=0.98"),
        ce_acc=100 * _mean(runs, "eps=0"), los_few=100 * _mean(runs, "eps=0.98", "few"),
        ce_few=100 * _mean(runs, "eps=0", "few"), best_acc=100 * _mean(runs, best),
        stage1_acc=100 * _mean(runs, "stage1"), stage1_few=100 * _mean(runs, "stage1", "few"),
        untrained_acc=100 * _mean(runs, "untrained"), gain_per_seed=gains,
        by_group=Table("accuracy by shot group, mean over seeds (%)",
                       ("method", *GROUPS, "mean LoMa", "mean RSD"),
                       [(k, *[100 * _mean(runs, k, g) for g in GROUPS],
                         _mean_of(runs, k, "loma"), _mean_of(runs, k, "rsd")) for k in keys]),
        per_seed=Table("balanced accuracy per seed (%)", ("method", *map(str, seeds)),
                       [(k, *[100 * r[k]["groups"]["all"] for r in runs]) for k in keys]),
        sweep=Table("smoothing sweep (seed mean)", ("ε", "balanced acc (%)", "mean LoMa",
                                                    "mean RSD"),
                    [(e, 100 * _mean(runs, f"eps={e:g}"), lo, _mean_of(runs, f"eps={e:g}", "rsd"))
                     for e, lo in zip(setting.eps, loma, strict=True)]),
    )


def _figures(ctx: Context, setting: LongTail, runs: list[dict], counts: torch.Tensor) -> None:
    keys = ["stage1", "eps=0", "eps=0.98", *setting.baselines]
    ax = ctx.figure("groups", figsize=(8, 3.5)).subplots()
    width = 0.8 / len(keys)
    for i, k in enumerate(keys):
        vals = [[100 * r[k]["groups"][g] for r in runs] for g in GROUPS]
        ax.bar(np.arange(4) + (i - len(keys) / 2 + 0.5) * width, [np.mean(v) for v in vals],
               width, yerr=[np.std(v) for v in vals], label=LABELS[k])
    ax.set_xticks(range(4), ["balanced (all)", "many (>100)", "medium (20-100)", "few (<20)"])
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(f"Re-training on frozen features, K=100, IR=100 ({len(runs)} seed(s))")
    ax.legend(fontsize=7, ncol=3)

    axes = ctx.figure("per_class", figsize=(12, 3.2)).subplots(1, 3)
    k = np.arange(len(counts))
    for key in ("stage1", "eps=0", "eps=0.98", *setting.baselines[:1]):
        for a, metric in zip(axes, ("loma", "rsd", "acc"), strict=True):
            a.plot(k, np.mean([r[key][metric] for r in runs], axis=0), lw=1, label=LABELS[key])
    for a, title in zip(axes, ("Logits Magnitude (LoMa)", "Regularized std (RSD)",
                               "test accuracy"), strict=True):
        a.set_title(title)
        a.set_xlabel(f"class (0 = {int(counts[0])} train samples ... {len(counts) - 1} = "
                     f"{int(counts[-1])})")
    axes[0].legend(fontsize=7)

    eps = list(setting.eps)
    ax = ctx.figure("sweep", figsize=(5, 3.2)).subplots()
    ax.plot(eps, [100 * _mean(runs, f"eps={e:g}") for e in eps], "o-",
            label="balanced accuracy (%)")
    ax.set_xlabel("smoothing ε (0 = CE re-training)")
    ax.set_ylabel("balanced accuracy (%)")
    ax2 = ax.twinx()
    ax2.plot(eps, [_mean_of(runs, f"eps={e:g}", "loma") for e in eps], "s--", color="C1",
             label="mean LoMa")
    ax2.set_ylabel("mean LoMa")
    handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], loc="center right", fontsize=7)


# Did the baseline learn? Its untrained self is the stage-1 MLP at random init (chance, 1%
# at K=100): CE re-training starts from the stage-1 head with the stage-1 loss, so its own
# step 0 is already trained and it is not expected to move it. The margin, fixed before
# measuring: 5 points, five times chance and over 5 standard errors of a balanced accuracy
# on the quick test set (3,000 samples, SE <= 0.9 point).
_LEARNED = 5.0
# A re-balancing baseline (CB-CE, logit adj., LWS) must also beat its own step 0, the
# stage-1 head it re-trains, by the 2 points the gain claim asks of LOS: a re-training that
# moves balanced accuracy by less has not learned the re-balancing it is there to show.
_REBALANCED = 2.0


def _ce_learned(ev: LongTailEvidence) -> bool:
    return ev.ce_acc >= ev.untrained_acc + _LEARNED


_CE_LEARNED_DOC = (f"CE re-training learned: its balanced accuracy is at least {_LEARNED:g} "
                   "points above the same MLP's at random init (chance is 1%).")


def _rebalancers(ev: LongTailEvidence, group: str) -> dict[str, float]:
    """The other re-training baselines' accuracy on ``group`` (%), from the by-group table."""
    col = ev.by_group.columns.index(group)
    return {LABELS[r[0]]: r[col] for r in ev.by_group.rows
            if r[0] in ("cbce", "la", "lws")}


@claim(
    "los.balanced_accuracy_gain", experiment=long_tail,
    sentence=("On a 100-class long-tailed (IR=100) Gaussian-mixture stand-in for CIFAR-100-LT, "
              "re-training only the classifier on frozen stage-1 features with label "
              "over-smoothing (ε=0.98) beats cross-entropy re-training in balanced test "
              "accuracy by at least 2 points (mean of 3 seeds; 1 seed at quick scale)."),
    metric="balanced accuracy gain, LOS(ε=0.98) − CE re-training",
    unit="points",
    paper_figure="unverified: the CIFAR-100-LT IR=100 LOS-vs-CE re-training table could not be "
                 "read offline (OpenReview OeKp3AdiVO: abstract only)",
    baseline="CE re-training", threshold=2.0, direction=">=",
    control=_ce_learned, control_doc=_CE_LEARNED_DOC,
    trivial=lambda ev: ev.stage1_acc - ev.ce_acc,
    trivial_doc="the stage-1 head, not re-trained at all, in LOS's place: its balanced "
                "accuracy minus CE re-training's",
    competitors=lambda ev: _rebalancers(ev, "all"),
)
def balanced_accuracy_gain(ev: LongTailEvidence) -> Comparison:
    return Comparison(ours=ev.los_acc, baseline=ev.ce_acc, value=ev.gain)


@claim(
    "los.few_shot_gain", experiment=long_tail,
    sentence=("In the same setting, LOS re-training (ε=0.98) raises the accuracy of the "
              "few-shot classes (< 20 training samples) over CE re-training."),
    metric="few-shot accuracy gain, LOS(ε=0.98) − CE re-training",
    unit="points",
    paper_figure="unverified: the paper's many/medium/few split (few < 20 images, as in "
                 "bilibili/LOS validate.py) could not be read offline",
    # > 0, with a floor of 0.1 point (about 3 test samples) so that a tie at 0 does not pass
    baseline="CE re-training", threshold=0.1, direction=">=",
    control=_ce_learned, control_doc=_CE_LEARNED_DOC,
    trivial=lambda ev: ev.stage1_few - ev.ce_few,
    trivial_doc="the stage-1 head, not re-trained at all, in LOS's place: its few-shot "
                "accuracy minus CE re-training's",
    competitors=lambda ev: _rebalancers(ev, "few"),
)
def few_shot_gain(ev: LongTailEvidence) -> Comparison:
    return Comparison(ours=ev.los_few, baseline=ev.ce_few, value=ev.few_gain)


@claim(
    "los.loma_decreases", experiment=long_tail,
    sentence=("In the same setting, the mean Logits Magnitude of the re-trained classifier "
              "decreases at every step of the smoothing sweep ε = 0 → 0.98."),
    metric="fraction of consecutive ε steps where the seed-mean LoMa decreases",
    unit="fraction",
    paper_figure="unverified: LoMa/RSD analysis in §3–3.1 (Figs. 1–2, Def. 2, Eq. 9, located via "
                 "the OpenReview reviews); no LoMa-vs-ε numbers read",
    threshold=1.0, direction=">=",
)
def loma_decreases(ev: LongTailEvidence) -> float:
    return ev.loma_steps_down


@claim(
    "los.beats_strongest_retraining", experiment=long_tail,
    sentence=("In the same setting, LOS re-training (ε=0.98) reaches at least the balanced "
              "accuracy of the strongest of class-balanced CE, logit adjustment and LWS "
              "re-training on the same features, seeds, batches and epochs."),
    metric="balanced accuracy, LOS(ε=0.98) − max(CB-CE, logit adj., LWS), seed means",
    unit="points",
    paper_figure="abstract: state of the art on CIFAR-100-LT, ImageNet-LT, iNaturalist2018; "
                 "margins over CB-CE/LA/LWS re-training unverified offline",
    baseline="strongest of CB-CE, logit adj., LWS", threshold=0.0, direction=">=",
    control=lambda ev: (ev.best_acc >= ev.untrained_acc + _LEARNED
                        and ev.best_acc >= ev.stage1_acc + _REBALANCED),
    control_doc=(f"The strongest re-training baseline learned: its balanced accuracy is at "
                 f"least {_LEARNED:g} points above the same MLP's at random init, and at least "
                 f"{_REBALANCED:g} points above the stage-1 head it re-trains (its own step 0)."),
)
def beats_strongest_retraining(ev: LongTailEvidence) -> Comparison:
    return Comparison(ours=ev.los_acc, baseline=ev.best_acc, value=ev.margin_vs_best)
