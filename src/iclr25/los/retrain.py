"""Decoupled stage-2 training: re-train a linear classifier on frozen features.

The LOS recipe (Sec. 4 and the official ``main_stage2.py``): start from the stage-1 linear
head, optimise only that head with SGD (lr 5e-4, momentum 0.9, no weight decay), cosine
annealing over 20 epochs, instance-balanced mini-batches of 64, and the over-smoothed
cross-entropy (eps = 0.98). The same loop trains the re-training baselines of the paper's
benchmark, so that every method sees the same features, batches and epochs.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from iclr25._checks import check_in_range, check_same_length, check_tensor
from iclr25.los.loss import _los_per_sample, class_counts

METHODS = ("los", "ce", "cbce", "lws", "la")


def class_balanced_weights(counts: torch.Tensor, beta: float = 0.9999) -> torch.Tensor:
    """Effective-number weights ``w_k ∝ (1 - beta) / (1 - beta^{n_k})``, summing to K.

    Cui et al., "Class-Balanced Loss Based on Effective Number of Samples", CVPR 2019, Eq. 8.

    Args:
        counts: (K,) positive class counts. beta: in [0, 1); 0 gives equal weights, beta -> 1
            inverse-frequency weights.
    """
    counts = check_tensor(counts, "counts", ndim=1)
    check_in_range(beta, "beta", 0.0, 1.0, high_open=True)
    if bool((counts <= 0).any()):
        raise ValueError("counts must all be positive (an empty class has no weight)")
    w = (1.0 - beta) / (1.0 - torch.pow(torch.as_tensor(beta, dtype=torch.float64),
                                        counts.double()))
    return (w / w.sum() * len(counts)).float()


def _as_head(init: object, in_features: int, n_classes: int, device: torch.device,
             dtype: torch.dtype, generator: torch.Generator) -> nn.Linear:
    """A fresh copy of the starting head (never the caller's module itself)."""
    # skip_init: no draw from the global RNG, the caller's random state stays untouched
    head = torch.nn.utils.skip_init(nn.Linear, in_features, n_classes, device=device,
                                    dtype=dtype)
    with torch.no_grad():
        if init is None:
            # nn.Linear's default U(-1/sqrt(d), 1/sqrt(d)), drawn from our generator
            bound = 1.0 / math.sqrt(in_features)
            w = (torch.rand(n_classes, in_features, generator=generator) * 2 - 1) * bound
            b = (torch.rand(n_classes, generator=generator) * 2 - 1) * bound
        else:
            if isinstance(init, nn.Linear):
                w, b = init.weight, init.bias
            elif isinstance(init, (tuple, list)) and len(init) == 2:
                w, b = init
            else:
                raise TypeError("init must be None, an nn.Linear or a (weight, bias) pair, "
                                f"got {type(init).__name__}")
            w = check_tensor(w, "init weight", ndim=2, floating=True)
            if tuple(w.shape) != (n_classes, in_features):
                raise ValueError(f"init weight must have shape ({n_classes}, {in_features}), "
                                 f"got {tuple(w.shape)}")
            if b is None:
                b = torch.zeros(n_classes)
            b = check_tensor(b, "init bias", ndim=1, floating=True)
            if tuple(b.shape) != (n_classes,):
                raise ValueError(f"init bias must have shape ({n_classes},), got {tuple(b.shape)}")
        head.weight.copy_(w.detach())
        head.bias.copy_(b.detach())
    return head


def retrain_classifier(
    features: torch.Tensor,
    labels: torch.Tensor,
    method: str = "los",
    *,
    n_classes: int | None = None,
    init: nn.Linear | tuple[torch.Tensor, torch.Tensor | None] | None = None,
    smoothing: float = 0.98,
    epochs: int = 20,
    lr: float = 5e-4,
    momentum: float = 0.9,
    weight_decay: float = 0.0,
    batch_size: int = 64,
    beta: float = 0.9999,
    tau: float = 1.0,
    class_balanced_sampling: bool | None = None,
    seed: int = 0,
) -> nn.Linear:
    """Re-train a linear classifier on frozen features with one of the stage-2 losses.

    Methods (all share the SGD + cosine loop, the batches and the epochs):

    * ``"los"``: label over-smoothing, CE against ``(1-eps)·onehot + eps/K`` (this paper).
    * ``"ce"``: plain cross-entropy re-training.
    * ``"cbce"``: class-balanced CE with effective-number weights (Cui et al. 2019, ``beta``).
    * ``"lws"``: learnable weight scaling (Kang et al. 2020): the head is frozen and only a
      per-class scale ``s_k`` of its logits is learned, with class-balanced sampling by
      default; the returned head has the scales folded in (``s_k·w_k``, ``s_k·b_k``).
    * ``"la"``: logit-adjusted loss (Menon et al. 2021), CE on ``z + tau·log(pi)`` during
      training, plain ``z`` at test time.

    Args:
        features: (n, d) frozen features (e.g. penultimate activations of the stage-1 net).
        labels: (n,) integer labels in [0, K); every class needs at least one sample.
        method: one of ``"los"``, ``"ce"``, ``"cbce"``, ``"lws"``, ``"la"``.
        n_classes: K; defaults to ``labels.max() + 1``.
        init: starting head: an ``nn.Linear(d, K)`` or a ``(weight (K, d), bias (K,))`` pair
            (the recipe: the stage-1 head); None draws a fresh head from ``seed``. Never
            modified. ``"lws"`` needs one.
        smoothing: eps of ``"los"``, in (0, 1).
        epochs, lr, momentum, weight_decay, batch_size: the SGD recipe (paper defaults).
        beta: effective-number beta of ``"cbce"``. tau: logit-adjustment strength of ``"la"``.
        class_balanced_sampling: draw batches with class-uniform probability; default None
            means True for ``"lws"`` only (Kang et al.), instance-balanced otherwise.
        seed: seeds the fresh head and the batch order.

    Returns:
        The trained ``nn.Linear(d, K)`` on ``features.device`` (``head(features)`` = logits).

    Raises:
        ValueError/TypeError: bad shapes, labels outside [0, K), empty classes, smoothing
            outside (0, 1), unknown method, non-positive epochs/lr/batch size.
    """
    features = check_tensor(features, "features", ndim=2, floating=True)
    labels = check_tensor(labels, "labels", ndim=1, integer=True)
    n = check_same_length(features=features, labels=labels)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if n_classes is None:
        n_classes = int(labels.max()) + 1
    if not isinstance(n_classes, int) or n_classes < 2:
        raise ValueError(f"n_classes must be an int >= 2, got {n_classes!r}")
    counts = class_counts(labels, n_classes)
    if method == "los":
        check_in_range(smoothing, "smoothing", 0.0, 1.0, low_open=True, high_open=True)
    for name, v in (("epochs", epochs), ("batch_size", batch_size)):
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    check_in_range(lr, "lr", 0.0, low_open=True)
    check_in_range(momentum, "momentum", 0.0, 1.0, high_open=True)
    check_in_range(weight_decay, "weight_decay", 0.0)
    check_in_range(tau, "tau", 0.0)
    if method == "lws" and init is None:
        raise ValueError("method='lws' rescales a trained head: pass init=(the stage-1 head)")
    if class_balanced_sampling is None:
        class_balanced_sampling = method == "lws"

    device = features.device
    g = torch.Generator().manual_seed(seed)
    head = _as_head(init, features.shape[1], n_classes, device, features.dtype, g)
    counts = counts.to(device)
    x_all, y_all = features.detach(), labels.to(device)

    if method == "lws":
        scale = torch.ones(n_classes, device=device, dtype=features.dtype, requires_grad=True)
        head.requires_grad_(False)
        params = [scale]
    else:
        params = list(head.parameters())
    if method == "cbce":
        weight = class_balanced_weights(counts, beta).to(device=device, dtype=features.dtype)
    if method == "la":
        log_prior = (counts.double() / n).log().to(features.dtype)

    def logits_of(x: torch.Tensor) -> torch.Tensor:
        z = head(x)
        return z * scale if method == "lws" else z

    def loss_of(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if method == "los":
            return _los_per_sample(z, y, smoothing).mean()
        if method == "cbce":
            return F.cross_entropy(z, y, weight=weight)
        if method == "la":
            return F.cross_entropy(z + tau * log_prior, y)
        return F.cross_entropy(z, y)

    opt = torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    sample_w = (1.0 / counts.double())[y_all].cpu() if class_balanced_sampling else None
    for _ in range(epochs):
        if sample_w is None:
            order = torch.randperm(n, generator=g)
        else:
            order = torch.multinomial(sample_w, n, replacement=True, generator=g)
        order = order.to(device)
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            loss = loss_of(logits_of(x_all[idx]), y_all[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sched.step()

    if method == "lws":
        with torch.no_grad():
            head.weight.mul_(scale[:, None])
            head.bias.mul_(scale)
        head.requires_grad_(True)
    return head


class RetrainedClassifier:
    """A scikit-learn style wrapper of :func:`retrain_classifier`.

    ``RetrainedClassifier("los").fit(F_train, y_train, init=stage1_head).predict(F_test)``.
    Labels must already be integers in [0, K). Fitted attributes: ``head_`` (nn.Linear),
    ``n_classes_``, ``class_counts_``.

    Args:
        method: see :func:`retrain_classifier`; ``**params`` are passed on to it
            (``smoothing``, ``epochs``, ``lr``, ``seed``...).
    """

    def __init__(self, method: str = "los", **params: object) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.method = method
        self.params = params

    def fit(self, X: torch.Tensor, y: torch.Tensor, init: object = None,
            n_classes: int | None = None) -> RetrainedClassifier:
        """Train the head on features X (n, d) and labels y (n,); returns self."""
        y = check_tensor(y, "y", ndim=1, integer=True)
        self.head_ = retrain_classifier(X, y, self.method, init=init, n_classes=n_classes,
                                        **self.params)
        self.n_classes_ = self.head_.out_features
        self.class_counts_ = torch.bincount(y, minlength=self.n_classes_)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "head_"):
            raise RuntimeError("RetrainedClassifier is not fitted yet: call fit first")

    @torch.no_grad()
    def decision_function(self, X: torch.Tensor) -> torch.Tensor:
        """(n, K) logits."""
        self._check_fitted()
        X = check_tensor(X, "X", ndim=2, floating=True)
        if X.shape[1] != self.head_.in_features:
            raise ValueError(f"X must have {self.head_.in_features} features, got {X.shape[1]}")
        return self.head_(X)

    def predict_proba(self, X: torch.Tensor) -> torch.Tensor:
        """(n, K) softmax probabilities."""
        return self.decision_function(X).softmax(1)

    def predict(self, X: torch.Tensor) -> torch.Tensor:
        """(n,) predicted labels."""
        return self.decision_function(X).argmax(1)
