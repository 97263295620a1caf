"""Decoupled stage-2 training: re-train a linear classifier on frozen features.

The LOS recipe (Sec. 4 and the official ``main_stage2.py``): start from the stage-1 linear
head, optimise only that head with SGD (lr 5e-4, momentum 0.9, no weight decay), cosine
annealing over 20 epochs, instance-balanced mini-batches of 64, and the over-smoothed
cross-entropy (eps = 0.98). The same loop trains the re-training baselines of the paper's
benchmark, so that every method sees the same features, batches and epochs.

Difference from the official code: here the features are frozen tensors, computed once.
The official stage 2 calls ``model.train()`` on the whole network and feeds augmented images
(random crop + flip), so the frozen backbone's BatchNorm statistics keep moving and every
epoch sees different features. On fixed features the two coincide (checked bit-for-bit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_choice,
    check_int,
    check_labels,
    check_range,
    like_input,
    resolve_seed,
)
from iclr25._contract import Reals1D, checked
from iclr25._engine import Engine, EngineOptions, Unpack
from iclr25._io import FittedIO
from iclr25._train import fit_minibatch
from iclr25.los.loss import check_smoothing, class_counts, los_per_sample

Method = Literal["los", "ce", "cbce", "lws", "la"]
METHODS: tuple[str, ...] = get_args(Method)
Init = nn.Linear | tuple[torch.Tensor, torch.Tensor | None] | Literal["logistic"]
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

RANDOM_HEAD = (
    "init is required: stage-2 re-training starts from the stage-1 linear head (pass "
    "init=model.fc or a (weight, bias) pair, or init='logistic' to fit a plain cross-entropy "
    "head on these features first). A random head is refused because the recipe's small "
    "learning rate cannot train one: at lr 5e-4 and 20 epochs it reached 1.7% balanced "
    "accuracy on a 100-class task, against 30.8% from the stage-1 head (chance 1%)."
)


@checked
def class_balanced_weights(counts: Reals1D, beta: float = 0.9999) -> torch.Tensor:
    """Effective-number weights ``w_k ∝ (1 - beta) / (1 - beta^{n_k})``, summing to K.

    Cui et al., "Class-Balanced Loss Based on Effective Number of Samples", CVPR 2019, Eq. 8.

    Args:
        counts: (K,) positive class counts. beta: in [0, 1); 0 gives equal weights, beta -> 1
            inverse-frequency weights.

    Returns:
        (K,) float32 weights.
    """
    counts = as_tensor(counts, "counts", ndim=1)
    beta = check_range(beta, "beta", 0.0, 1.0, high_open=True)
    if bool((counts <= 0).any()):
        raise ValueError("counts must all be positive (an empty class has no weight)")
    w = (1.0 - beta) / (1.0 - torch.pow(torch.as_tensor(beta, dtype=torch.float64),
                                        counts.double()))
    return (w / w.sum() * len(counts)).float()


# --- the stage-2 losses: method -> builder(counts, params) -> loss_fn(logits, y) -----------

def _los(counts: torch.Tensor, p: dict) -> LossFn:
    return lambda z, y: los_per_sample(z, y, p["smoothing"]).mean()


def _ce(counts: torch.Tensor, p: dict) -> LossFn:
    return F.cross_entropy


def _cbce(counts: torch.Tensor, p: dict) -> LossFn:
    weight = class_balanced_weights(counts, p["beta"]).to(device=counts.device,
                                                          dtype=p["dtype"])
    return lambda z, y: F.cross_entropy(z, y, weight=weight)


def _la(counts: torch.Tensor, p: dict) -> LossFn:
    log_prior = (counts.double() / counts.sum()).log().to(p["dtype"])
    return lambda z, y: F.cross_entropy(z + p["tau"] * log_prior, y)


_LOSSES: dict[str, Callable[[torch.Tensor, dict], LossFn]] = {
    "los": _los, "ce": _ce, "cbce": _cbce, "lws": _ce, "la": _la,
}


class _ScaledHead(nn.Module):
    """LWS: a frozen head whose logits are multiplied by a learned per-class scale."""

    def __init__(self, head: nn.Linear) -> None:
        super().__init__()
        self.head = head.requires_grad_(False)
        self.scale = nn.Parameter(torch.ones(head.out_features, device=head.weight.device,
                                             dtype=head.weight.dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(x) * self.scale

    @torch.no_grad()
    def folded(self) -> nn.Linear:
        """The head with the scales folded in: ``s_k·w_k``, ``s_k·b_k``."""
        self.head.weight.mul_(self.scale[:, None])
        self.head.bias.mul_(self.scale)
        return self.head.requires_grad_(True)


def _logistic_head(features: torch.Tensor, y: torch.Tensor,
                   n_classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A plain (unweighted) multinomial logistic-regression head fitted by L-BFGS."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(max_iter=500)
    lr.fit(features.detach().cpu().double().numpy(), y.cpu().numpy())
    w, b = torch.as_tensor(lr.coef_), torch.as_tensor(lr.intercept_)
    if n_classes == 2:  # sklearn keeps one row for two classes: split it symmetrically
        w, b = torch.cat([-w / 2, w / 2]), torch.cat([-b / 2, b / 2])
    return w, b


def _check_init(init: object, d: int, n_classes: int) -> object:
    """Validate ``init`` before any work; returns it or the checked (weight, bias) pair."""
    if init is None:
        raise ValueError(RANDOM_HEAD)
    if isinstance(init, str):
        return check_choice(init, "init", ("logistic",))
    if isinstance(init, nn.Linear):
        w, b = init.weight, init.bias
    elif isinstance(init, (tuple, list)) and len(init) == 2:
        w, b = init
    else:
        raise TypeError("init must be an nn.Linear, a (weight, bias) pair or 'logistic', "
                        f"got {type(init).__name__}")
    w = as_tensor(w, "init weight", ndim=2)
    if tuple(w.shape) != (n_classes, d):
        raise ValueError(f"init weight must have shape ({n_classes}, {d}), got {tuple(w.shape)}")
    b = torch.zeros(n_classes) if b is None else as_tensor(b, "init bias", ndim=1)
    if tuple(b.shape) != (n_classes,):
        raise ValueError(f"init bias must have shape ({n_classes},), got {tuple(b.shape)}")
    return w.detach(), b.detach()


def _start_head(init: object, features: torch.Tensor | Dataset, y: torch.Tensor,
                n_classes: int) -> nn.Linear:
    """A fresh copy of the starting head (never the caller's module itself)."""
    if init == "logistic" and not isinstance(features, torch.Tensor):
        raise ValueError("init='logistic' fits on all features in memory: with a Dataset, "
                         "pass the stage-1 head as init (an nn.Linear or (weight, bias))")
    w, b = _logistic_head(features, y, n_classes) if init == "logistic" else init
    d, dtype, device = _dims(features)
    # skip_init: no draw from the global RNG, the caller's random state stays untouched
    head = torch.nn.utils.skip_init(nn.Linear, d, n_classes, device=device, dtype=dtype)
    with torch.no_grad():
        head.weight.copy_(w)
        head.bias.copy_(b)
    return head


def _check_data(features: ArrayLike | Dataset, y: ArrayLike | None,
                n_classes: int | None) -> tuple[Any, torch.Tensor, torch.Tensor]:
    """(features, labels, class counts): tensors checked, or a Dataset of (feature, label)
    items with its labels read in one pass of batches (memory bounded by the batch)."""
    if isinstance(features, Dataset):
        if y is not None:
            raise ValueError("y must be None when features is a Dataset of (feature, label) "
                             "items")
        y = _dataset_labels(features)
    else:
        if y is None:
            raise ValueError("y is required with in-memory features")
        features = as_tensor(features, "features", ndim=2)
        if not features.is_floating_point():  # integer features: read as float32
            features = as_tensor(features, "features", dtype=torch.float32)
        features = features.detach()
    y = check_labels(y, "y", n=len(features),
                     device=features.device if isinstance(features, torch.Tensor) else None)
    n_classes = int(y.max()) + 1 if n_classes is None else n_classes
    n_classes = check_int(n_classes, "n_classes", 2)
    return features, y, class_counts(y, n_classes)


def _dataset_labels(ds: Dataset) -> torch.Tensor:
    """The (n,) labels of a Dataset of (feature (d,), label) items, read 4096 at a time."""
    if not hasattr(ds, "__len__") or len(ds) == 0:
        raise ValueError("features must be a non-empty map-style Dataset (with __len__)")
    x0 = ds[0]
    if not (isinstance(x0, (tuple, list)) and len(x0) == 2 and torch.is_tensor(x0[0])
            and x0[0].ndim == 1 and x0[0].is_floating_point()):
        raise TypeError("features Dataset items must be (feature, label) pairs with a 1-D "
                        "floating feature tensor")
    return torch.cat([torch.as_tensor(yb).reshape(-1)
                      for _, yb in DataLoader(ds, batch_size=4096)])


def _dims(features: torch.Tensor | Dataset) -> tuple[int, torch.dtype, torch.device]:
    """Feature width, dtype and device (a Dataset's first item; its head lives on CPU)."""
    if isinstance(features, torch.Tensor):
        return features.shape[1], features.dtype, features.device
    x0 = features[0][0]
    return x0.shape[0], x0.dtype, torch.device("cpu")


def _class_balanced_batches(y: torch.Tensor, counts: torch.Tensor, batch_size: int,
                            g: torch.Generator) -> Callable[[int], list[torch.Tensor]]:
    """Batches drawn with class-uniform probability (n draws with replacement per epoch)."""
    weights = (1.0 / counts.double())[y].cpu()

    def batches(epoch: int) -> list[torch.Tensor]:
        order = torch.multinomial(weights, len(y), replacement=True, generator=g)
        return list(order.to(y.device).split(batch_size))

    return batches


@checked
def retrain_classifier(
    features: torch.Tensor | Dataset,
    y: torch.Tensor | None,
    method: Method = "los",
    *,
    init: Init | None = "logistic",
    n_classes: int | None = None,
    smoothing: float = 0.98,
    epochs: int = 20,
    lr: float = 5e-4,
    momentum: float = 0.9,
    weight_decay: float = 0.0,
    batch_size: int = 64,
    beta: float = 0.9999,
    tau: float = 1.0,
    class_balanced_sampling: bool | None = None,
    seed: int | torch.Generator | None = 0,
    **engine: Unpack[EngineOptions],
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

    The features are frozen tensors; the official stage 2 instead keeps the backbone's
    BatchNorm layers in train mode and augments the images, so its features drift a little
    during re-training (see the module docstring).

    Args:
        features: (n, d) frozen features (e.g. penultimate activations of the stage-1 net);
            float16/32/64 or numpy; integer features are read as float32. Or a map-style
            ``torch.utils.data.Dataset`` of ``(feature (d,), label)`` items (features on
            disk): read batch by batch, memory bounded by the batch (plus the (n,) labels,
            read in one pass first); ``init`` must then be a head, not "logistic".
        y: (n,) integer labels in [0, K); every class needs at least one sample. None with
            a Dataset.
        method: one of ``"los"``, ``"ce"``, ``"cbce"``, ``"lws"``, ``"la"``.
        init: the starting head: an ``nn.Linear(d, K)`` or a ``(weight (K, d), bias (K,))``
            pair (the recipe, and what the reproduction does: the stage-1 head), or
            ``"logistic"`` (default, for features without their stage-1 head) to start from
            a plain multinomial logistic regression fitted on ``features``, a stand-in for a
            stage-1 head trained with CE. Pass the stage-1 head when you have it: on the
            reproduction's quick testbed (seed 0) LOS reached 30.3% balanced accuracy from
            the stage-1 head (CE re-training 27.3%) but 27.3% from the logistic start (CE
            30.3%). Never modified. ``None`` (a random head) is refused: at the recipe's
            learning rate it stays near chance.
        n_classes: K >= 2; defaults to ``y.max() + 1``.
        smoothing: eps of ``"los"``, in (0, 1).
        epochs, lr, momentum, weight_decay, batch_size: the SGD recipe (paper defaults);
            every number must be finite.
        beta: effective-number beta of ``"cbce"``. tau: logit-adjustment strength of ``"la"``.
        class_balanced_sampling: draw batches with class-uniform probability; default None
            means True for ``"lws"`` only (Kang et al.), instance-balanced otherwise.
        seed: batch order (int, CPU Generator, or None for a fresh one).
        **engine: how the loop runs (:class:`iclr25._engine.EngineOptions`: ``devices``,
            ``strategy``, ``precision``, ``checkpoint``, ``checkpoint_every``, ``resume``;
            resuming needs the same features, batch size and head).

    Returns:
        The trained ``nn.Linear(d, K)`` on ``features.device`` in ``features.dtype``
        (``head(features)`` = logits).

    Raises:
        ValueError: ``init`` missing, bad shapes, labels outside [0, K), empty classes,
            smoothing outside (0, 1), unknown method, non-positive or non-finite
            epochs/lr/batch size/weight decay/tau.
        TypeError: non-integer labels, complex features, ``init`` of the wrong kind.

    Examples:
        >>> import torch
        >>> X = torch.randn(60, 4, generator=torch.Generator().manual_seed(0))
        >>> y = torch.arange(3).repeat_interleave(20)
        >>> head = retrain_classifier(X, y, "los", init=torch.nn.Linear(4, 3), epochs=2)
        >>> head(X).shape
        torch.Size([60, 3])
    """
    params = dict(init=init, n_classes=n_classes, smoothing=smoothing, epochs=epochs, lr=lr,
                  momentum=momentum, weight_decay=weight_decay, batch_size=batch_size,
                  beta=beta, tau=tau, class_balanced_sampling=class_balanced_sampling, seed=seed)
    return _retrain(features, y, method, params, engine)[0]


def _retrain(features: torch.Tensor | Dataset, y: torch.Tensor | None, method: Method,
             params: dict[str, Any], run: dict[str, Any]) -> tuple[nn.Linear, torch.Tensor]:
    """:func:`retrain_classifier`'s work (``params``: its hyper-parameters by name, ``run``:
    the engine's options); also returns the (K,) class counts."""
    init, n_classes, smoothing, epochs, lr, momentum, weight_decay, batch_size, beta, tau, \
        class_balanced_sampling, seed = (params[k] for k in (
            "init", "n_classes", "smoothing", "epochs", "lr", "momentum", "weight_decay",
            "batch_size", "beta", "tau", "class_balanced_sampling", "seed"))
    features, y, counts = _check_data(features, y, n_classes)
    n_classes = len(counts)
    d, dtype, device = _dims(features)
    Engine(**run, device_kind=device.type)   # the run's options, refused before any work
    method = check_choice(method, "method", Method)
    p = dict(smoothing=check_smoothing(smoothing) if method == "los" else smoothing,
             beta=check_range(beta, "beta", 0.0, 1.0, high_open=True),
             tau=check_range(tau, "tau", 0.0), dtype=dtype)
    epochs, batch_size = check_int(epochs, "epochs", 1), check_int(batch_size, "batch_size", 1)
    lr = check_range(lr, "lr", 0.0, low_open=True)
    momentum = check_range(momentum, "momentum", 0.0, 1.0, high_open=True)
    weight_decay = check_range(weight_decay, "weight_decay", 0.0)
    init = _check_init(init, d, n_classes)
    g = resolve_seed(seed)
    if class_balanced_sampling is None:
        class_balanced_sampling = method == "lws"

    head = _start_head(init, features, y, n_classes)
    model = _ScaledHead(head) if method == "lws" else head
    opt = torch.optim.SGD([q for q in model.parameters() if q.requires_grad], lr=lr,
                          momentum=momentum, weight_decay=weight_decay)
    fit_minibatch(model, _LOSSES[method](counts, p), features,
                  y if isinstance(features, torch.Tensor) else None, epochs=epochs,
                  batch_size=batch_size, optimizer=opt, seed=g,
                  batches=(_class_balanced_batches(y, counts, batch_size, g)
                           if class_balanced_sampling else None),
                  scheduler=torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs),
                  **run)
    return (model.folded() if isinstance(model, _ScaledHead) else head), counts


@checked
class RetrainedClassifier(FittedIO, ClassifierMixin, BaseEstimator):
    """scikit-learn estimator for stage-2 re-training (:func:`retrain_classifier`).

    ``RetrainedClassifier("los", init=stage1_head).fit(F_train, y_train).predict(F_test)``;
    ``RetrainedClassifier().fit(F_train, y_train)`` starts from a plain logistic-regression
    head fitted on the features (``init="logistic"``) when no stage-1 head is at hand.
    The parameters are those of :func:`retrain_classifier`; ``__init__`` only stores them,
    ``fit`` validates. Labels must be integers in [0, K) (the rows of the head are the
    classes), so ``classes_`` is ``arange(K)``. Outputs mirror the input: a tensor for a
    tensor, a numpy array otherwise. Features may be float16/32/64 (cast to the head's dtype
    at predict time).

    When LOS helps: it re-trains the classifier of a network whose features were learned
    end-to-end on the long-tailed data (decoupled training's stage 2): there the stage-1
    head is biased towards the head classes through its logit magnitudes, which over-smoothed
    targets even out. On fixed features that were not learned on the imbalanced labels
    (tabular columns, a frozen pretrained encoder) there is no such head to correct, and a
    re-weighted linear model, ``sklearn.linear_model.LogisticRegression(
    class_weight="balanced")``, is the baseline to beat and may well win (issue 68: 0.533
    against LOS's 0.487 balanced accuracy on plain features): compare the two by
    ``iclr25.los.balanced_accuracy`` on held-out data before choosing.

    Fitted attributes: ``head_`` (nn.Linear), ``classes_``, ``n_classes_``,
    ``class_counts_`` ((K,) int64 tensor), ``n_features_in_``.

    Examples:
        >>> import torch
        >>> X = torch.randn(60, 4, generator=torch.Generator().manual_seed(0))
        >>> y = torch.arange(3).repeat_interleave(20)
        >>> clf = RetrainedClassifier("los", init=torch.nn.Linear(4, 3), epochs=2).fit(X, y)
        >>> clf.predict(X.double().numpy()).shape
        (60,)
    """

    def __init__(
        self,
        method: Method = "los",
        *,
        init: Init | None = "logistic",
        n_classes: int | None = None,
        smoothing: float = 0.98,
        epochs: int = 20,
        lr: float = 5e-4,
        momentum: float = 0.9,
        weight_decay: float = 0.0,
        batch_size: int = 64,
        beta: float = 0.9999,
        tau: float = 1.0,
        class_balanced_sampling: bool | None = None,
        seed: int | torch.Generator | None = 0,
    ) -> None:
        self.method = method
        self.init = init
        self.n_classes = n_classes
        self.smoothing = smoothing
        self.epochs = epochs
        self.lr = lr
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.beta = beta
        self.tau = tau
        self.class_balanced_sampling = class_balanced_sampling
        self.seed = seed

    def _new_module(self, name: str) -> nn.Linear:
        return nn.Linear(self.n_features_in_, self.n_classes_)

    def fit(self, X: ArrayLike | Dataset, y: ArrayLike | None = None,
            **engine: Unpack[EngineOptions]) -> RetrainedClassifier:
        """Train the head on features X (n, d) and labels y (n,), or on a Dataset X of
        (feature, label) items with y None; returns self. ``**engine``: how the loop runs
        (:class:`iclr25._engine.EngineOptions`), as in :func:`retrain_classifier`."""
        if not isinstance(X, Dataset):
            X = as_tensor(X, "X", ndim=2)  # named as the caller knows it, before any work
            if not X.is_floating_point():  # integer features are read as float32, bools refused
                X = as_tensor(X, "X", dtype=torch.float32)
            if y is None:
                raise ValueError("y is required with in-memory features X")
            check_labels(y, "y", n=len(X))
        params = self.get_params()
        method = params.pop("method")
        self.head_, counts = _retrain(X, y, method, params, engine)
        self.n_classes_ = self.head_.out_features
        self.n_features_in_ = self.head_.in_features
        self.classes_ = np.arange(self.n_classes_)
        self.class_counts_ = counts.cpu()
        return self

    @torch.no_grad()
    def _logits(self, X: ArrayLike) -> torch.Tensor:
        check_is_fitted(self, "head_")
        w = self.head_.weight
        X = as_tensor(X, "X", ndim=2, dtype=w.dtype, device=w.device)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but RetrainedClassifier is "
                             f"expecting {self.n_features_in_} features as input")
        return self.head_(X)

    def decision_function(self, X: ArrayLike) -> torch.Tensor | np.ndarray:
        """(n, K) logits; for K = 2, scikit-learn's (n,) ``z_1 - z_0``."""
        z = self._logits(X)
        return like_input(z[:, 1] - z[:, 0] if z.shape[1] == 2 else z, X)

    def predict_proba(self, X: ArrayLike) -> torch.Tensor | np.ndarray:
        """(n, K) softmax probabilities."""
        return like_input(self._logits(X).softmax(1), X)

    def predict(self, X: ArrayLike) -> torch.Tensor | np.ndarray:
        """(n,) predicted labels (int64)."""
        return like_input(self._logits(X).argmax(1), X)
