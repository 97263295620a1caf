"""Client objectives for min_x (1/n) Σ_i f_i(x) + g(x) (LoCoDL §1, problem (1)).

Client i holds rows A_i (m_i, d) with targets b_i. Its data term is scaled by n·m_i/N, so
(1/n) Σ_i f_i is the mean loss over all N rows; f_i and the shared g each carry (α/4)‖x‖², so
the total is the mean loss + (α/2)‖x‖² and g is strongly convex, as LoCoDL's theory needs.
μ = α/2 is the strong convexity of every f_i and of g; L is the largest client smoothness.

``X`` may be a ``scipy.sparse`` matrix (a LibSVM file's): the rows are then kept as COO
triplets grouped by client and every gradient costs O(nnz + n·d), never a dense (N, d) copy.
"""

from __future__ import annotations

import numpy as np
import torch

from iclr25._checks import ArrayLike, ArrayOrSparse, as_tensor, check_range
from iclr25._contract import checked


def is_sparse(X: ArrayOrSparse) -> bool:
    """True for a scipy.sparse matrix/array or a non-strided (sparse) torch tensor."""
    import scipy.sparse

    return scipy.sparse.issparse(X) or (isinstance(X, torch.Tensor)
                                        and X.layout != torch.strided)


def check_sparse(X: ArrayOrSparse, name: str = "X"):
    """A 2-D, real, finite, non-empty scipy CSR copy of the sparse ``X`` (float32/64)."""
    import scipy.sparse

    if isinstance(X, torch.Tensor):
        X = X.to_sparse_coo().coalesce()
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got {X.ndim}-D")
        i, v = X.indices().cpu().numpy(), X.values().cpu().numpy()
        X = scipy.sparse.coo_array((v, (i[0], i[1])), shape=tuple(X.shape))
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must not be empty, got shape {X.shape}")
    if np.iscomplexobj(X.data):
        raise TypeError(f"{name} must be real, got complex dtype {X.dtype}")
    if X.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be numeric, got dtype {X.dtype}")
    A = scipy.sparse.csr_array(X, dtype=np.float32 if X.dtype == np.float32 else np.float64)
    A.sum_duplicates()
    if not np.isfinite(A.data).all():
        raise ValueError(f"{name} contains {int((~np.isfinite(A.data)).sum())} NaN or "
                         f"infinite value(s)")
    return A


def check_magnitude(X: ArrayOrSparse, name: str = "X") -> None:
    """Refuse a finite ``X`` whose squared sums overflow the dtype they are taken in (XᵀX,
    L: inf; float64's eigendecomposition fails with a LinAlgError, float32's step size
    underflows): float32 for a float32 ``X``, else float64 (L's eigendecomposition casts a
    float16 or integer ``X`` to it); numpy, scipy.sparse or torch."""
    single = X.dtype == (torch.float32 if isinstance(X.dtype, torch.dtype) else np.float32)
    info = np.finfo(np.float32 if single else np.float64)
    top = float(max(X.max(), -X.min()))   # no |X| copy
    if not top * top * X.shape[0] * X.shape[1] < float(info.max):
        raise ValueError(f"{name}'s values reach {top:.3g}: their squared sums overflow "
                         f"{info.dtype}; divide {name} by a power of ten first")


def _check_clients(clients: ArrayLike, N: int, device: torch.device) -> torch.Tensor:
    c = as_tensor(clients, "client_ids", ndim=1)
    if c.is_floating_point() or c.dtype == torch.bool:
        if c.is_floating_point() and bool((c == c.round()).all()):
            c = c.to(torch.int64)
        else:
            raise TypeError(f"client_ids must hold integers, got {c.dtype}")
    if len(c) != N:
        raise ValueError(f"client_ids must have one entry per row of X ({N}), got {len(c)}")
    return c.to(device=device, dtype=torch.int64)


def _sq_norm2(A) -> float:
    """‖A‖₂² of a scipy sparse block: exact eigvalsh of the smaller Gram, else svds."""
    if min(A.shape) <= 2048:
        G = (A @ A.T if A.shape[0] <= A.shape[1] else A.T @ A).toarray()
        return float(np.linalg.eigvalsh(G.astype(np.float64))[-1])
    from scipy.sparse.linalg import svds

    return float(svds(A.astype(np.float64), k=1, return_singular_vectors=False)[0]) ** 2


def _gram(A, w: np.ndarray) -> np.ndarray:
    """Aᵀ diag(w) A as a dense (d, d) array, for dense or scipy sparse A."""
    if isinstance(A, np.ndarray):
        return (A * w[:, None]).T @ A
    import scipy.sparse

    return (A.T @ (scipy.sparse.diags_array(w) @ A)).toarray()


class _ClientObjective:
    """Shared part: data split by client, scaling, ∇g, the subset a process holds."""

    kind = ""

    sparse = False

    def __init__(self, X: ArrayOrSparse, y: ArrayLike, clients: ArrayLike, alpha: float
                 ) -> None:
        if is_sparse(X):
            self._init_sparse(check_sparse(X), y, clients, alpha)
            return
        X = as_tensor(X, "X", ndim=2)
        if not X.is_floating_point():
            X = X.to(torch.get_default_dtype())
        check_magnitude(X)
        self.alpha = check_range(alpha, "alpha", 0.0, low_open=True)
        N, self.d = X.shape
        b = self._targets(y, N, X)
        c = _check_clients(clients, N, X.device)
        labels, c = torch.unique(c, return_inverse=True)
        if len(labels) < 2:
            raise ValueError(f"client_ids must name at least 2 clients, got {len(labels)}")
        counts = torch.bincount(c, minlength=len(labels))
        if bool((counts == 0).any()):  # cannot happen after unique; kept for clarity
            raise ValueError("client_ids: every client must hold at least one row")
        n, mmax = len(labels), int(counts.max())
        # rows regrouped as zero-padded client blocks (n, m_max, d): a padded row has a = 0
        # and b = 0, so it adds nothing to any gradient (logistic: b = 0; ridge: z − b = 0)
        order = torch.argsort(c, stable=True)
        start = torch.cumsum(counts, 0) - counts
        slot = torch.arange(N, device=X.device) - start[c[order]]
        self.Ab = X.new_zeros(n, mmax, self.d)
        self.Ab[c[order], slot] = X[order]
        self.bb = X.new_zeros(n, mmax)
        self.bb[c[order], slot] = b[order]
        self.mask = torch.zeros(n, mmax, dtype=torch.bool, device=X.device)
        self.mask[c[order], slot] = True
        self.n_clients = n
        self.n_samples = N
        self.client_labels = labels
        self.counts = counts
        self.lo, self.hi = 0, n
        self._eig: float | None = None   # _max_block_eig, read by L and data_scale

    def _init_sparse(self, A, y: ArrayLike, clients: ArrayLike, alpha: float) -> None:
        """Rows as COO triplets sorted by client; per-row targets; no dense copy of A."""
        self.sparse = True
        check_magnitude(A)
        self.alpha = check_range(alpha, "alpha", 0.0, low_open=True)
        N, self.d = A.shape
        dt = torch.float32 if A.dtype == np.float32 else torch.float64
        b = self._targets(y, N, torch.empty(0, dtype=dt))
        c = _check_clients(clients, N, torch.device("cpu"))
        labels, c = torch.unique(c, return_inverse=True)
        if len(labels) < 2:
            raise ValueError(f"client_ids must name at least 2 clients, got {len(labels)}")
        order = torch.argsort(c, stable=True)
        self._A = A[order.numpy()]           # scipy CSR, rows grouped by client
        self._A.sort_indices()
        self.b = b[order]
        self.counts = torch.bincount(c, minlength=len(labels))
        self.row_start = torch.cat([self.counts.new_zeros(1), torch.cumsum(self.counts, 0)])
        self._triplets()
        self.n_clients, self.n_samples = len(labels), N
        self.client_labels = labels
        self.lo, self.hi = 0, len(labels)
        self._eig = None

    def _triplets(self) -> None:
        """rows, cols, vals and the local client of each stored entry, from ``self._A``."""
        A = self._A
        indptr = torch.as_tensor(A.indptr.astype(np.int64))
        rows = torch.repeat_interleave(torch.arange(A.shape[0]), indptr.diff())
        self.rows, self.cols = rows, torch.as_tensor(A.indices.astype(np.int64))
        self.vals = torch.as_tensor(A.data)
        row_client = torch.repeat_interleave(torch.arange(len(self.counts)), self.counts)
        self.nz_client = row_client[rows]

    # --- the part every process shares ----------------------------------------------------
    @property
    def dtype(self) -> torch.dtype:
        return self.vals.dtype if self.sparse else self.Ab.dtype

    @property
    def device(self) -> torch.device:
        return self.vals.device if self.sparse else self.Ab.device

    @property
    def mu(self) -> float:
        """Strong convexity of each f_i and of g: α/2."""
        return self.alpha / 2

    @property
    def L(self) -> float:
        """max_i smoothness of f_i (≥ that of g, which is α/2)."""
        return self._curvature_scale() * self._max_block_eig() + self.mu

    @property
    def data_scale(self) -> float:
        """c = √(max_i n λ_max(A_iᵀA_i)/N) (n clients, N rows), the client blocks' magnitude
        in :attr:`L` (L = curvature·c² + μ); dividing X by c makes L independent of X's
        units. N/n is the mean client's rows: equal clients give λ_max(A_iᵀA_i/N_i)."""
        return self._max_block_eig() ** 0.5

    def _max_block_eig(self) -> float:
        """max_i n λ_max(A_iᵀA_i)/N, computed once (an eigendecomposition per client)."""
        if self._eig is not None:
            return self._eig
        if self.sparse:
            top = max(_sq_norm2(self._A[int(s):int(e)])
                      for s, e in zip(self.row_start[:-1], self.row_start[1:], strict=True))
        else:
            A = self.Ab.detach().to("cpu", torch.float64)
            G = A.mT @ A if A.shape[1] >= A.shape[2] else A @ A.mT   # same nonzero spectrum
            top = float(torch.linalg.eigvalsh(G)[:, -1].max())
        self._eig = top * self.n_clients / self.n_samples
        return self._eig

    def _rows(self):
        """(A, b) of every row as float64 numpy (A a scipy CSR when X was sparse)."""
        if self.sparse:
            return self._A.astype(np.float64), self.b.double().numpy()
        return (self.Ab[self.mask].detach().cpu().double().numpy(),
                self.bb[self.mask].detach().cpu().double().numpy())

    def grad_g(self, y: torch.Tensor) -> torch.Tensor:
        """∇g(y) = (α/2) y for the shared term g = (α/4)‖y‖²."""
        return self.mu * y

    def subset(self, lo: int, hi: int) -> _ClientObjective:
        """The same objective restricted to clients lo..hi−1 (what one process computes)."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.lo, out.hi = self.lo + lo, self.lo + hi
        if self.sparse:
            r0, r1 = int(self.row_start[lo]), int(self.row_start[hi])
            out._A, out.b, out.counts = self._A[r0:r1], self.b[r0:r1], self.counts[lo:hi]
            out.row_start = self.row_start[lo:hi + 1] - r0
            out._triplets()
            return out
        out.Ab, out.bb, out.mask = self.Ab[lo:hi], self.bb[lo:hi], self.mask[lo:hi]
        return out

    def grad(self, Xc: torch.Tensor) -> torch.Tensor:
        """∇f_i(x_i) for every client of this block: (m, d) -> (m, d), m = hi − lo."""
        m = self.hi - self.lo
        if Xc.shape != (m, self.d):
            raise ValueError(f"Xc must have shape ({m}, {self.d}), got {tuple(Xc.shape)}")
        if self.sparse:  # gather, multiply, scatter over the stored entries only
            z = torch.zeros(len(self.b), dtype=Xc.dtype, device=Xc.device).index_add_(
                0, self.rows, self.vals * Xc[self.nz_client, self.cols])
            w = self._dloss(z, self.b) * (self.n_clients / self.n_samples)
            G = torch.zeros(m * self.d, dtype=Xc.dtype, device=Xc.device).index_add_(
                0, self.nz_client * self.d + self.cols, self.vals * w[self.rows])
            return G.view(m, self.d) + self.mu * Xc
        z = torch.bmm(self.Ab, Xc[:, :, None])[..., 0]            # (m, m_max) margins
        w = self._dloss(z, self.bb) * (self.n_clients / self.n_samples)
        return torch.bmm(w[:, None, :], self.Ab)[:, 0] + self.mu * Xc

    def value(self, x: torch.Tensor) -> float:
        """The global objective (1/n)Σf_i(x) + g(x) = mean loss + (α/2)‖x‖² at one x (d,)."""
        if self.sparse:
            z = torch.zeros(len(self.b), dtype=x.dtype).index_add_(
                0, self.rows, self.vals * x[self.cols])
            loss = self._loss(z, self.b).sum() / self.n_samples
            return float(loss + self.alpha / 2 * (x @ x))
        z = self.Ab @ x
        loss = self._loss(z, self.bb)[self.mask].sum() / self.n_samples
        return float(loss + self.alpha / 2 * (x @ x))


@checked
class ClientLogistic(_ClientObjective):
    """Logistic loss split over clients: mean_s log(1 + exp(−b_s a_sᵀx)) + (α/2)‖x‖².

    Args:
        X: (N, d) features. y: (N,) two classes (any labels; the larger is +1).
        clients: (N,) client id of each row (any integers; each id one client, ≥ 2 clients).
        alpha: ℓ2 weight α > 0; equals ``LogisticRegression(C=1/(α N), fit_intercept=False)``.

    Raises:
        ValueError/TypeError: naming X, y, client_ids or alpha.
    """

    kind = "logistic"

    def _targets(self, y: ArrayLike, N: int, X: torch.Tensor) -> torch.Tensor:
        t = as_tensor(y, "y", ndim=1)
        if len(t) != N:
            raise ValueError(f"y must have one label per row of X ({N}), got {len(t)}")
        classes = torch.unique(t)
        if len(classes) != 2:
            raise ValueError(f"y must hold exactly two classes, got {len(classes)}")
        self.classes = classes
        return torch.where(t == classes[1], 1.0, -1.0).to(device=X.device, dtype=X.dtype)

    def _curvature_scale(self) -> float:
        return 0.25

    def _dloss(self, z: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return -b * torch.sigmoid(-b * z)

    def _loss(self, z: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(-b * z)

    def solve(self) -> torch.Tensor:
        """x* by L-BFGS-B, then Newton steps to machine precision; (d,) on X's device."""
        from scipy.optimize import minimize

        A, b = self._rows()
        N, a = len(b), self.alpha

        def fg(x):
            z = b * (A @ x)
            f = np.logaddexp(0, -z).mean() + a / 2 * x @ x
            s = -b * 0.5 * (1 - np.tanh(z / 2))    # −b σ(−z), stable
            return f, A.T @ s / N + a * x

        x = minimize(fg, np.zeros(A.shape[1]), jac=True, method="L-BFGS-B",
                     options={"maxiter": 10_000, "gtol": 1e-12, "ftol": 1e-15}).x
        # Newton polish (the loss is smooth and strongly convex), when a d x d Hessian fits
        for _ in range(20 if A.shape[1] <= 4096 else 0):
            z = b * (A @ x)
            sg = 0.5 * (1 - np.tanh(z / 2))
            g = A.T @ (-b * sg) / N + a * x
            H = _gram(A, sg * (1 - sg)) / N + a * np.eye(A.shape[1])
            step = np.linalg.solve(H, g)
            x = x - step
            if np.linalg.norm(step) <= 1e-15 * max(1.0, np.linalg.norm(x)):
                break
        return torch.as_tensor(x, dtype=self.dtype, device=self.device)


@checked
class ClientRidge(_ClientObjective):
    """Least squares split over clients: mean_s ½(a_sᵀx − b_s)² + (α/2)‖x‖².

    Same arguments as :class:`ClientLogistic`, with real targets ``y``; the optimum is
    x* = (AᵀA + αN I)⁻¹ Aᵀb, i.e. ``Ridge(alpha=α N, fit_intercept=False)``.
    """

    kind = "ridge"

    def _targets(self, y: ArrayLike, N: int, X: torch.Tensor) -> torch.Tensor:
        t = as_tensor(y, "y", ndim=1)
        if len(t) != N:
            raise ValueError(f"y must have one target per row of X ({N}), got {len(t)}")
        return t.to(device=X.device, dtype=X.dtype)

    def _curvature_scale(self) -> float:
        return 1.0

    def _dloss(self, z: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return z - b

    def _loss(self, z: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return 0.5 * (z - b) ** 2

    def solve(self) -> torch.Tensor:
        """x* in closed form; (d,) on X's device."""
        if self.sparse:
            import scipy.sparse
            from scipy.sparse.linalg import spsolve

            A, b = self._rows()
            H = A.T @ A + self.alpha * self.n_samples * scipy.sparse.eye_array(self.d)
            return torch.as_tensor(spsolve(H.tocsc(), A.T @ b), dtype=self.dtype)
        A, b = self.Ab[self.mask].double(), self.bb[self.mask].double()
        H = A.T @ A + self.alpha * self.n_samples * torch.eye(self.d, dtype=A.dtype,
                                                               device=A.device)
        return torch.linalg.solve(H, A.T @ b).to(self.dtype)
