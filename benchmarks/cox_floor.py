"""Benchmark: COX with few pairs against the logistic-regression floor (issue 68, item 3).

The done-when: at the default (``floor="select"``) the returned predictor is at least as
accurate as a logistic regression on the paired rows. The cases below were written down
(committed) before the rule was measured on them; each splits a scikit-learn data set's
features into two modalities: the IM side is a PCA of one part (frozen, labelled, every
training row), the OOM side is the other part, with a few pairs per class and no other
OOM label. Rows are shuffled with seed 1 and split 70/30 into train and test.

* ``walker``: digits 0-3, IM = PCA(16) of the top half of the 8x8 image, OOM = the bottom
  half, 3 pairs per class (12): the new user's case (COX 0.866 vs the floor 0.876).
* ``digits5``: digits 5-9, the same halves, 5 pairs per class (25).
* ``wine``: wine (3 classes), IM = PCA(4) of the first 6 standardised features, OOM = the
  other 7, 4 pairs per class (12).
* ``cancer``: breast_cancer (2 classes), IM = PCA(8) of the first 15 standardised features,
  OOM = the other 15, 5 pairs per class (10).

Per case: COX's head (``floor_used_`` cleared), the floor (COX's own: since set B's
decision F below, a plain LogisticRegression on the paired OOM rows; until then it was
standardised on them), and the default's prediction, each as test accuracy;
``steps=400`` (the walker's), seed 0, one thread.

Run: ``python benchmarks/cox_floor.py`` (about 20 s per case on one free core; ``--quick``
is the same run). Each case records a row (``_timing.row``): the default's accuracy against
the floor's, the target ratio >= 1 (the done-when: never below the floor).

``--set margin`` (development draws) and ``--set heldout`` (held-out draws): the margin the
head must win by. Written down (committed) before any candidate ran. Walk 10 kept COX's head
by one labelled row of 40 (18 vs 17) and scored 0.417 on test against the floor's 0.433: a
choice by one row is a coin flip. Per held-out labelled row the cross-validation gives
whether the head and the floor classified it right (``cv_correct_``); over the n rows,
b = head right and floor wrong, c = head wrong and floor right, d_i = head_i - floor_i. The
rules (each a function of n, b, c only; the head predicts when the rule says so, else the
floor):

* ``main``: b > c (the head classified more rows right; main's rule).
* ``sign``: an exact one-sided sign test (McNemar's, exact) on the b + c discordant rows:
  p = P(Binomial(b + c, 1/2) >= b) <= 0.05 (the conventional level).
* ``2se``: mean(d) > 2 standard errors of it, SE = std(d, ddof=1) / sqrt(n) (about a
  one-sided 0.025 level for a normal mean).
* ``1se``: mean(d) > 1 standard error (Breiman et al. 1984's one-standard-error rule: the
  simpler model unless the other is better by more than one SE).

A draw is (data set split into two modalities, pairs per class, split seed, pairs draw,
COX seed). Development sets (none of them the cases above, nor walks 4-10's data: walker's
digits 0-3 halves, walk 8's make_classification(900, 20, 4 classes), walk 9's radar, walk
10's ink sums):

* ``digits-lr``: digits 0-4, IM = PCA(16) of the left half of the 8x8 image (columns 0-3),
  OOM = the right half.
* ``digits-rows``: digits 1, 3, 5, 7, 9, IM = PCA(16) of the even pixel rows, OOM = the odd.
* ``wine-rev``: wine standardised, IM = PCA(4) of the last 7 features, OOM = the first 6.
* ``cancer-eo``: breast_cancer standardised, IM = PCA(8) of the even-indexed features,
  OOM = the odd-indexed 15.

Six draws per set (24), draw j = 0..5: 2 + j % 4 pairs per class (2, 3, 4, 5, 2, 3), rows
shuffled with seed 10 + j and split 70/30, each class's paired training rows drawn without
replacement by ``default_rng(20 + j)``, COX seed j. Held-out sets (``--set heldout``, run
once after the pick is committed):

* ``iris``: iris standardised, IM = PCA(2) of the petal features, OOM = the sepal features.
* ``digits-check``: digits 0, 2, 4, 6, 8, IM = PCA(16) of the pixels with i + j even (a
  checkerboard), OOM = the other 32.
* ``synth``: ``make_classification(600, 24, n_informative=10, n_redundant=4, n_classes=3,
  random_state=11)``, IM = PCA(6) of the even-indexed columns, OOM = the odd-indexed 12.

Four draws per set (12), draw j = 0..3: 2 + j pairs per class, split seed 50 + j, pairs
draw ``default_rng(60 + j)``, COX seed 10 + j. Every arm: ``steps=400`` (the walker's), one
thread, the pairs the only OOM labels (the paired row's IM row is the same object's), the
same fits: COX is fitted once per draw with ``floor="select"`` (its k fold fits give
``cv_correct_``, which every rule reads), and its head and its floor are each scored on the
test rows; a rule's returned accuracy is the head's where it picks the head, else the
floor's. Also recorded, not a selection input: a plain unstandardised
``LogisticRegression(max_iter=2000)`` on the same labelled rows.

Selection on the development draws: fewest draws whose returned accuracy is below the
floor's (primary), then the higher mean test accuracy over the draws, then main's rule on a
tie with it, then the earlier in the list above. Merge condition (the default changes to
the pick only if all hold): on the held-out draws the pick has fewer draws below the floor
than main's rule and a mean test accuracy no lower than main's by more than 0.01; and on
walk 10's files (``--set walk10``: ``/work/runs/h68walk10/files``, 10 classes, 20 pairs
and 20 labelled OOM rows, ``steps=200``, seed 0, read as the CLI reads them (float32) and
as its API script did (float64)) the returned predictor is not below the floor on test.

Development draws (``--set margin``, 24 draws, 2026-12-07, load 3-5 on 2 cores): test
accuracy of the predictor each rule returns, against the floor (COX's own standardised
regression on the paired rows):

| rule | draws below the floor | mean test accuracy | head chosen |
|---|---|---|---|
| main | 2 | 0.7941 | 12 |
| sign | 0 | 0.7618 | 0 |
| 2se | 1 | 0.7641 | 2 |
| 1se | 1 | 0.7910 | 10 |
| (the floor always) | 0 | 0.7618 | 0 |
| (plain LogisticRegression, not a rule) | - | 0.7918 | - |

Main fell below the floor on digits-lr draw 5 (0.782 vs 0.790, CV 1 / 0 of 15) and
cancer-eo draw 1 (0.696 vs 0.807, CV 3 / 0 of 6; 2se and 1se chose the head there too).
COX's head beat the floor on test on 18 of 24 draws (by up to 0.17 on wine-rev draw 0):
with 4-25 labelled rows the sign test never reached p <= 0.05, so it returned the floor on
every draw. Pick by the rule above: ``sign`` (fewest below the floor, 0).

Held-out draws (``--set heldout``, 12 draws, run once after the pick was committed, load
3.6-3.7) and walk 10's files (``--set walk10``):

| rule | held-out: below the floor | mean test accuracy | head chosen | walk 10: below (of 2) |
|---|---|---|---|---|
| main | 0 | 0.6893 | 3 | 1 (float32: 0.417 vs 0.433, CV 6 / 5 of 40) |
| sign (the pick) | 0 | 0.6810 | 0 | 0 |
| 2se | 0 | 0.6810 | 0 | 0 |
| 1se | 0 | 0.6877 | 2 | 0 |
| (the floor always) | 0 | 0.6810 | 0 | 0 |
| (plain LogisticRegression) | - | 0.7001 | - | - (0.477) |

The merge condition does not hold: on the held-out draws main's rule was never below the
floor either (0 vs 0, not fewer), and the pick's mean is 0.008 lower. The default stays
main's rule. What the draws show: with 4-25 labelled rows no margin rule separates the
head's wins from the floor's: the folds' discordant rows were 0-6 (median 2-2.5), and
COX's head beat the floor on test on 18 of 24 development and 8 of 12 held-out draws
(main's rule chose the floor on 8 and 5 of those), so a rule strict enough never to fall
below the floor returns the floor always and gives up 0.008-0.032 mean accuracy; and the
floor (standardised on its few rows) was below a plain
unstandardised LogisticRegression on average (development 0.762 vs 0.792, held-out 0.681
vs 0.700, walk 10 0.433 vs 0.477).

``--set heldout2`` (set B; issue 68's done-when "COX >= the logistic-regression floor"),
fixed by the lead before anything ran, written down (committed) before it runs. Set B: held
out, 48 draws, none of whose data / split / seed combination was used in the sets above, the
cases, or walks 4-10:

* ``gen4``: ``make_classification(800, 20, n_informative=8, n_redundant=2, n_classes=4,
  n_clusters_per_class=1, shuffle=False, random_state=101)`` (the 8 informative columns
  first), IM = PCA(6) of the even-indexed columns, OOM = the odd-indexed 10 (4 informative
  on each side).
* ``gen5``: ``make_classification(900, 16, n_informative=6, n_redundant=0, n_classes=5,
  n_clusters_per_class=1, class_sep=1.5, shuffle=False, random_state=202)``, IM = PCA(6)
  of columns 0-2 and 6-10, OOM = columns 3-5 and 11-15 (3 informative on each side).
* ``gen3``: ``make_classification(600, 12, n_informative=6, n_redundant=2, n_classes=3,
  n_clusters_per_class=2, shuffle=False, random_state=303)``, IM = PCA(4) of columns
  0, 2, 4, 6, 8, 10, OOM = the odd-indexed 6 (3 informative on each side).
* ``quantiles``: ``make_gaussian_quantiles(n_samples=600, n_features=6, n_classes=3,
  random_state=404)``, IM = PCA(3) of the first 3 columns, OOM = the last 3.
* ``hastie``: ``make_hastie_10_2(800, random_state=505)`` (labels -1/1 as 0/1), IM = PCA(5)
  of the first 5 columns, OOM = the last 5.
* ``digits-diag``: digits 2, 3, 7, 8, IM = PCA(16) of the pixels on or below the diagonal
  (i >= j, 36), OOM = those above it (28).
* ``digits-quad``: digits 1, 4, 6, 9, IM = PCA(16) of the top-left and bottom-right 4x4
  quadrants, OOM = the top-right and bottom-left ones.
* ``wine-3``: wine standardised, IM = PCA(4) of the features with index % 3 != 0 (8),
  OOM = the features 0, 3, 6, 9, 12.

Generated features are standardised as the sets above. Six draws per set (48), draw
j = 0..5: 2 + j % 4 pairs per class (2, 3, 4, 5, 2, 3), rows shuffled with seed 100 + j
and split 70/30, each class's paired training rows drawn without replacement by
``default_rng(110 + j)``, COX seed 30 + j, ``steps=400``, one thread. One COX fit per draw
(``floor="select"``, + its CV folds); every arm is read from that fit: per draw the
head's, the standardised floor's (S, COX's own) and a plain
``LogisticRegression(max_iter=2000)``'s (P, on the raw labelled rows as passed to COX)
test accuracy, and the CV per-row correctness of the head and S (``cv_correct_``) and of
P (fitted per fold on the same folds: COX's labelled rows in index order, sklearn's
``StratifiedKFold(min(3, smallest class))`` unshuffled; the benchmark checks that S
refitted on those folds reproduces ``cv_correct_``'s floor column).

* **Decision F (the floor), on set B only:** P replaces S as the floor if P's mean test
  accuracy over set B's draws is higher than S's.
* **Decision R (the rule), on set B only, with the floor F chose:** the sign rule replaces
  main's if it has fewer draws below that floor's test accuracy than main's rule AND its
  mean test accuracy is at least main's minus 0.01 ("below the floor": the returned
  predictor's test accuracy < the floor's on that draw; the rules read the CV correctness
  of the head against that floor).

Reported beside the decisions, not inputs to them: walk 10's files (``--set walk10``) and
h68cox15's 36 draws re-scored with P as the floor (``--set rescore15``: its margin and
held-out draws rebuilt, P fitted on them and on their folds; the head's CV correctness
read from ``/work/runs/h68cox15/{margin,heldout}.json``).

Set B (``--set heldout2``, 48 draws, run once after the above was committed, 2026-12-07,
load 1.0-2.3 on 2 cores, 400 s of fits in all; the folds rebuilt for P reproduced COX's S
column on 48 of 48 draws). Mean test accuracy: COX's head 0.5755, S 0.5672, P 0.5724 (P
above S on 26 draws, below on 19). Per floor, the returned predictor of each rule against
that floor on test:

| rule | floor S: below | mean | head chosen | floor P: below | mean | head chosen |
|---|---|---|---|---|---|---|
| main | 6 | 0.5715 | 16 | 7 | 0.5776 | 18 |
| sign | 0 | 0.5672 | 0 | 0 | 0.5724 | 0 |
| 2se | 1 | 0.5665 | 1 | 0 | 0.5742 | 1 |
| 1se | 1 | 0.5687 | 6 | 3 | 0.5732 | 6 |
| (the floor always) | 0 | 0.5672 | 0 | 0 | 0.5724 | 0 |

**Decision F:** P's mean 0.5724 > S's 0.5672: P is the floor. **Decision R** (floor P):
sign 0 draws below, mean 0.5724; main 7 below (gen4 3/101 0.475 vs 0.487, gen4 4/102 0.375
vs 0.429, gen5 3/101 0.463 vs 0.478, gen5 2/104 0.422 vs 0.437, gen3 5/103 0.511 vs 0.539,
quantiles 2/104 0.344 vs 0.361, digits-quad 2/100 0.665 vs 0.711; each chosen on CV counts
of 1-3 against 0-2), mean 0.5776; 0 < 7 and 0.5724 >= 0.5776 - 0.01: the sign rule. Both
defaults change (COX's ``_logistic`` fits P; ``_floor`` decides by the sign test). What it
costs: with 4-25 labelled rows the sign test chose COX's head on none of the 48 draws (the
discordant rows were 0-7), so at these sizes the default returns the regression; COX's
head was the better on test on 27 of 48 (mean 0.5755 against P's 0.5724).

Not decision inputs (after set B): walk 10's files (``--set walk10``, run at the same
commit, COX's floor then S): S 0.433, P 0.477 on test (both reads); CV head vs P 2 / 3
(float32) and 2 / 5 (float64) of 40, so main's rule and the sign test both return P (0.477;
against S main's rule returned the head, 0.417, below it). h68cox15's 36 draws re-scored
with P (``--set rescore15``): development S 0.7618, P 0.7918 (main against P 2 below, mean
0.8011; sign 0, 0.7918); held-out S 0.6810, P 0.7001 (main 0 below, 0.7049; sign 0,
0.7001); main's two below P: digits-lr 3/15 (0.782 vs 0.793) and cancer-eo 3/11 (0.696 vs
0.725). The cases with the new default (``python benchmarks/cox_floor.py``, load 2.5-3.2):
walker COX 0.866, floor 0.853, default 0.853 (floor; CV 0.917 / 0.833); digits5 0.844,
0.836, 0.836 (floor; 0.720 / 0.600); wine 0.926, 0.963, 0.963 (floor); cancer 0.953, 0.965,
0.965 (floor); before the change the default read 0.876, 0.844 (COX), 0.944, 0.965.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from _timing import row
from scipy.stats import binomtest
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
    make_gaussian_quantiles,
    make_hastie_10_2,
)
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

from iclr25.cox import COX

M = "cox_floor"
WALK10 = Path("/work/runs/h68walk10/files")
COX15 = Path("/work/runs/h68cox15")  # h68cox15's draws (``--set rescore15``)


def _halves(classes: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    top = np.zeros((8, 8), bool)
    top[:4] = True
    return _digits(classes, top)


def _digits(classes: list[int], im: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Digits of ``classes`` (relabelled 0..), IM part = the pixels where the (8, 8) mask
    ``im`` is set, OOM part = the others; pixels in [0, 1]."""
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, classes)
    img = X[keep].reshape(-1, 8, 8) / 16.0
    return img[:, im], img[:, ~im], np.searchsorted(classes, y[keep])


def _columns(loader, cut: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # noqa: ANN001
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return X[:, :cut], X[:, cut:], y


def _split(X: np.ndarray, y: np.ndarray, im: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standardised features: IM part = the columns ``im`` selects, OOM part = the rest."""
    X = StandardScaler().fit_transform(X)
    return X[:, im], X[:, ~im], y


def _mask(rule) -> np.ndarray:  # noqa: ANN001
    return np.fromfunction(rule, (8, 8), dtype=int)


def _every_other(X: np.ndarray, y: np.ndarray, start: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _split(X, y, np.arange(X.shape[1]) % 2 == start)


CASES = {  # name: (IM part, OOM part, labels), PCA width of the IM side, pairs per class
    "walker": (lambda: _halves([0, 1, 2, 3]), 16, 3),
    "digits5": (lambda: _halves([5, 6, 7, 8, 9]), 16, 5),
    "wine": (lambda: _columns(load_wine, 6), 4, 4),
    "cancer": (lambda: _columns(load_breast_cancer, 15), 8, 5),
}
MARGIN = {  # the development sets (module docstring): name: (make, PCA width of IM)
    "digits-lr": (lambda: _digits([0, 1, 2, 3, 4], _mask(lambda i, j: j < 4)), 16),
    "digits-rows": (lambda: _digits([1, 3, 5, 7, 9], _mask(lambda i, j: i % 2 == 0)), 16),
    "wine-rev": (lambda: _split(*load_wine(return_X_y=True), np.arange(13) >= 6), 4),
    "cancer-eo": (lambda: _every_other(*load_breast_cancer(return_X_y=True), 0), 8),
}
HELDOUT = {  # the held-out sets
    "iris": (lambda: _split(*load_iris(return_X_y=True), np.arange(4) >= 2), 2),
    "digits-check": (lambda: _digits([0, 2, 4, 6, 8], _mask(lambda i, j: (i + j) % 2 == 0)),
                     16),
    "synth": (lambda: _every_other(*make_classification(
        600, 24, n_informative=10, n_redundant=4, n_classes=3, random_state=11), 0), 6),
}




def _made(X: np.ndarray, y: np.ndarray, im: list[int] | np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A generated set split into modalities: IM = the columns ``im`` (indices), standardised."""
    mask = np.zeros(X.shape[1], bool)
    mask[np.asarray(im)] = True
    return _split(X, np.asarray(y, int), mask)


HELDOUT2 = {  # set B (--set heldout2; the module docstring)
    "gen4": (lambda: _made(*make_classification(
        800, 20, n_informative=8, n_redundant=2, n_classes=4, n_clusters_per_class=1,
        shuffle=False, random_state=101), np.arange(0, 20, 2)), 6),
    "gen5": (lambda: _made(*make_classification(
        900, 16, n_informative=6, n_redundant=0, n_classes=5, n_clusters_per_class=1,
        class_sep=1.5, shuffle=False, random_state=202), [0, 1, 2, 6, 7, 8, 9, 10]), 6),
    "gen3": (lambda: _made(*make_classification(
        600, 12, n_informative=6, n_redundant=2, n_classes=3, n_clusters_per_class=2,
        shuffle=False, random_state=303), np.arange(0, 12, 2)), 4),
    "quantiles": (lambda: _made(*make_gaussian_quantiles(
        n_samples=600, n_features=6, n_classes=3, random_state=404), [0, 1, 2]), 3),
    "hastie": (lambda: (lambda X, y: _made(X, y > 0, [0, 1, 2, 3, 4]))(
        *make_hastie_10_2(800, random_state=505)), 5),
    "digits-diag": (lambda: _digits([2, 3, 7, 8], _mask(lambda i, j: i >= j)), 16),
    "digits-quad": (lambda: _digits([1, 4, 6, 9], _mask(lambda i, j: (i < 4) == (j < 4))),
                    16),
    "wine-3": (lambda: _split(*load_wine(return_X_y=True), np.arange(13) % 3 != 0), 4),
}


def _draws(name: str) -> list[tuple[str, int, int, int, int]]:
    """(set, pairs per class, split seed, pairs-draw seed, COX seed) per draw."""
    if name == "margin":
        return [(s, 2 + j % 4, 10 + j, 20 + j, j) for s in MARGIN for j in range(6)]
    if name == "heldout2":
        return [(s, 2 + j % 4, 100 + j, 110 + j, 30 + j) for s in HELDOUT2 for j in range(6)]
    return [(s, 2 + j, 50 + j, 60 + j, 10 + j) for s in HELDOUT for j in range(4)]


def _prepare(data: tuple[np.ndarray, np.ndarray, np.ndarray], width: int, split_seed: int,
             rows_of) -> dict:  # noqa: ANN001
    """One draw's arrays: shuffled by ``split_seed``, 70/30; ``rows_of(tr, y)`` gives the
    paired training rows. X / Xte: the OOM train / test rows as passed to COX (float32);
    Z: the IM side (PCA(width) of its part); yo: the OOM labels COX takes from the pairs
    (-1: unlabelled)."""
    im_part, oom, y = data
    perm = np.random.default_rng(split_seed).permutation(len(y))
    im_part, oom, y = im_part[perm], oom[perm], y[perm]
    n_tr = int(0.7 * len(y))
    tr, te = np.arange(n_tr), np.arange(n_tr, len(y))
    rows = rows_of(tr, y)
    yo = np.full(n_tr, -1)
    yo[rows] = y[rows]  # a pair's OOM row is the same object as its IM row
    return {"X": oom[tr].astype(np.float32), "Xte": oom[te].astype(np.float32),
            "yte": y[te], "y": y[tr], "yo": yo, "rows": rows,
            "Z": PCA(width, random_state=0).fit_transform(im_part)[tr].astype(np.float32)}


def _fit(data: tuple[np.ndarray, np.ndarray, np.ndarray], width: int, split_seed: int,
         rows_of, seed: int) -> dict:  # noqa: ANN001
    """Fit COX (400 steps, ``floor="select"``) on one case (see :func:`_prepare`). Returns
    the head's, the floor's and a plain LogisticRegression's test accuracy, the default's,
    and the cross-validation's per-row correctness."""
    d = _prepare(data, width, split_seed, rows_of)
    rows = d["rows"]
    pairs = torch.as_tensor(np.stack([rows, rows], 1))
    t = time.perf_counter()
    m = COX(int(d["y"].max()) + 1, steps=400, seed=seed).fit(
        torch.as_tensor(d["X"]), im={"im": torch.as_tensor(d["Z"])},
        im_labels={"im": torch.as_tensor(d["y"])}, pairs=pairs)
    wall = time.perf_counter() - t
    return {"pairs": len(rows), "test": len(d["yte"]), "wall_s": wall,
            **_scores(m, d["Xte"], d["yte"], d["X"], d["yo"])}


def _standardised(Xk: np.ndarray, yk: np.ndarray, Xh: np.ndarray) -> np.ndarray:
    """S, COX's floor until set B's decision F: a LogisticRegression(max_iter=2000) on the
    rows Xk standardised by their own mean and std (as COX computed them, in X's dtype);
    its labels for the rows Xh."""
    Xt = torch.as_tensor(Xk)
    mu, sd = Xt.mean(0), Xt.std(0).clamp_min(1e-12)
    lr = LogisticRegression(max_iter=2000).fit(((Xt - mu) / sd).double().numpy(), yk)
    return lr.predict(((torch.as_tensor(Xh) - mu) / sd).double().numpy())


def _floors(X: np.ndarray, yo: np.ndarray, Xte: np.ndarray, yte: np.ndarray) -> dict:
    """S (:func:`_standardised`) and P (a plain ``LogisticRegression(max_iter=2000)``) on
    the labelled rows of X (yo >= 0, as passed to COX): their test accuracy ("floor",
    "plain"), and per held-out row of COX's folds (its labelled rows in index order,
    ``StratifiedKFold(min(3, smallest class))`` unshuffled) whether each classified it
    right, in fold order ("floor_correct", "plain_correct")."""
    li = np.flatnonzero(yo >= 0)
    Xl, yl = X[li], yo[li]
    out = {"floor": float((_standardised(Xl, yl, Xte) == yte).mean()),
           "plain": LogisticRegression(max_iter=2000).fit(Xl.astype(np.float64), yl).score(
               Xte.astype(np.float64), yte)}
    counts = np.bincount(yl)
    folds = min(3, int(counts[counts > 0].min()))
    plain, std = [], []
    if folds >= 2:
        for keep, held in StratifiedKFold(folds).split(yl, yl):
            lr = LogisticRegression(max_iter=2000).fit(Xl[keep].astype(np.float64), yl[keep])
            plain.append(lr.predict(Xl[held].astype(np.float64)) == yl[held])
            std.append(_standardised(Xl[keep], yl[keep], Xl[held]) == yl[held])
    out["plain_correct"] = np.concatenate(plain or [np.zeros(0, bool)]).tolist()
    out["floor_correct"] = np.concatenate(std or [np.zeros(0, bool)]).tolist()
    return out


def _scores(m: COX, Xte: np.ndarray, yte: np.ndarray, X: np.ndarray, yo: np.ndarray
            ) -> dict:
    """A fitted model's head, own floor ("cox_floor") and default on the test rows, and S
    and P (:func:`_floors`) on the labelled rows of (X, yo) (yo >= 0). "folds_match": COX's
    floor column of ``cv_correct_`` and its test accuracy equal P's (COX's floor is P since
    decision F; the runs of set B, walk 10 and rescore15 in the docstring were made before
    it, when it was S, and checked S)."""
    used = m.floor_used_
    default = m.score(Xte, yte)
    m.floor_used_ = False
    head = m.score(Xte, yte)
    m.floor_used_ = True
    own = m.score(Xte, yte)
    m.floor_used_ = used
    p = _floors(X, yo, Xte, yte)
    correct = m.cv_correct_.numpy()
    return {"cox": head, "cox_floor": own, "default": default, "floor_used": used,
            "cv_cox": m.head_accuracy_, "cv_floor": m.floor_accuracy_,
            "correct": correct.tolist(), **p,
            "folds_match": p["plain_correct"] == correct[:, 1].tolist()
            and own == p["plain"]}


def run(name: str) -> dict[str, float]:
    make, width, per_class = CASES[name]
    data = make()
    r = _fit(data, width, 1, lambda tr, y: np.concatenate(
        [tr[y[tr] == c][:per_class] for c in range(int(y.max()) + 1)]), 0)
    return r


def run_draw(set_name: str, per_class: int, split_seed: int, pair_seed: int, seed: int
             ) -> dict:
    """One draw of ``--set margin|heldout`` (the module docstring)."""
    make, width = {**MARGIN, **HELDOUT, **HELDOUT2}[set_name]
    return _fit(make(), width, split_seed, _pairs_of(per_class, pair_seed), seed)


def _pairs_of(per_class: int, pair_seed: int):  # noqa: ANN202
    rng = np.random.default_rng(pair_seed)
    return lambda tr, y: np.concatenate([rng.choice(tr[y[tr] == c], per_class, replace=False)
                                         for c in range(int(y.max()) + 1)])


def rescore(draw: list, head_correct: np.ndarray) -> dict:
    """An h68cox15 draw rebuilt without COX: P's test accuracy and CV correctness, beside
    the head's CV correctness (column 0 of its recorded ``correct``)."""
    set_name, per_class, split_seed, pair_seed, _ = draw
    make, width = {**MARGIN, **HELDOUT}[set_name]
    d = _prepare(make(), width, split_seed, _pairs_of(per_class, pair_seed))
    p = _floors(d["X"], d["yo"], d["Xte"], d["yte"])
    p["folds_match"] = p["floor_correct"] == np.asarray(head_correct)[:, 1].tolist()
    return p


def rules(correct: np.ndarray) -> dict[str, bool]:
    """Per rule, whether COX's head predicts, from the (n, 2) per-row correctness of the
    head and the floor in cross-validation (no check, n = 0: the head, as COX does)."""
    correct = np.asarray(correct, bool).reshape(-1, 2)
    n = len(correct)
    if n == 0:
        return dict.fromkeys(("main", "sign", "2se", "1se"), True)
    h, f = correct[:, 0], correct[:, 1]
    b, c = int((h & ~f).sum()), int((~h & f).sum())
    d = h.astype(float) - f.astype(float)
    se = d.std(ddof=1) / math.sqrt(n) if n > 1 else math.inf
    p = binomtest(b, b + c, 0.5, alternative="greater").pvalue if b + c else 1.0
    return {"main": b > c, "sign": bool(p <= 0.05), "2se": bool(d.mean() > 2 * se),
            "1se": bool(d.mean() > se)}


def walk10(dtype: type) -> dict:
    """Walk 10's COX files, read as ``dtype`` (float32: the CLI; float64: its API
    script): 10 classes, its pairs and OOM labels, ``steps=200``, seed 0."""
    import pandas as pd

    f = WALK10
    X = pd.read_csv(f / "oom.csv").to_numpy().astype(dtype)
    Z = pd.read_csv(f / "im_image.csv", header=None).to_numpy().astype(dtype)
    y = pd.read_csv(f / "im_labels.csv")["label"].to_numpy()
    P = pd.read_csv(f / "pairs.csv").to_numpy()
    yo = pd.read_csv(f / "oom_labels.csv")["label"].to_numpy()
    Xte, yte = pd.read_csv(f / "oom_test.csv").to_numpy().astype(dtype), np.load(
        f / "oom_test_y.npy")
    t = time.perf_counter()
    m = COX(10, steps=200, seed=0).fit(X, im={"image": Z}, im_labels={"image": y}, pairs=P,
                                       y_oom=yo)
    wall = time.perf_counter() - t
    labels = yo.copy()
    take = labels[P[:, 1]] < 0  # COX takes a pair's IM label for an unlabelled OOM row
    labels[P[take, 1]] = y[P[take, 0]]
    return {"pairs": len(P), "wall_s": wall, **_scores(m, Xte, yte, X, labels)}


FLOORS = {"S": "floor", "P": "plain"}  # floor: its test accuracy's key


def _against(r: dict, floor: str) -> np.ndarray:
    """(n, 2) CV correctness of the head and the floor ``floor`` ("S" or "P")."""
    head = np.asarray(r["correct"], bool).reshape(-1, 2)[:, 0]
    return np.stack([head, np.asarray(r[f"{FLOORS[floor]}_correct"], bool)], 1)


def _arm(results: list[dict], floor: str, rule: str) -> tuple[int, float, int]:
    """A rule with floor ``floor``: draws below that floor on test, mean test accuracy,
    draws with the head."""
    key = FLOORS[floor]
    pick = [rules(_against(r, floor))[rule] for r in results]
    acc = [r["cox"] if h else r[key] for h, r in zip(pick, results, strict=True)]
    below = sum(a < r[key] for a, r in zip(acc, results, strict=True))
    return below, float(np.mean(acc)), sum(pick)


def summary(results: list[dict], decide: bool = False) -> list[str]:
    """Per floor (S, P), the table per rule, then decisions F and R (module docstring) when
    ``decide`` (set B), else what their rules would read on these draws."""
    out = []
    mean = {f: float(np.mean([r[FLOORS[f]] for r in results])) for f in FLOORS}
    for floor in FLOORS:
        out += ["", f"Floor {floor}:", "",
                "| rule | draws below the floor | mean test accuracy | head chosen |",
                "|---|---|---|---|"]
        for rule in ("main", "sign", "2se", "1se"):
            below, acc, head = _arm(results, floor, rule)
            out.append(f"| {rule} | {below} | {acc:.4f} | {head} |")
        out.append(f"| (floor {floor} always) | 0 | {mean[floor]:.4f} | 0 |")
    f = "P" if mean["P"] > mean["S"] else "S"
    (mb, ma, _), (sb, sa, _) = _arm(results, f, "main"), _arm(results, f, "sign")
    r_ok = sb < mb and sa >= ma - 0.01
    word = "Decision" if decide else "Not a decision input; the rule of decision"
    out += ["", f"{word} F: mean test accuracy P {mean['P']:.4f} vs S {mean['S']:.4f}: "
            f"the floor is {f}.",
            f"{word} R (floor {f}): sign {sb} below, mean {sa:.4f}; main {mb} below, mean "
            f"{ma:.4f}: {'sign' if r_ok else 'main'}'s rule.",
            f"Fold check (COX's own floor refitted on the rebuilt folds = cv_correct_): "
            f"{sum(r['folds_match'] for r in results)} of {len(results)} draws."]
    return out


def _line(d: tuple, r: dict) -> str:
    cells = []
    for floor in FLOORS:
        c = _against(r, floor)
        b, cc = int((c[:, 0] & ~c[:, 1]).sum()), int((~c[:, 0] & c[:, 1]).sum())
        v = rules(c)
        cells.append(f"{b} / {cc} of {len(c)} | {'H' if v['main'] else 'f'}"
                     f"{'H' if v['sign'] else 'f'}")
    return (f"| {' '.join(map(str, d))} | {r.get('pairs', '-')} | {r['cox']:.3f} | "
            f"{r['floor']:.3f} | {r['plain']:.3f} | {' | '.join(cells)} | "
            f"{r.get('wall_s', 0):.0f} |")


def margin(name: str, out: Path | None) -> None:
    """Run ``--set margin|heldout|heldout2|walk10|rescore15``: a line per draw, then the
    tables and decisions."""
    results = []
    print("| draw | pairs | COX | S | P | CV b / c vs S | main, sign vs S | CV b / c vs P "
          "| main, sign vs P | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    if name == "rescore15":
        old = [r for f in ("margin", "heldout")
               for r in json.loads((COX15 / f"{f}.json").read_text())]
        draws = [tuple(r["draw"]) for r in old]
    else:
        draws = ([("walk10", "float32"), ("walk10", "float64")] if name == "walk10"
                 else _draws(name))
    for k, d in enumerate(draws):
        if name == "rescore15":
            r = {**old[k], **rescore(list(d), np.asarray(old[k]["correct"], bool))}
        else:
            r = walk10(np.dtype(d[1]).type) if name == "walk10" else run_draw(*d)
        r["draw"], r["rules"] = list(d), rules(r["correct"])
        print(_line(d, r), flush=True)
        results.append(r)
    print("\n".join(summary(results, name == "heldout2")))
    if out is not None:
        out.write_text(json.dumps(results, indent=1))


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--quick", action="store_true", help="the same run (it is quick)")
    cli.add_argument("--set", default="cases", choices=(
        "cases", "margin", "heldout", "heldout2", "walk10", "rescore15"),
                     help="the cases (default), or the margin's draws (module docstring)")
    cli.add_argument("--out", type=Path, default=None, help="JSON of the draws (--set ...)")
    args = cli.parse_args(argv)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # the floor's warning: its counts are in the table
    if args.set != "cases":
        margin(args.set, args.out)
        return
    print("| case | pairs | test rows | COX | floor | default (uses) | CV COX / floor | s |")
    # the floor: COX's own (P since decision F; the benchmark's S is not shown here)
    print("|---|---|---|---|---|---|---|---|")
    for case in CASES:
        r = run(case)
        print(f"| {case} | {r['pairs']} | {r['test']} | {r['cox']:.3f} | {r['cox_floor']:.3f} | "
              f"{r['default']:.3f} ({'floor' if r['floor_used'] else 'COX'}) | "
              f"{r['cv_cox']:.3f} / {r['cv_floor']:.3f} | {r['wall_s']:.0f} |", flush=True)
        row(M, f"{case}: default accuracy, {r['pairs']} pairs", r["default"],
            r["cox_floor"], peer_name="LogisticRegression on the paired rows", unit="accuracy",
            better="higher", target=1.0,
            note=f"COX's head {r['cox']:.3f}; the default used "
                 f"{'the floor' if r['floor_used'] else 'COX'}")


if __name__ == "__main__":
    main()
