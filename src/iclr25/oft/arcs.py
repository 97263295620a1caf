"""Where the kernel lives: a dense (B, n, n) matrix, or values on an arc list.

Every iteration of OFT-Sinkhorn is a handful of kernel products (``K v``, ``Kᵀ u``), an
outer product with two node vectors (the capacity clip, absorption, the plan ``u K v``) and
row/column sums. :class:`DenseArcs` does them with (B, n, n) tensors (``bmm``): O(n²) per
iteration whatever the graph. :class:`SparseArcs` keeps one value per arc and does them by
gather and ``index_add_`` on the arc list: O(arcs) per iteration, on any device. Both give
the same fixed point (the tests compare them to 1e-10).

Which one :func:`~iclr25.oft.oft_sinkhorn` uses (``layout="auto"``): sparse for a torch
sparse ``C``, or when the arcs fill at most :data:`SPARSE_DENSITY` (2%) of the n(n-1)
off-diagonal pairs; dense otherwise; ``layout="dense"``/``"sparse"`` overrides. Per
iteration the arc list costs ~c_s·arcs and the dense layout ~c_d·n², so the crossover is a
density. Measured (``benchmarks/oft_sparse.py``, n = 1000, one CPU thread, load ~4): one
uncapacitated iteration on the arc list is 6.5x faster than dense at 0.3% density, 2.7x at
1%, even at 3% and 3x slower at 10%; with capacities the arc list stays faster up to at
least 10% (the dense clip builds n² temporaries). 2% sits below the uncapacitated crossover.

Node vectors are (B, n) in both layouts; "arc tensors" are (B, n, n) dense or (M,) sparse
(M = arcs of all instances together, instance-major, each instance's arcs in row-major order).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

SPARSE_DENSITY = 0.02  # auto: arc lists at or below this fraction of the n(n-1) node pairs


class DenseArcs:
    """Arc-tensor operations on (B, n, n) tensors; an arc is a finite off-diagonal cost."""

    sparse = False

    def __init__(self, C: torch.Tensor) -> None:
        self.B, self.n = C.shape[0], C.shape[-1]
        E = torch.isfinite(C)
        E.diagonal(dim1=-2, dim2=-1).fill_(False)
        self.E = E  # (B, n, n) bool
        self.Cz = torch.where(E, C, 0.0)  # costs, 0 off the arcs

    @classmethod
    def from_sparse(cls, sp: SparseArcs) -> DenseArcs:
        C = torch.full((sp.B, sp.n, sp.n), math.inf, dtype=sp.C.dtype, device=sp.C.device)
        C[sp.idx[0], sp.idx[1], sp.idx[2]] = sp.C
        return cls(C)

    def count(self) -> int:
        return int(self.E.sum())

    def per_arc(self, x: torch.Tensor) -> torch.Tensor:
        """A per-instance (B,) value, broadcastable against arc tensors."""
        return x.reshape(self.B, 1, 1)

    def batch_max(self, a: torch.Tensor) -> torch.Tensor:
        return a.amax(dim=(-2, -1))

    def batch_sum(self, a: torch.Tensor) -> torch.Tensor:
        return a.sum(dim=(-2, -1))

    def row_sums(self, a: torch.Tensor) -> torch.Tensor:
        return a.sum(-1)

    def col_sums(self, a: torch.Tensor) -> torch.Tensor:
        return a.sum(-2)

    def select(self, ok: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """Per instance: ``a`` where ``ok`` (B,) else ``b``."""
        return torch.where(ok.view(self.B, 1, 1), a, b)

    # -- kernels and products
    def kernel(self, f: torch.Tensor, g: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """``exp((f_i + g_j - C_ij) / eps)`` on the arcs, 0 elsewhere and on the diagonal."""
        K = torch.where(self.E, (f.unsqueeze(-1) + g.unsqueeze(-2) - self.Cz) / eps,
                        -math.inf).exp_()
        K.diagonal(dim1=-2, dim2=-1).zero_()
        return K

    def log_kernel(self, eps: torch.Tensor) -> torch.Tensor:
        """``-C / eps`` on the arcs, ``-inf`` elsewhere and on the diagonal."""
        logK = torch.where(self.E, -self.Cz / eps, -math.inf)
        logK.diagonal(dim1=-2, dim2=-1).fill_(-math.inf)
        return logK

    def potential_plan(self, p: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """``exp((p_i - p_j - C_ij) / eps)`` on the arcs (the dual's plan)."""
        z = torch.where(self.E, (p.unsqueeze(-1) - p.unsqueeze(-2) - self.Cz) / eps, -math.inf)
        return z.exp_()

    def mv(self, K: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``K v``."""
        return torch.bmm(K, v.unsqueeze(-1)).squeeze(-1)

    def tmv(self, K: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        """``Kᵀ u`` without forming ``Kᵀ``."""
        return torch.bmm(u.unsqueeze(1), K).squeeze(1)

    def outer(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``u_i v_j`` on the arcs."""
        return u.unsqueeze(-1) * v.unsqueeze(-2)

    def outer_div(self, x: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``x_ij / u_i / v_j``."""
        return x / u.unsqueeze(-1) / v.unsqueeze(-2)

    def plan(self, u: torch.Tensor, K: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``u_i K_ij v_j``."""
        return u.unsqueeze(-1) * K * v.unsqueeze(-2)

    def log_plan(self, f: torch.Tensor, logK: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """``exp(f_i + log K_ij + g_j)``."""
        return torch.exp(f.unsqueeze(-1) + logK + g.unsqueeze(-2))

    def log_clip(self, logK0: torch.Tensor, log_cap: torch.Tensor, f: torch.Tensor,
                 g: torch.Tensor, out: torch.Tensor) -> None:
        """``out = min(log K0, log cap - f_i - g_j)`` (the diagonal stays ``-inf``)."""
        torch.minimum(logK0, log_cap - f.unsqueeze(-1) - g.unsqueeze(-2), out=out)
        out.diagonal(dim1=-2, dim2=-1).fill_(-math.inf)

    def lse_rows(self, logK: torch.Tensor, lv: torch.Tensor, extra: torch.Tensor
                 ) -> torch.Tensor:
        """``log(K v + exp(extra))`` from ``log K`` and ``log v``."""
        return torch.logaddexp(torch.logsumexp(logK + lv.unsqueeze(1), dim=-1), extra)

    def lse_cols(self, logK: torch.Tensor, lu: torch.Tensor, extra: torch.Tensor
                 ) -> torch.Tensor:
        """``log(Kᵀ u + exp(extra))`` from ``log K`` and ``log u``."""
        return torch.logaddexp(torch.logsumexp(logK + lu.unsqueeze(-1), dim=-2), extra)

    def flow(self, P: torch.Tensor) -> torch.Tensor:
        """``relu(P - Pᵀ)``: the balance of ``P`` without 2-cycles."""
        return torch.relu(P - P.transpose(-1, -2))

    def cost(self, F: torch.Tensor) -> torch.Tensor:
        """(B,) ``<C, F>`` over the arcs."""
        return (F * self.Cz).sum(dim=(-2, -1))

    def subset(self, keep: torch.Tensor) -> SparseArcs:
        """The arcs where ``keep`` (B, n, n) as a list whose Laplacian systems are solved by
        Cholesky (n is small enough for the dense layout, too small for CG to pay)."""
        sub = SparseArcs(self.B, self.n, (self.E & keep).nonzero().T.contiguous(),
                         self.Cz[self.E & keep])
        sub.direct = True
        return sub

    # -- the arcs as data
    def gather(self, t: torch.Tensor) -> torch.Tensor:
        """A (B, n, n) tensor in this layout (itself)."""
        return t

    def instance_arcs(self, keep: torch.Tensor | None = None
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per instance, the (tails, heads) of the arcs (and of ``keep``, if given)."""
        E = self.E if keep is None else self.E & keep
        En = E.cpu().numpy()
        return [np.nonzero(En[b]) for b in range(self.B)]


class SparseArcs:
    """Arc-tensor operations on an arc list: (M,) values, gathers and ``index_add_``."""

    sparse = True
    direct = False  # Laplacian systems by dense Cholesky instead of conjugate gradients

    def __init__(self, B: int, n: int, idx: torch.Tensor, C: torch.Tensor) -> None:
        """``idx`` (3, M) long: instance, tail, head of each arc, sorted; ``C`` (M,) costs."""
        self.B, self.n = B, n
        self.idx = idx
        self.batch = idx[0]
        self.rows = idx[0] * n + idx[1]  # flat node ids into (B·n,)
        self.cols = idx[0] * n + idx[2]
        self.C = self.Cz = C

    @functools.cached_property
    def rev(self) -> torch.Tensor:
        """(M,) index of each arc's reverse arc, -1 if none (on first use: only
        :meth:`flow` needs it, not Newton's active subsets)."""
        n = self.n
        key = self.rows * n + self.idx[2]
        rkey = self.cols * n + self.idx[1]
        pos = torch.searchsorted(key, rkey).clamp_max(max(key.numel() - 1, 0))
        found = key[pos] == rkey if key.numel() else torch.zeros(0, dtype=torch.bool)
        return torch.where(found, pos, -1)

    @classmethod
    def from_dense(cls, dense: DenseArcs) -> SparseArcs:
        idx = dense.E.nonzero().T.contiguous()
        return cls(dense.B, dense.n, idx, dense.Cz[dense.E])

    def count(self) -> int:
        return int(self.C.numel())

    def subset(self, keep: torch.Tensor) -> SparseArcs:
        """The arcs where ``keep`` (M,) as a list of their own."""
        sub = SparseArcs(self.B, self.n, self.idx[:, keep].contiguous(), self.C[keep])
        sub.direct = self.direct
        return sub

    def _nodes(self, vals: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(self.B * self.n, dtype=vals.dtype, device=vals.device)
        return out.index_add_(0, at, vals).view(self.B, self.n)

    def _seg(self, vals: torch.Tensor, reduce: str) -> torch.Tensor:
        if self.B == 1 and reduce == "sum":  # one instance: no scatter
            return vals.sum().reshape(1)
        out = torch.zeros(self.B, dtype=vals.dtype, device=vals.device)
        if reduce == "sum":
            return out.index_add_(0, self.batch, vals)
        return out.scatter_reduce_(0, self.batch, vals, reduce, include_self=True)

    def per_arc(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(self.B).index_select(0, self.batch)

    def batch_max(self, a: torch.Tensor) -> torch.Tensor:
        """(B,) largest value per instance (0 for an instance without arcs; values >= 0)."""
        return self._seg(a, "amax")

    def batch_sum(self, a: torch.Tensor) -> torch.Tensor:
        return self._seg(a, "sum")

    def row_sums(self, a: torch.Tensor) -> torch.Tensor:
        return self._nodes(a, self.rows)

    def _both_ends(self) -> torch.Tensor:
        """(2M,) the tails' then the heads' flat node ids (built on first use)."""
        if not hasattr(self, "_ends"):
            self._ends = torch.cat([self.rows, self.cols])
        return self._ends

    def net_out(self, a: torch.Tensor) -> torch.Tensor:
        """``row_sums(a) - col_sums(a)``: the tails' sums, then the heads' subtracted in the
        same order (the sums of one scatter over ``[a, -a]``, without the copy)."""
        out = torch.zeros(self.B * self.n, dtype=a.dtype, device=a.device)
        out.index_add_(0, self.rows, a)
        return out.index_add_(0, self.cols, a, alpha=-1).view(self.B, self.n)

    def difference(self, p: torch.Tensor) -> torch.Tensor:
        """``p_i - p_j`` on the arcs ``(i, j)`` in one gather."""
        tails, heads = p.reshape(-1).index_select(0, self._both_ends()).view(2, -1)
        return tails - heads

    def col_sums(self, a: torch.Tensor) -> torch.Tensor:
        return self._nodes(a, self.cols)

    def select(self, ok: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.where(ok.index_select(0, self.batch), a, b)

    # index_select, not x[idx]: the same gather, ~3x faster on CPU (47 vs 14 µs at 12k arcs)
    def _at_rows(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(-1).index_select(0, self.rows)

    def _at_cols(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(-1).index_select(0, self.cols)

    # -- kernels and products
    def kernel(self, f: torch.Tensor, g: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        return ((self._at_rows(f) + self._at_cols(g) - self.C) / eps).exp_()

    def log_kernel(self, eps: torch.Tensor) -> torch.Tensor:
        return -self.C / eps

    def potential_plan(self, p: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        return ((self._at_rows(p) - self._at_cols(p) - self.C) / eps).exp_()

    def mv(self, K: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self._nodes(K * self._at_cols(v), self.rows)

    def tmv(self, K: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        return self._nodes(K * self._at_rows(u), self.cols)

    def outer(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self._at_rows(u) * self._at_cols(v)

    def outer_div(self, x: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return x / self._at_rows(u) / self._at_cols(v)

    def plan(self, u: torch.Tensor, K: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self._at_rows(u) * K * self._at_cols(v)

    def log_plan(self, f: torch.Tensor, logK: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        return torch.exp(self._at_rows(f) + logK + self._at_cols(g))

    def log_clip(self, logK0: torch.Tensor, log_cap: torch.Tensor, f: torch.Tensor,
                 g: torch.Tensor, out: torch.Tensor) -> None:
        torch.minimum(logK0, log_cap - self._at_rows(f) - self._at_cols(g), out=out)

    def _lse(self, vals: torch.Tensor, at: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
        """``log(Σ_{arcs at node} exp(vals) + exp(extra))`` per node, stably."""
        top = extra.reshape(-1).clone().scatter_reduce_(0, at, vals, "amax", include_self=True)
        top = torch.where(torch.isfinite(top), top, 0.0)
        acc = torch.exp(extra.reshape(-1) - top).index_add_(0, at, torch.exp(vals - top[at]))
        return (top + torch.log(acc)).view(self.B, self.n)

    def lse_rows(self, logK: torch.Tensor, lv: torch.Tensor, extra: torch.Tensor
                 ) -> torch.Tensor:
        return self._lse(logK + self._at_cols(lv), self.rows, extra)

    def lse_cols(self, logK: torch.Tensor, lu: torch.Tensor, extra: torch.Tensor
                 ) -> torch.Tensor:
        return self._lse(logK + self._at_rows(lu), self.cols, extra)

    def flow(self, P: torch.Tensor) -> torch.Tensor:
        back = torch.where(self.rev >= 0, P[self.rev.clamp_min(0)], 0.0)
        return torch.relu(P - back)

    def cost(self, F: torch.Tensor) -> torch.Tensor:
        return self._seg(F * self.C, "sum")

    def laplacian(self, P: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``L x`` for ``L`` the Laplacian of ``P + Pᵀ``: O(arcs)."""
        diff = P * (self._at_rows(x) - self._at_cols(x))
        return self._nodes(diff, self.rows) - self._nodes(diff, self.cols)

    def laplacian_solve(self, P: torch.Tensor, rhs: torch.Tensor, ridge: float,
                        rtol: torch.Tensor | float = 0.0, floor: torch.Tensor | float = 0.0
                        ) -> torch.Tensor:
        """``(L + max(ridge·max deg, floor)·I) δ = rhs``, ``L`` the Laplacian of ``P + Pᵀ``
        (``floor`` (B,) or scalar): by
        Jacobi-preconditioned conjugate gradients (batched; each step one O(arcs) product),
        to relative residual ``rtol`` (B,) (at least :data:`CG_TOL`), an inexact Newton
        direction which the line search accepts or shortens like an exact one; or exactly
        by batched Cholesky (O(n³)) when :attr:`direct`."""
        if self.direct:
            return self._cholesky_solve(P, rhs, ridge, floor)
        deg = self._nodes(P, self.rows) + self._nodes(P, self.cols)
        shift = _shift(deg, ridge, floor)
        diag = deg + shift
        x = torch.zeros_like(rhs)
        r = rhs.clone()
        z = r / diag
        p = z.clone()
        rz = (r * z).sum(-1)
        stop = torch.clamp(torch.as_tensor(rtol, dtype=rhs.dtype, device=rhs.device),
                           min=CG_TOL) * rhs.norm(dim=-1)
        for _ in range(min(CG_MAX_STEPS, 4 * self.n)):
            live = r.norm(dim=-1) > stop
            if not bool(live.any()):
                break
            Ap = self.laplacian(P, p) + shift * p
            pAp = (p * Ap).sum(-1)
            alpha = torch.where(live & (pAp > 0), rz / pAp.clamp_min(1e-300), 0.0).unsqueeze(-1)
            x = x + alpha * p
            r = r - alpha * Ap
            z = r / diag
            rz_new = (r * z).sum(-1)
            p = z + (rz_new / rz.clamp_min(1e-300)).unsqueeze(-1) * p
            rz = rz_new
        return x

    def _cholesky_solve(self, P: torch.Tensor, rhs: torch.Tensor, ridge: float,
                        floor: torch.Tensor | float) -> torch.Tensor:
        B, n = rhs.shape
        W = self.to_dense(P)
        W = W + W.transpose(-1, -2)
        deg = W.sum(-1)
        shift = _shift(deg, ridge, floor)
        L = torch.diag_embed(deg + shift) - W
        Lc, info = torch.linalg.cholesky_ex(L)
        if bool((info != 0).any()):  # numerically indefinite: LU instead
            return torch.linalg.solve(L, rhs)
        return torch.cholesky_solve(rhs.unsqueeze(-1), Lc).squeeze(-1)

    # -- the arcs as data
    def gather(self, t: torch.Tensor) -> torch.Tensor:
        """A (B, n, n) (broadcast) tensor's values on the arcs."""
        return t[self.idx[0], self.idx[1], self.idx[2]]

    def instance_arcs(self, keep: torch.Tensor | None = None
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
        idx = self.idx if keep is None else self.idx[:, keep]
        b, i, j = (t.cpu().numpy() for t in idx)
        bounds = np.searchsorted(b, np.arange(self.B + 1))
        return [(i[lo:hi], j[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]

    def to_sparse(self, values: torch.Tensor, batched: bool) -> torch.Tensor:
        """A coalesced torch sparse COO tensor of arc values, (B, n, n) or (n, n)."""
        if batched:
            return coo(self.idx, values, (self.B, self.n, self.n))
        return coo(self.idx[1:], values, (self.n, self.n))

    def to_dense(self, values: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(self.B, self.n, self.n, dtype=values.dtype, device=values.device)
        out[self.idx[0], self.idx[1], self.idx[2]] = values
        return out


def _shift(deg: torch.Tensor, ridge: float, floor: torch.Tensor | float) -> torch.Tensor:
    """(B, 1) diagonal shift of a Laplacian system: ``max(ridge·max deg, floor)``."""
    low = torch.as_tensor(floor, dtype=deg.dtype, device=deg.device).reshape(-1, 1)
    return torch.clamp(ridge * deg.amax(-1, keepdim=True), min=low)


def coo(idx: torch.Tensor, values: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """A coalesced torch sparse COO tensor from indices built here (no invariant checks)."""
    return torch.sparse_coo_tensor(idx, values, shape, check_invariants=False).coalesce()


CG_TOL = 1e-12  # relative residual that ends a conjugate-gradient solve
CG_MAX_STEPS = 5000  # and the most steps it takes (at most 4n)

Arcs = DenseArcs | SparseArcs


def use_sparse(layout: str, C_is_sparse: bool, arcs: int, pairs: int) -> bool:
    """The layout rule: explicit ``"dense"``/``"sparse"``, else sparse for a sparse ``C`` or
    arcs at most :data:`SPARSE_DENSITY` of the node pairs."""
    if layout == "auto":
        return C_is_sparse or arcs <= SPARSE_DENSITY * pairs
    return layout == "sparse"
