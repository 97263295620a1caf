"""Streams and baselines used by the kmeans claims, tests and benchmark.

- :func:`digits_stream`: sklearn digits in random or label-sorted order (new clusters keep
  arriving in the sorted order).
- :class:`LazyReplacementKMeans`: the same trigger, but S ← S' at every event.
- :func:`rerun_kmeans_changes`: KMeans re-run on every prefix, its centre changes counted.
- :func:`moved_centres`: changes of an algorithm whose centres move (MiniBatchKMeans, river).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from iclr25._checks import check_choice
from iclr25.kmeans.consistent import ConsistentKMeans

Order = Literal["random", "sorted"]


def digits_stream(order: Order = "random", seed: int = 0, n: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """sklearn digits (1,797×64, float64) as a stream: shuffled, or sorted by label with
    a seeded shuffle inside each label; the first ``n`` rows. Returns (X, y)."""
    from sklearn.datasets import load_digits

    check_choice(order, "order", Order)
    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(seed).permutation(len(X))
    if order == "sorted":
        perm = perm[np.argsort(y[perm], kind="stable")]
    perm = perm[:n]
    return X[perm].astype(np.float64), y[perm]


class LazyReplacementKMeans(ConsistentKMeans):
    """Baseline: the trigger of :class:`ConsistentKMeans`, but every event replaces S by S'
    (no swaps), counting |S' \\ S| changes after matching slots."""

    def _repair(self, P, w, S2, S2idx, t):  # noqa: D102
        self._replace(S2, S2idx, t)


def rms_radius(X: np.ndarray) -> float:
    """sqrt(mean ‖x − mean(X)‖²): the scale for "a centre moved"."""
    return float(np.sqrt(((X - X.mean(0)) ** 2).sum(1).mean()))


def moved_centres(prev: np.ndarray, cur: np.ndarray, tol: float) -> int:
    """How many slots moved more than ``tol`` between two (k, d) centre arrays."""
    return int((np.linalg.norm(cur - prev, axis=1) > tol).sum())


def matched_changes(prev: np.ndarray, cur: np.ndarray, tol: float) -> int:
    """Moved centres after the best slot matching (generous to re-run solvers whose slot
    order is arbitrary)."""
    from scipy.optimize import linear_sum_assignment
    from scipy.spatial.distance import cdist

    D = cdist(prev, cur)
    r, c = linear_sum_assignment(D)
    return int((D[r, c] > tol).sum())


def rerun_kmeans_changes(X: np.ndarray, k: int, *, n_steps: int | None = None, seed: int = 0,
                         tol: float | None = None) -> np.ndarray:
    """Cumulative centre changes of ``KMeans(k, n_init=1)`` re-run on every prefix.

    The first k points open k centres; from t = k on, KMeans is fitted on X[:t] and a
    change is a matched centre moving more than ``tol`` (default 1e-3 of X's RMS radius).

    Returns:
        (n_steps,) cumulative changes after each arrival t = 1..n_steps.
    """
    from sklearn.cluster import KMeans

    n_steps = len(X) if n_steps is None else n_steps
    tol = 1e-3 * rms_radius(X) if tol is None else tol
    out = np.zeros(n_steps, dtype=np.int64)
    out[:k] = np.arange(1, k + 1)
    prev = None
    total = k
    for t in range(k, n_steps + 1):
        C = KMeans(k, n_init=1, random_state=seed + t).fit(X[:t]).cluster_centers_
        if prev is not None:
            total += matched_changes(prev, C, tol)
        prev = C
        out[t - 1] = total
    return out


def changes_curve(log: list[tuple[int, int, str]], n: int) -> np.ndarray:
    """Cumulative changes after each arrival t = 1..n from a ``change_log_``."""
    counts = np.zeros(n + 1, dtype=np.int64)
    for t, _, _ in log:
        counts[t] += 1
    return np.cumsum(counts)[1:]

