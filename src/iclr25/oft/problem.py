"""A min-cost flow problem checked and laid out for the iterations: :class:`_Problem`.

Input checks name the argument and run before any work; a problem comes out float64 and
batched (B instances), with its arcs in a dense or sparse layout (:mod:`iclr25.oft.arcs`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from iclr25.oft.arcs import Arcs, DenseArcs, SparseArcs, coo
from iclr25.oft.capacity import _real, edge_capacity, node_capacity_of


@dataclass
class _Checked:
    """A validated problem: float64 supplies, arcs with their capacities, and how the input
    came (batched or not, sparse or dense, its float dtype)."""

    s: torch.Tensor  # (B, n) supplies, balanced exactly
    arcs: Arcs
    cap: torch.Tensor | None  # edge capacities in the arcs' layout
    ncap: torch.Tensor | None  # (B, n) node throughput bounds
    batched: bool
    sparse_input: bool  # C came as a torch sparse tensor: results are sparse too
    out_dtype: torch.dtype


def _check_problem(s: object, C: object, capacity: object, node_capacity: object,
                   ) -> _Checked:
    """Validate a (batched) flow problem, dense (``inf`` = no arc) or torch sparse ``C``."""
    sparse_in = isinstance(C, torch.Tensor) and C.is_sparse
    C_t = _real(C, "C")
    s_t = _real(s, "s")
    shape = tuple(C.shape) if sparse_in else tuple(C_t.shape)
    if len(shape) not in (2, 3) or shape[-1] != shape[-2]:
        raise ValueError(f"C must be (n, n) or (B, n, n), got shape {shape}")
    n = shape[-1]
    if s_t.ndim not in (1, 2) or s_t.shape[-1] != n:
        raise ValueError(f"s must be (n,) or (B, n) with n={n} (from C), got shape "
                         f"{tuple(s_t.shape)}")
    if sparse_in and C.sparse_dim() != len(shape):
        raise ValueError("C: a sparse C must be sparse in every dimension (no dense values)")
    batched = len(shape) == 3 or s_t.ndim == 2
    B = max(shape[0] if len(shape) == 3 else 1, s_t.shape[0] if s_t.ndim == 2 else 1)
    for name, lead, size in (("C", len(shape) == 3, shape[0]), ("s", s_t.ndim == 2,
                                                                 s_t.shape[0])):
        if lead and size not in (1, B):
            raise ValueError(f"{name} has batch size {size}, expected {B}")
    out_dtype = (C_t.dtype if C_t.is_floating_point()
                 else s_t.dtype if s_t.is_floating_point() else torch.float64)
    dev = C_t.device
    if bool((C_t == -math.inf).any()) or bool((C_t < 0).any()):
        raise ValueError(f"C must be >= 0 (inf = no edge), got minimum {float(C_t.min()):g}")
    rel = 1e-9 if not s_t.is_floating_point() else max(1e-9, 16 * torch.finfo(s_t.dtype).eps)
    s64 = _check_supply(s_t.to(device=dev, dtype=torch.float64).expand(B, n), rel)
    if sparse_in:
        arcs = _sparse_arcs(C, B, n)
    else:
        arcs = DenseArcs(C_t.to(device=dev, dtype=torch.float64).expand(B, n, n))
    cap = edge_capacity(capacity, arcs, dev)
    ncap = node_capacity_of(node_capacity, s64, dev)
    _check_reachable(s64, arcs.instance_arcs(None if cap is None else cap > 0), "C")
    return _Checked(s64, arcs, cap, ncap, batched, sparse_in, out_dtype)


def _on_arc_list(chk: _Checked) -> tuple[SparseArcs, torch.Tensor | None]:
    """The checked problem's arcs as a list (instance-major, row-major) and their capacities."""
    if chk.arcs.sparse:
        return chk.arcs, chk.cap
    return SparseArcs.from_dense(chk.arcs), None if chk.cap is None else chk.cap[chk.arcs.E]


def _check_supply(s64: torch.Tensor, rel: float) -> torch.Tensor:
    """Supplies finite, not all zero and balanced; the rounding residue spread over them."""
    if bool(torch.isinf(s64).any()):
        raise ValueError("s contains infinite value(s)")
    total = s64.abs().sum(-1)
    if bool((total == 0).any()):
        raise ValueError("s is all zero: there is nothing to route")
    imbalance = s64.sum(-1)
    if bool((imbalance.abs() > rel * total).any()):
        raise ValueError(f"s must sum to 0 (supply = demand), got sum "
                         f"{float(imbalance.abs().max()):g} with sum|s| = {float(total.max()):g}")
    # spread the rounding residue (float32 input) over the nodes, in proportion to |s|
    return s64 - imbalance.unsqueeze(-1) * s64.abs() / total.unsqueeze(-1)


def _sparse_arcs(C: torch.Tensor, B: int, n: int) -> SparseArcs:
    """The arcs of a torch sparse ``C``: its stored entries, less ``inf`` ones and the
    diagonal, replicated over a batch of ``s`` when ``C`` is (n, n)."""
    raw = C.coalesce()
    if raw._nnz() != C._nnz():
        raise ValueError("C has duplicate entries (one cost per node pair)")
    idx, val = raw.indices(), raw.values().to(torch.float64)
    if idx.shape[0] == 2:
        M = idx.shape[1]
        b = torch.arange(B, device=idx.device).repeat_interleave(M)
        idx = torch.cat([b.unsqueeze(0), idx.repeat(1, B)])
        val = val.repeat(B)
    elif C.shape[0] == 1 and B > 1:
        return _sparse_arcs(coo(raw.indices()[1:], raw.values(), C.shape[1:]), B, n)
    keep = torch.isfinite(val) & (idx[1] != idx[2])
    return SparseArcs(B, n, idx[:, keep].contiguous(), val[keep])


def _check_reachable(s: torch.Tensor, arcs: list[tuple[np.ndarray, np.ndarray]],
                     name: str) -> None:
    """Raise naming the node if a supply has no out-edge or a demand no path from any supply.

    ``arcs``: per instance, the (tails, heads) of the usable arcs."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    for b in range(s.shape[0]):  # validation per instance; the solver itself is batched
        sb = s[b].cpu().numpy()
        rows, cols = arcs[b]
        n = sb.size
        inst = f" (instance {b})" if s.shape[0] > 1 else ""
        bad = np.flatnonzero((sb > 0) & (np.bincount(rows, minlength=n) == 0))
        if bad.size:
            raise ValueError(f"{name}: supply node {bad[0]} has no out-edge{inst}")
        bad = np.flatnonzero((sb < 0) & (np.bincount(cols, minlength=n) == 0))
        if bad.size:
            raise ValueError(f"{name}: demand node {bad[0]} has no in-edge{inst}")
        src = np.flatnonzero(sb > 0)
        rows = np.concatenate([rows, np.full(src.size, n)])
        cols = np.concatenate([cols, src])
        G = csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n + 1, n + 1))
        seen = np.zeros(n + 1, dtype=bool)
        seen[breadth_first_order(G, n, directed=True, return_predecessors=False)] = True
        bad = np.flatnonzero((sb < 0) & ~seen[:n])
        if bad.size:
            raise ValueError(f"{name}: demand node {bad[0]} is unreachable from every supply "
                             f"node (disconnected graph){inst}")


@dataclass(frozen=True)
class _Stage:
    """One ε-scaling stage: its reg, ``eps`` (per arc) and the violation that ends it."""

    reg: float
    eps: torch.Tensor  # (B, 1, 1) dense or (M,) sparse: reg x the instance's largest cost
    eps1: torch.Tensor  # (B, 1) the same per instance, against (B, n) node vectors
    thr: torch.Tensor  # (B,) balance violation that ends the stage
    last: bool


@dataclass
class _Problem:
    """A validated batched problem (float64) and the settings every iteration shares."""

    arcs: Arcs  # costs and the kernel's layout
    s: torch.Tensor  # (B, n) supplies
    d: torch.Tensor  # (B, n) virtual self-flow
    cap: torch.Tensor | None  # edge capacities (arc layout)
    ncap: torch.Tensor | None  # (B, n) node throughput bounds
    stages: list[_Stage]  # the ε stages
    iters: int  # numItermax, all stages together
    mass: torch.Tensor  # (B,) Σs⁺
    cumulative: bool  # the paper's cumulative capacity clip
    newton: bool  # hand over to Newton once the violation is <= NEWTON_AT·Σs⁺
    log_cap: torch.Tensor | None = None  # log(cap), on Newton's active arcs
