"""Min-cost flow problems from files (DIMACS ``.min``, NETGEN's output) and networkx graphs."""

from __future__ import annotations

import os
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr25._contract import FloatDtype, RealArray, checked
from iclr25._io import check_readable
from iclr25.oft.arcs import coo
from iclr25.oft.problem import _check_problem, _on_arc_list


@checked
def read_dimacs(
    path: str | os.PathLike, *, sparse: bool = False, dtype: FloatDtype = torch.float64,
    device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Read a DIMACS min-cost flow file (``.min``, as written by NETGEN).

    Lines: ``c`` comment, ``p min NODES ARCS``, ``n ID SUPPLY`` (supply > 0, demand < 0),
    ``a SRC DST LOW CAP COST``; nodes are numbered from 1. Parallel arcs with the same cost
    are merged (capacities add); self-loops are skipped.

    Non-arcs get cost ``inf`` here; the official ``read_netgen`` gives them 10 × the largest arc
    cost, and its reg is relative to that entry, so its ``reg = r`` is ``reg = 10·r`` in
    :func:`~iclr25.oft.oft_sinkhorn` (whose reg is relative to the largest finite cost).

    Args:
        path: the file.
        sparse: return ``C`` and ``capacity`` as torch sparse COO tensors holding the arcs
            only (O(arcs) memory; :func:`~iclr25.oft.oft_sinkhorn` then iterates on the arc
            list) instead of dense (n, n) arrays.
        dtype, device: of the returned tensors.

    Returns:
        s: (n,) supplies; C: (n, n) costs (``inf`` = no arc); capacity: (n, n) arc
        capacities (0 where there is no arc). Sparse: the arcs' costs and capacities.

    Raises:
        ValueError: unreadable file, no ``p min`` line, unknown node ids, lower bounds > 0,
            parallel arcs with different costs, malformed lines (with the line number).
    """
    p = Path(path)
    if p.exists():
        check_readable(p, "path")  # a folder, or permission denied
    try:
        lines = p.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"path: cannot read {str(p)!r}: {exc}") from None
    n, supplies, arcs = _parse_dimacs(lines, p.name)
    s = np.zeros(n)
    for i, val in supplies:
        if not 1 <= i <= n:
            raise ValueError(f"path: unknown node {i} in an 'n' line (nodes are 1..{n})")
        s[i - 1] = val
    tail, head, cap, cost = _merged_arcs(arcs, n, p.name)
    as_t = lambda a: torch.as_tensor(a, dtype=dtype, device=device)  # noqa: E731
    if sparse:
        idx = torch.as_tensor(np.stack([tail, head]), device=device)
        return (as_t(s), coo(idx, as_t(cost), (n, n)),
                coo(idx, as_t(cap), (n, n)))
    C = np.full((n, n), np.inf)
    capacity = np.zeros((n, n))
    C[tail, head] = cost
    capacity[tail, head] = cap
    return as_t(s), as_t(C), as_t(capacity)


def _merged_arcs(arcs: list[_Arc], n: int, name: str
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """0-based (tails, heads, capacities, costs) of the arcs, row-major, self-loops skipped
    and parallel arcs merged (capacities add)."""
    a = np.array([arc[:4] for arc in arcs], dtype=float).reshape(-1, 4)
    line = np.array([arc[4] for arc in arcs], dtype=np.int64)
    ij = a[:, :2].astype(np.int64)
    bad = np.flatnonzero((ij < 1) | (ij > n))
    if bad.size:
        k = bad[0] // 2
        raise ValueError(f"path: {name}:{line[k]}: unknown node {ij.flat[bad[0]]} "
                         f"(nodes are 1..{n})")
    keep = ij[:, 0] != ij[:, 1]
    ij, a, line = ij[keep] - 1, a[keep], line[keep]
    key = ij[:, 0] * n + ij[:, 1]
    uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    clash = np.flatnonzero(a[:, 3] != a[first[inv], 3])
    if clash.size:
        k = clash[0]
        raise ValueError(f"path: {name}:{line[k]}: parallel arc {ij[k, 0] + 1}->{ij[k, 1] + 1} "
                         "with a different cost; the formulation holds one cost per node pair")
    cap = np.zeros(uniq.size)
    np.add.at(cap, inv, a[:, 2])
    return uniq // n, uniq % n, cap, a[first, 3]


@checked
def write_dimacs(path: str | os.PathLike, s: RealArray, C: RealArray,
                 capacity: RealArray | None = None,
                 *, comment: str = "") -> None:
    """Write a min-cost flow problem as a DIMACS ``.min`` file (integral values as ints).

    Args:
        path: the file to write.
        s: (n,) supplies; C: (n, n) costs, dense (``inf`` = no arc) or torch sparse (its
            stored entries); capacity: as in :func:`~iclr25.oft.oft_sinkhorn`, or None
            (uncapacitated: every arc gets the total supply).
        comment: a ``c`` line at the top (optional).

    Raises:
        ValueError: as :func:`~iclr25.oft.oft_sinkhorn`'s input checks, or a batch of
            problems (one file holds one).
    """
    chk = _check_problem(s, C, capacity, None)
    if chk.batched:
        raise ValueError("s and C must be one problem, (n,) and (n, n): a file holds one")
    arcs, cap = _on_arc_list(chk)
    s64 = chk.s[0].cpu()
    _, i, j = arcs.idx.cpu().numpy()
    cost = arcs.C.cpu().numpy()
    cap = (np.full(cost.size, float(s64.clamp_min(0).sum())) if cap is None
           else cap.cpu().numpy())
    fmt = lambda x: str(int(x)) if float(x).is_integer() else repr(float(x))  # noqa: E731
    out = [f"c {comment}"] if comment else []
    out.append(f"p min {arcs.n} {cost.size}")
    out += [f"n {k + 1} {fmt(v)}" for k, v in enumerate(s64.tolist()) if v != 0]
    out += [f"a {a + 1} {b + 1} 0 {fmt(c)} {fmt(w)}"
            for a, b, c, w in zip(i.tolist(), j.tolist(), cap.tolist(), cost.tolist(),
                                  strict=True)]
    Path(path).write_text("\n".join(out) + "\n")


_Arc = tuple[int, int, float, float, int]  # src, dst, capacity, cost, line number


def _parse_dimacs(lines: list[str], name: str,
                  ) -> tuple[int, list[tuple[int, float]], list[_Arc]]:
    """(nodes, [(id, supply)], [(src, dst, cap, cost, line)]) of a DIMACS file's lines."""
    n = None
    supplies: list[tuple[int, float]] = []
    arcs: list[_Arc] = []
    for k, line in enumerate(lines, 1):
        parts = line.split()
        if not parts or parts[0] == "c":
            continue
        tag = parts[0]
        try:
            if tag == "p":
                if n is not None:
                    raise ValueError("second 'p' line")
                n = _p_line(parts)
            elif tag == "n":
                if len(parts) != 3:
                    raise ValueError("expected 'n ID SUPPLY'")
                supplies.append((_field(parts[1], "ID", int), _field(parts[2], "SUPPLY", float)))
            elif tag == "a":
                arcs.append((*_a_line(parts), k))
            else:
                raise ValueError(f"unknown line type {tag!r}")
        except ValueError as exc:
            raise ValueError(f"path: {name}:{k}: {exc}: {line.strip()!r}") from None
        if tag != "p" and n is None:
            raise ValueError(f"path: {name}:{k}: '{tag}' line before the 'p min' line")
    if n is None:
        raise ValueError(f"path: {name} has no 'p min NODES ARCS' line")
    return n, supplies, arcs


def _field(text: str, what: str, kind: type) -> Any:
    """One field of a line as ``kind``: "SRC must be an integer, got 'x'" rather than Python's
    ``invalid literal for int()``."""
    try:
        v = kind(text)
    except ValueError:
        v = None
    if v is None or v != v:
        raise ValueError(f"{what} must be {'an integer' if kind is int else 'a number'}, "
                         f"got {text!r}")
    return v


def _p_line(parts: list[str]) -> int:
    if len(parts) != 4 or parts[1] != "min":
        raise ValueError("expected 'p min NODES ARCS'")
    n = _field(parts[2], "NODES", int)
    _field(parts[3], "ARCS", int)
    if n < 1:
        raise ValueError("NODES must be >= 1")
    return n


def _a_line(parts: list[str]) -> tuple[int, int, float, float]:
    if len(parts) != 6:
        raise ValueError("expected 'a SRC DST LOW CAP COST'")
    i, j = _field(parts[1], "SRC", int), _field(parts[2], "DST", int)
    low, cap, cost = (_field(parts[k], w, float) for k, w in ((3, "LOW"), (4, "CAP"), (5, "COST")))
    if low != 0:
        raise ValueError(f"lower bound {low:g} > 0 is not supported")
    if cap < 0 or cost < 0:
        raise ValueError("capacity and cost must be >= 0")
    return i, j, cap, cost


@checked
def from_networkx(
    G: object, *, demand: str = "demand", capacity: str = "capacity", weight: str = "weight",
    dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[Hashable]]:
    """A networkx ``DiGraph`` in ``nx.min_cost_flow``'s terms as dense ``(s, C, capacity)``.

    ``s = -demand`` (networkx's demand is in-flow minus out-flow); missing demand is 0,
    missing weight 0 and missing capacity ``inf``, as in networkx.

    Args:
        G: a ``networkx.DiGraph`` (MultiDiGraphs are refused).
        demand, capacity, weight: attribute names.
        dtype, device: of the returned tensors.

    Returns:
        s: (n,), C: (n, n) (``inf`` = no edge), capacity: (n, n), and the node list giving
        the order of rows.

    Raises:
        TypeError: ``G`` is not a directed simple graph.
        ValueError: empty graph, or non-numeric attributes (naming the node or edge).
    """
    import networkx as nx

    if not isinstance(G, nx.DiGraph) or G.is_multigraph():
        raise TypeError(f"G must be a networkx.DiGraph, got {type(G).__name__}")
    nodes = list(G.nodes)
    if not nodes:
        raise ValueError("G has no nodes")
    index = {v: k for k, v in enumerate(nodes)}
    n = len(nodes)
    s = np.zeros(n)
    C = np.full((n, n), np.inf)
    cap = np.full((n, n), np.inf)
    try:
        for v, data in G.nodes(data=True):
            s[index[v]] = -float(data.get(demand, 0))
        for a, b, data in G.edges(data=True):
            if a == b:
                continue
            C[index[a], index[b]] = float(data.get(weight, 0))
            cap[index[a], index[b]] = float(data.get(capacity, np.inf))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"G: non-numeric {demand!r}/{weight!r}/{capacity!r} attribute: "
                         f"{exc}") from None
    as_t = lambda a: torch.as_tensor(a, dtype=dtype, device=device)  # noqa: E731
    return as_t(s), as_t(C), as_t(cap), nodes
