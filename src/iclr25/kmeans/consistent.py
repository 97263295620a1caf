"""Online (k, z)-clustering with few centre changes: an sklearn clusterer over a stream.

The paper (Chan, Jiang, Wu, Zhao, ICLR 2025) turns an offline solver into an online one whose
centre set changes O(k polylog n) times in all. Its robust-centre-sequence routine has no
public code; :class:`ConsistentKMeans` implements the operationalisation of the paper's
recipe used by its experiments ("plug in k-means++"): a lazy trigger on the cost, an offline
re-solve, greedy single swaps towards the new solution, and a full replacement only when the
swaps cannot reach it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from iclr25._checks import (
    as_tensor,
    check_choice,
    check_int,
    check_range,
    check_same_length,
    resolve_seed,
)
from iclr25._contract import RealArray, Reals1D, checked
from iclr25._io import FittedIO

__all__ = ["OFFLINE", "ConsistentKMeans", "clustering_cost", "dz_seeding"]

Offline = Literal["auto", "kmeans++"]
OFFLINE: tuple[str, ...] = get_args(Offline)
_BLOCK = 2048  # rows scored at once between events: bounds re-scoring after an event


# --- functions ------------------------------------------------------------------------------

def _dist_z(X: torch.Tensor, C: torch.Tensor, z: float) -> torch.Tensor:
    """``‖x − c‖^z`` for every row of X and C, (n, k); exact zeros for equal rows."""
    D = torch.cdist(X, C, compute_mode="donot_use_mm_for_euclid_dist")
    return D.square() if z == 2 else D.pow(z)


@checked
def clustering_cost(X: RealArray, centers: RealArray, sample_weight: Reals1D | None = None,
                    *, z: float = 2.0) -> float:
    """The (k, z)-clustering cost ``Σ_p w_p min_s ‖p − s‖^z`` (z=2: k-means inertia).

    Args:
        X: points, (n, d).
        centers: centres, (k, d).
        sample_weight: (n,) non-negative weights; ``None`` means ones.
        z: the power of the distance (2 k-means, 1 k-median).

    Returns:
        The cost as a Python float.

    Raises:
        ValueError / TypeError: naming ``X``, ``centers``, ``sample_weight`` or ``z``.
    """
    z = check_range(z, "z", 0, low_open=True)
    Xt = _as_points(X, "X")
    C = _as_points(centers, "centers")
    if C.shape[1] != Xt.shape[1]:
        raise ValueError(f"centers has {C.shape[1]} features, X has {Xt.shape[1]}")
    w = _as_weight(sample_weight, len(Xt), Xt.device)
    return float((w * _dist_z(Xt, C.to(Xt.device), z).min(1).values).sum())


@checked
def dz_seeding(X: torch.Tensor, w: torch.Tensor, k: int, g: torch.Generator, *,
               z: float = 2.0, n_init: int = 1) -> torch.Tensor:
    """Best of ``n_init`` D^z seedings (k-means++ for z=2): k rows of X, (k, d).

    Each seeding picks the first centre with probability ∝ w, the next ∝ w·D^z to the
    chosen ones (Arthur & Vassilvitskii 2007); the seeding of least cost is returned. The
    draws are made on ``g``'s device (the weights travel there), so a CPU generator gives the
    same seeding for points on any device.
    """
    X = as_tensor(X, "X", ndim=2, floating=True)
    w = as_tensor(w, "w", ndim=1, floating=True, device=X.device)
    check_same_length(X=X, w=w)
    if bool((w < 0).any()) or not bool((w > 0).any()):
        raise ValueError("w must be non-negative weights with a positive sum")
    check_int(k, "k", 1)
    if k > len(X):
        raise ValueError(f"k = {k} centres cannot be chosen from {len(X)} points")

    def draw(p: torch.Tensor) -> torch.Tensor:
        return torch.multinomial(p.to(g.device), 1, generator=g).to(X.device)

    best, best_cost = None, float("inf")
    for _ in range(n_init):
        idx = draw(w)
        d = _dist_z(X, X[idx], z)[:, 0]
        for _ in range(k - 1):
            p = w * d
            if float(p.sum()) <= 0:  # fewer distinct points than k: repeat one
                nxt = idx[:1]
            else:
                nxt = draw(p)
            idx = torch.cat([idx, nxt])
            d = torch.minimum(d, _dist_z(X, X[nxt], z)[:, 0])
        c = float((w * d).sum())
        if c < best_cost:
            best, best_cost = X[idx], c
    return best


# --- input conversion -----------------------------------------------------------------------

def _as_points(X: Any, name: str) -> torch.Tensor:
    """X as a finite 2-D float64 tensor (numpy/lists/object arrays accepted); never a view
    that could alias a user's array being written."""
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(f"{name} must be a dense array; sparse input is not supported "
                        f"(call .toarray())")
    if not isinstance(X, torch.Tensor):
        arr = np.asarray(X)
        if arr.dtype == object or arr.dtype.kind in "USV":
            try:
                arr = arr.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{name} must be numeric (each argument must be a string or a "
                                f"number castable to float), got dtype {arr.dtype}") from exc
        if arr.dtype.kind == "c":
            raise ValueError(f"{name} must be real: Complex data not supported")
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
        X = torch.from_numpy(np.array(arr, dtype=np.float64, copy=True))
    elif X.is_complex():
        raise ValueError(f"{name} must be real: Complex data not supported")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows are samples), got shape {tuple(X.shape)}; "
                         f"Reshape your data with X.reshape(-1, 1) for one feature or "
                         f"X.reshape(1, -1) for one sample")
    if X.shape[0] == 0:
        raise ValueError(f"{name} is empty: 0 sample(s) (shape={tuple(X.shape)}) while a "
                         f"minimum of 1 is required.")
    if X.shape[1] == 0:
        raise ValueError(f"{name} is empty: 0 feature(s) (shape={tuple(X.shape)}) while a "
                         f"minimum of 1 is required.")
    X = X.to(torch.float64)
    if not bool(torch.isfinite(X).all()):
        bad = int((~torch.isfinite(X)).sum())
        raise ValueError(f"{name} contains {bad} NaN or inf value(s)")
    return X


def _as_weight(w: Any, n: int, device: torch.device) -> torch.Tensor:
    if w is None:
        return torch.ones(n, dtype=torch.float64, device=device)
    if isinstance(w, torch.Tensor):
        t = w.detach().to(device=device, dtype=torch.float64)
    else:
        arr = np.asarray(w)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"sample_weight must be numeric, got dtype {arr.dtype}")
        t = torch.as_tensor(np.array(arr, dtype=np.float64), device=device)
    if t.ndim == 0:
        t = t.expand(n).clone()
    if t.ndim != 1 or len(t) != n:
        raise ValueError(f"sample_weight must have one weight per row of X ({n}), "
                         f"got shape {tuple(t.shape)}")
    if not bool(torch.isfinite(t).all()):
        raise ValueError("sample_weight contains NaN or inf")
    if bool((t < 0).any()):
        raise ValueError("sample_weight must be non-negative")
    if not bool((t > 0).any()):
        raise ValueError("sample_weight is all zero")
    return t


def _out(t: torch.Tensor, like: Any) -> Any:
    """Numpy in, numpy out; tensors in, tensors out on the input's device/dtype."""
    if isinstance(like, torch.Tensor):
        dtype = like.dtype if (t.is_floating_point() and like.is_floating_point()) else None
        return t.to(device=like.device, dtype=dtype or t.dtype)
    return t.detach().cpu().numpy()


# --- the estimator --------------------------------------------------------------------------

@checked
class ConsistentKMeans(FittedIO, ClusterMixin, TransformerMixin, BaseEstimator):
    """Online k-means (or (k, z)-clustering) whose centres rarely change as points stream in.

    Every row of ``partial_fit`` is one arrival. While fewer than ``n_clusters`` centres are
    open, a (positively weighted) point distinct from them opens one. Each arrival adds its
    cost to ``cost_``; when ``cost_ > (1+eps)·ref`` the offline solver is called on the whole
    prefix, giving S'. The best single swap (out ∈ S, in ∈ S') is applied, one centre change
    each, until ``cost ≤ (1+eps/2)·min(cost(S'), cost)`` or no swap helps; if the cost is then
    still above ``(1+eps)·cost(S')``, S is replaced by S' (slots matched, |S' \\ S| changes).
    Then ``ref ← cost``. Centres never move between events, and a centre keeps its slot
    (cluster id) until it is swapped out. Paper: Chan, Jiang, Wu, Zhao, "Online Clustering
    with Nearly Optimal Consistency", ICLR 2025 (consistency = Σ_t |S_t \\ S_{t−1}|, §2; the
    paper's robust-centre-sequence routine is not public, so this is our operationalisation
    of its "plug in k-means++" experiments, not its Algorithm 2-3).

    Args:
        n_clusters: k, the number of centres (slots).
        eps: ε > 0, the slack before re-solving (competitive ratio ≈ (1+ε)·α).
        z: power of the distance: 2 k-means, 1 k-median, any z > 0.
        offline: ``"auto"`` (sklearn ``KMeans(k, n_init)`` for z=2, else best-of-``n_init``
            D^z seeding), ``"kmeans++"`` (best-of-``n_init`` k-means++ / D^z seeding), or a
            callable ``(X, w, k, rng) -> (k, d)`` taking float64 tensors and a CPU
            ``torch.Generator``.
        n_init: restarts of the offline solver.
        discrete: keep centres on seen points (the paper's setting); offline centres are
            snapped to their nearest seen point.
        seed: int, ``torch.Generator`` or ``None``; the offline solver's randomness.

    Devices: whatever the input dtype, every distance and cost is computed in float64, and the
    offline solver draws from a CPU generator, so a seed gives the same change log on CPU and
    CUDA. Exact change logs are device-dependent in float32 (the two devices sum distances in
    different orders, and near-ties between swaps then round differently), which is why the
    arithmetic is float64; costs agree to rounding (~1e-12 relative), and swaps whose costs
    tie within 1e-9 (relative) go to the first (out, in) pair on every device.

    Attributes:
        cluster_centers_: (k, d) centres, row j = slot j (fewer rows until k distinct points
            were seen); numpy when fitted on numpy, else a tensor of the input's dtype.
        n_center_changes_: consistency Σ_t |S_t \\ S_{t−1}|, openings included.
        n_reclusterings_: offline calls.
        cost_: Σ_p w_p min_s ‖p − s‖^z over all points seen.
        n_samples_seen_: rows seen.
        change_log_: list of ``(t, slot, kind)``, t the 1-based arrival, kind
            ``"open"``/``"swap"``/``"replace"``.
        labels_: (n_samples_seen_,) nearest slot of every point seen, under the current
            centres.
        cluster_center_indices_: (k,) stream positions of the centres (``discrete=True``).
        n_features_in_: d.

    Examples:
        >>> import math
        >>> import numpy as np
        >>> from iclr25.kmeans import ConsistentKMeans
        >>> X = np.random.default_rng(0).normal(size=(500, 2)) + np.repeat(
        ...     [[0, 0], [20, 0], [0, 20]], [200, 200, 100], axis=0)
        >>> km = ConsistentKMeans(3, seed=0).fit(X)
        >>> bound = 3 * 3 * math.log(500)  # the reproduction's gate: 3 k ln n changes
        >>> km.cluster_centers_.shape, km.n_center_changes_ <= bound
        ((3, 2), True)
    """

    def __init__(self, n_clusters: int = 8, *, eps: float = 0.2, z: float = 2,
                 offline: Offline | Callable = "auto", n_init: int = 3,
                 discrete: bool = False, seed: int | torch.Generator | None = None) -> None:
        self.n_clusters = n_clusters
        self.eps = eps
        self.z = z
        self.offline = offline
        self.n_init = n_init
        self.discrete = discrete
        self.seed = seed

    # -- sklearn plumbing --
    _private = ("_base_seed", "_device", "_buf", "_wbuf", "_C", "_cidx", "_ref")  # for save

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.seed is None
        return tags

    def _check_params(self) -> None:
        check_int(self.n_clusters, "n_clusters", 1)
        check_range(self.eps, "eps", 0, low_open=True)
        check_range(self.z, "z", 0, low_open=True)
        check_int(self.n_init, "n_init", 1)
        if not callable(self.offline):
            check_choice(self.offline, "offline", OFFLINE)
        if not isinstance(self.discrete, (bool, np.bool_)):
            raise TypeError(f"discrete must be a bool, got {type(self.discrete).__name__}")
        if not (self.seed is None or isinstance(self.seed, torch.Generator)):
            check_int(self.seed, "seed", 0)

    def _reset(self, device: torch.device) -> None:
        for a in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")]:
            delattr(self, a)
        g = resolve_seed(self.seed)
        self._base_seed = int(torch.randint(0, 2**62, (1,), generator=g, device=g.device))
        self._device = device
        self._buf = torch.empty(0, 0, dtype=torch.float64, device=device)
        self._wbuf = torch.empty(0, dtype=torch.float64, device=device)
        self._C = torch.empty(0, 0, dtype=torch.float64, device=device)
        self._cidx = torch.empty(0, dtype=torch.int64, device=device)
        self._ref = 0.0
        self.cost_ = 0.0
        self.n_samples_seen_ = 0
        self.n_center_changes_ = 0
        self.n_reclusterings_ = 0
        self.change_log_: list[tuple[int, int, str]] = []

    # -- public API --
    def fit(self, X: Any, y: Any = None,
            sample_weight: Any = None) -> ConsistentKMeans:
        """Reset, then stream the rows of X (one arrival each) through :meth:`partial_fit`.

        Args:
            X: (n, d) points; y: ignored; sample_weight: (n,) non-negative weights.

        Returns:
            self.
        """
        self._check_params()
        Xt = _as_points(X, "X")
        w = _as_weight(sample_weight, len(Xt), Xt.device)
        self._reset(Xt.device)
        return self._stream(Xt, w, X)

    def partial_fit(self, X: Any, y: Any = None,
                    sample_weight: Any = None) -> ConsistentKMeans:
        """Stream the rows of X, in order, one arrival each; continues any earlier stream.

        Args:
            X: (n, d) points; y: ignored; sample_weight: (n,) non-negative weights.

        Returns:
            self.

        Raises:
            ValueError: X's feature count differs from earlier calls, bad X or weights.
        """
        self._check_params()
        Xt = _as_points(X, "X")
        fitted = hasattr(self, "n_features_in_")
        if fitted and Xt.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Xt.shape[1]} features, but ConsistentKMeans is "
                             f"expecting {self.n_features_in_} features as input")
        w = _as_weight(sample_weight, len(Xt), Xt.device)
        if not fitted:
            self._reset(Xt.device)
        return self._stream(Xt.to(self._device), w.to(self._device), X)

    def predict(self, X: Any) -> Any:
        """Slot (cluster id) of the nearest centre for each row, (n,) int64."""
        Xt = self._validate_predict(X)
        return _out(_dist_z(Xt, self._C, 1.0).argmin(1), X)

    def transform(self, X: Any) -> Any:
        """Euclidean distance of each row to each centre, (n, k)."""
        Xt = self._validate_predict(X)
        return _out(_dist_z(Xt, self._C, 1.0), X)

    def fit_predict(self, X: Any, y: Any = None,
                    sample_weight: Any = None) -> Any:
        """:meth:`fit` then the labels of X, (n,) int64."""
        return self.fit(X, sample_weight=sample_weight).labels_

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """Minus the (k, z) cost of X under the current centres (higher is better)."""
        Xt = self._validate_predict(X)
        w = _as_weight(sample_weight, len(Xt), Xt.device)
        return -float((w * _dist_z(Xt, self._C, self.z).min(1).values).sum())

    def _validate_predict(self, X: Any) -> torch.Tensor:
        check_is_fitted(self, "n_features_in_")
        Xt = _as_points(X, "X")
        if Xt.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Xt.shape[1]} features, but ConsistentKMeans is "
                             f"expecting {self.n_features_in_} features as input")
        return Xt.to(self._device)

    # -- the stream --
    def _append(self, X: torch.Tensor, w: torch.Tensor) -> None:
        n, m = self.n_samples_seen_, len(X)
        if self._buf.shape[0] < n + m:
            cap = max(n + m, 2 * self._buf.shape[0], 64)
            buf = torch.empty(cap, X.shape[1], dtype=torch.float64, device=self._device)
            wbuf = torch.empty(cap, dtype=torch.float64, device=self._device)
            if n:
                buf[:n], wbuf[:n] = self._buf[:n], self._wbuf[:n]
            self._buf, self._wbuf = buf, wbuf
        self._buf[n:n + m] = X
        self._wbuf[n:n + m] = w
        self.n_samples_seen_ = n + m

    def _stream(self, X: torch.Tensor, w: torch.Tensor, like: Any) -> ConsistentKMeans:
        k, z, eps = self.n_clusters, float(self.z), float(self.eps)
        if not hasattr(self, "n_features_in_"):
            self.n_features_in_ = X.shape[1]
            self._C = torch.empty(0, X.shape[1], dtype=torch.float64, device=self._device)
        i, n = 0, len(X)
        while i < n:
            if len(self._C) < k:  # opening phase: the first distinct, weighted row opens
                blk, wb = X[i:i + _BLOCK], w[i:i + _BLOCK]
                if len(self._C):
                    distinct = (_dist_z(blk, self._C, 1.0).min(1).values > 0) & (wb > 0)
                else:
                    distinct = wb > 0
                hit = torch.nonzero(distinct)
                j = int(hit[0, 0]) if len(hit) else len(blk)
                self._append(blk[:j + 1] if len(hit) else blk, wb[:j + 1] if len(hit) else wb)
                if len(hit):  # the rows before it duplicate open centres: cost 0
                    self._C = torch.cat([self._C, blk[j:j + 1]])
                    self._cidx = torch.cat([self._cidx, torch.tensor(
                        [self.n_samples_seen_ - 1], device=self._device)])
                    self.n_center_changes_ += 1
                    self.change_log_.append((self.n_samples_seen_, len(self._C) - 1, "open"))
                i += j + 1 if len(hit) else len(blk)
                continue
            blk, wb = X[i:i + _BLOCK], w[i:i + _BLOCK]
            running = self.cost_ + torch.cumsum(wb * _dist_z(blk, self._C, z).min(1).values, 0)
            over = torch.nonzero(running > (1 + eps) * self._ref)
            j = int(over[0, 0]) if len(over) else len(blk) - 1
            self._append(blk[:j + 1], wb[:j + 1])
            self.cost_ = float(running[j])
            i += j + 1
            if len(over):
                self._event()
        self._finish(like)
        return self

    def _rng(self) -> torch.Generator:
        """The generator of the next offline call: a function of (seed, call number). A CPU
        generator on every device, so that a seed draws the same numbers on CPU and CUDA."""
        s = (self._base_seed + 1_000_003 * self.n_reclusterings_) % (2**63 - 1)
        return torch.Generator().manual_seed(s)

    def _solve(self, P: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        k, z = self.n_clusters, float(self.z)
        g = self._rng()
        if callable(self.offline):
            S = self.offline(P, w, k, g)
            S = torch.as_tensor(S).to(device=self._device, dtype=torch.float64)
            if S.shape != (k, P.shape[1]):
                raise ValueError(f"offline returned shape {tuple(S.shape)}, expected "
                                 f"({k}, {P.shape[1]})")
            if not bool(torch.isfinite(S).all()):
                raise ValueError("offline returned NaN or inf centres")
        elif self.offline == "auto" and z == 2:
            from sklearn.cluster import KMeans

            rs = int(torch.randint(0, 2**31 - 1, (1,), generator=g))
            km = KMeans(k, n_init=self.n_init, random_state=rs)
            km.fit(P.cpu().numpy(), sample_weight=w.cpu().numpy())
            S = torch.from_numpy(km.cluster_centers_).to(self._device, torch.float64)
        else:
            S = dz_seeding(P, w, k, g, z=z, n_init=self.n_init)
        return S

    def _event(self) -> None:
        """Re-solve offline, swap greedily towards S', replace if swaps fall short."""
        n = self.n_samples_seen_
        P, w, t = self._buf[:n], self._wbuf[:n], n
        S2 = self._solve(P, w)
        self.n_reclusterings_ += 1
        S2idx = None
        if self.discrete:
            S2idx = _dist_z(S2, P, 1.0).argmin(1)
            S2 = P[S2idx]
        self._repair(P, w, S2, S2idx, t)
        # recompute exactly on the prefix (no drift from the incremental sums)
        self.cost_ = float((w * _dist_z(P, self._C, float(self.z)).min(1).values).sum())
        self._ref = self.cost_

    def _repair(self, P: torch.Tensor, w: torch.Tensor, S2: torch.Tensor,
                S2idx: torch.Tensor | None, t: int) -> None:
        """Greedy single swaps towards S', then full replacement if they fall short."""
        k, z, eps = self.n_clusters, float(self.z), float(self.eps)
        n = len(P)
        D2 = _dist_z(P, S2, z)                        # (n, k) distances to S'
        cost_new = float((w * D2.min(1).values).sum())
        c0 = self.cost_
        goal = (1 + eps / 2) * min(cost_new, c0)
        cost = c0
        for _ in range(2 * k):
            if cost <= goal:
                break
            D = _dist_z(P, self._C, z)
            if k > 1:
                two = D.topk(2, dim=1, largest=False)
                d1, d2, i1 = two.values[:, 0], two.values[:, 1], two.indices[:, 0]
            else:
                d1, i1 = D[:, 0], torch.zeros(n, dtype=torch.int64, device=self._device)
                d2 = torch.full_like(d1, float("inf"))
            m1 = torch.minimum(d1[:, None], D2)       # (n, k'): keep all of S, add s'_j
            m2 = torch.minimum(d2[:, None], D2)       # the same without the nearest
            onehot = torch.zeros(n, k, dtype=torch.float64, device=self._device)
            onehot[torch.arange(n, device=self._device), i1] = 1.0
            # swap cost[i, j] = Σ_p w min(d_{-i}(p), D2[p, j]), one (k × k) evaluation
            swap = (w @ m1)[None, :] + onehot.T @ (w[:, None] * (m2 - m1))
            # swaps within 1e-9 of the best tie (rounding differs by device): take the first
            lo = swap.min()
            best = int(torch.nonzero(swap.flatten() <= lo + 1e-9 * lo.abs())[0, 0])
            out_slot, in_j = divmod(best, k)
            new_cost = float(swap[out_slot, in_j])
            if not new_cost < cost * (1 - 1e-12):
                break
            self._C = self._C.clone()
            self._C[out_slot] = S2[in_j]
            if S2idx is not None:
                self._cidx = self._cidx.clone()
                self._cidx[out_slot] = S2idx[in_j]
            cost = new_cost
            self.n_center_changes_ += 1
            self.change_log_.append((t, out_slot, "swap"))
        if cost > (1 + eps) * cost_new:
            self._replace(S2, S2idx, t)

    def _replace(self, S2: torch.Tensor, S2idx: torch.Tensor | None, t: int) -> None:
        """S ← S', each centre of S' to the slot of its matched old centre (Hungarian);
        only centres that differ count as changes."""
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(_dist_z(self._C, S2, 1.0).cpu().numpy())
        C, cidx = self._C.clone(), self._cidx.clone()
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):  # k slots, not points
            if not bool(torch.equal(self._C[r], S2[c])):
                C[r] = S2[c]
                if S2idx is not None:
                    cidx[r] = S2idx[c]
                self.n_center_changes_ += 1
                self.change_log_.append((t, r, "replace"))
        self._C, self._cidx = C, cidx

    def _finish(self, like: Any) -> None:
        n = self.n_samples_seen_
        self.cluster_centers_ = _out(self._C, like)
        labels = _dist_z(self._buf[:n], self._C, 1.0).argmin(1)
        self.labels_ = _out(labels, like)
        if self.discrete:
            self.cluster_center_indices_ = _out(self._cidx.clone(), like)
