"""How well a codebook names the content, and how much each latent leaks the other factor."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from iclr25._checks import ArrayLike, as_tensor, check_same_length
from iclr25._contract import FloatArray, NonNegativeInt, PositiveInt, checked

__all__ = ["codebook_accuracy", "confusion", "kmeans_codes", "leakage_report"]


def _pair(codes: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    c = as_tensor(codes, "codes")
    y = as_tensor(labels, "labels")
    for name, t in (("codes", c), ("labels", y)):
        if t.is_floating_point() or t.dtype == torch.bool:
            raise TypeError(f"{name} must be integer, got {t.dtype}")
        if bool((t < 0).any()):
            raise ValueError(f"{name} must be non-negative")
    c, y = c.reshape(-1), y.reshape(-1)
    check_same_length(codes=c, labels=y)
    return c.cpu().numpy(), y.cpu().numpy()


@checked
def confusion(codes: ArrayLike, labels: ArrayLike) -> np.ndarray:
    """Counts (n_codes, n_labels): how often each code meets each label (flattened inputs)."""
    c, y = _pair(codes, labels)
    m = np.zeros((c.max() + 1, y.max() + 1), dtype=np.int64)
    np.add.at(m, (c, y), 1)
    return m


@checked
def codebook_accuracy(codes: ArrayLike, labels: ArrayLike, one_to_one: bool = True) -> float:
    """Accuracy of the codes as names of the labels.

    ``one_to_one``: the fraction of fragments whose code maps to their label under the best
    one-to-one code -> label matching (Hungarian, ``scipy.optimize.linear_sum_assignment``).
    Otherwise the paper's macro purity (``tester.py``): the code x label confusion matrix is
    row-normalised and the row maxima are averaged over the codes in use.

    Args:
        codes: (...) int code of each fragment.
        labels: (...) int label of each fragment, same number of elements.

    Returns:
        float in [0, 1].

    Raises:
        ValueError: different lengths, empty or negative entries. TypeError: float input.

    Examples:
        >>> codes, labels = torch.tensor([2, 0, 1, 2]), torch.tensor([0, 1, 2, 0])
        >>> codebook_accuracy(codes, labels)
        1.0
    """
    from scipy.optimize import linear_sum_assignment

    m = confusion(codes, labels)
    if one_to_one:
        rows, cols = linear_sum_assignment(m, maximize=True)
        return float(m[rows, cols].sum() / m.sum())
    used = m.sum(1) > 0
    return float((m[used].max(1) / m[used].sum(1)).mean())


@checked
def kmeans_codes(X: FloatArray, k: PositiveInt = 10, *, seed: NonNegativeInt = 0) -> torch.Tensor:
    """Baseline: k-means (scikit-learn, 3 inits) on raw flattened fragments; (B, N) codes on
    ``X``'s device."""
    X = as_tensor(X, "X")
    if X.ndim < 3:
        raise ValueError(f"X must be (B, N, ...), got shape {tuple(X.shape)}")
    km = _fit_kmeans(X, k, seed)
    return torch.as_tensor(km.labels_, dtype=torch.int64, device=X.device).reshape(X.shape[:2])


def _fragments(X: torch.Tensor) -> np.ndarray:
    """``(B, N, ...)`` fragments as ``(B * N, features)`` float64 rows for scikit-learn."""
    return X.reshape(X.shape[0] * X.shape[1], -1).cpu().double().numpy()


def _fit_kmeans(X: torch.Tensor, k: int, seed: int) -> Any:
    """The fitted ``KMeans`` (3 inits) of :func:`kmeans_codes` on ``X``'s fragments."""
    from sklearn.cluster import KMeans

    return KMeans(k, n_init=3, random_state=seed).fit(_fragments(X))


def _probe_scores(Z: np.ndarray, y: np.ndarray, seed: int, linear: bool = True
                  ) -> tuple[float, float | None]:
    """kNN(5) and whitened logistic-regression accuracy on a held-out half (None for the
    latter when not ``linear``)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import StandardScaler

    order = np.random.default_rng(seed).permutation(len(y))
    tr, te = order[: len(y) // 2], order[len(y) // 2:]
    knn = KNeighborsClassifier(5).fit(Z[tr], y[tr]).score(Z[te], y[te])
    if not linear:
        return float(knn), None
    sc = StandardScaler().fit(Z[tr])
    lin = LogisticRegression(max_iter=300).fit(sc.transform(Z[tr]), y[tr]).score(
        sc.transform(Z[te]), y[te])
    return float(knn), float(lin)


@checked
def leakage_report(model: object, X: ArrayLike, content: ArrayLike, style: ArrayLike, *,
                   seed: int = 0, linear: bool = True) -> dict[str, float]:
    """kNN(5) and linear probe accuracies of content and style from z_c and z_s.

    Saturated V3 hinges give no gradient, so a latent may still carry the other factor:
    ``content_from_z_s`` and ``style_from_z_c`` measure that leakage (low is good), while
    ``content_from_z_c`` and ``style_from_z_s`` measure what each latent should hold.
    Probes train on a random half of the fragments and score on the other half.

    Args:
        model: a fitted :class:`~iclr25.v3.V3` (anything with ``transform(X) -> (z_c, z_s)``).
        X: (B, N, ...) sequences.
        content: (B, N) int labels of each fragment.
        style: (B,) int label of each sample.
        linear: also fit the logistic-regression probes (the kNN ones alone cost a
            fraction: an L-BFGS fit per probe dominates).

    Returns:
        dict ``{"<factor>_from_<latent>_<knn|linear>": accuracy}`` with 8 entries (the 4
        ``_knn`` ones when not ``linear``; those are the same either way).

    Raises:
        ValueError: label shapes that do not match X's (B, N).
    """
    zc, zs = model._latents(X)
    b, n = zc.shape[:2]
    c = as_tensor(content, "content")
    s = as_tensor(style, "style")
    if tuple(c.shape) != (b, n):
        raise ValueError(f"content must have shape {(b, n)}, got {tuple(c.shape)}")
    if tuple(s.shape) != (b,):
        raise ValueError(f"style must have shape {(b,)}, got {tuple(s.shape)}")
    labels = {"content": c.reshape(-1).cpu().numpy(),
              "style": s[:, None].expand(b, n).reshape(-1).cpu().numpy()}
    lat = {"z_c": zc.reshape(b * n, -1).cpu().double().numpy(),
           "z_s": zs.reshape(b * n, -1).cpu().double().numpy()}
    out = {}
    for f, y in labels.items():
        for name, Z in lat.items():
            knn, lin = _probe_scores(Z, y, seed, linear)
            out[f"{f}_from_{name}_knn"] = knn
            if linear:
                out[f"{f}_from_{name}_linear"] = lin
    return out
