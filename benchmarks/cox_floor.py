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

Per case: COX's head (``floor_used_`` cleared), the floor (a LogisticRegression on the
paired OOM rows, standardised on them), and the default's prediction, each as test
accuracy; ``steps=400`` (the walker's), seed 0, one thread.

Run: ``python benchmarks/cox_floor.py`` (about 20 s per case on one free core; ``--quick``
is the same run). Each case records a row (``_timing.row``): the default's accuracy against
the floor's, the target ratio >= 1 (the done-when: never below the floor).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from _timing import row
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from iclr25.cox import COX

M = "cox_floor"


def _halves(classes: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, classes)
    img = X[keep].reshape(-1, 8, 8) / 16.0
    y = np.searchsorted(classes, y[keep])
    return img[:, :4].reshape(len(y), -1), img[:, 4:].reshape(len(y), -1), y


def _columns(loader, cut: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # noqa: ANN001
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return X[:, :cut], X[:, cut:], y


CASES = {  # name: (IM part, OOM part, labels), PCA width of the IM side, pairs per class
    "walker": (lambda: _halves([0, 1, 2, 3]), 16, 3),
    "digits5": (lambda: _halves([5, 6, 7, 8, 9]), 16, 5),
    "wine": (lambda: _columns(load_wine, 6), 4, 4),
    "cancer": (lambda: _columns(load_breast_cancer, 15), 8, 5),
}


def run(name: str) -> dict[str, float]:
    make, width, per_class = CASES[name]
    im_part, oom, y = make()
    perm = np.random.default_rng(1).permutation(len(y))
    im_part, oom, y = im_part[perm], oom[perm], y[perm]
    n_tr = int(0.7 * len(y))
    tr, te = np.arange(n_tr), np.arange(n_tr, len(y))
    Z = PCA(width, random_state=0).fit_transform(im_part)[tr]  # as the walker did
    C = int(y.max()) + 1
    rows = np.concatenate([tr[y[tr] == c][:per_class] for c in range(C)])
    pairs = torch.as_tensor(np.stack([rows, rows], 1))
    f32 = {"dtype": torch.float32}
    t = time.perf_counter()
    m = COX(C, steps=400, seed=0).fit(
        torch.as_tensor(oom[tr], **f32), im={"im": torch.as_tensor(Z, **f32)},
        im_labels={"im": torch.as_tensor(y[tr])}, pairs=pairs)
    wall = time.perf_counter() - t
    Xte, yte = torch.as_tensor(oom[te], **f32), torch.as_tensor(y[te])
    default = m.score(Xte, yte)
    used = m.floor_used_
    m.floor_used_ = False
    head = m.score(Xte, yte)
    sc = StandardScaler().fit(oom[rows])
    floor = LogisticRegression(max_iter=2000).fit(sc.transform(oom[rows]), y[rows]).score(
        sc.transform(oom[te]), y[te])
    return {"pairs": len(rows), "test": len(te), "cox": head, "floor": floor,
            "default": default, "floor_used": used, "cv_cox": m.head_accuracy_,
            "cv_floor": m.floor_accuracy_, "wall_s": wall}


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--quick", action="store_true", help="the same run (it is quick)")
    cli.parse_args(argv)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # the floor's warning: its counts are in the table
    print("| case | pairs | test rows | COX | floor | default (uses) | CV COX / floor | s |")
    print("|---|---|---|---|---|---|---|---|")
    for case in CASES:
        r = run(case)
        print(f"| {case} | {r['pairs']} | {r['test']} | {r['cox']:.3f} | {r['floor']:.3f} | "
              f"{r['default']:.3f} ({'floor' if r['floor_used'] else 'COX'}) | "
              f"{r['cv_cox']:.3f} / {r['cv_floor']:.3f} | {r['wall_s']:.0f} |", flush=True)
        row(M, f"{case}: default accuracy, {r['pairs']} pairs", r["default"],
            r["floor"], peer_name="LogisticRegression on the paired rows", unit="accuracy",
            better="higher", target=1.0,
            note=f"COX's head {r['cox']:.3f}; the default used "
                 f"{'the floor' if r['floor_used'] else 'COX'}")


if __name__ == "__main__":
    main()
