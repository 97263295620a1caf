"""Model tree recovery: Ward clustering into trees, then a directed minimum spanning tree.

Edge ``p -> c`` means "c was fine-tuned from p". Its cost is the weight distance plus a
penalty when the kurtosis of the two models moves the wrong way for the assumed training
regime (``direction``); Edmonds' algorithm (networkx) then finds the cheapest spanning
arborescence of each tree, choosing the root itself.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import networkx as nx
import numpy as np
import torch

from iclr25._checks import ArrayLike, as_tensor, check_choice, check_range
from iclr25._choices import Direction
from iclr25._contract import Floats1D, Floats2D, checked
from iclr25.mother.distances import METRICS, LayerSpec, Metric, check_rtol, stream_statistics
from iclr25.mother.sources import as_sources, check_architecture

#: ``direction`` values. "finetune" (alias "decreasing"): the parent has the HIGHER kurtosis,
#: i.e. kurtosis decreases parent -> child; the paper's setting for ViT fine-tuning and
#: Llama -> Code/Chat (official ``rev=False``). "pretrain" (alias "increasing"): kurtosis
#: increases parent -> child; the paper's setting for large-scale continued training
#: (Stable Diffusion v1.1 -> v1.5, official ``rev=True``), and what Adam fine-tuning of small
#: MLPs does in our generated zoo. "none": no direction penalty (root is arbitrary).
DIRECTIONS: dict[str, int] = dict(zip(get_args(Direction), (-1, -1, 1, 1, 0), strict=True))
Penalty = Literal["binary", "margin"]
PENALTIES: tuple[str, ...] = get_args(Penalty)
#: The defaults of every function here, = ``iclr25 mother recover``'s (a test keeps them
#: equal): what the reproduction validated on Adam-trained zoos, where "finetune" with the
#: paper's λ 0.3 roots the trees at leaves (on 24 zoos of models trained from scratch and
#: fine-tuned with Adam/AdamW: 0.65 of directed edges by default, 0.24 so; the MoTHer
#: guide). Pass ``direction="finetune", lam=0.3`` for fine-tunes of a large model
#: pre-trained by others (the paper's VTHR setting).
DEFAULT_DIRECTION: Direction = "pretrain"
DEFAULT_LAM = 0.2


def _check_options(direction: Direction, penalty: Penalty, lam: object = 0.0) -> None:
    """Raise unless ``direction``/``penalty`` are known and ``lam`` is a finite float >= 0."""
    check_choice(direction, "direction", DIRECTIONS)
    check_choice(penalty, "penalty", PENALTIES)
    if lam is None or isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating)):
        raise TypeError(f"lam must be a float >= 0, got {lam!r}")
    # lam = inf would turn the zero-penalty edges into inf * 0 = NaN costs
    check_range(lam, "lam", 0)


def _check_distances(D: ArrayLike, name: str, n: int | None = None) -> torch.Tensor:
    """A square, finite, non-negative (N, N) distance matrix (N = ``n`` when given)."""
    D = as_tensor(D, name, ndim=2)
    if D.dtype == torch.bool:
        raise TypeError(f"{name} must hold distances (numbers), got a bool matrix")
    if not D.is_floating_point():
        D = D.double()
    if D.shape[0] != D.shape[1] or (n is not None and D.shape[0] != n):
        want = "square" if n is None else f"of shape ({n}, {n})"
        raise ValueError(f"{name} must be {want}, got shape {tuple(D.shape)}")
    if bool((D < 0).any()):
        raise ValueError(f"{name} must be non-negative distances")
    return D


def _check_kurtosis(ku: ArrayLike, n: int) -> torch.Tensor:
    ku = as_tensor(ku, "ku", ndim=1)
    if ku.shape[0] != n:
        raise ValueError(f"ku has {ku.shape[0]} entries but D has {n} rows")
    return ku.double()


def _check_n_trees(n_trees: object, n_models: int) -> None:
    """Raise unless ``n_trees`` is an int in ``[1, n_models]``."""
    if isinstance(n_trees, bool) or not isinstance(n_trees, (int, np.integer)):
        raise TypeError(f"n_trees must be an int or None, got {type(n_trees).__name__}")
    if not 1 <= n_trees <= n_models:
        raise ValueError(f"n_trees must lie in [1, {n_models}] (number of models), "
                         f"got {n_trees}")


@checked
def direction_penalty(ku: Floats1D, direction: Direction = DEFAULT_DIRECTION,
                      penalty: Penalty = "binary") -> torch.Tensor:
    """(N, N) penalty ``T[p, c]`` of the edge p -> c for kurtosis moving the wrong way.

    Args:
        ku: (N,) kurtosis scores.
        direction: see ``DIRECTIONS``.
        penalty: ``"binary"`` (the paper: ``T = 1[ku moves the wrong way]``) or
            ``"margin"`` (``max(0, wrong-way change) / max |change|``, in [0, 1]; breaks the
            ties of the binary penalty, an option not in the paper).

    Returns:
        (N, N) float64 tensor on ``ku``'s device.
    """
    _check_options(direction, penalty)
    ku = as_tensor(ku, "ku", ndim=1).double()
    sign = DIRECTIONS[direction]
    # change[p, c] = ku[c] - ku[p]; "wrong" is a change against the expected sign
    wrong = -sign * (ku[None, :] - ku[:, None])
    if sign == 0:
        return torch.zeros_like(wrong)
    if penalty == "binary":
        return (wrong > 0).double()
    scale = wrong.abs().max()
    return wrong.clamp_min(0) / scale if scale > 0 else torch.zeros_like(wrong)


@checked
def edge_costs(D: Floats2D, ku: Floats1D, lam: float = DEFAULT_LAM,
               direction: Direction = DEFAULT_DIRECTION, penalty: Penalty = "binary",
               ) -> torch.Tensor:
    """(N, N) cost ``C[p, c] = D[p, c] + lam * mean(D) * T[p, c]``, ``+inf`` on the diagonal.

    ``mean(D)`` includes the zero diagonal, as in the official code, so ``lam`` is relative
    to the typical distance in the tree. Paper: Sec. 3.4 (MDST with the directional score).
    """
    _check_options(direction, penalty, lam)
    D = _check_distances(D, "D").double()
    T = direction_penalty(_check_kurtosis(ku, D.shape[0]), direction, penalty)
    C = D + lam * D.mean() * T.to(D.device)
    return C.fill_diagonal_(float("inf"))


def arborescence(C: torch.Tensor) -> np.ndarray:
    """Minimum spanning arborescence of the complete digraph with costs ``C[p, c]``.

    Args:
        C: (N, N) edge costs; ``inf`` entries are left out.

    Returns:
        (N,) int array: the parent index of each node, ``-1`` for the root.
    """
    C = C.detach().cpu().double().numpy()
    N = C.shape[0]
    parents = np.full(N, -1, dtype=np.int64)
    if N == 1:
        return parents
    p, c = np.nonzero(np.isfinite(C))
    G = nx.DiGraph()
    G.add_nodes_from(range(N))
    G.add_weighted_edges_from(zip(p.tolist(), c.tolist(), C[p, c].tolist(), strict=True))
    try:
        A = nx.minimum_spanning_arborescence(G, attr="weight", preserve_attrs=False)
    except nx.NetworkXException as exc:
        raise ValueError(f"no spanning arborescence exists for these costs ({exc})") from exc
    for u, v in A.edges():
        parents[v] = u
    return parents


@checked
def cluster_trees(D: Floats2D, n_trees: int) -> np.ndarray:
    """Split models into ``n_trees`` trees by Ward linkage on the distance matrix.

    Args:
        D: (N, N) symmetric distances.
        n_trees: number of trees K (known, as in the paper), 1 <= K <= N.

    Returns:
        (N,) int labels in ``0..K-1``, numbered in order of first appearance.

    Paper: Sec. 3.5 (Model Graph -> trees); official ``clustering.py`` uses
    ``linkage(..., 'ward')`` + ``fcluster(maxclust)``.
    """
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    D = _check_distances(D, "D")
    N = D.shape[0]
    _check_n_trees(n_trees, N)
    if n_trees == 1:
        return np.zeros(N, dtype=np.int64)
    Dn = D.detach().cpu().double().numpy()
    Dn = (Dn + Dn.T) / 2
    np.fill_diagonal(Dn, 0)
    raw = fcluster(linkage(squareform(Dn, checks=False), method="ward"), n_trees,
                   criterion="maxclust")
    _, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
    # rank of each raw label's first position = its number in order of first appearance
    return np.argsort(np.argsort(first)).astype(np.int64)[inverse.reshape(-1)]


@checked
@dataclass
class ModelForest:
    """A recovered (or ground-truth) set of model trees.

    Attributes:
        names: model names, in input order.
        parents: ``{model: parent or None}``; roots have ``None``.
        labels: ``{model: tree index}``.
        distances: (N, N) distance matrix used, if any.
        kurtosis: (N,) kurtosis scores used, if any.
    """

    names: list[str]
    parents: dict[str, str | None]
    labels: dict[str, int]
    distances: torch.Tensor | None = field(default=None, repr=False)
    kurtosis: torch.Tensor | None = field(default=None, repr=False)

    @classmethod
    def from_parents(cls, parents: Mapping[str, str | None]) -> ModelForest:
        """Build a forest from ``{child: parent or None}``; tree labels follow the roots."""
        names = list(parents)
        if not names:
            raise ValueError("parents is empty")
        for c, p in parents.items():
            if p is not None and p not in parents:
                raise ValueError(f"parents: parent {p!r} of {c!r} is not a model")
        G = nx.DiGraph()
        G.add_nodes_from(names)
        G.add_edges_from((p, c) for c, p in parents.items() if p is not None)
        # each model has one parent, so the only way not to be a forest is a cycle
        if not nx.is_forest(G):
            raise ValueError("parents does not describe a forest (cycle found)")
        labels = {}
        for i, comp in enumerate(sorted(nx.weakly_connected_components(G),
                                        key=lambda s: min(names.index(x) for x in s))):
            labels.update(dict.fromkeys(comp, i))
        return cls(names, dict(parents), labels)

    @property
    def roots(self) -> list[str]:
        return [n for n in self.names if self.parents[n] is None]

    @property
    def edges(self) -> list[tuple[str, str]]:
        """``(parent, child)`` pairs."""
        return [(p, c) for c, p in self.parents.items() if p is not None]

    @property
    def n_trees(self) -> int:
        return len(set(self.labels.values()))

    @property
    def graph(self) -> nx.DiGraph:
        """networkx DiGraph, edge parent -> child, node attribute ``tree`` (and ``kurtosis``)."""
        G = nx.DiGraph()
        idx = {n: i for i, n in enumerate(self.names)}
        for n in self.names:
            attrs: dict[str, Any] = {"tree": self.labels[n]}
            if self.kurtosis is not None:
                attrs["kurtosis"] = float(self.kurtosis[idx[n]])
            G.add_node(n, **attrs)
        for p, c in self.edges:
            w = float(self.distances[idx[p], idx[c]]) if self.distances is not None else 1.0
            G.add_edge(p, c, weight=w)
        return G

    def trees(self) -> list[list[str]]:
        """Model names of each tree, in tree-label order."""
        out: list[list[str]] = [[] for _ in range(self.n_trees)]
        for n in self.names:
            out[self.labels[n]].append(n)
        return out

    def to_dot(self) -> str:
        """Graphviz DOT text, one ``cluster`` subgraph per tree."""
        def q(s: str) -> str:
            return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

        lines = ["digraph model_forest {", "  rankdir=TB;", "  node [shape=box];"]
        for t, members in enumerate(self.trees()):
            lines.append(f"  subgraph cluster_{t} {{")
            lines.append(f'    label="tree {t}";')
            lines.extend(f"    {q(n)};" for n in members)
            lines.append("  }")
        lines.extend(f"  {q(p)} -> {q(c)};" for p, c in self.edges)
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        data: dict[str, Any] = {"names": self.names, "parents": self.parents,
                                "labels": self.labels, "roots": self.roots}
        if self.kurtosis is not None:
            data["kurtosis"] = {n: float(k) for n, k in zip(self.names, self.kurtosis.tolist(),
                                                            strict=True)}
        return json.dumps(data, indent=2)

    def plot(self, path: str | Path | None = None, ax: Any = None) -> Any:
        """Draw each tree top-down (roots at the top); save to ``path`` if given.

        Returns:
            the matplotlib Figure: a bare ``Figure`` when no ``ax`` is given, so the caller's
            backend is never switched (pass an ``ax`` from pyplot to show it in a notebook).
        """
        from matplotlib import colormaps
        from matplotlib.figure import Figure

        G = self.graph
        pos: dict[str, tuple[float, float]] = {}
        x0 = 0.0
        for root in self.roots:
            # leaves get consecutive x; a parent sits above the middle of its children.
            # An explicit stack, not recursion: a lineage 1,200 models deep is a valid tree.
            stack: list[tuple[str, int, bool]] = [(root, 0, False)]
            while stack:
                n, depth, done = stack.pop()
                kids = sorted(G.successors(n))
                if not kids:
                    pos[n] = (x0, -float(depth))
                    x0 += 1.0
                elif done:
                    pos[n] = ((pos[kids[0]][0] + pos[kids[-1]][0]) / 2, -float(depth))
                else:
                    stack.append((n, depth, True))
                    stack.extend((k, depth + 1, False) for k in reversed(kids))
            x0 += 1.0
        if ax is None:
            fig = Figure(figsize=(max(4.0, 0.45 * x0), 3.5))
            ax = fig.subplots()
        else:
            fig = ax.figure
        cmap = colormaps["tab10"]
        nx.draw_networkx_edges(G, pos, ax=ax, arrows=True, arrowsize=8, edge_color="0.5")
        nx.draw_networkx_nodes(G, pos, ax=ax, node_size=60,
                               node_color=[cmap(self.labels[n] % 10) for n in G.nodes])
        if len(self.names) <= 40:
            nx.draw_networkx_labels(G, {k: (x, y - 0.18) for k, (x, y) in pos.items()},
                                    ax=ax, font_size=6)
        ax.set_axis_off()
        if path is not None:
            fig.savefig(path, dpi=110, bbox_inches="tight")
        return fig

    def save(self, path: str | Path) -> Path:
        """Write ``.dot``, ``.json`` or a ``.png``/``.pdf``/``.svg`` drawing by the suffix."""
        path = Path(path)
        if path.suffix == ".dot":
            path.write_text(self.to_dot())
        elif path.suffix == ".json":
            path.write_text(self.to_json())
        elif path.suffix in (".png", ".pdf", ".svg"):
            self.plot(path)
        else:
            raise ValueError(f"path must end in .dot, .json, .png, .pdf or .svg, "
                             f"got {path.name!r}")
        return path


@checked
def build_forest(
    D: Floats2D,
    ku: Floats1D | None,
    names: Sequence[str] | None = None,
    *,
    direction: Direction = DEFAULT_DIRECTION,
    lam: float = DEFAULT_LAM,
    n_trees: int | None = None,
    penalty: Penalty = "binary",
    cluster_distances: Floats2D | None = None,
) -> ModelForest:
    """Recover the forest from precomputed distances and kurtosis scores.

    Args:
        D: (N, N) symmetric distances.
        ku: (N,) kurtosis scores; may be ``None`` when ``direction="none"``.
        names: N model names (default ``model_{i}``).
        direction, lam, penalty: the edge cost (see ``edge_costs``).
        n_trees: ``None`` for one tree, else the number of trees for Ward clustering.
        cluster_distances: (N, N) distances for the clustering step (default ``D``).

    Returns:
        ModelForest.
    """
    _check_options(direction, penalty, lam)
    D = _check_distances(D, "D")
    N = D.shape[0]
    if N < 2:
        raise ValueError(f"need at least 2 models, got {N}")
    if ku is None:
        if DIRECTIONS[direction] != 0:
            raise ValueError(f"ku is needed for direction={direction!r}")
    else:
        ku = _check_kurtosis(ku, N)
    # with no direction the penalty is zero whatever the scores
    ku_used = torch.zeros(N, dtype=torch.float64, device=D.device) if ku is None else ku
    names = [f"model_{i}" for i in range(N)] if names is None else [str(n) for n in names]
    if len(names) != N:
        raise ValueError(f"names has {len(names)} entries but D has {N} rows")
    dup = sorted(n for n, k in Counter(names).items() if k > 1)
    if dup:
        raise ValueError(f"names must be unique; repeated: {dup[:5]}")
    Dc = D if cluster_distances is None else _check_distances(cluster_distances,
                                                              "cluster_distances", N)
    if n_trees is not None:
        _check_n_trees(n_trees, N)
    labels = np.zeros(N, dtype=np.int64) if n_trees is None else cluster_trees(Dc, n_trees)
    parents: dict[str, str | None] = {}
    for t in range(int(labels.max()) + 1):
        idx = np.nonzero(labels == t)[0]
        it = torch.as_tensor(idx, device=D.device)
        C = edge_costs(D[it][:, it], ku_used[it], lam, direction, penalty)
        par = arborescence(C)
        for local, g in enumerate(idx):
            parents[names[g]] = None if par[local] < 0 else names[idx[par[local]]]
    parents = {n: parents[n] for n in names}
    return ModelForest(names, parents, {n: int(labels[i]) for i, n in enumerate(names)},
                       distances=D.detach().double().cpu(),
                       kurtosis=None if ku is None else ku.detach().double().cpu())


@checked
def recover_tree(
    models: Any,
    direction: Direction = DEFAULT_DIRECTION,
    lam: float = DEFAULT_LAM,
    n_trees: int | None = None,
    *,
    layers: LayerSpec = None,
    metric: Metric = "rms",
    kurtosis_layers: LayerSpec = None,
    penalty: Penalty = "binary",
    cluster_metric: Metric | None = None,
    names: Sequence[str] | None = None,
    rtol: float | None = None,
    device: torch.device | str | None = None,
    progress: Callable[[int, int, str], Any] | None = None,
) -> ModelForest:
    """Recover the model trees (who was fine-tuned from whom) from the weights alone.

    Args:
        models: a directory of ``.safetensors``/``.pt`` files and/or Hugging Face model
            folders (``model.safetensors``, ``pytorch_model.bin``, sharded with their
            ``*.index.json``), a sequence of paths / ``nn.Module`` / state dicts, or a
            ``{name: model}`` mapping, all of one architecture. Read one layer at a time,
            never all at once.
        direction: which way kurtosis moves along an edge, set by how the root was
            trained: ``"finetune"`` = kurtosis DEcreases parent -> child (fine-tunes of a
            large model pre-trained by others: the paper's ViT, official ``rev=False``);
            ``"pretrain"`` = kurtosis INcreases parent -> child (models trained from scratch
            and fine-tuned with Adam/AdamW, as ``make_zoo``'s; the paper's Stable Diffusion
            continued training, ``rev=True``); ``"none"``. Aliases
            ``"decreasing"``/``"increasing"``. Knowing one parent and child, compare their
            :func:`kurtosis_scores` (the MoTHer guide).
        lam: weight of the direction penalty, relative to the mean distance (paper: 0.3).
            The defaults, ``"pretrain"`` and 0.2, are ``iclr25 mother recover``'s (see
            ``DEFAULT_DIRECTION``).
        n_trees: ``None``: all models form one tree; ``K``: Ward-cluster into K trees first.
        layers: matrices used for the distance (default: all 2-D square ones).
        metric: ``"rms"`` (full fine-tuning) or ``"rank"`` (LoRA-merged models).
        kurtosis_layers: matrices used for kurtosis (default: same as ``layers``).
        penalty: ``"binary"`` (paper) or ``"margin"`` (see ``direction_penalty``).
        cluster_metric: distance for the clustering step (default: ``metric``; the
            official code clusters full fine-tunes by ``"l1"``).
        names: names for a sequence of models.
        rtol: rank tolerance for ``metric="rank"`` (finite, >= 0).
        device: where the per-layer computations run.
        progress: ``progress(done, total, layer)`` callback.

    Returns:
        ModelForest with parents, roots, labels, a networkx graph, ``to_dot()`` and ``plot()``.

    Raises:
        ValueError / TypeError naming the argument (unknown direction, ``lam`` not a finite
        float >= 0, bad ``n_trees``, unreadable model, models of mixed architectures), before
        any weight is read.

    Paper: Sec. 3 (Alg. MoTHer) of Horwitz, Shul, Hoshen, ICLR 2025.

    Examples:
        A directory of fine-tunes of a large pre-trained model, one tree, the paper's ViT
        setting:

        >>> forest = recover_tree("checkpoints/", direction="finetune", lam=0.3)  # doctest: +SKIP
        >>> forest.parents  # doctest: +SKIP

        The official recipe for Vision Transformers (VTHR, full fine-tuning) measures the
        distance on the attention layers, the kurtosis on the MLP output projections
        (``output.dense``) and clusters by the L1 distance:

        >>> forest = recover_tree(  # doctest: +SKIP
        ...     "vit_zoo/", direction="finetune", lam=0.3, n_trees=5,
        ...     layers="attention", kurtosis_layers="output.dense", cluster_metric="l1")
    """
    _check_options(direction, penalty, lam)
    if metric not in ("rms", "rank"):
        raise ValueError(f"metric must be 'rms' or 'rank', got {metric!r}")
    if cluster_metric not in (None, *METRICS):
        raise ValueError(f"cluster_metric must be None, 'rms', 'rank' or 'l1', "
                         f"got {cluster_metric!r}")
    check_rtol(rtol)
    sources = as_sources(models, names)
    if len(sources) < 2:
        raise ValueError(f"models must hold at least 2 models, got {len(sources)}")
    if n_trees is not None:
        _check_n_trees(n_trees, len(sources))
    check_architecture(sources)
    metrics = [metric] + ([cluster_metric] if cluster_metric not in (None, metric) else [])
    # kurtosis only orients edges: skip reading it when no direction is assumed
    ku_spec = False if DIRECTIONS[direction] == 0 else kurtosis_layers
    dists, ku = stream_statistics(sources, layers, metrics=metrics, kurtosis_layers=ku_spec,
                                  rtol=rtol, device=device, progress=progress)
    return build_forest(dists[metric], ku, [s.name for s in sources], direction=direction,
                        lam=lam, n_trees=n_trees, penalty=penalty,
                        cluster_distances=dists.get(cluster_metric or metric))
