"""``LoCoDLClassifier``: ℓ2 logistic regression fitted by LoCoDL over clients (scikit-learn)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from iclr25._checks import (
    SPREAD_HINT,
    ArrayLike,
    ArrayOrSparse,
    as_tensor,
    check_choice,
    check_int,
    check_range,
    column_spread,
    resolve_seed,
    user_stacklevel,
)
from iclr25._choices import Engine
from iclr25._contract import checked
from iclr25._io import FittedIO

if TYPE_CHECKING:
    from iclr25.locodl.objectives import ClientLogistic


def iterations_to_tol(history: ArrayLike, tol: float) -> float:
    """The iteration at which the change between rounds reaches ``tol``, extrapolated
    log-linearly from the last half of ``history`` ((h, 3): iteration, bits, change, as
    ``history_``); inf where it is not falling or fewer than 4 changes were measured."""
    h = np.asarray(history, dtype=np.float64).reshape(-1, 3)
    h = h[np.isfinite(h[:, 2]) & (h[:, 2] > 0)]
    tail = h[len(h) // 2:]
    if len(tail) < 2 or len(h) < 4 or np.ptp(tail[:, 0]) == 0:
        return float("inf")
    slope, icpt = np.polyfit(tail[:, 0], np.log(tail[:, 2]), 1)
    return float((np.log(tol) - icpt) / slope) if slope < 0 else float("inf")


def cap_state(history: ArrayLike, tol: float) -> tuple[float, float]:
    """(the last change between rounds (inf: none measured), the iteration its trend reaches
    ``tol``, :func:`iterations_to_tol`) of a fit stopped at its cap, as :func:`cap_message`
    reads them; ``history`` (h, 3) as ``history_``."""
    h = np.asarray(history, dtype=np.float64).reshape(-1, 3)
    return (float(h[-1, 2]) if len(h) else float("inf")), iterations_to_tol(h, tol)


def _ceil2(x: float) -> int:
    """``x`` rounded up to two significant digits (13,260 -> 14,000)."""
    scale = 10 ** max(0, int(np.floor(np.log10(x))) - 1)
    return int(-(-x // scale) * scale)


#: a data scale c (:attr:`~iclr25.locodl.ClientLogistic.data_scale`) whose c² (the factor it
#: puts on the smoothness L, hence on the iterations) is at least this is named in the cap's hint
SCALE_HINT = 10.0


def cap_message(d: int, compressor: object, max_iter: int, rounds: int, tol: float,
                last: float, cli: bool = False, spread: float = 1.0,
                needed: float = float("inf"), data_scale: float = 1.0) -> str:
    """Why a fit stopped at the cap ``max_iter`` before ``tol``, and what to raise: the cap
    (to about ``needed``, :func:`iterations_to_tol`, where the change is falling) or the
    compressor's k (rand-k: rounds grow with d/k); in the CLI's words if ``cli``.
    A ``spread`` (:func:`~iclr25._checks.column_spread`) above
    :data:`~iclr25._checks.SPREAD_HINT` says to scale first; else a ``data_scale`` c with
    c² >= :data:`SCALE_HINT` says to divide X by c (issue 68: walk 8's columns in x1..x5,
    c 12.6, needed over 1e6 iterations as they were and 15,028 so divided)."""
    from iclr25.locodl.compressors import ComposedCompressor, RandK, make_compressor

    comp = make_compressor(compressor)
    parts = [comp.c1, comp.c2] if isinstance(comp, ComposedCompressor) else [comp]
    k = next((c.k for c in parts if isinstance(c, RandK)), None)
    cap = "--max-iter" if cli else "max_iter"
    raise_k = None
    if k is not None and k < d:
        new_k = f"rand-{min(d, max(4 * k, -(-d // 10)))}"
        raise_k = f"--compressor {new_k}" if cli else f"compressor={new_k!r}"
    if not max_iter < needed < float("inf"):
        hint = (f"raise the compressor's k (rounds grow with d/k: {raise_k}) or {cap}"
                if raise_k else f"raise {cap}")
    else:
        at = f"at its last rate of decrease the change reaches tol near iteration {needed:.2g}"
        more = _ceil2(1.2 * needed)
        if rounds < max_iter / 2 or raise_k is None:
            # it communicated on few of its iterations: the local steps bind (an
            # ill-conditioned objective, small alpha), not k (issue 68 walk 6: rand-12
            # stopped at the cap as rand-3 did; 570,000 iterations converged)
            hint = f"{at}: raise {cap} to about {more}" + (
                f" (or the compressor's k, rounds grow with d/k: {raise_k})" if raise_k else "")
        else:
            hint = (f"raise the compressor's k (rounds grow with d/k: {raise_k}) or {cap} "
                    f"({at}: about {more})")
    if spread > SPREAD_HINT:
        hint = (f"the columns' scales differ {spread:.3g}-fold: standardise them first (e.g. "
                f"sklearn's StandardScaler), or {hint}")
    elif data_scale ** 2 >= SCALE_HINT:
        how = ("drop --rescale none (the default divides DATA by it)" if cli else
               "divide X by it (ClientLogistic(X, y, clients, alpha).data_scale)")
        hint = (f"the data's scale {data_scale:.3g} makes the smoothness L, and the "
                f"iterations, {data_scale ** 2:.3g}x those of X divided by it: {how}, or {hint}")
    seen = f"last {last:.3g}" if last < float("inf") else "none measured yet"
    return (f"LoCoDL stopped at the cap, {cap} {max_iter} iterations ({rounds} rounds), "
            f"before the change between rounds reached tol {tol:g} ({seen}); {hint}")


@checked
class LoCoDLClassifier(FittedIO, ClassifierMixin, BaseEstimator):
    """Binary logistic regression trained with LoCoDL on data split over clients.

    Minimises (1/N) Σ log(1 + exp(−y aᵀx)) + (α/2)‖x‖², i.e.
    ``LogisticRegression(C=1/(α N), fit_intercept=False)``, by LoCoDL (Algorithm 1) with the
    theorem's parameters; the uplink is compressed by ``compressor``.

    Args:
        alpha: ℓ2 weight α > 0.
        n_clients: clients when ``fit`` gets no ``client_ids`` (contiguous equal blocks).
        compressor: "auto" (default: rand-k with k = ⌈d/10⌉, a tenth of the d features; see
            :func:`~iclr25.locodl.compressors.auto_compressor`), "rand-k", "natural",
            "rand-k+natural" or "none".
        max_iter: iterations at most (the cap: reaching it warns ``ConvergenceWarning``).
            tol: stop at ‖y_r − y_{r−1}‖ ≤ tol·max(1, ‖y_r‖).
        engine: "simulated" (all clients in this process) or "gloo" (``n_proc`` processes).
        n_proc: processes of the gloo engine (1 ≤ n_proc ≤ clients).
        seed: the coin and compressor streams: an int, a torch.Generator (the seed it was
            made with) or None (fresh).

    Attributes:
        coef_ (1, d), intercept_ (1,) zeros, classes_, compressor_ (the compressor's name,
        "auto" resolved), n_rounds_, n_iter_, converged_ (tol reached before max_iter),
        uplink_bits_ (per client), wire_bytes_, history_ ((h, 3): iteration, bits,
        relative change).

    A fit on a terminal shows a progress bar (iterations, rounds, last change; the
    simulated engine); one that stops at ``max_iter`` before ``tol`` warns
    ``sklearn.exceptions.ConvergenceWarning`` with the hint: raise the compressor's k or
    ``max_iter``.

    Examples:
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.preprocessing import scale
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> clf = LoCoDLClassifier(alpha=1e-2, n_clients=5, seed=0).fit(scale(X), y)
        >>> clf.score(scale(X), y) > 0.95
        True
    """

    def __init__(self, alpha: float = 1e-3, *, n_clients: int = 10, compressor: str = "auto",
                 max_iter: int = 100_000, tol: float = 1e-10, engine: Engine = "simulated",
                 n_proc: int = 2, seed: int | torch.Generator | None = None) -> None:
        self.alpha = alpha
        self.n_clients = n_clients
        self.compressor = compressor
        self.max_iter = max_iter
        self.tol = tol
        self.engine = engine
        self.n_proc = n_proc
        self.seed = seed

    def _check_params(self, n_rows: int) -> None:
        from iclr25.locodl.compressors import make_compressor

        check_range(self.alpha, "alpha", 0.0, low_open=True)
        check_int(self.n_clients, "n_clients", 2)
        if not (isinstance(self.compressor, str) and self.compressor == "auto"):
            make_compressor(self.compressor)
        check_int(self.max_iter, "max_iter", 1)
        check_range(self.tol, "tol", 0.0)
        check_choice(self.engine, "engine", Engine)
        check_int(self.n_proc, "n_proc", 1)
        resolve_seed(self.seed)  # names the argument unless an int, a Generator or None

    def fit(self, X: ArrayOrSparse, y: ArrayLike, client_ids: ArrayLike | None = None
            ) -> LoCoDLClassifier:
        """Fit on X (N, d) with two-class labels y (N,); client_ids (N,) or None.

        X may be dense or ``scipy.sparse`` (e.g. from ``load_svmlight_file``); sparse rows
        stay sparse: each gradient costs O(nnz), the same iterates as the dense X.

        Raises:
            ValueError/TypeError: naming X, y, client_ids or the bad parameter.
        """
        return self._fit(X, *self._objective(X, y, client_ids))

    def _fit(self, X: ArrayOrSparse, Xt: ArrayOrSparse, yt: torch.Tensor,
             client_ids: ArrayLike, objective: ClientLogistic) -> LoCoDLClassifier:
        """:meth:`fit` on what :meth:`_objective` returned for ``X``: ``locodl fit`` builds
        that objective once, for its condition check and the fit (its client blocks'
        eigendecomposition, ``objective.L``, computed once)."""
        from iclr25.locodl.algorithms import locodl

        self.classes_ = objective.classes.cpu().numpy()
        # an int as it is (a Generator: the seed it was made with; None: a fresh one), since
        # the gloo engine hands it to other processes
        seed = resolve_seed(self.seed).initial_seed()
        name = self._compressor_name(Xt.shape[1])
        kw = dict(compressor=name, max_iter=self.max_iter, tol=self.tol, seed=seed)
        if self.engine == "simulated":
            with warnings.catch_warnings():  # warned below with the estimator's hints
                warnings.simplefilter("ignore", ConvergenceWarning)
                run = locodl(objective, verbose=None, **kw)
            res = dict(x=run.x, rounds=run.rounds, iterations=run.iterations,
                       uplink_bits=run.uplink_bits, wire_bytes=run.wire_bytes,
                       history=run.history, converged=run.converged)
        else:
            from iclr25.locodl.algorithms import check_condition
            from iclr25.locodl.distributed import spawn_runs

            check_condition(objective)   # here: the processes would raise it as a traceback
            spec = dict(kind="logistic", X=Xt.cpu(), y=yt.cpu(),
                        clients=torch.as_tensor(np.asarray(client_ids)), alpha=self.alpha)
            res = spawn_runs(spec, [dict(algorithm="locodl", **kw)], self.n_proc)[0]
        self.coef_ = res["x"].detach().cpu().to(torch.float64).numpy()[None, :]
        self.intercept_ = np.zeros(1)
        self.n_rounds_ = int(res["rounds"])
        self.n_iter_ = int(res["iterations"])
        self.uplink_bits_ = float(res["uplink_bits"])
        self.wire_bytes_ = int(res["wire_bytes"])
        self.history_ = res["history"].numpy()
        self.n_features_in_ = Xt.shape[1]
        self.compressor_ = name if isinstance(name, str) else repr(name)
        self.converged_ = bool(res["converged"])
        if not self.converged_:
            last, needed = cap_state(self.history_, self.tol)
            warnings.warn(ConvergenceWarning(cap_message(
                self.n_features_in_, name, self.max_iter, self.n_rounds_, self.tol, last,
                spread=column_spread(X), needed=needed, data_scale=objective.data_scale)),
                stacklevel=user_stacklevel())
        return self

    def _objective(self, X: ArrayOrSparse, y: ArrayLike, client_ids: ArrayLike | None
                   ) -> tuple[ArrayOrSparse, torch.Tensor, ArrayLike, ClientLogistic]:
        """The checked ``(X, y, client ids, ClientLogistic objective)`` of :meth:`fit`."""
        from iclr25.locodl.objectives import ClientLogistic, check_sparse, is_sparse

        if is_sparse(X):
            Xt = check_sparse(X)
            if self.engine == "gloo":
                raise ValueError("engine='gloo' needs a dense X; sparse X runs with "
                                 "engine='simulated'")
        else:
            Xt = as_tensor(X, "X", ndim=2)
            if not Xt.is_floating_point():
                Xt = Xt.to(torch.float64)
        N = Xt.shape[0]
        self._check_params(N)
        yt = as_tensor(y, "y", ndim=1)
        if len(yt) != N:
            raise ValueError(f"y must have one label per row of X ({N}), got {len(yt)}")
        if client_ids is None:
            if self.n_clients > N:
                raise ValueError(f"n_clients must be <= the number of rows ({N}), got "
                                 f"{self.n_clients}")
            client_ids = torch.arange(N) * self.n_clients // N
        objective = ClientLogistic(Xt, yt, client_ids, self.alpha)
        if self.n_proc > objective.n_clients:
            raise ValueError(f"n_proc must be <= the number of clients "
                             f"({objective.n_clients}), got {self.n_proc}")
        return Xt, yt, client_ids, objective

    def _compressor_name(self, d: int) -> object:
        """The compressor to run on R^d: ``"auto"`` resolved, else as given (checked on d)."""
        from iclr25.locodl.compressors import auto_compressor, make_compressor

        if isinstance(self.compressor, str) and self.compressor == "auto":
            return auto_compressor(d)
        try:
            make_compressor(self.compressor).check(d)
        except ValueError as exc:
            raise ValueError(f"compressor {self.compressor!r} does not fit the {d} features: "
                             f"{exc}") from None
        return self.compressor

    def decision_function(self, X: ArrayOrSparse) -> np.ndarray | torch.Tensor:
        """aᵀx for each row of a dense or sparse X: (N,) float64, in X's kind (as
        :meth:`predict`)."""
        return _like(self._scores(X), X)

    def _scores(self, X: ArrayOrSparse) -> np.ndarray:
        """aᵀx (N,) as numpy, computed alike for every kind of X (the same values)."""
        from iclr25.locodl.objectives import check_sparse, is_sparse

        check_is_fitted(self, "coef_")
        Xt = check_sparse(X) if is_sparse(X) else as_tensor(X, "X", ndim=2)
        if Xt.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Xt.shape[1]} features, expected {self.n_features_in_}")
        if is_sparse(Xt):
            return np.asarray(Xt.astype(np.float64) @ self.coef_[0])
        return Xt.cpu().double().numpy() @ self.coef_[0]

    def predict_proba(self, X: ArrayOrSparse) -> np.ndarray | torch.Tensor:
        """(N, 2) class probabilities, columns in ``classes_`` order, in X's kind (as
        :meth:`predict`)."""
        p = 1 / (1 + np.exp(-self._scores(X)))
        return _like(np.stack([1 - p, p], axis=1), X)

    def predict(self, X: ArrayOrSparse) -> np.ndarray | torch.Tensor:
        """(N,) predicted labels (``classes_``' values, numeric): a tensor on X's device for a
        tensor X (dense or sparse), else a numpy array (numpy, lists, scipy.sparse), as
        scikit-learn's. ``coef_`` and ``classes_`` stay numpy, as scikit-learn's."""
        scores = self._scores(X)  # checks fitted before classes_ is read
        return _like(self.classes_[(scores > 0).astype(int)], X)


def _like(out: np.ndarray, X: object) -> np.ndarray | torch.Tensor:
    """A numpy result as a tensor on X's device for a tensor X, else as it is."""
    return torch.from_numpy(out).to(X.device) if isinstance(X, torch.Tensor) else out
