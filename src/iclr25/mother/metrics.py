"""Scores of a recovered forest against the truth: edge accuracy and clustering accuracy."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import networkx as nx
import numpy as np

from iclr25._contract import checked
from iclr25.mother.tree import ModelForest

#: a forest as the metrics take it: a ModelForest, a networkx DiGraph (parent -> child), a
#: ``{child: parent}`` mapping (roots map to None) or an iterable of (parent, child) pairs
Forest: TypeAlias = ModelForest | nx.DiGraph | Mapping[Hashable, Hashable | None] | Iterable[
    Sequence[Hashable]]
#: tree labels: a ModelForest, a ``{model: label}`` mapping or a 1-D label sequence or array
Labels: TypeAlias = ModelForest | Mapping[Hashable, Hashable] | Iterable[Hashable]


def _edges(x: Any, name: str) -> set[tuple[Any, Any]]:
    """``(parent, child)`` edges of a ModelForest, DiGraph, ``{child: parent}`` or edge list."""
    if isinstance(x, ModelForest):
        return set(x.edges)
    if isinstance(x, nx.DiGraph):
        return set(x.edges())
    if isinstance(x, Mapping):
        return {(p, c) for c, p in x.items() if p is not None}
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise TypeError(f"{name} must be a ModelForest, DiGraph, {{child: parent}} mapping or "
                        f"(parent, child) edge list, got {type(x).__name__}")
    edges = list(x)
    # a string is not a pair: 'ab' would read as ('a', 'b')
    bad = [e for e in edges if isinstance(e, (str, bytes)) or not isinstance(e, Sequence)
           or len(e) != 2]
    if bad:
        raise ValueError(f"{name}: every edge must be a (parent, child) pair, got {bad[0]!r}")
    return {tuple(e) for e in edges}  # type: ignore[misc]


@checked
def edge_accuracy(pred: Forest, truth: Forest, directed: bool = True) -> float:
    """Fraction of ground-truth edges that the prediction recovers.

    Args:
        pred, truth: ModelForest, networkx DiGraph (parent -> child), ``{child: parent}``
            mapping (roots map to ``None``) or iterable of ``(parent, child)``.
        directed: count an edge only with the right parent (``True``, the paper's accuracy)
            or in either orientation (``False``, undirected accuracy).

    Returns:
        ``|pred ∩ truth| / |truth|`` in [0, 1].
    """
    P, T = _edges(pred, "pred"), _edges(truth, "truth")
    if not T:
        raise ValueError("truth has no edges")
    if directed:
        return len(P & T) / len(T)
    Pu = {frozenset(e) for e in P}
    return sum(frozenset(e) in Pu for e in T) / len(T)


def _labels(x: Any, name: str, order: Sequence[Any] | None) -> tuple[list[Any], list[Any]]:
    if isinstance(x, ModelForest):
        x = x.labels
    if isinstance(x, Mapping):
        keys = list(order) if order is not None else list(x)
        vals = [x[k] for k in keys]
    elif hasattr(x, "ndim") and hasattr(x, "tolist"):  # tensor / ndarray: refuse (n, 1) columns
        if x.ndim != 1:
            raise ValueError(f"{name} must be a 1-D label sequence, got shape {tuple(x.shape)}")
        vals = x.tolist()
        keys = list(range(len(vals)))
    elif isinstance(x, Iterable) and not isinstance(x, (str, bytes)):
        vals = list(x)
        keys = list(range(len(vals)))
    else:
        raise TypeError(f"{name} must be a ModelForest, {{model: label}} mapping or label "
                        f"sequence, got {type(x).__name__}")
    for v in vals:
        if not isinstance(v, (int, float, str, np.integer, np.floating)) or isinstance(v, bool):
            raise TypeError(f"{name} labels must be scalars (int, float or str), "
                            f"got {type(v).__name__}")
    return keys, vals


def _codes(vals: list[Any]) -> np.ndarray:
    """Integer codes of labels compared by value (``0 == 0.0``), not by their text."""
    index: dict[Any, int] = {}
    return np.array([index.setdefault(v, len(index)) for v in vals], dtype=np.int64)


@checked
def clustering_accuracy(pred: Labels, truth: Labels) -> float:
    """Accuracy of tree assignment under the best matching of predicted to true trees.

    Args:
        pred, truth: ModelForest, ``{model: tree label}`` mapping or label sequences of the
            same length (mappings are matched by model name).

    Returns:
        fraction of models whose predicted tree maps to their true tree, in [0, 1].

    The official code tries every label permutation with ``accuracy_score``; the Hungarian
    assignment on the contingency table finds the same optimum in polynomial time.
    """
    from scipy.optimize import linear_sum_assignment

    keys_t, t = _labels(truth, "truth", None)
    if isinstance(pred, (Mapping, ModelForest)) and isinstance(truth, (Mapping, ModelForest)):
        pl = pred.labels if isinstance(pred, ModelForest) else pred
        missing = [k for k in keys_t if k not in pl]
        if missing:
            raise ValueError(f"pred has no label for models {missing[:5]}")
        _, p = _labels(pred, "pred", keys_t)
    else:
        _, p = _labels(pred, "pred", None)
    if len(p) != len(t):
        raise ValueError(f"pred has {len(p)} labels but truth has {len(t)}")
    if not t:
        raise ValueError("truth is empty")
    pi, ti = _codes(p), _codes(t)
    M = np.zeros((pi.max() + 1, ti.max() + 1), dtype=np.int64)
    np.add.at(M, (pi, ti), 1)
    r, c = linear_sum_assignment(-M)
    return float(M[r, c].sum() / len(t))
