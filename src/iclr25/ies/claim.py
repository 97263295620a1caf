"""Reproduction: IES saves backprop instances on a random-teacher task at (almost) no cost in
test accuracy, and does better than removing the same number of instances at random.

Testbed (issue 72's third pilot, :mod:`iclr25.ies.pilot`, which trained plain and the
control's arms alone on held-apart seeds 70000-70004 by a rule committed before it ran):
:func:`~iclr25.ies.testbed.teacher_split` with 3000 training rows and 5000 test rows (1
point = 50 test rows; digits had 450, and its control failed on the claim seeds), MLP
32-256-256-10, lr 0.0015, 30 epochs, the paper's recipe otherwise. The history below led
there.

Task (issue 40, chosen and recorded before IES was measured, from the baseline arms only):
sklearn digits (75/25 stratified split, standardised), MLP 64-256-256-10, SGD momentum 0.9,
wd 5e-4, ExponentialLR(0.96), batch 64 (the paper's recipe) but lr 0.003 instead of 0.1 and
30 epochs. With lr 0.1 digits is learned within a few epochs and removal does not matter:
on main, removing a random 78% of the backprops kept accuracy at 0.968 (plain 0.970). A
pilot of the baseline arms alone (plain, and random removal of 30% / 50% of the samples
per epoch after the first epochs, mean change against plain): lr 0.1 x 10 epochs (15% / 25%
of the backprops saved, seed 0): -0.7 / -0.9 points; lr 0.01 x 30 epochs (24% / 40% saved,
seeds 0-1): +0.1 / +0.1 points; lr 0.003 x 30 epochs (24% / 40%, seeds 0-1): -1.6 / -2.5
points. At lr 0.003 training is step-limited, so which instances are dropped matters; the
claims' control re-checks in the run itself that random removal (at a fixed rate) costs >= 1
point.

Issue 53 (rules written before the claim seeds ran): IES's delta is chosen per seed on the
training split (the test split is never read), by :func:`pick_delta`: the largest delta of
the grid whose IES run, and every smaller delta's, keeps final validation accuracy within 0.5
points of plain training (the claim's own tolerance: a user's "lose at most 0.5 points");
then every arm trains on the whole training split.

Issue 72 (rules written before its pilot, which trained plain and the control arms alone on
seeds 50000-50002: :mod:`iclr25.ies.pilot`): the 0.5-point margin must be >= 5 validation
samples, so delta is chosen by 4-fold stratified cross-validation, the held-out accuracies
pooled over all 1347 training rows (6.7 samples; one 25% split held 337 rows, 1.7 samples).
The claims compare IES with random removal at IES's rate; the control certifies the cost of
random removal at every saved fraction of a grid declared from the paper's range (10, 20, 30,
40 and 50% of the backprops; a fixed count per epoch after the first sixth of the epochs),
never at IES's own rate, which would read the method's result. At issue 40's lr 0.003 random
removal saving 10% cost 0.22-1.11 points on the pilot seeds; only lr 0.001 (plain 83%) made
every grid rate cost >= 1 point on every pilot seed, so the claims trained at lr 0.001. On
the claim seeds its control then failed (smallest cost 0.67 / 0.89 / 1.78 points on the 3
full draws); a second pilot (digits and a random-teacher task; none passed) and a third chose
the teacher task above, whose 3000 training rows put the margin at 15 pooled samples.

Arms, on the same split, init and shuffling seed per seed: plain; IES (shipped rule, the
selected delta, window 3); Random Remove with IES's active count epoch by epoch; small-loss
removal with IES's active count epoch by epoch (the lowest latest losses are dropped); random
removal at each saved fraction of the grid (the control's arms); a second random-removal draw
at IES's rate
(the trivial arm of ``beats_random_removal``: what a gap between two random draws looks
like); and the untrained network (the baseline's step-0 self). Accuracy is the test accuracy
after the last epoch (not the best epoch, which would select on the test set; the paper
reports the best epoch, shown in the table too).
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
from iclr25.ies.stopping import InstanceEarlyStopping
from iclr25.ies.testbed import TrainLog, teacher_split, train

DELTAS = (1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2)  # the paper's 1e-3 up; its README: 1e-5..1e-1
VAL_MARGIN = 0.5  # points: the selected delta keeps validation accuracy this close to plain
MIN_MARGIN_SAMPLES = 5  # the margin must be this many validation samples, not 1-2 flips
VAL_FOLDS = 4  # stratified folds of each seed's training split, pooled for choosing delta
# saved fractions of the control's random removal: the paper's 10%-50% (abstract), declared
# from the paper, never from an IES run (issue 72)
CONTROL_SAVED = (0.1, 0.2, 0.3, 0.4, 0.5)
RANDOM_COST_MIN = 1.0  # points: below this, the task cannot tell removal rules apart
LEARNED_MIN = 50.0  # points: plain training beats its untrained self by at least this
ARMS = ("plain", "IES", "random removal", "small-loss removal", "random removal, 2nd draw")


@dataclass(frozen=True)
class Training(Setting):
    budget_fields: ClassVar[tuple[str, ...]] = ("epochs",)  # epochs of every arm and the search
    epochs: int
    n_seeds: int  # seeds seed .. seed + n_seeds - 1, each its own split, init and shuffling
    lr: float  # step-limited, so removal matters (module docstring; issue 72's pilot)
    n_train: int  # training rows of the teacher task (teacher_split; issue 72's 2nd pilot)
    deltas: tuple[float, ...]  # the validation search's grid (pick_delta)
    control_saved: tuple[float, ...] = CONTROL_SAVED  # the control's random-removal grid
    val_folds: int = VAL_FOLDS  # cross-validation folds of the delta search


@dataclass
class TrainingEvidence(Evidence):
    saved: float = scalar("fraction", "backprop instances saved by IES, seed mean")
    plain_acc: float = scalar("%", "final test accuracy, plain training, seed mean")
    init_acc: float = scalar("%", "test accuracy of the untrained network (plain's step 0)")
    ies_acc: float = scalar("%", "final test accuracy, IES, seed mean")
    random_acc: float = scalar("%", "final test accuracy, random removal at IES's rate")
    small_loss_acc: float = scalar("%", "final test accuracy, small-loss removal at IES's rate")
    random2_acc: float = scalar("%", "random removal at IES's rate, a second removal draw")
    acc_diff: float = scalar("points", "IES - plain, seed mean")
    random_diff: float = scalar("points", "random removal at IES's rate - plain, seed mean")
    beats_random: float = scalar("points", "IES - random removal at IES's rate, seed mean")
    beats_small_loss: float = scalar("points", "IES - small-loss removal at IES's rate")
    random_vs_random: float = scalar("points", "2nd random draw - random removal (trivial arm)")
    random_vs_small_loss: float = scalar("points", "random - small-loss removal (trivial arm)")
    plain_vs_small_loss: float = scalar("points", "plain - small-loss removal (trivial arm)")
    random_cost: float = scalar("points", "plain - random removal, the smallest over the "
                                          "control's grid of saved fractions (seed means)")
    plain_gain: float = scalar("points", "plain - its untrained self, seed mean")
    best_acc_diff: float = scalar("points", "best-epoch test accuracy IES - plain, seed mean")
    val_margin_samples: float = scalar("samples", "pick_delta's margin in pooled validation "
                                                  "samples")
    control_saved: list = scalar("fraction", "the control's grid of saved fractions")
    control_acc: list = scalar("%", "random removal at each grid fraction, seed mean")
    random_cost_per_rate: list = scalar("points", "plain - random removal at each grid "
                                                  "fraction, seed mean")
    delta_per_seed: list = scalar("delta", "IES's delta chosen on each seed's validation split")
    acc_diff_per_seed: list = scalar("points")
    beats_random_per_seed: list = scalar("points")
    beats_small_loss_per_seed: list = scalar("points")
    random_cost_per_seed: list = scalar("points", "smallest cost over the grid, per seed")
    saved_per_seed: list = scalar("fraction")
    summary: Table | None = None
    per_seed: Table | None = None
    selection: Table | None = None


def margin_samples(n_val: int, margin: float = VAL_MARGIN) -> float:
    """``margin`` (accuracy points) as a number of validation samples out of ``n_val``."""
    return margin / 100 * n_val


def pick_delta(val_acc: dict[float, float], plain_val_acc: float,
               margin: float = VAL_MARGIN, n_val: int | None = None) -> float:
    """The validation rule for IES's delta: the largest delta that keeps accuracy.

    ``val_acc`` maps each delta tried to IES's validation accuracy (points); a delta is kept
    when its accuracy, and that of every smaller delta tried, is at least ``plain_val_acc -
    margin`` (one lucky large delta cannot win over failing smaller ones). When even the
    smallest fails, the smallest is returned (the least removal tried). ``n_val``, the
    number of validation samples the accuracies were read on, when given must make the
    margin at least ``MIN_MARGIN_SAMPLES`` samples: a margin of one or two samples is
    decided by single flips.

    Raises:
        ValueError: ``val_acc`` is empty, or ``margin`` is fewer than ``MIN_MARGIN_SAMPLES``
            samples of ``n_val``.
    """
    if not val_acc:
        raise ValueError("val_acc must hold at least one delta")
    if n_val is not None and margin_samples(n_val, margin) < MIN_MARGIN_SAMPLES:
        raise ValueError(f"margin={margin:g} points is {margin_samples(n_val, margin):.2f} of "
                         f"n_val={n_val} validation samples; at least {MIN_MARGIN_SAMPLES} "
                         f"are needed (n_val >= {100 * MIN_MARGIN_SAMPLES / margin:g})")
    chosen = min(val_acc)
    for d in sorted(val_acc):
        if val_acc[d] < plain_val_acc - margin:
            break
        chosen = d
    return chosen


class _MatchedRemoval(InstanceEarlyStopping):
    """A removal baseline with a given budget: ``schedule[e]`` samples are trained in epoch
    ``e`` (IES's own active counts, or a fixed rate), the rest are excluded.

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


def full_epochs(epochs: int) -> int:
    """Epochs the control's random removal trains in full before removing: the first sixth
    (5 of 30, as issue 40's pilot did)."""
    return epochs // 6


def saved_schedule(n: int, epochs: int, saved: float) -> list[int]:
    """The control arm's active counts: all ``n`` samples for :func:`full_epochs`, then a
    fixed count per epoch, so that the run saves ``saved`` of the ``n * epochs`` backprops.

    Raises:
        ValueError: ``saved`` cannot be reached by removing after the full epochs.
    """
    full = full_epochs(epochs)
    rate = saved * epochs / (epochs - full)
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"saved={saved:g} cannot be reached in {epochs - full} of {epochs} "
                         f"epochs")
    return [n] * full + [round((1 - rate) * n)] * (epochs - full)


def _select_delta(split, setting: Training, seed: int, device: torch.device
                  ) -> tuple[float, list[tuple]]:
    """Train plain and IES at each delta on ``val_folds`` stratified folds of the training
    split (each fold held out in turn); :func:`pick_delta` on the accuracies pooled over all
    held-out rows, so the margin is read on the whole training split. The test split is
    never read."""
    from sklearn.model_selection import StratifiedKFold

    y = split.y_train.cpu().numpy()
    folds = StratifiedKFold(setting.val_folds, shuffle=True, random_state=seed % 2**32)
    kw = dict(epochs=setting.epochs, lr=setting.lr, seed=seed)
    correct = dict.fromkeys(("plain", *setting.deltas), 0)
    saved = {d: [] for d in setting.deltas}
    for fit, val in folds.split(np.zeros(len(y)), y):
        fit, val = torch.as_tensor(fit, device=device), torch.as_tensor(val, device=device)
        data = (split.X_train[fit], split.y_train[fit], split.X_train[val], split.y_train[val])
        correct["plain"] += round(len(val) * train(*data, **kw).final_acc)
        for d in setting.deltas:
            log = train(*data, stopper=InstanceEarlyStopping(len(fit), d, device=device), **kw)
            correct[d] += round(len(val) * log.final_acc)
            saved[d].append(log.saved_fraction)
    n_val = len(y)
    plain = 100 * correct["plain"] / n_val
    val_acc = {d: 100 * correct[d] / n_val for d in setting.deltas}
    chosen = pick_delta(val_acc, plain, n_val=n_val)
    return chosen, [(seed, d, val_acc[d], plain, float(np.mean(saved[d])), d == chosen)
                    for d in setting.deltas]


def _control_arm(saved: float) -> str:
    return f"random {saved:.0%} saved (control)"


def _seed_runs(setting: Training, s: int, device: torch.device
               ) -> tuple[dict[str, TrainLog], float, list[tuple], float]:
    """Seed ``s``'s arms: (each arm's log, IES's delta chosen on validation, the delta
    search's rows, the untrained MLP's test accuracy in %)."""
    from iclr25._train import accuracy, seeded_mlp

    split = teacher_split(setting.n_train, seed=s, device=device)
    n = len(split.X_train)
    kw = dict(epochs=setting.epochs, lr=setting.lr)
    delta, rows = _select_delta(split, setting, s, device)
    # train() initialises its MLP from the same seed: this is plain's step-0 self
    net = seeded_mlp((split.X_train.shape[1], 256, 256, 10), seed=s).to(device)
    init = 100 * accuracy(net, split.X_test, split.y_test)
    logs = {"plain": train(*split, seed=s, **kw)}
    ies = logs["IES"] = train(*split, stopper=InstanceEarlyStopping(n, delta, device=device),
                              seed=s, **kw)
    arms = [("random removal", "random", ies.active, 20_000 + s),
            ("small-loss removal", "small_loss", ies.active, 20_000 + s),
            (ARMS[4], "random", ies.active, 30_000 + s)]
    arms += [(_control_arm(f), "random", saved_schedule(n, setting.epochs, f),
              40_000 + 1_000 * i + s) for i, f in enumerate(setting.control_saved)]
    for arm, rule, sched, draw in arms:
        stopper = _MatchedRemoval(n, sched, rule, draw, device=device)
        logs[arm] = train(*split, stopper=stopper, seed=s, **kw)
    return logs, delta, rows, init


def _row(name: str, logs: list[TrainLog]) -> tuple:
    return (name, float(np.mean([g.final_acc for g in logs])),
            float(np.mean([g.best_acc for g in logs])),
            float(np.mean([g.saved_fraction for g in logs])),
            float(np.mean([g.n_backprop for g in logs])),
            float(np.mean([g.n_forward for g in logs])), float(np.mean([g.seconds for g in logs])))


_SUMMARY_COLUMNS = ("run", "final acc", "best acc", "saved fraction", "backprops", "forwards",
                    "seconds")
_DEVIATIONS = (
    "a random-teacher task (iclr25.ies.testbed.teacher_split: 3000 training and 5000 test "
    "rows, 32 inputs, 10 classes) with an MLP 32-256-256-10 instead of CIFAR/ImageNet with "
    "ResNets: offline CPU budget; digits until issue 72's third pilot (below)",
    "lr 0.0015 and 30 epochs instead of the paper's lr 0.1 and 200 epochs: at lr 0.1 digits "
    "is learned in a few epochs and random removal of 24-40% of the backprops costs < 1 "
    "point, so no removal rule can be told apart (issue 40's pilot of the baseline arms, "
    "module docstring, chose 0.003; issue 72's pilot below chose 0.001)",
    "the removal baselines get IES's active count epoch by epoch (matched budget), not a "
    "fixed ratio or loss threshold",
    "delta chosen per seed by the largest delta in the grid whose IES run, and every "
    "smaller delta's, stays within 0.5 points of plain training's validation accuracy, "
    "instead of the paper's fixed 1e-3 (at 1e-3 IES saves 4.5% here; issue 53)",
    "issue 72: the 0.5-point margin must be >= 5 validation samples (n_val >= 1000); a 25% "
    "split of digits' training split held 337 rows (1.7 samples). Delta is now chosen by "
    "4-fold stratified cross-validation of the training split (each fold's 25% held out in "
    "turn, accuracies pooled over all 1347 rows: the margin is 6.7 samples; 15 on the "
    "teacher task's 3000 rows); by arithmetic, fixed before any run",
    "issue 72 rule, written before its pilot: the claims compare IES with random removal at "
    "IES's rate, so the control must certify the cost of random removal at that rate "
    "without reading IES; it certifies it over a grid of saved fractions declared from the "
    "paper (10-50%, the abstract's range, which backprop_saved's 10% opens): random "
    "removal of a fixed count per epoch after the first sixth of the epochs, saving 10, "
    "20, 30, 40 and 50% of the backprops, must each cost >= 1 point against plain "
    "training. Pilot (iclr25.ies.pilot): lr 0.003 / 0.002 / 0.0015 / 0.001 at 30 epochs, "
    "held-apart seeds 50000-50002 (claims use seed + 400000 x draw), plain and the 5 grid "
    "arms only (no IES, no delta search). A lr passes when on every pilot seed plain gains "
    ">= 50 points over its untrained self and the smallest cost over the grid is >= 1 "
    "point; the largest passing lr is chosen (the least step-limited, nearest the paper's "
    "0.1); with none passing, the lr with the largest smallest cost, and the claims read "
    "inconclusive where the control fails. A delta that saves < 10% sits below the grid "
    "and fails backprop_saved on its own",
    "issue 72 pilot table (iclr25.ies.pilot; cost = plain - random removal in points at "
    "saved 10/20/30/40/50%, mean of seeds 50000-50002; smallest per seed): lr 0.003 "
    "(plain 94.8%): 0.59/1.48/1.78/2.96/4.81, smallest 1.11/0.22/0.44; lr 0.002 (92.7%): "
    "0.89/2.81/3.70/6.00/7.33, smallest 0.67/1.56/0.44; lr 0.0015 (89.3%): "
    "1.41/2.74/4.22/7.70/9.33, smallest 2.00/1.78/0.44; lr 0.001 (83.4%, gains 69-77 "
    "points): 1.78/3.48/4.30/6.67/7.78, smallest 1.78/1.56/2.00. Only lr 0.001 passes on "
    "every seed: chosen (the claims' lr 0.003 becomes 0.001)",
    "issue 72, second pilot (the testbed), rule written and committed before it ran "
    "(iclr25.ies.pilot): on the claim seeds lr 0.001's control failed (smallest cost 0.67 / "
    "0.89 / 1.78 points on the 3 full draws; digits' 450 test rows make 1 point 4.5 rows). "
    "Grid: today's testbed (digits, lr 0.001) and a random-teacher task "
    "(iclr25.ies.testbed.teacher_split: 32 inputs, 10 classes, teacher width 64, no label "
    "noise, 5000 test rows, 1 point = 50 rows) with 1500 or 3000 training rows at lr 0.003 "
    "/ 0.001 / 0.0005, all 30 epochs; held-apart seeds 60000-60004; plain and the 5 "
    "control arms only (no IES, no delta search). A point passes when the claims' control "
    "passes on every pilot seed (gain >= 50 points, random removal at each of 10-50% "
    "saved costs >= 1 point) and its projected single-thread CPU of a full draw is <= 3x "
    "today's (scaled by a plain run's CPU time against the digits point). Choice: the "
    "passing point with the largest smallest cost over grid and seeds (ties: cheaper); "
    "none passing, digits stays",
    "issue 72 second pilot table (cost = plain - random removal in points at saved "
    "10/20/30/40/50%, mean of seeds 60000-60004; smallest per seed): digits lr 0.001 "
    "(plain 85.5%): 1.38/2.53/3.73/6.18/7.82, smallest 0.44/2.00/1.11/0.89/2.44; teacher "
    "1500 rows lr 0.003 (64.3%, gains 50.7-58.5, CPU x1.25): 1.90/5.16/8.22/10.89/15.02, "
    "smallest 2.22/2.22/2.08/2.30/0.66; 1500 lr 0.001 (36.6%, gains 18-36): smallest "
    "2.32-3.00; 1500 lr 0.0005 (24.1%, gains 5-22): smallest 0.74-1.42; 3000 lr 0.003 "
    "(75.0%, gains 63-67, x1.63): 0.54/1.41/2.98/4.66/7.42, smallest 0.14-0.84; 3000 lr "
    "0.001 (55.6%, gains 40-51, x1.64): smallest 1.44-3.24; 3000 lr 0.0005 (36.6%, gains "
    "15-32): smallest 1.38-2.82. None passes (where removal costs >= 1 point plain has not "
    "learned 50, where it has, 10% removal costs < 1 on a seed)",
    "issue 72 third pilot, rule written and committed before it ran: the second's "
    "failures bracket lr, so the teacher task with 1500 rows at lr 0.002 and 3000 rows at "
    "lr 0.002 and 0.0015, 30 epochs, fresh held-apart seeds 70000-70004, the same arms, "
    "pass test, cost bound and choice; none passing, digits stays",
    "issue 72 third pilot table (same columns, seeds 70000-70004; gain = plain - "
    "untrained): digits lr 0.001 (83.3%): 1.51/2.93/3.96/5.16/6.00, smallest "
    "2.44/0.89/0.89/2.44/0.89 (fails); teacher 1500 lr 0.002 (52.3%, gains 37.9-45.6, "
    "fails the gain): smallest 1.90-3.62; 3000 lr 0.002 (69.9%, gains 56.6-61.6, CPU "
    "x2.05): 1.43/3.43/6.35/9.11/13.05, smallest 1.04/2.02/1.52/1.50/1.08 (passes); 3000 "
    "lr 0.0015 (64.4%, gains 50.4-57.1, CPU x1.66): 1.95/4.75/7.87/10.91/14.45, smallest "
    "1.88/2.26/2.58/1.64/1.38 (passes). Chosen by the rule (largest smallest cost): the "
    "teacher task with 3000 rows at lr 0.0015; its gain margin is thin (50.4 on one pilot "
    "seed against the 50-point bar)",
)


@experiment(
    quick=Training(epochs=20, n_seeds=1, lr=0.0015, n_train=3000, deltas=(1e-3, 1e-2),
                   deviations=(*_DEVIATIONS, "1 seed, 20 epochs and a 2-delta grid: smoke "
                                             "test")),
    full=Training(epochs=30, n_seeds=3, lr=0.0015, n_train=3000, deltas=DELTAS,
                  deviations=_DEVIATIONS),
    random=(
        "the teacher task and its train/test split",
        "the validation split",
        "initialisation and shuffling",
        "the removal draws",
    ),
    per_draw=("n_seeds",),
    cost=(24, 132),  # issue 72: digits' (12, 66) x2.0, quick's CPU on the teacher / on digits
)
def training(setting: Training, ctx: Context) -> TrainingEvidence:
    """Plain, IES (delta chosen by cross-validation), random / small-loss removal at IES's
    rate and random removal at each saved fraction of the control's grid, on the same seeds."""
    seeds = list(range(ctx.seed, ctx.seed + setting.n_seeds))
    arms = (*ARMS, *map(_control_arm, setting.control_saved))
    runs: dict[str, list[TrainLog]] = {arm: [] for arm in arms}
    deltas, selection, init = [], [], []
    with torch_threads(1):  # tiny MLP: threads only add contention
        for s in seeds:
            logs, delta, rows, acc0 = _seed_runs(setting, s, ctx.device)
            for arm, log in logs.items():
                runs[arm].append(log)
            deltas.append(delta)
            selection.extend(rows)
            init.append(acc0)
    _figure(ctx, setting, runs)
    return _evidence(setting, seeds, runs, deltas, selection, init)


def _evidence(setting: Training, seeds: list[int], runs: dict[str, list[TrainLog]],
              deltas: list[float], selection: list[tuple], init: list[float]
              ) -> TrainingEvidence:
    def points(arm: str) -> list[float]:
        return [100 * g.final_acc for g in runs[arm]]

    def minus(a: list[float], b: list[float]) -> list[float]:
        return [x - y for x, y in zip(a, b, strict=True)]

    plain, ies_acc, rand = points("plain"), points("IES"), points("random removal")
    small, rand2 = points("small-loss removal"), points(ARMS[4])
    control = [points(_control_arm(f)) for f in setting.control_saved]
    diff, beats, beats_small = minus(ies_acc, plain), minus(ies_acc, rand), minus(ies_acc, small)
    cost = [minus(plain, c) for c in control]  # (rates, seeds)
    best = [100 * (i.best_acc - p.best_acc) for i, p in zip(runs["IES"], runs["plain"],
                                                            strict=True)]
    n_val = runs["plain"][0].active[0]  # the delta search pools the whole training split
    margin = margin_samples(n_val)
    return TrainingEvidence(
        saved=float(np.mean([g.saved_fraction for g in runs["IES"]])),
        plain_acc=float(np.mean(plain)), init_acc=float(np.mean(init)),
        ies_acc=float(np.mean(ies_acc)), random_acc=float(np.mean(rand)),
        small_loss_acc=float(np.mean(small)), random2_acc=float(np.mean(rand2)),
        random_vs_random=float(np.mean(minus(rand2, rand))),
        random_vs_small_loss=float(np.mean(minus(rand, small))),
        plain_vs_small_loss=float(np.mean(minus(plain, small))),
        acc_diff=float(np.mean(diff)), random_diff=float(np.mean(minus(rand, plain))),
        beats_random=float(np.mean(beats)), beats_small_loss=float(np.mean(beats_small)),
        random_cost=float(np.min(np.mean(cost, axis=1))),
        plain_gain=float(np.mean(minus(plain, init))),
        best_acc_diff=float(np.mean(best)), val_margin_samples=margin,
        control_saved=list(setting.control_saved),
        control_acc=[float(np.mean(c)) for c in control],
        random_cost_per_rate=[float(np.mean(c)) for c in cost],
        delta_per_seed=deltas, acc_diff_per_seed=diff, beats_random_per_seed=beats,
        beats_small_loss_per_seed=beats_small,
        random_cost_per_seed=[float(v) for v in np.min(cost, axis=0)],
        saved_per_seed=[g.saved_fraction for g in runs["IES"]],
        summary=Table(f"teacher task, {setting.n_train} training rows, lr {setting.lr:g}, "
                      f"{setting.epochs} epochs, mean of {len(seeds)} seeds (accuracy as a "
                      f"fraction)", _SUMMARY_COLUMNS,
                      [_row(k, v) for k, v in runs.items()]),
        per_seed=Table("final test accuracy per seed (fraction), IES's delta and saved "
                       "fraction", ("seed", *runs, "IES delta", "IES saved fraction"),
                       [(s, *[runs[a][i].final_acc for a in runs], deltas[i],
                         runs["IES"][i].saved_fraction) for i, s in enumerate(seeds)]),
        selection=Table(f"delta search, {setting.val_folds}-fold cross-validation on each "
                        f"seed's training split (accuracy in %, pooled over its {n_val} "
                        f"rows: the {VAL_MARGIN:g}-point margin is {margin:.1f} samples)",
                        ("seed", "delta", "IES val acc", "plain val acc", "saved fraction",
                         "chosen"), selection),
    )


def _figure(ctx: Context, setting: Training, runs: dict[str, list[TrainLog]]) -> None:
    ep = np.arange(1, setting.epochs + 1)
    fig = ctx.figure("curves", figsize=(10, 3.8))
    ax = fig.subplots(1, 2)
    from matplotlib import colormaps

    k = len(runs) - len(ARMS)  # the control's grid arms, in shades of red
    colors = ("0.4", "C1", "C0", "C2", "C4",
              *(colormaps["Reds"](0.35 + 0.6 * i / max(k - 1, 1)) for i in range(k)))
    for (name, logs), color in zip(runs.items(), colors, strict=True):
        acc = np.array([g.test_acc for g in logs])
        act = np.array([g.active for g in logs]) / logs[0].active[0]
        ax[0].plot(ep, acc.mean(0), color=color, label=name)
        ax[0].fill_between(ep, acc.min(0), acc.max(0), color=color, alpha=0.15)
        ax[1].plot(ep, act.mean(0), color=color, label=name)
    saved = float(np.mean([g.saved_fraction for g in runs["IES"]]))
    ax[0].set(xlabel="epoch", ylabel="test accuracy",
              title=f"teacher task MLP, lr {setting.lr:g}, mean/min/max of {setting.n_seeds} "
                    f"seeds")
    ax[1].set(xlabel="epoch", ylabel="fraction of samples backpropagated",
              title=f"IES saves {100 * saved:.1f}% of backprop instances")
    ax[0].legend(fontsize=8)
    ax[1].legend(fontsize=8)
    fig.tight_layout()


_LEARNED_DOC = (f"plain training learned: its final test accuracy beats its untrained "
                f"(step-0) self by >= {LEARNED_MIN:g} points")
_CONTROL_DOC = (f"{_LEARNED_DOC}, and random removal saving each of "
                f"{', '.join(f'{f:.0%}' for f in CONTROL_SAVED)} of the backprops (the "
                f"paper's range, declared before any IES run; a fixed count per epoch after "
                f"the first sixth of the epochs) loses >= {RANDOM_COST_MIN:g} point against "
                f"plain training, so the task can tell removal rules apart at every rate the "
                f"claims may compare at")


def _learned(ev: TrainingEvidence) -> bool:
    return ev.plain_gain >= LEARNED_MIN


def _learned_and_removal_matters(ev: TrainingEvidence) -> bool:
    return ev.plain_gain >= LEARNED_MIN and ev.random_cost >= RANDOM_COST_MIN


@claim(
    "ies.backprop_saved", experiment=training,
    sentence="IES (delta chosen on validation) reduces the number of backpropagated "
             "instances by at least 10% on a random-teacher task with an MLP, at the same "
             "number of epochs.",
    metric="fraction of backprop instances saved (mean over seeds)", unit="fraction",
    paper_figure="10%-50% fewer backpropagated instances (abstract; CIFAR-10/100, ImageNet)",
    threshold=0.10, direction=">=",
    control=_learned, control_doc=_LEARNED_DOC,
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
    control=_learned_and_removal_matters, control_doc=_CONTROL_DOC,
    trivial=lambda ev: ev.random_diff,
    trivial_doc="random removal at IES's rate, epoch by epoch, in IES's place",
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
    control=_learned_and_removal_matters, control_doc=_CONTROL_DOC,
    competitors=lambda ev: {"small-loss removal at IES's rate": ev.small_loss_acc},
    trivial=lambda ev: ev.random_vs_random,
    trivial_doc="a second random-removal draw at IES's rate in IES's place",
)
def beats_random_removal(ev: TrainingEvidence) -> Comparison:
    return Comparison(ours=ev.ies_acc, baseline=ev.random_acc, value=ev.beats_random)


@claim(
    "ies.beats_small_loss", experiment=training,
    sentence="IES's second-order criterion picks better instances to drop than the loss "
             "value does: at the same backprop budget, epoch by epoch, it is at least as "
             "accurate as dropping the smallest-loss instances.",
    metric="test accuracy IES - small-loss removal at IES's rate, percentage points (final "
           "epoch, mean over seeds)", unit="points",
    paper_figure="abstract (the second-order difference is a more consistent measure than "
                 "the loss value); IES above Small Loss & Rescale in the comparison table "
                 "(numbers not retrieved)",
    threshold=0.0, direction=">=", baseline="small-loss removal at IES's rate",
    control=_learned_and_removal_matters, control_doc=_CONTROL_DOC,
    # plain training removes nothing: when delta is small, IES and small-loss removal both
    # remove almost nothing and tie at 0, which plain training meets as well
    trivial=lambda ev: max(ev.plain_vs_small_loss, ev.random_vs_small_loss),
    trivial_doc="the better of plain training (nothing removed) and random removal at IES's "
                "rate, in IES's place",
)
def beats_small_loss(ev: TrainingEvidence) -> Comparison:
    return Comparison(ours=ev.ies_acc, baseline=ev.small_loss_acc, value=ev.beats_small_loss)
