"""Self-organized tokens: a dependence graph between input dimensions, density-adjusted
spectral clustering of that graph, and the padded tokens it defines (URLOST §3.1-3.2).

The columns of ``X`` are the "sensors" (pixels, neurons, genes); nothing about their layout
is known. Dimensions that depend on each other (|Pearson correlation| or histogram mutual
information) are linked in a k-nearest-neighbour graph, the graph is embedded with the
eigenvectors of a density-adjusted Laplacian, and the embedding is discretised (Yu & Shi,
2003) into clusters. Each cluster is one token.
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin

from iclr25._checks import (
    ArrayLike,
    as_tensor,
    check_choice,
    check_int,
    check_range,
    like_input,
    resolve_seed,
    user_stacklevel,
)
from iclr25._contract import Reals1D, checked
from iclr25._io import FittedIO

__all__ = [
    "Dependence", "SelfOrganizingClusters", "dependence", "density_adjusted_laplacian",
    "discretize", "equal_width_bins", "group_tokens", "groups_from_labels", "knn_affinity",
    "spectral_clusters",
]

Dependence = Literal["corr", "mi"]


def _check_X(X: ArrayLike, name: str = "X", min_rows: int = 2) -> torch.Tensor:
    """(n, d) float with n >= ``min_rows`` (2 to fit, 1 to transform) and no NaN/inf;
    integer counts cast to float32."""
    x = as_tensor(X, name, ndim=2)
    if x.dtype == torch.bool or not x.is_floating_point():
        x = x.to(torch.float32)
    if x.shape[0] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} samples (rows), got {x.shape[0]}")
    if x.shape[1] < 2:
        raise ValueError(f"{name} has 1 column; URLOST groups the columns (dimensions) into "
                         "tokens, so it needs at least 2 (one sample per row, one dimension "
                         "per column)")
    return x


def _nonconstant(x: torch.Tensor, name: str) -> None:
    const = (x == x[:1]).all(dim=0)
    if bool(const.any()):
        idx = torch.nonzero(const).flatten()[:5].tolist()
        raise ValueError(f"{name} has {int(const.sum())} constant column(s) (e.g. {idx}); "
                         "their dependence is undefined: drop them first")


@checked
def equal_width_bins(X: ArrayLike, bins: int = 16) -> torch.Tensor:
    """Discretise each column of ``X`` into ``bins`` equal-width bins over its [min, max]:
    the rule of ``np.histogram2d(x, y, bins)`` that the official ``calc_MI`` uses.

    Equal-width bins, not quantiles: a pixel that is 96% zeros still spreads its few non-zero
    values over several bins, so it keeps its dependence on its neighbours (quantile bins put
    every value of such a column into one bin, MI 0 with every column, an isolated node).
    The edges are computed as ``np.linspace`` does and the last bin is closed on the right.

    Args:
        X: (n, d) samples, no constant column.
        bins: number of bins (>= 2).

    Returns:
        (n, d) int64 codes in ``[0, bins)``.
    """
    x = _check_X(X)
    bins = check_int(bins, "bins", 2)
    _nonconstant(x, "X")
    xd = x.double()
    lo, hi = xd.min(0).values, xd.max(0).values
    step = (hi - lo) / bins
    edges = torch.arange(bins + 1, dtype=torch.float64, device=x.device)[None] * step[:, None]
    edges = edges + lo[:, None]
    edges[:, -1] = hi
    codes = torch.searchsorted(edges, xd.T.contiguous(), right=True) - 1
    return codes.clamp_(0, bins - 1).T.contiguous()


@checked
def dependence(X: ArrayLike, method: Dependence = "corr", bins: int = 16,
               block: int = 64) -> torch.Tensor:
    """Pairwise dependence between the columns of ``X`` (URLOST §3.1, step 1).

    ``"corr"``: |Pearson correlation|. ``"mi"``: mutual information (nats) of the columns
    discretised by :func:`equal_width_bins` (the official ``calc_MI``: ``np.histogram2d``
    then ``mutual_info_score``; agreement 1e-15 on digits), from joint-code ``bincount``s
    over tiles of ``block`` x ``block`` columns (never a loop over pairs): O(n·d²) counting
    work, then O(d²·bins²) for the logs.

    Args:
        X: (n, d) samples; integer counts are cast to float.
        method: ``"corr"`` or ``"mi"``.
        bins: bins per column for ``"mi"`` (>= 2).
        block: columns per tile side; memory ~ n·d bytes of codes + block²·bins² joint
            counts + the d² output, never the n·d·bins one-hots.

    Returns:
        (d, d) symmetric non-negative tensor on X's device (float dtype of X); the diagonal
        holds each column's self-dependence (1, or its entropy).

    Raises:
        ValueError: X not 2-D, fewer than 2 rows, NaN/inf, constant columns (their count is
            named), bins < 2, unknown method.

    Examples:
        >>> import torch
        >>> X = torch.randn(500, 3); X[:, 2] = X[:, 0] + 0.1 * torch.randn(500)
        >>> S = dependence(X)
        >>> bool(S[0, 2] > 0.9 and S[0, 1] < 0.2)
        True
    """
    check_choice(method, "method", Dependence)
    x = _check_X(X)
    bins = check_int(bins, "bins", 2)
    block = check_int(block, "block", 1)
    _nonconstant(x, "X")
    if method == "corr":
        z = x.double() - x.double().mean(0)
        z = z / z.norm(dim=0)
        return (z.T @ z).abs().clamp_(max=1.0).to(x.dtype)
    return _mutual_information(x, bins, block)


def _joint_counts(codes: torch.Tensor, s: int, e: int, t: int, f: int, bins: int
                  ) -> torch.Tensor:
    """(e-s, bins, f-t, bins) float64 joint counts of columns [s, e) with columns [t, f).

    One ``bincount`` of joint codes per chunk of left columns: O(n) work per column pair,
    where one-hot products cost O(n bins²) (16² = 256 multiply-adds per pair at 16 bins).
    On the diagonal tile (t == s) a chunk starting at column i counts columns >= i only:
    the pairs below the diagonal are left at 0 and never read (MI is symmetric)."""
    n, w = codes.shape[0], f - t
    cell = w * bins * bins                       # counts per left column
    out = torch.zeros(e - s, cell, dtype=torch.float64, device=codes.device)
    right = codes[:, t:f].long() + torch.arange(w, device=codes.device) * bins   # (n, w)
    step = max(1, 2**20 // (n * w))              # ~1M joint codes per bincount
    for i in range(s, e, step):
        j = min(i + step, e)
        lo = i - t if t == s else 0
        left = codes[:, i:j].long() * (w * bins) + torch.arange(j - i, device=codes.device) * cell
        idx = left[:, :, None] + right[:, None, lo:]
        out[i - s:j - s] = torch.bincount(idx.reshape(-1), minlength=(j - i) * cell
                                          ).reshape(j - i, cell)
    return out.reshape(e - s, bins, w, bins)


def _mutual_information(x: torch.Tensor, bins: int, block: int) -> torch.Tensor:
    """(d, d) histogram mutual information between the columns of a checked ``x``."""
    n, d = x.shape
    # Codes per column (1 byte each for <= 256 bins); joint counts exist only for the current
    # tile, so memory is O(n d + block² bins² + d²), never O(n d bins).
    codes = torch.empty(n, d, dtype=torch.uint8 if bins <= 256 else torch.int32,
                        device=x.device)
    for s in range(0, d, 1024):
        codes[:, s:s + 1024] = equal_width_bins(x[:, s:s + 1024], bins)
    p_marg = torch.stack([torch.bincount(codes[:, j].long(), minlength=bins)
                          for j in range(d)]).double().reshape(-1) / n
    logm = torch.where(p_marg > 0, p_marg.log(), torch.zeros_like(p_marg)).reshape(d, bins)
    out = torch.empty(d, d, dtype=torch.float64, device=x.device)
    for s in range(0, d, block):  # tiles of the upper triangle only: MI is symmetric
        e = min(s + block, d)
        for t in range(s, d, block):
            f = min(t + block, d)
            joint = _joint_counts(codes, s, e, t, f, bins) / n
            logj = joint.masked_fill(joint == 0, 1.0).log_()   # 0 log 0 = 0
            # sum p log p - sum p (log p_i + log p_j)
            h_joint = (joint * logj).sum((1, 3))
            cross = (joint.sum(3) * logm[s:e, :, None]).sum(1) + \
                (joint.sum(1) * logm[None, t:f]).sum(2)
            mi = h_joint - cross
            if t == s:
                mi = torch.triu(mi) + torch.triu(mi, 1).T
            out[s:e, t:f] = mi
            out[t:f, s:e] = mi.T
    return out.clamp_(min=0.0).to(x.dtype)


@checked
def knn_affinity(S: ArrayLike, k: int = 10) -> torch.Tensor:
    """k-nearest-neighbour affinity graph of a similarity matrix (URLOST §3.1, step 2).

    ``S`` is symmetrised as (S + Sᵀ)/2; each node keeps its ``k`` most similar other nodes
    with weight S_ij; the result is max-symmetrised with a zero diagonal. It is returned
    dense (at most 2k non-zeros per row).

    Args:
        S: (d, d) non-negative similarities (e.g. :func:`dependence`).
        k: neighbours per node, 1 <= k < d.

    Returns:
        (d, d) symmetric non-negative tensor on S's device and dtype.

    Raises:
        ValueError: S not square, negative, NaN/inf; k out of range.
    """
    s = as_tensor(S, "S", ndim=2)
    if not s.is_floating_point():
        s = s.to(torch.float32)
    d = s.shape[0]
    if s.shape[1] != d:
        raise ValueError(f"S must be square, got shape {tuple(s.shape)}")
    if bool((s < 0).any()):
        raise ValueError("S must be non-negative (a similarity), got negative entries")
    k = check_int(k, "k", 1, d - 1)
    sym = (s + s.T) / 2
    sym = sym.masked_fill(torch.eye(d, dtype=torch.bool, device=s.device), float("-inf"))
    val, idx = sym.topk(k, dim=1)
    W = torch.zeros_like(s)
    W.scatter_(1, idx, val)
    W = torch.maximum(W, W.T)
    W.fill_diagonal_(0)
    return W


def _check_W(W: ArrayLike) -> torch.Tensor:
    w = as_tensor(W, "W", ndim=2)
    if not w.is_floating_point():
        w = w.to(torch.float32)
    d = w.shape[0]
    if w.shape[1] != d:
        raise ValueError(f"W must be square, got shape {tuple(w.shape)}")
    if bool((w < 0).any()):
        raise ValueError("W must be non-negative (edge weights)")
    if not torch.allclose(w, w.T, rtol=1e-5, atol=1e-8 * float(w.abs().max())):
        raise ValueError("W must be symmetric")
    deg = w.sum(1) - w.diagonal()
    if bool((deg <= 0).any()):
        raise ValueError(f"W has {int((deg <= 0).sum())} isolated node(s) (no edges); "
                         "spectral clustering needs every node connected")
    return w


def _check_q(q: ArrayLike, d: int, like: torch.Tensor) -> torch.Tensor:
    if q is None:
        return torch.ones(d, dtype=like.dtype, device=like.device)
    qq = as_tensor(q, "q", ndim=1).to(like.device, like.dtype)
    if len(qq) != d:
        raise ValueError(f"q must have one density weight per node ({d}), got {len(qq)}")
    if bool((qq <= 0).any()):
        raise ValueError("q must be positive")
    return qq


@checked
def density_adjusted_laplacian(W: ArrayLike, q: ArrayLike | None = None, w: float = 1.0,
                               ) -> torch.Tensor:
    """L̃ = (Q·Dʷ)^{-1/2} (D − W) (Q·Dʷ)^{-1/2} (URLOST §3.2, eq. 3).

    Q = diag(q) is a per-node density weight, D the degree matrix. With q = 1 and w = 1 this
    is the symmetric normalised Laplacian I − D^{-1/2} W D^{-1/2}.

    Args:
        W: (d, d) symmetric non-negative affinities, every node with an edge.
        q: (d,) positive density weights, or None for 1.
        w: exponent of the degree (>= 0).

    Returns:
        (d, d) symmetric tensor on W's device and dtype.

    Raises:
        ValueError: W not square, asymmetric, negative, isolated nodes; q wrong length or
            not positive; w < 0.
    """
    W = _check_W(W)
    w = check_range(w, "w", 0)
    qq = _check_q(q, W.shape[0], W)
    W = W.clone()
    W.fill_diagonal_(0)
    deg = W.sum(1)
    s = (qq * deg ** w).rsqrt()
    return s[:, None] * (torch.diag(deg) - W) * s[None, :]


@checked
def discretize(vectors: np.ndarray, *, max_restarts: int = 30, max_iter: int = 20,
               seed: int | torch.Generator | None = 0) -> np.ndarray:
    """Yu & Shi (2003) discretisation of a spectral embedding into cluster labels.

    Columns are scaled to norm sqrt(d), each column's sign is fixed by its largest-magnitude
    entry and rows are normalised; a rotation R is then alternated with the discrete
    assignment argmax(V R) until the normalised-cut objective stops changing. The first
    rotation column is the row of largest norm (not a random row), so the labels are
    equivariant under a relabelling of the nodes; ``seed`` only picks restarts after a
    failed SVD.

    Args:
        vectors: (d, m) embedding, m >= 2.

    Returns:
        (d,) int64 labels in ``[0, m)`` (some may be unused).
    """
    V = as_tensor(vectors, "vectors", ndim=2, floating=True).double().cpu().numpy().copy()
    d, m = V.shape
    V = V / np.linalg.norm(V, axis=0) * np.sqrt(d)
    top = np.abs(V).argmax(0)
    V = V * np.sign(V[top, np.arange(m)])
    start = int(np.argmax(np.linalg.norm(V, axis=1)))
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    V = V / np.where(norms > 0, norms, 1.0)
    gen = resolve_seed(seed)
    labels = np.zeros(d, dtype=np.int64)
    for restart in range(max_restarts):
        R = np.zeros((m, m))
        first = start if restart == 0 else int(torch.randint(d, (1,), generator=gen))
        R[:, 0] = V[first]
        c = np.zeros(d)
        for j in range(1, m):  # farthest-point picks of the rotation's columns (m steps)
            c += np.abs(V @ R[:, j - 1])
            R[:, j] = V[c.argmin()]
        last = 0.0
        for _ in range(max_iter + 1):
            labels = (V @ R).argmax(1)
            onehot = np.zeros((d, m))
            onehot[np.arange(d), labels] = 1.0
            try:
                U, S, Vh = np.linalg.svd(onehot.T @ V)
            except np.linalg.LinAlgError:
                break
            ncut = 2.0 * (d - S.sum())
            if abs(ncut - last) < np.finfo(float).eps:
                return labels
            last = ncut
            R = Vh.T @ U.T
        else:
            return labels
    return labels


@checked
def spectral_clusters(W: ArrayLike, n_clusters: int, q: ArrayLike | None = None, w: float = 1.0,
                      drop_first: bool = False, *,
                      seed: int | torch.Generator | None = 0) -> torch.Tensor:
    """Density-adjusted spectral clustering of a graph (URLOST §3.2).

    The ``n_clusters`` eigenvectors of :func:`density_adjusted_laplacian` with the smallest
    eigenvalues (``scipy.sparse.linalg.eigsh``, shift-invert) are rescaled by
    (Q·Dʷ)^{-1/2} and discretised with :func:`discretize`. ``drop_first=True`` is the
    official repository's recipe (n_clusters + 1 vectors, the first dropped); it can
    mis-split planted blocks, so it is off by default.

    Args:
        W: (d, d) symmetric non-negative affinities (e.g. :func:`knn_affinity`).
        n_clusters: 2 <= n_clusters <= d.
        q: (d,) positive density weights (e.g. receptive-field radius ** 0.5), None for 1.
        w: degree exponent (>= 0); q = 1, w = 1 is normalised spectral clustering.
        drop_first: drop the first eigenvector.
        seed: start vector of eigsh and restarts of the discretisation.

    Returns:
        (d,) int64 labels on W's device, contiguous in ``[0, n_found)``, numbered by first
        appearance; fewer than ``n_clusters`` labels are used when the discretisation
        leaves a cluster empty.

    Raises:
        ValueError: as :func:`density_adjusted_laplacian`; n_clusters out of range.
    """
    Wt = _check_W(W)
    d = Wt.shape[0]
    n_clusters = check_int(n_clusters, "n_clusters", 2, d)
    w = check_range(w, "w", 0)
    qq = _check_q(q, d, Wt)
    gen = resolve_seed(seed)
    Wn = Wt.detach().cpu().double().numpy().copy()
    np.fill_diagonal(Wn, 0.0)
    qn = qq.detach().cpu().double().numpy()
    deg = Wn.sum(1)
    s = 1.0 / np.sqrt(qn * deg ** w)
    m = n_clusters + 1 if drop_first else n_clusters
    U = _smallest_eigenvectors(Wn, deg, s, min(m, d), gen)
    if drop_first:
        U = U[:, 1:]
    emb = U * s[:, None]
    labels = discretize(emb, seed=gen)
    _, first = np.unique(labels, return_index=True)
    remap = np.empty(labels.max() + 1, dtype=np.int64)
    remap[labels[np.sort(first)]] = np.arange(len(first))
    return torch.as_tensor(remap[labels], device=Wt.device)


def _smallest_eigenvectors(Wn: np.ndarray, deg: np.ndarray, s: np.ndarray, m: int,
                           gen: torch.Generator) -> np.ndarray:
    """(d, m) eigenvectors of ``diag(s) (D - W) diag(s)`` with the m smallest eigenvalues,
    in ascending order: dense below 65 nodes, shift-invert ``eigsh`` above."""
    import scipy.linalg
    import scipy.sparse
    import scipy.sparse.linalg

    d = len(Wn)
    if m >= d - 1 or d <= 64:
        L = s[:, None] * (np.diag(deg) - Wn) * s[None, :]
        _, U = scipy.linalg.eigh(L, subset_by_index=[0, m - 1])
    else:
        Ws = scipy.sparse.csr_matrix(Wn)
        L = scipy.sparse.diags(s) @ (scipy.sparse.diags(deg) - Ws) @ scipy.sparse.diags(s)
        v0 = torch.rand(d, generator=gen, dtype=torch.float64).numpy() + 0.5
        # shift-invert about a point just below 0: the eigenvalues nearest it are the smallest
        _, U = scipy.sparse.linalg.eigsh(L.tocsc(), k=m, sigma=-1e-3, which="LM", v0=v0)
    return U[:, np.argsort(np.einsum("ij,ij->j", U, L @ U))]


@checked
def groups_from_labels(labels: ArrayLike) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded index groups of a labelling: the tokens' pixel lists.

    Args:
        labels: (d,) int64 cluster of each dimension, values in ``[0, G)``, all used.

    Returns:
        ``groups`` (G, m) int64 dimension indices (ascending within a group), padded with
        -1 to the largest group size m; ``pad_mask`` (G, m) bool, True at padding.
    """
    lab = as_tensor(labels, "labels", ndim=1)
    if lab.is_floating_point() or lab.dtype == torch.bool:
        raise TypeError(f"labels must be integers, got {lab.dtype}")
    lab = lab.long()
    if int(lab.min()) < 0:
        raise ValueError("labels must be >= 0")
    G = int(lab.max()) + 1
    sizes = torch.bincount(lab, minlength=G)
    if bool((sizes == 0).any()):
        raise ValueError(f"labels must use every value in [0, {G}); "
                         f"{int((sizes == 0).sum())} are empty")
    order = torch.argsort(lab, stable=True)
    starts = torch.cumsum(sizes, 0) - sizes
    m = int(sizes.max())
    slot = torch.arange(len(lab), device=lab.device) - starts[lab[order]]
    groups = torch.full((G, m), -1, dtype=torch.long, device=lab.device)
    groups[lab[order], slot] = order
    return groups, groups < 0


@checked
def group_tokens(X: ArrayLike, groups: ArrayLike) -> torch.Tensor:
    """Gather the columns of ``X`` into padded tokens: ``(n, d) -> (n, G, m)``, zero at the
    padding (index -1) of ``groups`` (G, m)."""
    x = as_tensor(X, "X", ndim=2)
    g = as_tensor(groups, "groups", ndim=2, dtype=torch.int64)
    if int(g.max()) >= x.shape[1]:
        raise ValueError(f"groups index column {int(g.max())} but X has {x.shape[1]} columns")
    pad = g < 0
    tok = x[:, g.clamp(min=0).to(x.device)]
    return tok.masked_fill(pad.to(x.device), 0.0)


@checked
class SelfOrganizingClusters(FittedIO, TransformerMixin, BaseEstimator):
    """Cluster the dimensions (columns) of data with no known topology into tokens.

    ``fit`` computes :func:`dependence` between columns, its :func:`knn_affinity` and
    :func:`spectral_clusters`; ``transform`` gathers each sample's columns into padded
    tokens. Usable as a scikit-learn preprocessing step (tabular data, genes): see
    ``flat=True``.

    Args:
        n_clusters: tokens wanted (2 <= n_clusters <= d).
        n_neighbors: k of the kNN graph (1 <= k < d).
        dependence: ``"corr"`` (|Pearson|) or ``"mi"`` (histogram mutual information).
        density: (d,) positive density weights q (e.g. receptive-field radius ** 0.5) or None.
        w: degree exponent of the density-adjusted Laplacian.
        bins: bins per column for ``"mi"``.
        drop_first: the official repository's drop-the-first-eigenvector recipe.
        flat: ``transform`` returns (n, G·m) instead of (n, G, m) (for sklearn pipelines).
        seed: eigsh start vector and discretisation restarts.

    Constant columns (every MNIST-like image set has blank border pixels) have no defined
    dependence: ``fit`` drops them with a warning naming them, labels them -1 and leaves them
    out of every token.

    Attributes:
        affinity_: (d', d') kNN graph of the d' non-constant columns. labels_: (d,) int64
        numpy array, the cluster per column, -1 for a dropped constant column.
        dropped_columns_: (c,) int64 indices of the dropped columns. groups_: (G, m) int64
        column indices, -1 padded. pad_mask_: (G, m) bool, True at padding. n_clusters_: G,
        clusters found. n_features_in_: d.

    Examples:
        >>> import torch
        >>> from iclr25.datasets.views import digit_images, jitter, permute_features
        >>> imgs = jitter(digit_images(16, 0).X_train, 2, 1, seed=0).reshape(-1, 256)
        >>> Xp, perm = permute_features(imgs, seed=0)
        >>> soc = SelfOrganizingClusters(n_clusters=16).fit(Xp)
        >>> soc.transform(Xp).shape[:2]
        torch.Size([2694, 16])
    """

    def __init__(self, n_clusters: int = 16, *, n_neighbors: int = 10,
                 dependence: Dependence = "corr", density: Reals1D | None = None,
                 w: float = 1.0, bins: int = 16, drop_first: bool = False, flat: bool = False,
                 seed: int | torch.Generator | None = 0) -> None:
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.dependence = dependence
        self.density = density
        self.w = w
        self.bins = bins
        self.drop_first = drop_first
        self.flat = flat
        self.seed = seed

    def fit(self, X: ArrayLike, y: object = None) -> SelfOrganizingClusters:
        """Learn the clusters of X's non-constant columns. X: (n, d). Returns self."""
        x = _check_X(X)
        d = x.shape[1]
        const = (x == x[:1]).all(dim=0)
        keep = torch.nonzero(~const).flatten()
        dk = len(keep)
        check_int(self.n_clusters, "n_clusters", 2, d)
        check_int(self.n_neighbors, "n_neighbors", 1, d - 1)
        if not (self.n_clusters <= dk and self.n_neighbors < dk):
            raise ValueError(f"n_clusters ({self.n_clusters}) must be <= and n_neighbors "
                             f"({self.n_neighbors}) < the {dk} non-constant columns of X "
                             f"({d - dk} of {d} are constant)")
        check_choice(self.dependence, "dependence", Dependence)
        check_range(self.w, "w", 0)
        check_int(self.bins, "bins", 2)
        q = None if self.density is None else _check_q(self.density, d, x)[keep]
        self.dropped_columns_ = torch.nonzero(const).flatten()
        if dk < d:
            idx = self.dropped_columns_.tolist()
            shown = ", ".join(map(str, idx[:20])) + (", ..." if len(idx) > 20 else "")
            warnings.warn(f"X: dropped {d - dk} constant column(s) (no dependence is defined "
                          f"for them; labelled -1, in no token): {shown}", UserWarning,
                          stacklevel=user_stacklevel())
        S = dependence(x[:, keep], self.dependence, self.bins)
        W = knn_affinity(S, self.n_neighbors)
        self.affinity_ = W
        kept = spectral_clusters(W, self.n_clusters, q=q, w=self.w,
                                 drop_first=self.drop_first, seed=self.seed)
        labels = torch.full((d,), -1, dtype=kept.dtype, device=kept.device)
        labels[keep.to(kept.device)] = kept
        self.labels_ = labels.cpu().numpy()  # a fitted attribute, as scikit-learn's: numpy
        groups, self.pad_mask_ = groups_from_labels(kept)
        self.groups_ = torch.where(self.pad_mask_, -1, keep.to(groups.device)[groups.clamp(0)])
        self.n_clusters_ = int(self.groups_.shape[0])
        self.n_features_in_ = d
        return self

    def transform(self, X: ArrayLike) -> torch.Tensor | np.ndarray:
        """Padded tokens (n, G, m) of X (n, d), zero at padding; (n, G·m) when ``flat``: a
        tensor on X's device for a tensor X, a numpy array for a numpy array or a list."""
        if not hasattr(self, "groups_"):
            from sklearn.exceptions import NotFittedError
            raise NotFittedError("SelfOrganizingClusters is not fitted; call fit first")
        x = _check_X(X)
        if x.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {x.shape[1]} features, but this was fitted with "
                             f"{self.n_features_in_}")
        tok = group_tokens(x, self.groups_)
        return like_input(tok.reshape(len(tok), -1) if self.flat else tok, X)
