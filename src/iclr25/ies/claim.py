"""Reproduction: IES saves backprop instances on digits at (almost) no cost in test accuracy,
and does better than removing the same number of instances at random.

Task (issue 40, chosen and recorded before IES was measured, from the baseline arms only):
sklearn digits (75/25 stratified split, standardised), MLP 64-256-256-10, SGD momentum 0.9,
wd 5e-4, ExponentialLR(0.96), batch 64 (the paper's recipe) but lr 0.003 instead of 0.1 and
30 epochs. With lr 0.1 digits is learned within a few epochs and removal does not matter:
on main, removing a random 78% of the backprops kept accuracy at 0.968 (plain 0.970). A
pilot of the baseline arms alone (plain, and random removal of 30% / 50% of the samples
per epoch after the first epochs, mean change against plain): lr 0.1 x 10 epochs (15% / 25%
of the backprops saved, seed 0): -0.7 / -0.9 points; lr 0.01 x 30 epochs (24% / 40% saved,
seeds 0-1): +0.1 / +0.1 points; lr 0.003 x 30 epochs (24% / 40%, seeds 0-1): -1.6 / -2.5
points. At lr 0.003 training is step-limited, so which
instances are dropped matters; ``ies.accuracy_kept``'s control re-checks that random
removal at IES's own rate costs >= 1 point in the run itself.

Arms, on the same split, init and shuffling seed per seed: plain; IES (shipped rule,
delta=1e-3, window 3); Random Remove with IES's active count epoch by epoch; small-loss
removal with IES's active count epoch by epoch (the lowest latest losses are dropped).
Accuracy is the test accuracy after the last epoch (not the best epoch, which would select
on the test set; the paper reports the best epoch, shown in the table too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from iclr25._checks import resolve_seed
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
from iclr25.datasets import digits
from iclr25.ies.stopping import InstanceEarlyStopping
from iclr25.ies.testbed import TrainLog, train

DELTA = 1e-3  # the paper's CIFAR-10 value; digits has 10 classes too
RANDOM_COST_MIN = 1.0  # points: below this, the task cannot tell removal rules apart
ARMS = ("plain", "IES", "random removal", "small-loss removal")


@dataclass(frozen=True)
class Training(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("epochs",)  # epochs of every arm
    epochs: int
    n_seeds: int  # seeds seed .. seed + n_seeds - 1, each its own split, init and shuffling
    lr: float  # 0.003: step-limited, so removal matters (see the module docstring)


@dataclass
class TrainingEvidence(Evidence):
    saved: float = scalar("fraction", "backprop instances saved by IES, seed mean")
    plain_acc: float = scalar("%", "final test accuracy, plain training, seed mean")
    ies_acc: float = scalar("%", "final test accuracy, IES, seed mean")
    random_acc: float = scalar("%", "final test accuracy, random removal at IES's rate")
    small_loss_acc: float = scalar("%", "final test accuracy, small-loss removal at IES's rate")
    acc_diff: float = scalar("points", "IES - plain, seed mean")
    beats_random: float = scalar("points", "IES - random removal at IES's rate, seed mean")
    random_cost: float = scalar("points", "plain - random removal at IES's rate, seed mean")
    best_acc_diff: float = scalar("points", "best-epoch test accuracy IES - plain, seed mean")
    acc_diff_per_seed: list = scalar("points")
    beats_random_per_seed: list = scalar("points")
    random_cost_per_seed: list = scalar("points")
    saved_per_seed: list = scalar("fraction")
    summary: Table = None
    per_seed: Table = None


class _MatchedRemoval(InstanceEarlyStopping):
    """A removal baseline with IES's budget: ``schedule[e]`` samples are trained in epoch
    ``e`` (IES's own active counts), the rest are excluded.

    ``rule="random"`` is the paper's "Random Remove"; ``rule="small_loss"`` excludes the
    samples with the smallest latest recorded loss (the paper's "Small Loss" removal, at
    IES's rate instead of a threshold).
    """

    def __init__(self, n: int, schedule: list[int], rule: str, seed: int,
                 device: torch.device | str | None = None) -> None:
        super().__init__(n, delta=0.0, device=device)
        self.schedule, self.rule = list(schedule), rule
        self.generator = resolve_seed(seed)
        if rule == "small_loss":  # only the latest loss is needed
            self.history_len = 1
            self.losses = self.losses[:, :1].clone()

    def mastered(self) -> torch.Tensor:
        size = self.schedule[min(self.epochs, len(self.schedule) - 1)]
        if self.rule == "random":
            keep = torch.randperm(self.n_samples, generator=self.generator)[:size]
        else:  # the hardest ``size`` samples stay; never-seen samples count as hardest
            last = torch.where(self.counts > 0, self.losses[:, -1], float("inf"))
            keep = torch.argsort(last, descending=True, stable=True)[:size]
        out = torch.ones(self.n_samples, dtype=torch.bool, device=self.device)
        out[keep.to(self.device)] = False
        return out


def _row(name: str, logs: list[TrainLog]) -> tuple:
    return (name, float(np.mean([g.final_acc for g in logs])),
            float(np.mean([g.best_acc for g in logs])),
            float(np.mean([g.saved_fraction for g in logs])),
            float(np.mean([g.n_backprop for g in logs])),
            float(np.mean([g.n_forward for g in logs])), float(np.mean([g.seconds for g in logs])))


_SUMMARY_COLUMNS = ("run", "final acc", "best acc", "saved fraction", "backprops", "forwards",
                    "seconds")
_DEVIATIONS = (
    "sklearn digits with an MLP 64-256-256-10 instead of CIFAR/ImageNet with ResNets: "
    "offline CPU budget",
    "lr 0.003 and 30 epochs instead of the paper's lr 0.1 and 200 epochs: at lr 0.1 digits "
    "is learned in a few epochs and random removal of 24-40% of the backprops costs < 1 "
    "point, so no removal rule can be told apart (pilot of the baseline arms, module "
    "docstring); at lr 0.003 it costs 1.6-2.5 points",
    "the removal baselines get IES's active count epoch by epoch (matched budget), not a "
    "fixed ratio or loss threshold",
)


@experiment(
    quick=Training(epochs=20, n_seeds=1, lr=0.003,
                   deviations=(*_DEVIATIONS, "1 seed and 20 epochs: smoke test")),
    full=Training(epochs=30, n_seeds=3, lr=0.003, deviations=_DEVIATIONS),
)
def training(setting: Training, ctx: Context) -> TrainingEvidence:
    """Plain, IES, and random / small-loss removal at IES's rate, on the same seeds."""
    seeds = list(range(ctx.seed, ctx.seed + setting.n_seeds))
    runs: dict[str, list[TrainLog]] = {arm: [] for arm in ARMS}
    kw = dict(epochs=setting.epochs, lr=setting.lr)
    with torch_threads(1):  # tiny MLP: threads only add contention
        for s in seeds:
            split = digits(seed=s, device=ctx.device)
            n = len(split.X_train)
            runs["plain"].append(train(*split, seed=s, **kw))
            ies = train(*split, stopper=InstanceEarlyStopping(n, DELTA, device=ctx.device),
                        seed=s, **kw)
            runs["IES"].append(ies)
            for arm, rule in (("random removal", "random"), ("small-loss removal", "small_loss")):
                stopper = _MatchedRemoval(n, ies.active, rule, 20_000 + s, device=ctx.device)
                runs[arm].append(train(*split, stopper=stopper, seed=s, **kw))

    def points(arm: str) -> list[float]:
        return [100 * g.final_acc for g in runs[arm]]

    plain, ies_acc, rand = points("plain"), points("IES"), points("random removal")
    diff = [i - p for i, p in zip(ies_acc, plain, strict=True)]
    beats = [i - r for i, r in zip(ies_acc, rand, strict=True)]
    cost = [p - r for p, r in zip(plain, rand, strict=True)]
    best = [100 * (i.best_acc - p.best_acc) for i, p in zip(runs["IES"], runs["plain"],
                                                            strict=True)]
    _figure(ctx, setting, runs)
    return TrainingEvidence(
        saved=float(np.mean([g.saved_fraction for g in runs["IES"]])),
        plain_acc=float(np.mean(plain)), ies_acc=float(np.mean(ies_acc)),
        random_acc=float(np.mean(rand)),
        small_loss_acc=float(np.mean(points("small-loss removal"))),
        acc_diff=float(np.mean(diff)), beats_random=float(np.mean(beats)),
        random_cost=float(np.mean(cost)), best_acc_diff=float(np.mean(best)),
        acc_diff_per_seed=diff, beats_random_per_seed=beats, random_cost_per_seed=cost,
        saved_per_seed=[g.saved_fraction for g in runs["IES"]],
        summary=Table(f"digits, lr {setting.lr:g}, {setting.epochs} epochs, mean of "
                      f"{len(seeds)} seeds (accuracy as a fraction)", _SUMMARY_COLUMNS,
                      [_row(k, v) for k, v in runs.items()]),
        per_seed=Table("final test accuracy per seed (fraction) and IES's saved fraction",
                       ("seed", *ARMS, "IES saved fraction"),
                       [(s, *[runs[a][i].final_acc for a in ARMS],
                         runs["IES"][i].saved_fraction) for i, s in enumerate(seeds)]),
    )


def _figure(ctx: Context, setting: Training, runs: dict[str, list[TrainLog]]) -> None:
    ep = np.arange(1, setting.epochs + 1)
    fig = ctx.figure("curves", figsize=(10, 3.8))
    ax = fig.subplots(1, 2)
    for (name, logs), color in zip(runs.items(), ("0.4", "C1", "C0", "C2"), strict=True):
        acc = np.array([g.test_acc for g in logs])
        act = np.array([g.active for g in logs]) / logs[0].active[0]
        ax[0].plot(ep, acc.mean(0), color=color, label=name)
        ax[0].fill_between(ep, acc.min(0), acc.max(0), color=color, alpha=0.15)
        ax[1].plot(ep, act.mean(0), color=color, label=name)
    saved = float(np.mean([g.saved_fraction for g in runs["IES"]]))
    ax[0].set(xlabel="epoch", ylabel="test accuracy", ylim=(0.7, 1.0),
              title=f"digits MLP, lr {setting.lr:g}, mean/min/max of {setting.n_seeds} seeds")
    ax[1].set(xlabel="epoch", ylabel="fraction of samples backpropagated",
              title=f"IES saves {100 * saved:.1f}% of backprop instances")
    ax[0].legend(fontsize=8)
    ax[1].legend(fontsize=8)
    fig.tight_layout()


_CONTROL_DOC = (f"random removal at IES's rate loses >= {RANDOM_COST_MIN:g} point of test "
                f"accuracy against plain training, so the task can tell removal rules apart")


def _removal_matters(ev: TrainingEvidence) -> bool:
    return ev.random_cost >= RANDOM_COST_MIN


@claim(
    "ies.backprop_saved", experiment=training,
    sentence="IES (delta=1e-3) reduces the number of backpropagated instances by at least 10% "
             "on digits with an MLP, at the same number of epochs.",
    metric="fraction of backprop instances saved (mean over seeds)", unit="fraction",
    paper_figure="10%-50% fewer backpropagated instances (abstract; CIFAR-10/100, ImageNet)",
    threshold=0.10, direction=">=",
)
def backprop_saved(ev: TrainingEvidence) -> float:
    return ev.saved


@claim(
    "ies.accuracy_kept", experiment=training,
    sentence="IES keeps test accuracy within 0.5 points of (or above) plain training.",
    metric="test accuracy IES - plain, percentage points (final epoch, mean over seeds)",
    unit="points",
    paper_figure="accuracy maintained or slightly improved (abstract; tables not retrieved)",
    threshold=-0.5, direction=">=", baseline="plain training",
    control=_removal_matters, control_doc=_CONTROL_DOC,
)
def accuracy_kept(ev: TrainingEvidence) -> Comparison:
    return Comparison(ours=ev.ies_acc, baseline=ev.plain_acc, value=ev.acc_diff)


@claim(
    "ies.beats_random_removal", experiment=training,
    sentence="IES chooses which instances to drop: at the same backprop budget, epoch by "
             "epoch, it beats removing instances at random by at least 0.5 points.",
    metric="test accuracy IES - random removal at IES's rate, percentage points (final "
           "epoch, mean over seeds)", unit="points",
    paper_figure="IES above the Random Remove baseline (paper's comparison tables; numbers "
                 "not retrieved)",
    threshold=0.5, direction=">=", baseline="random removal at IES's rate",
    control=_removal_matters, control_doc=_CONTROL_DOC,
)
def beats_random_removal(ev: TrainingEvidence) -> Comparison:
    return Comparison(ours=ev.ies_acc, baseline=ev.random_acc, value=ev.beats_random)
