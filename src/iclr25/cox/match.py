"""Emergent correspondences: pair unpaired IM and OOM rows (paper Sec. 4.3), with a pluggable
matcher (mutual nearest neighbours, Hungarian, entropic Gromov-Wasserstein) and a purity
report."""

from __future__ import annotations

from typing import Literal, get_args

import torch
import torch.nn.functional as F

from iclr25._checks import as_tensor, check_choice, check_int, check_labels, check_range
from iclr25._contract import checked
from iclr25._optional import require

__all__ = ["MATCHERS", "emergent_correspondences", "match_purity"]

Matcher = Literal["mnn", "hungarian", "gw"]
MATCHERS: tuple[str, ...] = get_args(Matcher)


def _argmax_in_tiles(Q: torch.Tensor, R: torch.Tensor, tile: torch.Tensor, size: int
                     ) -> torch.Tensor:
    """For each row q of Q, the index in R of q's largest product, searched only in R's tile
    ``tile[q]`` (rows ``tile * size`` onwards): rows are grouped by tile, one product each."""
    out = torch.empty(len(Q), dtype=torch.long, device=Q.device)
    order = torch.argsort(tile, stable=True)
    counts = torch.bincount(tile, minlength=-(-len(R) // size)).tolist()
    for t, rows in enumerate(torch.split(order, counts)):
        if len(rows):
            out[rows] = (Q[rows] @ R[t * size:(t + 1) * size].T).argmax(1) + t * size
    return out


def _nn_both(A: torch.Tensor, B: torch.Tensor, chunk: int, tile: int = 1024
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """Nearest row of B for each row of A and of A for each row of B, from one sweep of
    (chunk, tile) similarity blocks: O(chunk * tile) memory, one matrix product in all.

    The sweep keeps only values (``amax`` is ~10x cheaper than ``max`` with indices) and the
    block where each row's and column's maximum first appeared; the argmax is then taken
    inside that block alone (O(n * tile) more work). First index wins ties, as argmax."""
    n, m = len(A), len(B)
    chunk, tile = min(chunk, n), min(tile, m)
    row_best = torch.full((n,), -float("inf"), dtype=A.dtype, device=A.device)
    row_tile = torch.zeros(n, dtype=torch.long, device=A.device)
    col_best = torch.full((m,), -float("inf"), dtype=A.dtype, device=A.device)
    col_tile = torch.zeros(m, dtype=torch.long, device=A.device)
    buf = torch.empty(chunk * tile, dtype=A.dtype, device=A.device)  # reused: no page faults
    for s in range(0, n, chunk):
        a, rb, rt = A[s:s + chunk], row_best[s:s + chunk], row_tile[s:s + chunk]
        for t in range(0, m, tile):
            b, cb, ct = B[t:t + tile], col_best[t:t + tile], col_tile[t:t + tile]
            S = torch.mm(a, b.T, out=buf[:len(a) * len(b)].view(len(a), len(b)))
            v = S.amax(1)
            better = v > rb
            rb.copy_(torch.where(better, v, rb))
            rt.masked_fill_(better, t // tile)
            v = S.amax(0)
            better = v > cb
            cb.copy_(torch.where(better, v, cb))
            ct.masked_fill_(better, s // chunk)
    return _argmax_in_tiles(A, B, row_tile, tile), _argmax_in_tiles(B, A, col_tile, chunk)


@checked
def emergent_correspondences(Z_im: torch.Tensor, Z_oom: torch.Tensor,
                             method: Matcher = "mnn", *, chunk: int = 512,
                             epsilon: float = 5e-3) -> torch.Tensor:
    """Match IM rows to OOM rows without instance-level pairs.

    Args:
        Z_im: (n, D) IM embeddings (or their VIB predictions, in the OOM space).
        Z_oom: (m, D') OOM embeddings; ``D' == D`` for ``"mnn"``/``"hungarian"``, any width
            for ``"gw"``, which matches the two clouds' cosine-distance structures.
        method: ``"mnn"`` mutual cosine nearest neighbours (one sweep of chunk x 1024
            blocks, O(n + m + 1024 * chunk) memory); ``"hungarian"`` a one-to-one
            assignment maximising total cosine similarity (scipy); ``"gw"`` entropic
            Gromov-Wasserstein (POT), then mutual argmax of the coupling.
        chunk: Z_im rows per block for ``"mnn"`` (512: the block stays in cache).
        epsilon: entropic regularisation for ``"gw"`` (distances scaled to [0, 1]).

    Returns:
        (P, 2) int64 tensor of ``(im_row, oom_row)``, each OOM row at most once, on Z_im's
        device.

    Raises:
        ValueError: bad shapes, widths differ for mnn/hungarian, unknown method.
        ImportError: ``"gw"`` without POT (``pip install 'iclr25[ot]'``).

    Examples:
        >>> import torch
        >>> Z = torch.eye(4)
        >>> emergent_correspondences(Z, Z[[2, 0, 3, 1]]).tolist()
        [[0, 1], [1, 3], [2, 0], [3, 2]]
    """
    method = check_choice(method, "method", MATCHERS)
    A = as_tensor(Z_im, "Z_im", ndim=2).detach()  # matching is not differentiated
    B = as_tensor(Z_oom, "Z_oom", ndim=2, device=A.device).detach()
    chunk = check_int(chunk, "chunk", 1)
    check_range(epsilon, "epsilon", 0, low_open=True)
    if method != "gw" and A.shape[1] != B.shape[1]:
        raise ValueError(f"Z_im has {A.shape[1]} columns but Z_oom has {B.shape[1]}; "
                         f"method={method!r} needs one width")
    An, Bn = F.normalize(A.float(), dim=1), F.normalize(B.to(A.device).float(), dim=1)
    if method == "mnn":
        return _mutual(*_nn_both(An, Bn, chunk))  # im -> oom, oom -> im
    if method == "hungarian":
        from scipy.optimize import linear_sum_assignment
        cost = -(An @ Bn.T).cpu().double().numpy()
        r, c = linear_sum_assignment(cost)
        return torch.stack([torch.as_tensor(r), torch.as_tensor(c)], 1).long().to(A.device)
    return _gw_pairs(An, Bn, epsilon).to(A.device)


def _mutual(fwd: torch.Tensor, bwd: torch.Tensor) -> torch.Tensor:
    """(P, 2) pairs ``(i, fwd[i])`` whose choice is mutual: ``bwd[fwd[i]] == i``."""
    im = torch.arange(len(fwd), device=fwd.device)
    keep = bwd[fwd] == im
    return torch.stack([im[keep], fwd[keep]], 1)


def _gw_pairs(An: torch.Tensor, Bn: torch.Tensor, epsilon: float) -> torch.Tensor:
    """Mutual argmax pairs (on the CPU) of the entropic Gromov-Wasserstein coupling between
    the cosine-distance structures of the unit rows ``An`` and ``Bn``."""
    ot = require("ot", "ot")
    C1 = (1 - An @ An.T).clamp_min(0).double().cpu()
    C2 = (1 - Bn @ Bn.T).clamp_min(0).double().cpu()
    C1, C2 = C1 / C1.max().clamp_min(1e-12), C2 / C2.max().clamp_min(1e-12)
    p = torch.full((len(An),), 1.0 / len(An), dtype=torch.float64)
    q = torch.full((len(Bn),), 1.0 / len(Bn), dtype=torch.float64)
    T = ot.gromov.entropic_gromov_wasserstein(C1.numpy(), C2.numpy(), p.numpy(), q.numpy(),
                                              "square_loss", epsilon=epsilon, max_iter=200)
    T = torch.as_tensor(T)
    return _mutual(T.argmax(1), T.argmax(0))


@checked
def match_purity(pairs: torch.Tensor, y_im: torch.Tensor, y_oom: torch.Tensor) -> float:
    """Fraction of matched pairs whose IM and OOM rows share a class (chance ~ 1/C).

    Args:
        pairs: (P, 2) ``(im_row, oom_row)``. y_im: (n,) labels. y_oom: (m,) labels.

    Returns:
        float in [0, 1]; NaN if there are no pairs.
    """
    y_im = check_labels(y_im, "y_im")
    y_oom = check_labels(y_oom, "y_oom", device=y_im.device)
    P = as_tensor(pairs, "pairs", ndim=2, nonempty=False).to(y_im.device)
    if P.shape[1] != 2:
        raise ValueError(f"pairs must be (P, 2), got {tuple(P.shape)}")
    if len(P) == 0:
        return float("nan")
    P = P.long()
    if int(P[:, 0].max()) >= len(y_im) or int(P[:, 1].max()) >= len(y_oom) or int(P.min()) < 0:
        raise ValueError("pairs index outside y_im / y_oom")
    return float((y_im[P[:, 0]] == y_oom[P[:, 1]]).double().mean())
