"""The COX estimator: connect (VIB from each IM embedding to the OOM encoder), then explore
(pseudo-labels where the IM heads agree on OOM embeddings; a prior KL elsewhere), with created
correspondences when no pairs are given (paper Sec. 4, Alg. 1)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from torch import nn
from torch.utils.data import Dataset

from iclr25._checks import (
    SPREAD_HINT,
    ArrayLike,
    as_tensor,
    check_choice,
    check_int,
    check_range,
    check_tensor,
    column_spread,
    like_input,
    resolve_seed,
    user_stacklevel,
)
from iclr25._contract import checked
from iclr25._engine import (
    Engine,
    EngineOptions,
    Stream,
    Unpack,
    fingerprint,
    gather,
    local_rows,
)
from iclr25._io import FittedIO
from iclr25._train import fit_minibatch, seeded_mlp
from iclr25.cox.explore import prior_kl, select_agreement
from iclr25.cox.match import emergent_correspondences
from iclr25.cox.rows import Rows, read_labels, sample
from iclr25.cox.vib import VIB, vib_loss
from iclr25.datasets.rows import row_windows

__all__ = ["COX", "COXConvergenceWarning", "COXFloorWarning", "COXMatchingWarning",
           "COXNamingWarning"]


class COXConvergenceWarning(UserWarning):
    """The training objective had not reached a plateau by the end of :meth:`COX.fit`."""


class COXMatchingWarning(UserWarning):
    """A re-matching round found fewer than ``min_pairs`` pairs; the previous ones were kept."""


class COXNamingWarning(UserWarning):
    """The OOM head's class names could not be confirmed on the rows it did not fit."""


class COXFloorWarning(UserWarning):
    """In cross-validation on the labelled OOM rows COX's head did not beat a logistic
    regression on them by a one-sided exact sign test at 0.05; the regression predicts (the
    floor)."""


_ROUNDS = 5  # connect / re-match rounds when no pairs are given (the setting)
_GW_ROWS = 400  # rows per side of the entropic-GW bootstrap
_PLATEAU = 0.02  # converged: the last tenth's mean objective within 2% of the tenth before,
# or within twice the standard error of the two means (minibatch noise)
_FLOOR_FOLDS = 3  # the floor check's folds (fewer when a class has fewer labelled rows)
_FLOOR_LEVEL = 0.05  # the head predicts when its sign test against the floor has p <= this
_FLOOR_ITER = 2000  # the floor's lbfgs iterations (sklearn's LogisticRegression max_iter)
_NAMING_LEVEL = 0.5  # names agreeing with the labelled rows' 1-NN on fewer unlabelled rows warn


@dataclass(frozen=True)
class _Data:
    """A fit's checked inputs, on X's device and dtype (:meth:`COX._validate`); a Dataset's
    rows are a :class:`~iclr25.cox.rows.Rows`, indexed like a tensor (``streamed``)."""

    X: torch.Tensor | Rows               # (m, d) OOM inputs
    names: list[str]                     # the IM modalities
    Z: dict[str, torch.Tensor | Rows]    # {modality: (n, D)} frozen, aligned IM embeddings
    Y: dict[str, torch.Tensor]           # {modality: (n,)} int64 labels of the IM rows
    yo: torch.Tensor                     # (m,) int64 OOM labels, -1 = unlabelled
    P: torch.Tensor | None               # (P, 2) (im_row, oom_row) pairs given; None: created
    streamed: bool = False               # a Dataset among X and Z: the samples below apply
    seed: int = 0                        # the fit's seed (its samples are drawn from it)

    def sample(self, n: int, salt: int) -> torch.Tensor | None:
        """The rows of a whole-data step over ``n`` rows (:func:`~iclr25.cox.rows.sample`
        from the seed plus ``salt``: 1 IM rows, 2 OOM rows, 3 labelled rows); None for
        arrays (every row, as ever)."""
        return sample(n, self.seed + salt) if self.streamed else None

    def fingerprint(self) -> str | None:
        """The identity a checkpoint of a streamed fit records: the Datasets' (None when one
        has none) and the in-memory tensors' values."""
        parts = [t.fingerprint if isinstance(t, Rows) else fingerprint(t)
                 for t in (self.X, *self.Z.values())]
        if None in parts:
            return None
        return "+".join([*parts, fingerprint(self.yo, *self.Y.values(), self.P)])


class _Pairs:
    """The pairs in use and the re-matching record (rounds done, the pairs after each, the
    refused rounds): checkpointed with the loop, so a resumed run goes on with its round's
    pairs."""

    def __init__(self, P: torch.Tensor) -> None:
        self.P, self.rounds, self.history, self.refused = P, 0, [P.clone()], []

    def state_dict(self) -> dict:
        return {"P": self.P, "rounds": self.rounds, "history": list(self.history),
                "refused": [list(r) for r in self.refused]}

    def load_state_dict(self, state: Mapping) -> None:
        self.P, self.rounds = state["P"], int(state["rounds"])
        self.history = list(state["history"])
        self.refused = [tuple(r) for r in state["refused"]]


class _Step(nn.Module):
    """One optimisation step's loss (paper Alg. 1, :meth:`COX._loss`), its rows drawn here
    from the fit's generator; the step's number is the scheduler's. Under DDP every process
    draws the same rows, encodes its share of the OOM rows and gathers the embeddings
    (``gathered=True``): the loss reads whole-batch statistics (the agreement top-k, the
    prior KL, the spread floor), so each process holds the one-process loss."""

    def __init__(self, cox: COX, data: _Data, pairs: _Pairs,
                 sched: torch.optim.lr_scheduler.LRScheduler, gen: torch.Generator) -> None:
        super().__init__()
        self.net = cox.net_
        self.cox, self.data, self.pairs, self.sched, self.gen = cox, data, pairs, sched, gen

    def forward(self, _rows: torch.Tensor) -> torch.Tensor:
        return self.cox._loss(self.data, self.pairs.P, self.sched.last_epoch, self.gen)


class _Net(nn.Module):
    def __init__(self, shape: tuple[int, int, int], names: list[str], bottleneck: int,
                 hidden: int, seed: int, residual: bool) -> None:
        """``shape`` is (OOM input dim, embedding dim, classes)."""
        super().__init__()
        d_oom, dim, n_classes = shape
        self.encoder = seeded_mlp([d_oom, hidden, dim], seed=seed)
        self.head = seeded_mlp([dim, n_classes], seed=seed + 1)
        self.im_heads = nn.ModuleDict({m: seeded_mlp([dim, n_classes], seed=seed + 2 + i)
                                       for i, m in enumerate(names)})
        self.vibs = nn.ModuleDict({m: VIB(dim, bottleneck, hidden, residual=residual,
                                       seed=seed + 100 + i) for i, m in enumerate(names)})


def _validate_pairs(pairs: ArrayLike, n_im: int, X: torch.Tensor) -> torch.Tensor:
    """(P, 2) long ``(im_row, oom_row)`` pairs in range, no OOM row twice."""
    P = check_tensor(pairs, "pairs", ndim=2, integer=True).long().to(X.device)
    if P.shape[1] != 2:
        raise ValueError(f"pairs must be (P, 2) (im_row, oom_row), got {tuple(P.shape)}")
    if int(P[:, 0].min()) < 0 or int(P[:, 0].max()) >= n_im:
        raise ValueError(f"pairs[:, 0] must index im rows in [0, {n_im})")
    if int(P[:, 1].min()) < 0 or int(P[:, 1].max()) >= len(X):
        raise ValueError(f"pairs[:, 1] must index X_oom rows in [0, {len(X)})")
    if torch.unique(P[:, 1]).numel() != len(P):
        raise ValueError("pairs must not repeat an OOM row")
    return P


def _bootstrap(data: _Data, gen: torch.Generator) -> _Pairs:
    """The first pairs when none are given: entropic GW matches between seeded subsamples
    of ``_GW_ROWS`` IM and OOM rows (GW is O(n^2) per iteration)."""
    X, Z = data.X, data.Z
    ri = torch.randperm(len(Z[data.names[0]]), generator=gen)[:_GW_ROWS].to(X.device)
    ro = torch.randperm(len(X), generator=gen)[:_GW_ROWS].to(X.device)
    B = emergent_correspondences(torch.cat([Z[m][ri] for m in data.names], 1), X[ro], "gw")
    return _Pairs(torch.stack([ri[B[:, 0]], ro[B[:, 1]]], 1))


def _refused_warning(refused: list[tuple[int, int]], floor: int, X: torch.Tensor
                     ) -> COXMatchingWarning:
    """The warning for the re-matching rounds ``refused`` ((round, pairs found) each) on
    the (m, d) OOM rows ``X``: it advises standardising only where the columns' scales call
    for it (:func:`~iclr25._checks.column_spread`; an already standardised X_oom was told
    to, issue 68)."""
    scale = "Standardise X_oom or give" if column_spread(X) > SPREAD_HINT else "Give"
    return COXMatchingWarning(
        f"COX.fit: re-matching round(s) {', '.join(str(r) for r, _ in refused)} found "
        f"{', '.join(str(n) for _, n in refused)} pair(s), fewer than min_pairs={floor}: the "
        f"previous pairs were kept. {scale} a few pairs (pairs=...).")


def _labels_from_pairs(yo: torch.Tensor, P: torch.Tensor, im_labels: list[torch.Tensor]
                       ) -> torch.Tensor:
    """``yo`` with each unlabelled paired OOM row given its IM row's label (a pair is one
    object seen twice), where every IM modality gives that row the same label; a copy."""
    y_im = im_labels[0][P[:, 0]]
    agree = torch.stack([y[P[:, 0]] == y_im for y in im_labels]).all(0)
    take = agree & (yo[P[:, 1]] < 0)
    if not bool(take.any()):
        if not bool((yo >= 0).any()):
            raise ValueError("pairs: no paired row has a label: the IM modalities' labels "
                             "disagree on every paired IM row; pass y_oom with labelled rows")
        return yo
    yo = yo.clone()
    yo[P[take, 1]] = y_im[take]
    return yo


def _logistic(X: torch.Tensor, y: torch.Tensor) -> tuple[tuple[torch.Tensor, ...], bool]:
    """sklearn's plain ``LogisticRegression(max_iter=2000)`` on (n, d) rows as given (not
    standardised: on issue 68's set B the plain fit was the more accurate, 0.572 vs 0.567),
    labels (n,) of two classes or more. Returns ((coef (c, d), intercept (c,)) over the
    classes present, sorted (a binary fit's single row split into two opposite ones), and
    whether lbfgs converged (its ConvergenceWarning is read here, never passed on)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        lr = LogisticRegression(max_iter=_FLOOR_ITER).fit(X.double().cpu().numpy(),
                                                          y.cpu().numpy())
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    coef, icpt = torch.as_tensor(lr.coef_), torch.as_tensor(lr.intercept_)
    if len(lr.classes_) == 2:
        coef, icpt = torch.cat([-coef / 2, coef / 2]), torch.cat([-icpt / 2, icpt / 2])
    return (coef, icpt), converged


def _logistic_proba(fit: tuple[torch.Tensor, ...], X: torch.Tensor) -> torch.Tensor:
    """(m, c) probabilities of a :func:`_logistic` fit over its classes, float64."""
    coef, icpt = fit
    z = X.double()
    return (z @ coef.to(z).T + icpt.to(z)).softmax(1)


def _sign_test(correct: torch.Tensor) -> tuple[int, int, float]:
    """The one-sided exact sign test (McNemar's, exact) of the head against the floor on
    (n, 2) bool per-row correctness (head, floor): b = rows only the head classified right,
    c = rows only the floor did, p = P(Binomial(b + c, 1/2) >= b) (1 when b + c = 0)."""
    from scipy.stats import binomtest

    h, f = correct[:, 0], correct[:, 1]
    b, c = int((h & ~f).sum()), int((~h & f).sum())
    return b, c, binomtest(b, b + c, 0.5, alternative="greater").pvalue if b + c else 1.0


def _local(y_fit: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Labels ``y`` as indices into the sorted classes of ``y_fit`` (-1: a class it lacks)."""
    classes = torch.unique(y_fit)
    hit = y[:, None] == classes[None]
    return torch.where(hit.any(1), hit.long().argmax(1), -1)


@checked
class COX(FittedIO, BaseEstimator):
    """Out-of-modal generalisation: learn an OOM encoder and classifier from few (or no)
    cross-modal pairs, through frozen, aligned IM embeddings with labels.

    Args:
        n_classes: number of classes C.
        bottleneck: VIB bottleneck width. beta: VIB KL weight (0 = released code).
        k: agreement pseudo-labels per step. min_confidence: IM-head confidence floor, (0, 1).
        kl_weight: weight of :func:`prior_kl` on disagreement rows (0 disables it).
        warmup: fraction of steps before exploring, in [0, 1] (1 = connect only).
        steps: optimisation steps. seed: int, torch.Generator or None (fresh): weights, batches
            and sampling.
        hidden: width of the OOM encoder and VIB hidden layers. batch_size: rows per stream.
        lr: AdamW learning rate.
        residual: VIB predicts ``h + g(z)`` instead of the official ``g(z)`` (see :class:`VIB`).
        spread_weight: weight of a variance floor on the OOM embeddings of created pairs
            when no OOM row is labelled (VICReg's hinge, 25 as there): each dimension's batch
            std is held up to the IM embeddings' mean std. 0 = the released code, whose
            two-sided reconstruction loss alone lets the OOM encoder and the VIB collapse to
            one point (see below). Labelled OOM rows' cross-entropy anchors the encoder as in
            the released code, so with labels no floor is added.
        min_pairs: fewest pairs a re-matching round may return (None = 5 per class); a round
            that finds fewer keeps the previous pairs and warns once, naming the round.
        floor: "select" (default): COX's head or a logistic regression on the labelled OOM
            rows, whichever classified more of them right in cross-validation (a tie: the
            regression); "off": COX's head always (see Floor below).

    Without pairs, correspondences are bootstrapped by entropic Gromov-Wasserstein and
    re-matched after each of 5 connect rounds: each OOM row is paired with the IM row whose
    VIB prediction is nearest to its embedding (cosine, both clouds standardised per
    dimension), kept when that IM row's label is the OOM head's class for it and the
    similarity is in the better half. With no OOM label at all, created pairs carry their IM
    row's label to the OOM head (the labels that "emerge with the correspondences").

    Why (measured on the digits testbed): the released code never re-matches (its
    correspondences stay class-level, through the IM heads) and keeps its OOM encoder from
    collapsing with the cross-entropy of labelled OOM rows. Without labels nothing does: 400
    steps on 400 class-pure pairs with ``spread_weight=0`` took the OOM embedding's 10-NN
    accuracy from 0.87 (random init) to 0.15 and the VIB output's spread to 0.0002, so
    mutual-NN re-matching found 1-2 pairs; with the floor it stayed at 0.74. The VIB's
    predictions regress to class-conditional means, so many IM rows share one prediction:
    mutual nearest neighbours keep one of them (hubness), nearest-from-the-OOM-side keeps all.

    Class names: the OOM head fits its labelled rows, so they cannot tell a misnamed cluster
    (one found through the IM heads but named after the wrong IM class). The names are judged
    on the unlabelled rows instead: each gets the label of its nearest labelled row in the
    standardised input space (untouched by training), and the head's classes are renamed by
    the one-to-one assignment (Hungarian) that agrees best with those labels; when even the
    best naming agrees on fewer than half of the unlabelled rows, one
    :class:`COXNamingWarning` says the names are unconfirmed. With labels only (no unlabelled
    rows) the labelled rows judge; with no labels the names are the IM heads'.

    Floor (few pairs), ``floor="select"`` (the default): with labelled OOM rows (given, or
    taken from pairs) of two classes or more, each with two rows or more, a plain
    ``sklearn.linear_model.LogisticRegression(max_iter=2000)`` on them (the rows as given) is
    the floor, and the returned predictor is chosen between COX's head and the floor by stratified
    cross-validation on those rows (k = min(3, the smallest class's labelled rows) folds,
    sklearn's ``StratifiedKFold`` unshuffled): per fold, COX is fitted again with the same
    settings and seed, the held-out rows' labels and pairs withheld (the rows stay, as
    unlabelled), and the floor on the other labelled rows; both predict the held-out rows.
    COX's head predicts only when it beats the floor by a one-sided exact sign test at 0.05
    on the held-out rows (b rows only the head classified right, c only the floor:
    P(Binomial(b + c, 1/2) >= b) <= 0.05; e.g. 9 against 0, not 6 against 5); otherwise the
    floor predicts (``floor_used_``), and one :class:`COXFloorWarning` names it with the
    counts and p. Issue 68: with 12 pairs, 3 per class, COX's head had reached 0.627 where
    the regression reached 0.958; the floor (plain, not standardised) and the rule (the sign
    test, not "more rows right") were each chosen by a rule written down before a held-out
    set of 48 draws ran (``benchmarks/cox_floor.py``, ``--set heldout2``: the plain
    regression's mean accuracy 0.572 against the standardised one's 0.567; "more rows
    right" returned a predictor below the floor on 7 draws, the sign test on none). With
    4-25 labelled rows the sign test seldom passes, so the floor then predicts. The check
    costs k more fits; ``floor="off"`` returns COX's head without it (what the claims
    measure: COX itself).

    Convergence: when the mean objective over the last tenth of the steps differs from the
    tenth before by more than 2% of it and more than twice the standard error of the
    difference (minibatch noise), one :class:`COXConvergenceWarning` says so. Solvers' own
    warnings inside ``fit`` (POT's Sinkhorn) are not passed on.

    Attributes (after fit):
        net_: the trained networks. correspondences_: (P, 2) ``(im_row, oom_row)`` used last
        (given pairs, or the created ones). history_: the pairs in use after the bootstrap and
        after each round (a refused round repeats the previous ones). refused_rounds_: the
        rounds (1-5) whose re-matching the guard refused.
        class_names_: (C,) int64, the label output for each OOM-head class.
        naming_agreement_: fraction of unlabelled rows whose named prediction agrees with
        their nearest labelled row (NaN without labels). loss_: (steps,) objective per step.
        floor_accuracy_, head_accuracy_: the floor's and COX's cross-validated accuracy on
        the labelled rows (NaN: no check: ``floor="off"``, one labelled class, or a class
        with one labelled row). cv_correct_: (n, 2) bool, per held-out labelled row in
        fold order, whether COX's head (column 0) and the floor (column 1) classified it
        right, on the CPU ((0, 2) without the check; absent from a model saved before it was
        recorded, which loads and predicts as saved). floor_used_: whether the floor predicts.

    Examples:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> Z = torch.nn.functional.normalize(torch.randn(40, 8, generator=g), dim=1)
        >>> y = torch.arange(40) % 2
        >>> X = Z @ torch.randn(8, 6, generator=g)
        >>> y_oom = torch.where(torch.arange(40) < 10, y, -1)
        >>> pairs = torch.stack([torch.arange(10), torch.arange(10)], 1)
        >>> m = COX(2, steps=200, hidden=32, bottleneck=8).fit(X, im={"a": Z}, im_labels={"a": y},
        ...                                                    pairs=pairs, y_oom=y_oom)
        >>> m.predict(X).shape
        torch.Size([40])
    """

    _progress = "COX training"  # the progress bar's label (a floor check's fold says so)
    _on_cpu = ("cv_correct_",)  # fit keeps the floor check's record there; so does load

    def __init__(self, n_classes: int, *, bottleneck: int = 256, beta: float = 0.0, k: int = 8,
                 min_confidence: float = 0.8, kl_weight: float = 1.0, warmup: float = 0.1,
                 steps: int = 800, seed: int | torch.Generator | None = 0, hidden: int = 256,
                 batch_size: int = 128,
                 lr: float = 1e-3, residual: bool = False, spread_weight: float = 25.0,
                 min_pairs: int | None = None, floor: str = "select") -> None:
        self.n_classes = n_classes
        self.bottleneck = bottleneck
        self.beta = beta
        self.k = k
        self.min_confidence = min_confidence
        self.kl_weight = kl_weight
        self.warmup = warmup
        self.steps = steps
        self.seed = seed
        self.hidden = hidden
        self.batch_size = batch_size
        self.lr = lr
        self.residual = residual
        self.spread_weight = spread_weight
        self.min_pairs = min_pairs
        self.floor = floor

    def _check_params(self) -> None:
        check_int(self.n_classes, "n_classes", 2)
        check_int(self.bottleneck, "bottleneck", 1)
        check_range(self.beta, "beta", 0)
        check_int(self.k, "k", 1)
        check_range(self.min_confidence, "min_confidence", 0, 1, low_open=True, high_open=True)
        check_range(self.kl_weight, "kl_weight", 0)
        check_range(self.warmup, "warmup", 0, 1)
        check_int(self.steps, "steps", 1)
        resolve_seed(self.seed)  # names the argument unless an int, a Generator or None
        check_int(self.hidden, "hidden", 1)
        check_int(self.batch_size, "batch_size", 1)
        check_range(self.lr, "lr", 0, low_open=True)
        check_range(self.spread_weight, "spread_weight", 0)
        if self.min_pairs is not None:
            check_int(self.min_pairs, "min_pairs", 1)
        check_choice(self.floor, "floor", ("select", "off"))
        if not isinstance(self.residual, bool):
            raise TypeError(f"residual must be a bool, got {type(self.residual).__name__}")

    # ------------------------------------------------------------------ validation
    def _validate(self, X_oom, im, im_labels, pairs, y_oom):  # noqa: ANN001, ANN202
        self._check_params()
        streamed = isinstance(X_oom, Dataset) or (isinstance(im, Mapping) and any(
            isinstance(v, Dataset) for v in im.values()))
        if isinstance(X_oom, Dataset):
            X = X_oom if isinstance(X_oom, Rows) else Rows(X_oom, "X_oom")
        else:
            X = as_tensor(X_oom, "X_oom", ndim=2)
            if streamed:   # beside a Dataset: float32 on the CPU, as the Dataset's rows
                X = as_tensor(X, "X_oom", dtype=torch.float32, device="cpu")
            elif not X.is_floating_point():
                X = X.float()
        names, Z, Y = self._validate_im(im, im_labels, X)
        if y_oom is None:
            yo = torch.full((len(X),), -1, dtype=torch.long, device=X.device)
        else:
            if isinstance(y_oom, Dataset):
                y_oom = read_labels(y_oom, "y_oom")
            yo = check_tensor(y_oom, "y_oom", ndim=1, integer=True).long().to(X.device)
            if len(yo) != len(X):
                raise ValueError(f"y_oom has {len(yo)} labels but X_oom has {len(X)} rows")
            if int(yo.min()) < -1 or int(yo.max()) >= self.n_classes:
                raise ValueError(f"y_oom must lie in [-1, {self.n_classes}) (-1 = unlabelled)")
        P = None
        if pairs is not None:
            P = _validate_pairs(pairs, len(Z[names[0]]), X)
            yo = _labels_from_pairs(yo, P, [Y[m] for m in names])
        for t in (X, *Z.values()):   # the check pass: every row, before any work
            if isinstance(t, Rows):
                t.check()
        return X, names, Z, Y, yo, P, streamed

    def _validate_im(self, im, im_labels, X):  # noqa: ANN001, ANN202
        """(names, {name: (n, D) embeddings}, {name: (n,) labels}) on X's dtype and device."""
        if not isinstance(im, Mapping) or not im:
            raise TypeError("im must be a non-empty dict {name: (n, D) embeddings}")
        if not isinstance(im_labels, Mapping) or set(im_labels) != set(im):
            raise ValueError("im_labels must be a dict with the same keys as im")
        names = sorted(im)
        Z = {m: (im[m] if isinstance(im[m], Rows) else Rows(im[m], f"im[{m!r}]"))
             if isinstance(im[m], Dataset) else
             as_tensor(im[m], f"im[{m!r}]", ndim=2, dtype=X.dtype, device=X.device)
             for m in names}
        n_im, dim = Z[names[0]].shape
        for m in names:
            if Z[m].shape != (n_im, dim):
                raise ValueError(f"im[{m!r}] has shape {tuple(Z[m].shape)}, expected "
                                 f"({n_im}, {dim}): IM modalities share rows and width")
        Y = {}
        for m in names:
            t = im_labels[m]
            if isinstance(t, Dataset):
                t = read_labels(t, f"im_labels[{m!r}]")
            t = check_tensor(t, f"im_labels[{m!r}]", ndim=1, integer=True)
            t = t.long().to(X.device)
            if len(t) != n_im:
                raise ValueError(f"im_labels[{m!r}] has {len(t)} labels but im has {n_im} rows")
            if int(t.min()) < 0 or int(t.max()) >= self.n_classes:
                raise ValueError(f"im_labels[{m!r}] must lie in [0, {self.n_classes})")
            Y[m] = t
        return names, Z, Y

    # ------------------------------------------------------------------ fitting
    def fit(self, X_oom: torch.Tensor | Dataset, im: Mapping[str, torch.Tensor | Dataset],
            im_labels: Mapping[str, torch.Tensor | Dataset], pairs: torch.Tensor | None = None,
            y_oom: torch.Tensor | Dataset | None = None, **engine: Unpack[EngineOptions]
            ) -> COX:
        """Train on OOM rows, IM embeddings with labels, and optional pairs / OOM labels.

        Args:
            X_oom: (m, d) OOM inputs. im: {name: (n, D)} frozen, aligned IM embeddings
                (rows shared across modalities). im_labels: {name: (n,)} int labels.
            pairs: (P, 2) ``(im_row, oom_row)`` correspondences, or None: then they are
                bootstrapped from ``"gw"`` matches (POT) and re-matched after each of 5
                rounds (see the class docstring).
            y_oom: (m,) OOM labels, -1 = unlabelled, or None. A paired OOM row without a
                label takes its IM row's label (when the IM modalities agree on it), so pairs
                need no OOM labels.
            **engine: how the training loop runs (:class:`iclr25._engine.EngineOptions`:
                ``devices``, ``strategy``, ``precision``, ``checkpoint``,
                ``checkpoint_every``, ``resume``); under DDP every process draws the same
                rows, encodes its share of the OOM rows and gathers them, so the loss is the
                whole batch's (as one process). The floor check's fits take the devices and
                precision, never the checkpoint.

        ``X_oom`` and any ``im`` value may also be a map-style ``Dataset`` of rows (each
        flattened), such as a :class:`~iclr25.datasets.files.TableRows` of a Parquet file or
        a Hugging Face ``save_to_disk`` folder (``im_labels`` and ``y_oom`` values too: a
        Dataset of one integer per row, read in one pass into an int64 tensor, the fit's
        per-row state). The fit is then streamed, on the CPU in float32 (arrays beside a
        Dataset are cast so): one check pass reads every row first (a bad item: one
        ``ValueError`` naming the argument and the row); each step reads the rows it draws
        (the arrays' draws, from the same generator); the whole-data steps read:

        - the GW bootstrap: its 400 seeded rows per side, as for arrays;
        - the IM embeddings' spread (the variance floor's level) and the re-matching's IM
          candidates: a seeded sample of :data:`~iclr25.cox.rows.SAMPLE_ROWS` IM rows
          (all when fewer); each OOM row is matched to its nearest candidate's prediction;
        - each re-matching round's OOM side: every OOM row, block by block (its embedding,
          nearest candidate, similarity and head class are per-row quantities; the
          similarities, (m,) float32, are kept for their median), standardised by the
          embedding's mean and std over a seeded sample of ``SAMPLE_ROWS`` OOM rows;
        - class naming: every judged row, block by block, against a seeded sample of
          ``SAMPLE_ROWS`` labelled rows, inputs standardised by that OOM sample's statistics;
        - the floor and its cross-validation: that sample of labelled rows (its folds' COX
          fits are streamed fits on the same Datasets).

        A sample of all rows (``n <= SAMPLE_ROWS``) is every row in order, and then each step
        is the arrays' bit for bit: on such data the streamed fit equals the arrays' fit
        (float32 on the CPU). Memory is bounded by the samples, a block, the batch, the
        per-row labels (and similarities, pairs) and a table's cache; the statistics are
        sample estimates (a per-dimension std from 20,000 rows is within about 1% of the
        whole data's), used only to standardise the matching and naming geometry.

        Returns:
            self.

        Raises:
            ValueError/TypeError: bad shapes, NaN/inf, labels out of range, pairs out of range
                or repeating an OOM row, bad hyper-parameters; a Dataset's bad item (another
                width, a scalar or pair, NaN, a label that is not one integer), naming the
                argument and the row.
            ImportError: no pairs and no POT. ValueError: bad engine options, or a
                ``resume`` checkpoint that does not fit (named).

        Warns:
            COXMatchingWarning, COXNamingWarning, COXConvergenceWarning: see the class
            docstring; each at most once per fit.
        """
        data = _Data(*self._validate(X_oom, im, im_labels, pairs, y_oom))  # type: ignore
        Engine.of(engine, data.X.device.type)
        ours: list[Warning] = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self._fit(data, ours, engine)
        del caught  # solvers' own warnings (POT's Sinkhorn): the fit's figures say enough
        w = max(1, self.steps // 10)
        last, before = self.loss_[-w:].double(), self.loss_[-2 * w:-w].double()
        moved = abs(float(last.mean() - before.mean())) if self.steps >= 2 else float("inf")
        noise = float(2 * (last.var() / w + before.var() / w).sqrt()) if w > 1 else 0.0
        if moved > max(_PLATEAU * abs(float(before.mean())), noise):
            ours.append(COXConvergenceWarning(
                f"COX.fit: the objective has not reached a plateau: its mean over the last "
                f"{w} steps moved by {moved:.3g} from the {w} before, more than "
                f"{_PLATEAU:.0%} of it and more than twice its standard error; raise steps."))
        for warning in ours:
            # the caller's line, not the library's (fit runs inside @checked's wrappers:
            # stacklevel 2 named _contract.py and its source line, issue 68)
            warnings.warn(warning, stacklevel=user_stacklevel())
        return self

    def _fit(self, data: _Data, ours: list[Warning], engine: EngineOptions) -> None:
        X, names, Z, Y, P = data.X, data.names, data.Z, data.Y, data.P
        dim = Z[names[0]].shape[1]
        gen = resolve_seed(self.seed)  # an int seed seeds the weights with itself
        data = replace(data, seed=gen.initial_seed())
        self.net_ = _Net((X.shape[1], dim, self.n_classes), names, self.bottleneck, self.hidden,
                         gen.initial_seed(), self.residual).to(device=X.device, dtype=X.dtype)
        self.names_, self.dim_, self.d_oom_ = names, dim, X.shape[1]
        counts = torch.bincount(Y[names[0]], minlength=self.n_classes).to(X.dtype)
        self.prior_ = counts / counts.sum()
        self._y_im = Y[names[0]]
        si = data.sample(len(Z[names[0]]), 1)
        self._spread = torch.stack([(Z[m] if si is None else Z[m][si]).std(0).mean()
                                    for m in names]).mean()
        opt = torch.optim.AdamW(self.net_.parameters(), lr=self.lr, weight_decay=1e-4,
                                betas=(0.9, 0.95))
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, self.steps, self.lr / 50)
        # no pairs: connect, then re-match from the OOM side, 5 times
        pairs, rounds = (_bootstrap(data, gen), _ROUNDS) if P is None else (_Pairs(P), 1)
        per = [self.steps * r // rounds for r in range(rounds + 1)]
        floor = 5 * self.n_classes if self.min_pairs is None else self.min_pairs

        def batches(epoch: int) -> Iterator[torch.Tensor]:
            while P is None and pairs.rounds < epoch:  # after each round: re-match
                self._rematch_round(data, pairs, floor)
            one = torch.zeros(1, dtype=torch.long, device=X.device)  # rows are drawn inside
            return (one for _ in range(per[epoch + 1] - per[epoch]))

        if data.streamed:   # the same batches as a Stream, fingerprinted by the Datasets
            src: tuple = (Stream(lambda e: ((one, one) for one in batches(e)), len(X),
                                 data.fingerprint), None, None)
        else:
            src = (X, data.yo, batches)
        history = fit_minibatch(
            _Step(self, data, pairs, sched, gen), lambda loss, _: loss, *src[:2], epochs=rounds,
            batch_size=self.batch_size, optimizer=opt, seed=gen, scheduler=sched,
            batches=src[2], extra_state={"pairs": pairs}, gathered=True, interval="step",
            grad_clip=1.0, progress=self._progress, steps=self.steps, **engine)
        self.loss_ = torch.tensor(history, dtype=X.dtype, device=X.device)
        while P is None and pairs.rounds < rounds:
            self._rematch_round(data, pairs, floor)
        if pairs.refused:
            so = data.sample(len(X), 2)   # streamed: the OOM sample's columns
            ours.append(_refused_warning(pairs.refused, floor, X if so is None else X[so]))
        self.correspondences_ = pairs.P
        self.history_ = [] if P is not None else pairs.history
        self.refused_rounds_ = [r for r, _ in pairs.refused]
        self.net_.eval()
        self.class_names_ = self._name_classes(data.X, data.yo, data.sample)
        self._floor(data, gen.initial_seed(), ours,
                    {k: v for k, v in engine.items() if k in ("devices", "strategy", "precision")})
        if self.naming_agreement_ < _NAMING_LEVEL:
            ours.append(COXNamingWarning(
                f"COX.fit: the class names are unconfirmed: the best naming of the OOM head's "
                f"classes agrees with the nearest labelled row's label on only "
                f"{self.naming_agreement_:.0%} of the unlabelled rows (level "
                f"{_NAMING_LEVEL:.0%}). Give more labelled rows (y_oom=...) or pairs."))

    @torch.no_grad()
    def _name_classes(self, X: torch.Tensor | Rows, yo: torch.Tensor,
                      sample: Callable[[int, int], torch.Tensor | None] = lambda n, salt: None
                      ) -> torch.Tensor:
        """The renaming of head classes that agrees best with labels the head did not fit:
        each unlabelled row's nearest labelled row (standardised inputs); see the class
        docstring. Sets ``naming_agreement_`` (NaN without labels). Streamed (``sample``:
        :meth:`_Data.sample`): the OOM sample's statistics, the labelled rows' sample."""
        from scipy.optimize import linear_sum_assignment

        C = self.n_classes
        names = torch.arange(C, device=X.device)
        lab = yo >= 0
        self.naming_agreement_ = float("nan")
        if not bool(lab.any()):
            return names
        judge = ~lab if bool((~lab).any()) else lab
        so = sample(len(X), 2)
        Xo = X if so is None else X[so]
        mu, sd = Xo.mean(0), Xo.std(0).clamp_min(1e-12)
        li = torch.nonzero(lab).flatten()
        li = li if (s := sample(len(li), 3)) is None else li[s]
        refs = (X[li] - mu) / sd
        ref, pred = [], []
        for c in torch.nonzero(judge).flatten().split(4096):  # O(4096 x labelled) memory
            x = X[c]
            ref.append(yo[li[torch.cdist((x - mu) / sd, refs).argmin(1)]])
            pred.append(self.net_.head(self.net_.encoder(x)).argmax(1))
        ref, pred = torch.cat(ref), torch.cat(pred)
        counts = torch.zeros(C, C, dtype=torch.float64, device=X.device)
        counts.index_put_((pred, ref), torch.ones_like(pred, dtype=torch.float64),
                          accumulate=True)
        # a tie keeps the head's own name: the diagonal gets a bonus below one count
        score = (counts + 0.5 * torch.eye(C, dtype=torch.float64, device=X.device)).cpu()
        rows, cols = linear_sum_assignment(score.numpy(), maximize=True)
        names[torch.as_tensor(rows, device=X.device)] = torch.as_tensor(cols, device=X.device)
        self.naming_agreement_ = float(counts.cpu()[rows, cols].sum() / len(pred))
        return names

    def _floor(self, data: _Data, seed: int, ours: list[Warning], engine: EngineOptions
               ) -> None:
        """Fit the floor (a plain logistic regression on the labelled OOM rows) and choose
        between it and COX's head by cross-validation and a sign test; see the class
        docstring."""
        from sklearn.model_selection import StratifiedKFold

        X, yo, P = data.X, data.yo, data.P
        self.floor_used_ = False
        self.floor_accuracy_ = self.head_accuracy_ = float("nan")
        self.cv_correct_ = torch.zeros(0, 2, dtype=torch.bool)
        li = torch.nonzero(yo >= 0).flatten()
        li = li if (s := data.sample(len(li), 3)) is None else li[s]  # streamed: a sample
        classes = torch.unique(yo[li])
        if self.floor == "off" or len(classes) < 2:
            return
        (self.floor_coef_, self.floor_intercept_), converged = _logistic(X[li], yo[li])
        self.floor_classes_ = classes
        counts = torch.bincount(yo[li])
        folds = min(_FLOOR_FOLDS, int(counts[counts > 0].min()))
        if folds < 2:
            return  # a class with one labelled row: no stratified check
        right = {"head": [], "floor": []}  # per held-out row: classified right
        y = yo[li].cpu().numpy()
        splits = list(StratifiedKFold(folds).split(y, y))
        for f, (keep, held) in enumerate(splits):
            keep, held = li[torch.as_tensor(keep)], li[torch.as_tensor(held)]
            yo_f = yo.clone()
            yo_f[held] = -1
            P_f = None if P is None else P[~torch.isin(P[:, 1], held)]
            if P_f is not None and not len(P_f):
                return  # every pair held out: the fold would be another method (no pairs)
            other = COX(**{**self.get_params(), "seed": seed, "floor": "off"})
            other._progress = f"COX cross-validation {f + 1}/{folds}"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the fold's own warnings: its figures say
                other.fit(X, data.Z, data.Y, pairs=P_f, y_oom=yo_f, **engine)
            right["head"].append(other.predict(X[held]) == yo[held])
            floor, _ = _logistic(X[keep], yo[keep])
            right["floor"].append(_logistic_proba(floor, X[held]).argmax(1)
                                  == _local(yo[keep], yo[held]))
        self.cv_correct_ = torch.stack([torch.cat(right["head"]).cpu(),
                                        torch.cat(right["floor"]).cpu()], 1)
        n = len(li)
        n_head, n_floor = (int(v) for v in self.cv_correct_.sum(0))
        self.head_accuracy_, self.floor_accuracy_ = n_head / n, n_floor / n
        b, c, p = _sign_test(self.cv_correct_)
        if p > _FLOOR_LEVEL:
            self.floor_used_ = True
            unconverged = "" if converged else (
                f" Standardise X_oom: the regression's lbfgs stopped at {_FLOOR_ITER} "
                f"iterations unconverged.")
            ours.append(COXFloorWarning(
                f"COX.fit: a LogisticRegression on the {n} labelled OOM rows (labels given or "
                f"taken from pairs) predicts instead of COX's head: in {folds}-fold "
                f"cross-validation on those rows it classified {n_floor} of {n} right, "
                f"COX {n_head}. COX's head predicts only when it wins by a one-sided "
                f"exact sign test at {_FLOOR_LEVEL}: it alone was right on {b} rows, the "
                f"regression alone on {c}, p = {p:.3g}.{unconverged} Give more pairs or "
                f"labels; floor_used_ is True (floor='off' keeps COX's head)."))

    def _floor_proba(self, X: torch.Tensor) -> torch.Tensor:
        """(m, C) probabilities of the floor (zero on classes no labelled row has)."""
        if hasattr(self, "floor_mean_"):  # a file saved while the floor was standardised
            X = (X - self.floor_mean_.to(X)) / self.floor_scale_.to(X)
        p = _logistic_proba((self.floor_coef_, self.floor_intercept_), X)
        out = p.new_zeros(len(X), self.n_classes)
        out[:, self.floor_classes_.to(X.device)] = p
        return out.to(X.dtype)

    def _head_proba(self, X: torch.Tensor) -> torch.Tensor:
        p = self.net_.head(self.net_.encoder(X)).softmax(1)
        return p[:, torch.argsort(self.class_names_.to(p.device))]

    @torch.no_grad()
    def _rematch(self, data: _Data) -> torch.Tensor:
        """Each OOM row's nearest VIB prediction of an IM row (cosine, both clouds
        standardised per dimension); the more similar half of the OOM rows is kept.
        Streamed: the IM sample's predictions, every OOM row block by block standardised
        by the OOM sample's embedding (see :meth:`fit`)."""
        self.net_.eval()
        X, Z = data.X, data.Z
        si = data.sample(len(Z[self.names_[0]]), 1)
        pred = torch.stack([self.net_.vibs[m](Z[m] if si is None else Z[m][si])[0]
                            for m in self.names_]).mean(0)
        a = F.normalize((pred - pred.mean(0)) / pred.std(0).clamp_min(1e-12), dim=1)
        so = data.sample(len(X), 2)
        h = self.net_.encoder(X if so is None else X[so])
        mu, sd = h.mean(0), h.std(0).clamp_min(1e-12)
        block = max(1, 2**24 // len(a))  # (block, n_im) similarities of <= 64 MB
        if so is None or len(so) == len(X):   # every row's embedding is here
            best, arg, cls = self._nearest(h, (mu, sd), a, block)
        else:                                 # every row, block by block
            parts = [self._nearest(self.net_.encoder(X[r]), (mu, sd), a, block)
                     for r in torch.arange(len(X)).split(block)]
            best, arg, cls = (torch.cat(p) for p in zip(*parts, strict=True))
        if si is not None:
            arg = si.to(arg.device)[arg]
        agree = self._y_im[arg] == cls
        keep = torch.nonzero((best >= best.median()) & agree).flatten()
        return torch.stack([arg[keep], keep], 1)

    def _nearest(self, h: torch.Tensor, stats: tuple[torch.Tensor, torch.Tensor],
                 a: torch.Tensor, block: int) -> tuple[torch.Tensor, ...]:
        """For (r, D) OOM embeddings ``h`` standardised by ``stats`` (mean, std): the cosine
        to the nearest row of ``a`` (n, D) (standardised, normalised predictions), its index,
        and the OOM head's class, each (r,)."""
        b = F.normalize((h - stats[0]) / stats[1], dim=1)
        best, arg = [], []
        for chunk in b.split(block):
            v, i = (chunk @ a.T).max(1)
            best.append(v)
            arg.append(i)
        return torch.cat(best), torch.cat(arg), self.net_.head(h).argmax(1)

    def _rematch_round(self, data: _Data, pairs: _Pairs, floor: int) -> None:
        """Re-match after a connect round; fewer than ``floor`` new pairs keep the old."""
        new = self._rematch(data)
        self.net_.train()  # back to training (the VIB samples there)
        pairs.rounds += 1
        if len(new) >= floor:
            pairs.P = new
        else:
            pairs.refused.append((pairs.rounds, len(new)))
        pairs.history.append(pairs.P.clone())

    def _loss(self, data: _Data, P: torch.Tensor, step: int, gen: torch.Generator
              ) -> torch.Tensor:
        """The objective of training step ``step`` (of ``self.steps``) with the pairs ``P``
        in use, its rows drawn from ``gen``: labelled OOM rows' cross-entropy, the IM heads',
        the VIB connection on a batch of pairs (with, when the pairs were created and no OOM
        row is labelled, their IM labels and the spread floor), then exploration. OOM rows
        are encoded by :func:`local_rows` share and :func:`gather`-ed (one process: as is)."""
        X, Z, Y, yo = data.X, data.Z, data.Y, data.yo
        net, b = self.net_, self.batch_size
        n_im = len(Z[self.names_[0]])
        lab = torch.nonzero(yo >= 0).flatten()
        unl = torch.nonzero(yo < 0).flatten()

        def draw(n: int) -> torch.Tensor:
            return torch.randint(0, n, (min(b, n),), generator=gen).to(X.device)

        def encode(rows: torch.Tensor) -> torch.Tensor:
            return gather(net.encoder(X[local_rows(rows)]))  # a Dataset: reads the share

        loss = torch.zeros((), dtype=X.dtype, device=X.device)
        if len(lab):
            i = lab[draw(len(lab))]
            loss = loss + F.cross_entropy(net.head(encode(i)), yo[i])
        j = draw(n_im)
        for m in self.names_:
            loss = loss + 0.5 * F.cross_entropy(net.im_heads[m](Z[m][j]), Y[m][j])
        if len(P):
            p = P[draw(len(P))]
            h = encode(p[:, 1])
            for m in self.names_:
                pred, mu, logvar = net.vibs[m](Z[m][p[:, 0]], generator=gen)
                loss = loss + vib_loss(pred, h, mu, logvar, self.beta)
            if data.P is None and not len(lab):  # nothing else anchors the OOM encoder
                loss = loss + F.cross_entropy(net.head(h), Y[self.names_[0]][p[:, 0]])
                if self.spread_weight > 0 and len(h) > 1:
                    loss = loss + self.spread_weight * F.relu(self._spread - h.std(0)).mean()
        if step >= math.ceil(self.warmup * self.steps) and len(unl):
            loss = self._explore(loss, encode(unl[draw(len(unl))]))
        return loss

    def _explore(self, loss: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """``loss`` plus the exploration terms on a batch ``h`` of encoded unlabelled OOM
        samples: cross-entropy to the pseudo-labels where the image heads agree, and the KL
        to the prior elsewhere."""
        net = self.net_
        logits = [net.im_heads[m](h) for m in self.names_]
        if len(logits) == 1:
            logits = logits * 2
        idx, pseudo = select_agreement([lg.detach() for lg in logits], self.k,
                                       self.min_confidence)
        oom = net.head(h)
        if len(idx):
            loss = loss + F.cross_entropy(oom[idx], pseudo)
        if self.kl_weight > 0:
            rest = torch.ones(len(h), dtype=torch.bool, device=h.device)
            rest[idx] = False
            if bool(rest.any()):
                loss = loss + self.kl_weight * prior_kl(oom[rest], self.prior_)
        return loss

    # ------------------------------------------------------------------ inference
    def _check_fitted(self) -> None:
        check_is_fitted(self, "net_")

    def _input(self, X: ArrayLike) -> torch.Tensor:
        self._check_fitted()
        p = next(self.net_.parameters())
        X = as_tensor(X, "X", ndim=2, dtype=p.dtype, device=p.device)
        if X.shape[1] != self.d_oom_:
            raise ValueError(f"X must have {self.d_oom_} columns, got {X.shape[1]}")
        return X

    def _windows(self, X: Dataset, name: str) -> Iterator[torch.Tensor]:
        """A Dataset of OOM input rows (d,) as the (m, d) float32 windows the inference
        methods read in turn (what ``cox predict`` writes window by window)."""
        self._check_fitted()
        return row_windows(X, name, self.d_oom_)

    def transform(self, X: ArrayLike | Dataset) -> torch.Tensor | np.ndarray:
        """(m, d) OOM inputs -> (m, D) embeddings in the IM space: a tensor on X's device
        for a tensor X, a numpy array for a numpy array, a list or a Dataset.

        ``X`` may also be a map-style ``Dataset`` of rows (d,) (a
        :class:`~iclr25.datasets.files.TableRows`): read window by window
        (:func:`~iclr25.datasets.rows.row_windows`), memory bounded by the window and the
        result, equal to the arrays' (bit for bit on the CPU in our tests: the network maps
        each row on its own); a bad row (a pair, another width, NaN) is one ``ValueError``
        naming ``X`` and the row. So for :meth:`predict_proba` and :meth:`predict`."""
        return like_input(self._infer(X, "embed"), X)

    def predict_proba(self, X: ArrayLike | Dataset) -> torch.Tensor | np.ndarray:
        """(m, d) -> (m, C) class probabilities of the OOM head (of the floor when
        ``floor_used_``), in X's kind as in :meth:`transform`."""
        return like_input(self._infer(X, "proba"), X)

    def predict(self, X: ArrayLike | Dataset) -> torch.Tensor | np.ndarray:
        """(m, d) -> (m,) int64 labels, in X's kind as in :meth:`transform`."""
        return like_input(self._infer(X, "label"), X)

    @torch.no_grad()
    def _infer(self, X: ArrayLike | Dataset, what: str) -> torch.Tensor:
        """The embeddings (``what`` "embed"), probabilities ("proba") or labels ("label")
        of X as a tensor on X's device (the model's for an array; a Dataset: window by
        window)."""
        if isinstance(X, Dataset):
            return torch.cat([self._infer(w, what) for w in self._windows(X, "X")])
        dev = X.device if isinstance(X, torch.Tensor) else None
        X = self._input(X)
        self.net_.eval()
        if what == "embed":
            return self.net_.encoder(X).to(dev)
        proba = self._floor_proba(X) if getattr(self, "floor_used_", False) else \
            self._head_proba(X)
        return (proba.argmax(1) if what == "label" else proba).to(dev)

    def score(self, X: ArrayLike, y: ArrayLike) -> float:
        """Accuracy in [0, 1]."""
        pred = self._infer(X, "label")
        return float((pred == torch.as_tensor(y).to(pred.device)).double().mean())

    def _new_module(self, name: str) -> nn.Module:
        return _Net((self.d_oom_, self.dim_, self.n_classes), self.names_, self.bottleneck,
                    self.hidden, resolve_seed(self.seed).initial_seed(), self.residual)


