"""Reproduction: LOS re-training balances a long-tailed 100-class classifier.

Task (the spec's pilot, a stand-in for CIFAR-100-LT since no 100-class data set is bundled):
``iclr25.datasets.gaussian_mixture`` with K=100 classes, d=64, centres 0.35·N(0, I), unit
noise, long-tailed training counts 500 -> 5 (IR=100, 10,847 samples), balanced test set of
100 per class. Stage 1: MLP 64-128-128-100, CE + weight decay 5e-3, SGD lr 0.05, cosine,
60 epochs. Stage 2 (the paper's recipe): only the linear head, from the stage-1 head, SGD lr
5e-4 momentum 0.9 wd 0, cosine over 20 epochs, instance-balanced batches of 64. The paper's
claim at K=100 is about this re-training stage; the notes found no gain at K=10.

Quick scale keeps the training data and the stage-2 recipe unchanged but uses one seed,
20 stage-1 epochs with batches of 128, 30 test samples per class, the sweep eps in
{0, 0.5, 0.98} and no CB-CE/LA/LWS baselines; full scale uses 3 seeds (seed, seed+1,
seed+2), the pilot's stage 1 (60 epochs, batch 64), 100 test samples per class, the sweep
{0, 0.1, 0.5, 0.9, 0.98} and the baselines. We report the last stage-2 epoch; the official
code reports the best epoch on the test set, which is selection on the test set.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from iclr25.claims import Context, Measurement, Scale, claim, torch_threads
from iclr25.los.experiment import long_tailed_mixture, train_stage1
from iclr25.los.metrics import (
    group_accuracy,
    logits_magnitude,
    per_class_accuracy,
    regularized_std,
)
from iclr25.los.retrain import retrain_classifier

PAPER = ("Rethinking Classifier Re-Training in Long-Tailed Recognition: "
         "Label Over-Smooth Can Balance")
GROUPS = ("all", "many", "medium", "few")
BASELINES = ("cbce", "la", "lws")
LABELS = {"stage1": "stage 1", "eps=0": "CE re-train", "eps=0.98": "LOS ε=0.98",
          "cbce": "CB-CE", "la": "logit adj.", "lws": "LWS"}


def _setting(scale: Scale) -> dict:
    quick = scale == Scale.quick
    return dict(n_seeds=1 if quick else 3, stage1_epochs=20 if quick else 60,
                stage1_batch=128 if quick else 64, test_per_class=30 if quick else 100,
                eps=(0.0, 0.5, 0.98) if quick else (0.0, 0.1, 0.5, 0.9, 0.98),
                baselines=() if quick else BASELINES)


def _evaluate(z: torch.Tensor, y: torch.Tensor, counts: torch.Tensor) -> dict:
    return {"groups": group_accuracy(z.argmax(1), y, counts),
            "acc": per_class_accuracy(z.argmax(1), y, len(counts)).tolist(),
            "loma": logits_magnitude(z, y).tolist(),
            "rsd": regularized_std(z, y).tolist()}


def _one_seed(cfg: dict, s: int) -> dict:
    """Stage 1 once, then every stage-2 method on the same frozen features."""
    task = long_tailed_mixture(test_per_class=cfg["test_per_class"], seed=s)
    model = train_stage1(task.X_train, task.y_train, task.n_classes,
                         epochs=cfg["stage1_epochs"], batch_size=cfg["stage1_batch"], seed=s)
    with torch.no_grad():
        f_tr, f_te = model.features(task.X_train), model.features(task.X_test)
        res = {"stage1": _evaluate(model.fc(f_te), task.y_test, task.train_counts)}

    def fit(method: str, **kw: float) -> dict:
        head = retrain_classifier(f_tr, task.y_train, method, init=model.fc, seed=s, **kw)
        with torch.no_grad():
            return _evaluate(head(f_te), task.y_test, task.train_counts)

    for eps in cfg["eps"]:
        res[f"eps={eps:g}"] = fit("ce") if eps == 0 else fit("los", smoothing=eps)
    for method in cfg["baselines"]:
        res[method] = fit(method)
    return {"seed": s, "results": res, "train_counts": task.train_counts.tolist()}


@functools.lru_cache(maxsize=4)
def _experiment(scale: Scale, seed: int) -> dict:
    """Every method on seeds seed .. seed + n_seeds - 1 (cached: the claims share it)."""
    cfg = _setting(scale)
    with torch_threads(1):
        runs = [_one_seed(cfg, s) for s in range(seed, seed + cfg["n_seeds"])]
    return {"config": cfg, "runs": runs, "train_counts": runs[0]["train_counts"]}


def _mean(exp: dict, key: str, group: str) -> float:
    return float(np.mean([r["results"][key]["groups"][group] for r in exp["runs"]]))


def _gain_per_seed(exp: dict, group: str) -> list[float]:
    return [100 * (r["results"]["eps=0.98"]["groups"][group]
                   - r["results"]["eps=0"]["groups"][group]) for r in exp["runs"]]


def _details(exp: dict) -> dict:
    keys = ["stage1", *[f"eps={e:g}" for e in exp["config"]["eps"]], *exp["config"]["baselines"]]
    return {
        "setting": exp["config"],
        "seeds": [r["seed"] for r in exp["runs"]],
        "accuracy_by_group_mean": {k: {g: round(_mean(exp, k, g), 4) for g in GROUPS}
                                   for k in keys},
        "per_seed_balanced_accuracy": {k: [round(r["results"][k]["groups"]["all"], 4)
                                           for r in exp["runs"]] for k in keys},
        "mean_loma": {k: round(float(np.mean([np.mean(r["results"][k]["loma"])
                                              for r in exp["runs"]])), 4) for k in keys},
        "mean_rsd": {k: round(float(np.mean([np.mean(r["results"][k]["rsd"])
                                             for r in exp["runs"]])), 4) for k in keys},
        "loma_variant": "class: mean z_k on y=k minus mean z_k on y!=k; RSD pooled std / LoMa",
        "data": "iclr25.datasets.gaussian_mixture, K=100, d=64, centres x0.35, unit noise, "
                "IR=100 (500->5), balanced test set; stand-in for CIFAR-100-LT",
    }


def _fig_groups(ctx: Context, exp: dict) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ["stage1", "eps=0", "eps=0.98", *exp["config"]["baselines"]]
    labels = [LABELS[k] for k in keys]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    width = 0.8 / len(keys)
    for i, (k, lab) in enumerate(zip(keys, labels, strict=True)):
        vals = [[100 * r["results"][k]["groups"][g] for r in exp["runs"]] for g in GROUPS]
        ax.bar(np.arange(4) + (i - len(keys) / 2 + 0.5) * width, [np.mean(v) for v in vals],
               width, yerr=[np.std(v) for v in vals], label=lab)
    ax.set_xticks(range(4), ["balanced (all)", "many (>100)", "medium (20-100)", "few (<20)"])
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(f"Re-training on frozen features, K=100, IR=100 ({len(exp['runs'])} seed(s))")
    ax.legend(fontsize=7, ncol=3)
    return ctx.savefig(fig, "groups")


def _fig_per_class(ctx: Context, exp: dict) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    k = np.arange(len(exp["train_counts"]))
    for key in ("stage1", "eps=0", "eps=0.98", *exp["config"]["baselines"][:1]):
        lab = LABELS[key]
        for ax, metric in zip(axes, ("loma", "rsd", "acc"), strict=True):
            v = np.mean([r["results"][key][metric] for r in exp["runs"]], axis=0)
            ax.plot(k, v, lw=1, label=lab)
    for ax, title in zip(axes, ("Logits Magnitude (LoMa)", "Regularized std (RSD)",
                                "test accuracy"), strict=True):
        ax.set_title(title)
        ax.set_xlabel("class (0 = 500 train samples ... 99 = 5)")
    axes[0].legend(fontsize=7)
    return ctx.savefig(fig, "per_class")


def _fig_sweep(ctx: Context, exp: dict) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps = exp["config"]["eps"]
    keys = [f"eps={e:g}" for e in eps]
    bacc = [100 * _mean(exp, k, "all") for k in keys]
    loma = [np.mean([np.mean(r["results"][k]["loma"]) for r in exp["runs"]]) for k in keys]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(eps, bacc, "o-", label="balanced accuracy (%)")
    ax.set_xlabel("smoothing ε (0 = CE re-training)")
    ax.set_ylabel("balanced accuracy (%)")
    ax2 = ax.twinx()
    ax2.plot(eps, loma, "s--", color="C1", label="mean LoMa")
    ax2.set_ylabel("mean LoMa")
    handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], loc="center right", fontsize=7)
    return ctx.savefig(fig, "sweep")


@claim(
    "los.balanced_accuracy_gain",
    paper=PAPER,
    sentence=("On a 100-class long-tailed (IR=100) Gaussian-mixture stand-in for CIFAR-100-LT, "
              "re-training only the classifier on frozen stage-1 features with label "
              "over-smoothing (ε=0.98) beats cross-entropy re-training in balanced test "
              "accuracy by at least 2 points (mean of 3 seeds; 1 seed at quick scale)."),
    metric="balanced accuracy gain, LOS(ε=0.98) − CE re-training (points)",
    paper_figure="not verified: LOS beats CE re-training on CIFAR-100-LT IR=100 (tables "
                 "not retrievable offline); spec pilot +5 points",
    threshold=2.0,
    direction=">=",
)
def _balanced_accuracy_gain(ctx: Context) -> Measurement:
    exp = _experiment(ctx.scale, ctx.seed)
    gains = _gain_per_seed(exp, "all")
    details = {"gain_per_seed_points": [round(g, 3) for g in gains], **_details(exp)}
    return Measurement(value=float(np.mean(gains)), details=details,
                       figures=[_fig_groups(ctx, exp), _fig_per_class(ctx, exp),
                                _fig_sweep(ctx, exp)])


@claim(
    "los.few_shot_gain",
    paper=PAPER,
    sentence=("In the same setting, LOS re-training (ε=0.98) raises the accuracy of the "
              "few-shot classes (< 20 training samples) over CE re-training."),
    metric="few-shot accuracy gain, LOS(ε=0.98) − CE re-training (points)",
    paper_figure="not verified: few-shot accuracy rises with LOS on CIFAR-100-LT",
    # > 0, with a floor of 0.1 point (about 3 test samples) so that a tie at 0 does not pass
    threshold=0.1,
    direction=">=",
)
def _few_shot_gain(ctx: Context) -> Measurement:
    exp = _experiment(ctx.scale, ctx.seed)
    gains = _gain_per_seed(exp, "few")
    details = {"gain_per_seed_points": [round(g, 3) for g in gains],
               "few_shot_accuracy_mean": {k: round(_mean(exp, k, "few"), 4)
                                          for k in ("stage1", "eps=0", "eps=0.98",
                                                    *exp["config"]["baselines"])}}
    return Measurement(value=float(np.mean(gains)), details=details,
                       figures=[_fig_groups(ctx, exp)])


@claim(
    "los.loma_decreases",
    paper=PAPER,
    sentence=("In the same setting, the mean Logits Magnitude of the re-trained classifier "
              "decreases at every step of the smoothing sweep ε = 0 → 0.98."),
    metric="fraction of consecutive ε steps where the seed-mean LoMa decreases",
    paper_figure="not verified: LoMa shrinks as smoothing grows (Sec. 3 analysis)",
    threshold=1.0,
    direction=">=",
)
def _loma_decreases(ctx: Context) -> Measurement:
    exp = _experiment(ctx.scale, ctx.seed)
    eps = exp["config"]["eps"]
    loma = [float(np.mean([np.mean(r["results"][f"eps={e:g}"]["loma"]) for r in exp["runs"]]))
            for e in eps]
    steps = [b < a for a, b in zip(loma[:-1], loma[1:], strict=True)]
    details = {"eps": list(eps), "mean_loma": [round(v, 4) for v in loma],
               "mean_rsd": [round(float(np.mean([np.mean(r["results"][f"eps={e:g}"]["rsd"])
                                                 for r in exp["runs"]])), 4) for e in eps]}
    return Measurement(value=float(np.mean(steps)), details=details,
                       figures=[_fig_sweep(ctx, exp), _fig_per_class(ctx, exp)])
