"""Data and scores used only by URLOST's claims, tests and benchmark: permuted and foveated
digits, cluster compactness on the hidden grid, cluster-area spread, a few-shot probe."""

from __future__ import annotations

import numpy as np
import torch

from iclr25._checks import check_int, resolve_seed
from iclr25.datasets.views import digit_images, jitter, permute_features

__all__ = ["area_std", "compactness_ratio", "few_shot_probe", "foveated_digits",
           "permuted_digits"]


def permuted_digits(copies: int, seed: int = 0, max_shift: int = 1) -> dict[str, torch.Tensor]:
    """16x16 digits: ``copies`` jittered copies of the train split, the test split, both
    flattened, and one pixel permutation (``seed``) applied to every image.

    Returns:
        dict with ``X_train`` (n, 256) jittered and permuted, ``y_train`` (n,), ``X_probe``
        (the unjittered train split, permuted), ``y_probe``, ``X_test``, ``y_test``, ``perm``
        (256,) and the unpermuted versions ``grid_*``.
    """
    d = digit_images(16, seed)
    tr = jitter(d.X_train, copies, max_shift, seed=seed).reshape(-1, 256)
    # a faint seeded noise keeps border pixels from being exactly constant
    g = resolve_seed(seed)
    tr = tr + 1e-3 * torch.rand(tr.shape, generator=g)
    probe, test = d.X_train.reshape(-1, 256), d.X_test.reshape(-1, 256)
    _, perm = permute_features(tr[:1], seed=seed + 1000)
    return {"X_train": tr[:, perm], "y_train": d.y_train.repeat(copies),
            "X_probe": probe[:, perm], "y_probe": d.y_train, "X_test": test[:, perm],
            "y_test": d.y_test, "perm": perm, "grid_train": tr, "grid_probe": probe,
            "grid_test": test}


def foveated_digits(copies: int, n_rings: int = 24, n_angles: int = 24, seed: int = 0
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """48x48 digits (16x16 upsampled, jittered ±3 px) seen through :func:`retina_sampler`.

    Returns:
        ``X`` (n, S) sensor readings, ``coords`` (S, 2), ``radii`` (S,).
    """
    import torch.nn.functional as F

    from iclr25.urlost.retina import foveate, retina_sampler

    d = digit_images(16, seed)
    img = F.interpolate(d.X_train[:, None], size=(48, 48), mode="bilinear",
                        align_corners=False)[:, 0]
    img = jitter(img, copies, 3, seed=seed)
    coords, radii = retina_sampler(48, n_rings, n_angles, 7)
    X = foveate(img, coords, radii)
    X = X + 1e-3 * torch.rand(X.shape, generator=resolve_seed(seed))
    return X, coords, radii


def compactness_ratio(labels: torch.Tensor, positions: torch.Tensor, *, n_random: int = 20,
                      seed: int = 0) -> float:
    """Mean within-cluster pairwise distance of ``positions`` ÷ the same for random groups
    of the same sizes (mean over ``n_random`` shuffles of the labels): 1 = no locality.

    Args:
        labels: (d,) cluster per dimension. positions: (d, 2) true (hidden) coordinates.
    """
    lab = torch.as_tensor(labels).long().cpu()
    pos = torch.as_tensor(positions).double().cpu()
    D = torch.cdist(pos, pos)

    def intra(lb: torch.Tensor) -> float:
        same = lb[:, None] == lb[None, :]
        same.fill_diagonal_(False)
        return float(D[same].mean())

    gen = resolve_seed(seed)
    rand = [intra(lab[torch.randperm(len(lab), generator=gen)]) for _ in range(n_random)]
    return intra(lab) / float(np.mean(rand))


def area_std(labels: torch.Tensor, radii: torch.Tensor) -> float:
    """Std over clusters of the cluster "area" Σ radius² (the official code's area_std)."""
    lab = torch.as_tensor(labels).long().cpu()
    r = torch.as_tensor(radii).double().cpu()
    area = torch.zeros(int(lab.max()) + 1, dtype=torch.float64).index_add_(0, lab, r ** 2)
    return float(area.std(unbiased=False))


def few_shot_probe(Z_train: torch.Tensor, y_train: torch.Tensor, Z_test: torch.Tensor,
                   y_test: torch.Tensor, shots: int = 5, draws: int = 5, seed: int = 0
                   ) -> float:
    """Mean test accuracy of a logistic-regression probe fitted on ``shots`` labelled
    examples per class, over ``draws`` random label draws (features standardised on the
    shots)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    shots, draws = check_int(shots, "shots", 1), check_int(draws, "draws", 1)
    Ztr, ytr = np.asarray(torch.as_tensor(Z_train).cpu()), np.asarray(
        torch.as_tensor(y_train).cpu())
    Zte, yte = np.asarray(torch.as_tensor(Z_test).cpu()), np.asarray(
        torch.as_tensor(y_test).cpu())
    rng = np.random.default_rng(seed)
    accs = []
    # one BLAS thread: a 50-sample probe gains nothing from a pool, and OpenBLAS's idle
    # threads spin between its tiny calls (~10x the CPU time, measured; same accuracies)
    with threadpool_limits(1):
        for _ in range(draws):
            idx = np.concatenate([rng.choice(np.flatnonzero(ytr == c), shots, replace=False)
                                  for c in np.unique(ytr)])
            sc = StandardScaler().fit(Ztr[idx])
            clf = LogisticRegression(max_iter=2000).fit(sc.transform(Ztr[idx]), ytr[idx])
            accs.append(clf.score(sc.transform(Zte), yte))
    return float(np.mean(accs))
