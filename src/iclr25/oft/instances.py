"""Generators of min-cost flow instances: the paper's layered ``uniform_WO`` graphs."""

from __future__ import annotations

from typing import Literal

import torch

from iclr25._checks import check_choice, check_int, resolve_seed

Masses = Literal["random", "uniform"]


def make_layered(
    n_sources: int, n_transit: int, n_sinks: int, *, masses: Masses = "random",
    seed: int | torch.Generator | None = None, dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, torch.Tensor]:
    """A three-layer transport network (the paper's ``uniform_WO`` instances).

    Nodes are points drawn uniformly in the unit square, ordered sources, transit, sinks.
    Edges go source -> transit, source -> sink, transit -> transit (both ways) and
    transit -> sink, with Euclidean length as cost; every other pair has cost ``inf``.
    Total supply is 1. With ``masses="random"`` (default) source supplies and sink demands
    are drawn uniformly in [0.5, 1.5] and normalised; ``"uniform"`` gives every source
    ``1 / n_sources`` and every sink ``1 / n_sinks``, which with equal layer sizes is a
    degenerate assignment problem on which Sinkhorn-type iterations (POT's included) stall
    far from ``stopThr``.

    Args:
        n_sources, n_transit, n_sinks: layer sizes (``n_sources, n_sinks >= 1``,
            ``n_transit >= 0``).
        masses: ``"random"`` or ``"uniform"`` supplies and demands.
        seed: int, ``torch.Generator`` or None (fresh OS entropy).
        dtype, device: of the returned tensors.

    Returns:
        s: (n,) supplies (> 0 sources, < 0 sinks), n = n_sources + n_transit + n_sinks.
        C: (n, n) costs, ``inf`` where there is no edge.

    Examples:
        >>> s, C = make_layered(3, 2, 3, seed=0)
        >>> s.shape, C.shape, float(s.sum().abs()) < 1e-12
        (torch.Size([8]), torch.Size([8, 8]), True)
    """
    a = check_int(n_sources, "n_sources", 1)
    m = check_int(n_transit, "n_transit", 0)
    c = check_int(n_sinks, "n_sinks", 1)
    check_choice(masses, "masses", Masses)
    gen = resolve_seed(seed)
    n = a + m + c
    pts = torch.rand(n, 2, generator=gen, dtype=torch.float64)
    w = torch.rand(n, generator=gen, dtype=torch.float64) + 0.5
    if masses == "uniform":
        w = torch.ones_like(w)
    D = torch.cdist(pts, pts)
    layer = torch.cat([torch.zeros(a), torch.ones(m), torch.full((c,), 2.0)]).long()
    li, lj = layer.unsqueeze(1), layer.unsqueeze(0)
    edge = ((li == 0) & (lj >= 1)) | ((li == 1) & (lj >= 1))
    edge.fill_diagonal_(False)
    C = torch.where(edge, D, torch.full_like(D, float("inf")))
    s = torch.cat([w[:a] / w[:a].sum(), torch.zeros(m, dtype=torch.float64),
                   -w[a + m:] / w[a + m:].sum()])
    return s.to(device=device, dtype=dtype), C.to(device=device, dtype=dtype)
