"""Emergent correspondences: pair unpaired IM and OOM rows (paper Sec. 4.3), with a pluggable
matcher (mutual nearest neighbours, Hungarian, entropic Gromov-Wasserstein) and a purity
report."""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F

from iclr25._checks import as_tensor, check_choice, check_int, check_labels, check_range
from iclr25._optional import require

__all__ = ["MATCHERS", "emergent_correspondences", "match_purity"]

Matcher = Literal["mnn", "hungarian", "gw"]
MATCHERS: tuple[str, ...] = ("mnn", "hungarian", "gw")


def _nn_both(A: torch.Tensor, B: torch.Tensor, chunk: int
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """Nearest row of B for each row of A and of A for each row of B, from one pass of
    (chunk, m) similarity blocks: O(chunk * m) memory, one matrix product in all."""
    fwd = torch.empty(len(A), dtype=torch.long, device=A.device)
    best = torch.full((len(B),), -float("inf"), dtype=A.dtype, device=A.device)
    bwd = torch.zeros(len(B), dtype=torch.long, device=A.device)
    for start in range(0, len(A), chunk):
        S = A[start:start + chunk] @ B.T
        fwd[start:start + chunk] = S.argmax(1)
        v, i = S.max(0)
        better = v > best
        best = torch.where(better, v, best)
        bwd = torch.where(better, i + start, bwd)
    return fwd, bwd


def emergent_correspondences(Z_im: torch.Tensor, Z_oom: torch.Tensor,
                             method: Matcher = "mnn", *, chunk: int = 2048,
                             epsilon: float = 5e-3) -> torch.Tensor:
    """Match IM rows to OOM rows without instance-level pairs.

    Args:
        Z_im: (n, D) IM embeddings (or their VIB predictions, in the OOM space).
        Z_oom: (m, D') OOM embeddings; ``D' == D`` for ``"mnn"``/``"hungarian"``, any width
            for ``"gw"``, which matches the two clouds' cosine-distance structures.
        method: ``"mnn"`` mutual cosine nearest neighbours (chunked, O(chunk * (n + m))
            memory); ``"hungarian"`` a one-to-one assignment maximising total cosine
            similarity (scipy); ``"gw"`` entropic Gromov-Wasserstein (POT), then mutual
            argmax of the coupling.
        chunk: rows per block for ``"mnn"``.
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
    A = as_tensor(Z_im, "Z_im", ndim=2)
    B = as_tensor(Z_oom, "Z_oom", ndim=2, device=A.device)
    chunk = check_int(chunk, "chunk", 1)
    check_range(epsilon, "epsilon", 0, low_open=True)
    if method != "gw" and A.shape[1] != B.shape[1]:
        raise ValueError(f"Z_im has {A.shape[1]} columns but Z_oom has {B.shape[1]}; "
                         f"method={method!r} needs one width")
    An, Bn = F.normalize(A.float(), dim=1), F.normalize(B.to(A.device).float(), dim=1)
    if method == "mnn":
        fwd, bwd = _nn_both(An, Bn, chunk)  # im -> oom, oom -> im
        im = torch.arange(len(A), device=A.device)
        keep = bwd[fwd] == im
        return torch.stack([im[keep], fwd[keep]], 1)
    if method == "hungarian":
        from scipy.optimize import linear_sum_assignment
        cost = -(An @ Bn.T).cpu().double().numpy()
        r, c = linear_sum_assignment(cost)
        return torch.stack([torch.as_tensor(r), torch.as_tensor(c)], 1).long().to(A.device)
    ot = require("ot", "ot")
    C1 = (1 - An @ An.T).clamp_min(0).double().cpu()
    C2 = (1 - Bn @ Bn.T).clamp_min(0).double().cpu()
    C1, C2 = C1 / C1.max().clamp_min(1e-12), C2 / C2.max().clamp_min(1e-12)
    p = torch.full((len(A),), 1.0 / len(A), dtype=torch.float64)
    q = torch.full((len(B),), 1.0 / len(B), dtype=torch.float64)
    T = ot.gromov.entropic_gromov_wasserstein(C1.numpy(), C2.numpy(), p.numpy(), q.numpy(),
                                              "square_loss", epsilon=epsilon, max_iter=200)
    T = torch.as_tensor(T)
    fwd, bwd = T.argmax(1), T.argmax(0)
    im = torch.arange(len(A))
    keep = bwd[fwd] == im
    return torch.stack([im[keep], fwd[keep]], 1).to(A.device)


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
