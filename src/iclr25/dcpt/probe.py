"""Reading the degradation off a restorer's features: :func:`feature_probe` (the paper's
Fig. 1, a k-NN on pooled features) and :func:`classify` (a checkpoint's classifier)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from iclr25._checks import check_int, check_labels, check_range, user_stacklevel
from iclr25._contract import Images, Ints1D, checked
from iclr25.datasets.images import check_images
from iclr25.dcpt.io import Checkpoint
from iclr25.dcpt.networks import FeatureTap, _device_of

__all__ = ["classify", "feature_probe", "tapped_features", "unsure"]


@torch.no_grad()
def tapped_features(model: nn.Module, x: torch.Tensor, layers: Sequence[str],
                    batch_size: int = 64) -> torch.Tensor:
    """Global-average-pooled tapped features, concatenated: (B, sum of channels)."""
    out = []
    was = model.training
    model.eval()
    try:
        with FeatureTap(model, layers) as tap:
            for chunk in x.split(batch_size):
                tap.clear()
                model(chunk)
                out.append(torch.cat([f.mean((-2, -1)) for f in tap.features], 1))
    finally:
        model.train(was)
    return torch.cat(out)


@checked
def feature_probe(model: nn.Module, lq: Images, y: Ints1D, *, layers: Sequence[str],
                  n_neighbors: int = 5, test_size: float = 0.33, repeats: int = 5,
                  seed: int = 0) -> float:
    """How well the degradation can be read off a network's features (the paper's Fig. 1).

    As the official ``knn.py``: global-average-pooled features of the tapped layers, a
    ``KNeighborsClassifier(n_neighbors)`` on a ``train_test_split(test_size)``, mean test
    accuracy over ``repeats`` splits (seeds ``seed, seed + 1, ...``).

    Returns:
        Mean held-out top-1 accuracy, a float in [0, 1].

    Raises:
        ValueError/TypeError: bad images or labels, unknown layers, bad probe parameters.
    """
    from sklearn.model_selection import train_test_split
    from sklearn.neighbors import KNeighborsClassifier

    x = check_images(lq, "lq")
    if x.ndim != 4:
        raise ValueError(f"lq must be a (B, 3, H, W) batch, got {tuple(x.shape)}")
    t = check_labels(y, "y", n=x.shape[0])
    n_neighbors = check_int(n_neighbors, "n_neighbors", 1)
    test_size = check_range(test_size, "test_size", 0, 1, low_open=True, high_open=True)
    repeats = check_int(repeats, "repeats", 1)
    seed = check_int(seed, "seed", 0)
    n_fit = math.floor((1 - test_size) * len(x))  # scikit-learn's split of the images
    if n_fit < 1 or n_fit == len(x):
        raise ValueError(f"lq: {len(x)} image(s) split by test_size={test_size} leave "
                         f"{n_fit} to fit the probe and {len(x) - n_fit} to score it; both "
                         f"must be >= 1")
    FeatureTap(model, layers).remove()
    feats = tapped_features(model, x.to(_device_of(model)), layers).cpu().double().numpy()
    labels = t.cpu().numpy()
    accs = []
    for r in range(repeats):
        a, b, ya, yb = train_test_split(feats, labels, test_size=test_size,
                                        random_state=seed + r)
        accs.append(KNeighborsClassifier(min(n_neighbors, len(a))).fit(a, ya).score(b, yb))
    return float(np.mean(accs))



def unsure(p: torch.Tensor) -> torch.Tensor:
    """Which images a classifier's probabilities ``p`` (B, K) leave unsure, (B,) bool.

    The rule: the top probability is below ``min(2/K, (1 + 1/K)/2)``, i.e. less than twice
    chance (1/K) over the K kinds, or, for K <= 3 where twice chance is at or above certainty's
    midpoint, less than halfway from chance to certainty (K = 2: 0.75; K = 5: 0.40). One kind
    (K = 1) is never unsure. A new user's 60-step model named 1 of 4 noisy photos right with
    top probabilities 0.27-0.38 over 5 kinds (issue 68): all below 0.40."""
    k = p.shape[-1]
    if k < 2:
        return torch.zeros(p.shape[:-1], dtype=torch.bool, device=p.device)
    return p.max(-1).values < _unsure_level(k)


def _unsure_level(k: int) -> float:
    """:func:`unsure`'s level for ``k`` kinds."""
    return min(2 / k, (1 + 1 / k) / 2)


def unsure_message(n_unsure: int, n: int, k: int, hint: str) -> str:
    """The one warning for ``n_unsure`` of ``n`` images left unsure over ``k`` kinds."""
    return (f"the degradation classifier is unsure of {n_unsure} of {n} image(s): top "
            f"probability below {_unsure_level(k):.2f} (chance over {k} kinds: {1 / k:.2f}; "
            f"a classifier pre-trained for few steps names kinds near chance): if you know "
            f"the degradation, give {hint}")


@torch.no_grad()
@checked
def classify(checkpoint: Checkpoint, images: Images) -> torch.Tensor:
    """Degradation probabilities (B, n_classes) for images, from a checkpoint with a classifier.

    Warns once (a UserWarning with the number of images) where the top probability is near
    chance by the rule of :func:`unsure`, suggesting ``degradation=`` for ``restore``.

    Raises:
        ValueError: the checkpoint has no classifier or no tap layers; bad images.
    """
    p = _probabilities(checkpoint, images)
    low = int(unsure(p).sum())
    if low:
        warnings.warn(unsure_message(low, len(p), p.shape[1], "restore(..., degradation=KIND)"),
                      UserWarning, stacklevel=user_stacklevel())
    return p


@torch.no_grad()
def _probabilities(checkpoint: Checkpoint, images: Images) -> torch.Tensor:
    """:func:`classify` without its warning (the CLI warns once per command)."""
    if checkpoint.classifier is None or checkpoint.layers is None:
        raise ValueError("checkpoint has no degradation classifier (save it with classifier=)")
    x = check_images(images, "images")
    xb = x[None] if x.ndim == 3 else x
    model = checkpoint.model
    dev = _device_of(model)
    was = model.training
    model.eval()
    try:
        with FeatureTap(model, checkpoint.layers) as tap:
            model(xb.to(dev, torch.float32))
            p = torch.softmax(checkpoint.classifier(tap.features), 1)
    finally:
        model.train(was)
    return p.to(x.device)
