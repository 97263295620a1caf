"""Generators of min-cost flow instances: the paper's layered ``uniform_WO`` graphs."""

from __future__ import annotations

from typing import Literal

import torch

from iclr25._checks import check_choice, check_int, resolve_seed
from iclr25._contract import checked
from iclr25.oft.arcs import coo

Masses = Literal["random", "uniform"]


@checked
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


@checked
def make_netgen(
    n_nodes: int, n_arcs: int, *, n_sources: int | None = None, n_sinks: int | None = None,
    capacitated: bool = True, seed: int | torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A NETGEN-like random sparse min-cost flow problem (Klingman, Napier & Stutz 1974).

    As NETGEN: sources first, sinks last, transshipment nodes between; a skeleton of chains
    (each source -> a random run of transshipment nodes -> a few sinks, every node on one chain)
    with capacity equal to the total supply, and each sink's demand what the skeleton brings it
    (each source's supply split at random over its chain's sinks), so the problem is feasible;
    then random arcs up to ``n_arcs`` (no self-loops or duplicates). Integer costs in [1, 100],
    total supply ``100·n_sources`` split at random over the sources; with ``capacitated`` the
    random arcs get integer capacities in [10, 50] (a tenth to half the mean source supply),
    else every arc carries the total supply. Write it with :func:`~iclr25.oft.write_dimacs`.

    Args:
        n_nodes: nodes (>= 2); n_arcs: arcs (>= 2·n_nodes, room for the skeleton's
            ~n_nodes + n_sinks; <= n_nodes·(n_nodes-1)).
        n_sources, n_sinks: default ``max(1, n_nodes // 20)`` each.
        capacitated: random arcs with finite capacities (True) or all at the total supply.
        seed: int, ``torch.Generator`` or None.

    Returns:
        s: (n,) supplies; C: (n, n) torch sparse costs (its entries are the arcs);
        capacity: (n, n) torch sparse capacities on the same arcs; all float64.
    """
    n = check_int(n_nodes, "n_nodes", 2)
    m = check_int(n_arcs, "n_arcs", 2 * n, n * (n - 1))
    a = check_int(n_sources if n_sources is not None else max(1, n // 20), "n_sources", 1)
    b = check_int(n_sinks if n_sinks is not None else max(1, n // 20), "n_sinks", 1, n - a)
    if not isinstance(capacitated, bool):
        raise TypeError(f"capacitated must be a bool, got {type(capacitated).__name__}")
    gen = resolve_seed(seed)
    total = 100 * a
    s = torch.zeros(n, dtype=torch.float64)
    s[:a] = _split(total, a, gen)
    tails, heads, ends = _skeleton(n, a, b, gen)
    for src, sinks in enumerate(ends):  # demands as the skeleton routes each supply
        part = _split(int(s[src]) + len(sinks), len(sinks), gen) - 1  # >= 0 each
        s.index_add_(0, torch.tensor(sinks), -part)
    key = torch.tensor(tails) * n + torch.tensor(heads)
    n_skel = key.unique().numel()
    if n_skel > m:
        raise ValueError(f"n_arcs={m} is below the skeleton's {n_skel} arcs")
    while key.unique().numel() < m:  # random arcs, drawn in rounds until m distinct
        extra = torch.randint(0, n * n, (2 * (m - key.unique().numel()),), generator=gen)
        extra = extra[extra // n != extra % n]
        key = torch.cat([key, extra])
    key, first = _first_unique(key)
    key = key[first.argsort()][:m]  # skeleton arcs come first, then the draws in order
    skeleton = torch.arange(key.numel()) < n_skel
    cost = torch.randint(1, 101, (key.numel(),), generator=gen).double()
    if capacitated:  # the skeleton carries the total supply
        cap = torch.where(skeleton, float(total),
                          torch.randint(10, 51, (key.numel(),), generator=gen).double())
    else:
        cap = torch.full((key.numel(),), float(total), dtype=torch.float64)
    order = key.argsort()
    idx = torch.stack([key[order] // n, key[order] % n])
    return s, coo(idx, cost[order], (n, n)), coo(idx, cap[order], (n, n))


def _skeleton(n: int, a: int, b: int, gen: torch.Generator
              ) -> tuple[list[int], list[int], list[list[int]]]:
    """NETGEN's skeleton: transshipment nodes dealt to the ``a`` sources' chains, each chain
    ending at 1-3 of the ``b`` sinks and every sink at some chain's end: (tails, heads, the
    sinks at each source's chain end)."""
    trans = torch.randperm(n - a - b, generator=gen) + a
    owner = torch.randint(0, a, (trans.numel(),), generator=gen)
    chains = [[src] + trans[owner == src].tolist() for src in range(a)]
    ends = [torch.randint(n - b, n, (int(torch.randint(1, 4, (1,), generator=gen)),),
                          generator=gen).unique().tolist() for _ in range(a)]
    covered = {k for e in ends for k in e}
    for snk in range(n - b, n):  # every sink at some chain's end
        if snk not in covered:
            ends[int(torch.randint(0, a, (1,), generator=gen))].append(snk)
    tails, heads = [], []
    for chain, sinks in zip(chains, ends, strict=True):
        tails += chain[:-1] + [chain[-1]] * len(sinks)
        heads += chain[1:] + sinks
    return tails, heads, ends


def _split(total: int, k: int, gen: torch.Generator) -> torch.Tensor:
    """``total`` split into ``k`` random positive integers."""
    cuts = torch.randperm(total - 1, generator=gen)[:k - 1].sort().values + 1
    edges = torch.cat([torch.tensor([0]), cuts, torch.tensor([total])])
    return edges.diff().double()


def _first_unique(key: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct values of ``key`` and the position of each one's first occurrence."""
    uniq, inv = key.unique(return_inverse=True)
    first = torch.full((uniq.numel(),), key.numel(), dtype=torch.long)
    first.scatter_reduce_(0, inv, torch.arange(key.numel()), "amin")
    return uniq, first
