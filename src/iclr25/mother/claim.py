"""Reproduction of MoTHer's central claim on a generated zoo of model trees.

Setting (fixed before measuring, from the spec's proposed pass criteria):
- zoo: ``make_zoo`` trees of MLPs on sklearn digits, children fine-tuned with Adam.
  quick: 4 trees x 9 models (1 + 2 + 6); full: 5 trees x 21 models (1 + 4 + 16, the paper's
  VTHR layout). One more tree of the same kind is generated and HELD OUT.
- direction: fixed a priori to ``"pretrain"`` (kurtosis increases parent -> child), because
  the generator's regime is Adam fine-tuning of small MLPs, where the spec's pilot found
  kurtosis to increase on 83-87% of edges. ``mother.kurtosis_monotone`` reports how often it
  does here.
- lam: chosen on the held-out tree from ``LAM_GRID`` (best directed accuracy there; ties ->
  better undirected accuracy, then the smaller lam). The evaluated trees never see it.
- distance: the ICLR ``l_FT`` (mean layer-wise RMS difference) over the square layers,
  read layer by layer from safetensors files; Ward clustering into the known number of trees.
- thresholds: undirected >= 0.95, clustering >= 0.95, directed >= 0.85, LoRA rank-distance
  undirected >= 1.0, kurtosis monotone >= 0.8 (the spec's Adam pilot: 83-87 of 100 edges).

A task too easy to separate method from chance would make the directed claim uninformative:
with 1 + 4 + 16 nodes per tree a random root already orients ~0.9 of the edges, so
``mother.directed_beats_random_root`` compares against that baseline on the same trees.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np
import torch

from iclr25.claims import Context, Evidence, Setting, Table, claim, experiment, scalar
from iclr25.mother.distances import stream_statistics
from iclr25.mother.metrics import clustering_accuracy, edge_accuracy
from iclr25.mother.sources import as_sources
from iclr25.mother.testbed import Zoo, make_lora_zoo, make_zoo
from iclr25.mother.tree import ModelForest, build_forest, recover_tree

DIRECTION = "pretrain"
LAM_GRID = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3)
SWEEP = (0.0, 0.1, 0.3)  # the sweep; always inside LAM_GRID


@dataclass(frozen=True)
class TreeZoo(Setting):
    n_trees: int          # evaluated trees; one more is generated and held out to pick lam
    n_children: int
    n_grandchildren: int
    root_steps: int       # Adam steps training each root on digits
    finetune_steps: int   # Adam steps fine-tuning each child on a new task


@dataclass
class TreeEvidence(Evidence):
    undirected: float = scalar("fraction of edges")
    directed: float = scalar("fraction of edges")
    random_root_directed: float = scalar("fraction of edges")
    beats_random_root: float = scalar("fraction of edges")
    clustering: float = scalar("fraction of models")
    clustering_official_l1: float = scalar("fraction of models")
    kurtosis_monotone: float = scalar("fraction of edges")
    root_accuracy: float = scalar("fraction of trees")
    lam: float = scalar("", "chosen on the held-out tree")
    n_models: int = scalar("models")
    held_out: Table = None
    sweep: Table = None
    per_tree: Table = None


def _subzoo(zoo: Zoo, keep: list[str]) -> Zoo:
    return Zoo({n: zoo.models[n] for n in keep}, {n: zoo.parents[n] for n in keep})


def _random_root_accuracy(truth: ModelForest) -> float:
    """Expected directed accuracy of the true undirected trees rooted at a uniform node.

    Rooting at node v reverses exactly the edges on the path from the true root to v.
    """
    G = truth.graph
    per_tree = []
    for root in truth.roots:
        depth = nx.single_source_shortest_path_length(G, root)
        n_edges = len(depth) - 1
        if n_edges:
            per_tree.append((n_edges, 1 - float(np.mean(list(depth.values()))) / n_edges))
    total = sum(n for n, _ in per_tree)
    return sum(n * a for n, a in per_tree) / total


def _tree_edges(truth: ModelForest) -> list[list[tuple[str, str]]]:
    """The true edges of each tree, in the order of ``truth.roots``."""
    return [[e for e in truth.edges if truth.labels[e[1]] == truth.labels[r]]
            for r in truth.roots]


def _scores(forest: ModelForest, truth: ModelForest) -> tuple[float, float, float]:
    return (edge_accuracy(forest, truth, directed=False), edge_accuracy(forest, truth),
            clustering_accuracy(forest, truth))


@experiment(
    quick=TreeZoo(n_trees=4, n_children=2, n_grandchildren=3, root_steps=300,
                  finetune_steps=150),
    full=TreeZoo(n_trees=5, n_children=4, n_grandchildren=4, root_steps=1500,
                 finetune_steps=500),
)
def tree_zoo(setting: TreeZoo, ctx: Context) -> TreeEvidence:
    K = setting.n_trees
    zoo = make_zoo(K + 1, setting.n_children, setting.n_grandchildren,
                   root_steps=setting.root_steps, finetune_steps=setting.finetune_steps,
                   seed=ctx.seed)
    held = [n for n in zoo.names if n.startswith(f"{K}-")]
    zoo_h, zoo_e = _subzoo(zoo, held), _subzoo(zoo, [n for n in zoo.names if n not in held])
    truth_h, truth = zoo_h.truth, zoo_e.truth
    with tempfile.TemporaryDirectory() as tmp:
        dir_h, dir_e = zoo_h.save(Path(tmp) / "held"), zoo_e.save(Path(tmp) / "eval")
        # choose lam on the held-out tree (one tree: no clustering)
        src_h = as_sources(dir_h)
        d_h, ku_h = stream_statistics(src_h, metrics=("rms",), kurtosis_layers=None)
        held_scores = {}
        for lam in LAM_GRID:
            f = build_forest(d_h["rms"], ku_h, [s.name for s in src_h], direction=DIRECTION,
                             lam=lam)
            held_scores[lam] = (edge_accuracy(f, truth_h), edge_accuracy(f, truth_h, False))
        lam_star = max(LAM_GRID, key=lambda lam: (*held_scores[lam], -lam))
        # the method as a user runs it: a directory of safetensors in, a forest out
        forest = recover_tree(dir_e, direction=DIRECTION, lam=lam_star, n_trees=K)
        src_e = as_sources(dir_e)
        d_e, ku_e = stream_statistics(src_e, metrics=("rms", "l1"), kurtosis_layers=None)
    names = [s.name for s in src_e]
    sweep = {(penalty, lam): _scores(build_forest(d_e["rms"], ku_e, names, direction=DIRECTION,
                                                  lam=lam, n_trees=K, penalty=penalty), truth)
             for penalty in ("binary", "margin") for lam in LAM_GRID}
    idx = {n: i for i, n in enumerate(names)}
    rises = {e: bool(ku_e[idx[e[1]]] > ku_e[idx[e[0]]]) for e in truth.edges}
    per_tree = [(t, len(edges), edge_accuracy(forest, edges),
                 float(np.mean([rises[e] for e in edges])))
                for t, edges in enumerate(_tree_edges(truth)) if edges]
    f_l1 = build_forest(d_e["rms"], ku_e, names, direction=DIRECTION, lam=lam_star, n_trees=K,
                        cluster_distances=d_e["l1"])
    undirected, directed, clustering = _scores(forest, truth)
    random_root = _random_root_accuracy(truth)
    forest.plot(ax=ctx.figure("forest", figsize=(max(4.0, 0.45 * len(names)), 3.5)).subplots())
    change = [(truth.labels[c], float(ku_e[idx[c]] - ku_e[idx[p]])) for p, c in truth.edges]
    _sweep_figure(ctx.figure("lambda_sweep", figsize=(9, 3.4)), sweep, lam_star, random_root,
                  change, K, len(names))
    return TreeEvidence(
        undirected=undirected, directed=directed, random_root_directed=random_root,
        beats_random_root=directed - random_root, clustering=clustering,
        clustering_official_l1=clustering_accuracy(f_l1, truth),
        kurtosis_monotone=float(np.mean(list(rises.values()))),
        root_accuracy=float(np.mean([forest.parents[r] is None for r in truth.roots])),
        lam=lam_star, n_models=len(names),
        held_out=Table("held-out tree: accuracy by lambda", ("lambda", "directed", "undirected"),
                       [(lam, *held_scores[lam]) for lam in LAM_GRID]),
        sweep=Table("evaluated trees: accuracy by penalty and lambda",
                    ("penalty", "lambda", "undirected", "directed", "clustering"),
                    [(p, lam, *v) for (p, lam), v in sweep.items()]),
        per_tree=Table(f"per tree (direction {DIRECTION!r}: kurtosis rises parent -> child)",
                       ("tree", "edges", "directed accuracy", "kurtosis rises"), per_tree),
    )


def _sweep_figure(fig, sweep, lam_star, random_root, change, n_trees, n_models) -> None:
    ax, ax2 = fig.subplots(1, 2)
    for penalty, ls in (("binary", "-"), ("margin", "--")):
        for k, (metric, color) in enumerate((("undirected", "C0"), ("directed", "C3"))):
            ys = [sweep[(penalty, lam)][k] for lam in LAM_GRID]
            ax.plot(LAM_GRID, ys, ls, color=color, marker="o", ms=3,
                    label=f"{metric} ({penalty})")
    for lam in SWEEP:
        ax.axvline(lam, color="0.85", lw=0.8, zorder=0)
    ax.axvline(lam_star, color="k", lw=1, ls=":", label=f"chosen lam={lam_star:g}")
    ax.axhline(random_root, color="C3", lw=0.8, ls=":", label="directed, random root")
    ax.set_xlabel("lambda (direction penalty / mean distance)")
    ax.set_ylabel("edge accuracy")
    ax.set_title(f"direction={DIRECTION!r}, {n_trees} trees, {n_models} models")
    ax.legend(fontsize=6, loc="lower left")
    ax.set_ylim(0, 1.03)
    tr = np.array([t for t, _ in change])
    ch = np.array([c for _, c in change])
    jitter = np.random.default_rng(0).uniform(-0.2, 0.2, len(ch))
    ax2.scatter(tr + jitter, ch, s=10, c=[f"C{t % 10}" for t in tr])
    ax2.axhline(0, color="k", lw=0.8)
    ax2.set_xlabel("tree")
    ax2.set_ylabel("kurtosis(child) - kurtosis(parent)")
    ax2.set_xticks(range(n_trees))
    ax2.set_title(f"true edges: {100 * float(np.mean(ch > 0)):.0f}% increase")
    fig.tight_layout()


@dataclass(frozen=True)
class LoraZoo(Setting):
    n_trees: int
    n_children: int
    n_grandchildren: int
    dim: int  # 64 > 2 * max rank: two stacked rank-16 updates must not saturate the rank


@dataclass
class LoraEvidence(Evidence):
    undirected: float = scalar("fraction of edges")
    clustering: float = scalar("fraction of models")
    n_models: int = scalar("models")
    mean_rank_true_edges: float = scalar("rank")
    mean_rank_all_pairs: float = scalar("rank")


@experiment(quick=LoraZoo(2, 3, 2, dim=64), full=LoraZoo(5, 4, 4, dim=64))
def lora_zoo(setting: LoraZoo, ctx: Context) -> LoraEvidence:
    zoo = make_lora_zoo(setting.n_trees, setting.n_children, setting.n_grandchildren,
                        dim=setting.dim, seed=ctx.seed)
    forest = recover_tree(zoo.models, direction="none", lam=0.0, n_trees=setting.n_trees,
                          metric="rank")
    D = forest.distances
    idx = {n: i for i, n in enumerate(forest.names)}
    edge_ranks = [float(D[idx[p], idx[c]]) for p, c in zoo.truth.edges]
    return LoraEvidence(
        undirected=edge_accuracy(forest, zoo.truth, directed=False),
        clustering=clustering_accuracy(forest, zoo.truth), n_models=len(zoo.models),
        mean_rank_true_edges=float(np.mean(edge_ranks)),
        mean_rank_all_pairs=float(D[torch.triu_indices(len(D), len(D), 1).unbind()].mean()))


@claim(
    "mother.undirected_accuracy", experiment=tree_zoo,
    sentence="The weight-distance minimum directed spanning tree recovers the (undirected) "
             "fine-tuning edges of each model tree.",
    metric="undirected edge accuracy", unit="fraction", threshold=0.95, direction=">=",
    paper_figure="near-perfect recovery on VTHR (Table 1; exact figure not verified offline)",
)
def undirected(ev: TreeEvidence) -> float:
    return ev.undirected


@claim(
    "mother.directed_accuracy", experiment=tree_zoo,
    sentence="Kurtosis of the weights orients the edges: MoTHer recovers who was fine-tuned "
             "from whom (directed edges), at a lambda chosen on a held-out tree.",
    metric="directed edge accuracy", unit="fraction", threshold=0.85, direction=">=",
    paper_figure="high directed accuracy on VTHR FT/LoRA (Table 1; not verified offline)",
)
def directed(ev: TreeEvidence) -> float:
    return ev.directed


@claim(
    "mother.directed_beats_random_root", experiment=tree_zoo,
    sentence="The kurtosis direction carries information: MoTHer's directed accuracy exceeds "
             "that of the true undirected trees each rooted at a uniformly random node.",
    metric="directed accuracy minus expected random-root directed accuracy", unit="fraction",
    threshold=0.0, direction=">=",
    paper_figure="kurtosis monotonicity along fine-tuning (Sec. 4; no number)",
)
def directed_beats_random_root(ev: TreeEvidence) -> float:
    return ev.beats_random_root


@claim(
    "mother.clustering_accuracy", experiment=tree_zoo,
    sentence="Ward clustering of the pairwise weight distances splits a Model Graph into its "
             "separate trees.",
    metric="tree clustering accuracy", unit="fraction", threshold=0.95, direction=">=",
    paper_figure="near-perfect clustering of VTHR's 5 trees (not verified offline)",
)
def clustering(ev: TreeEvidence) -> float:
    return ev.clustering


@claim(
    "mother.kurtosis_monotone", experiment=tree_zoo,
    sentence="Along each fine-tuning edge the weight kurtosis changes in one fixed direction "
             "(here: rises parent -> child, fixed before measuring), on most true edges.",
    metric="fraction of true edges whose kurtosis rises", unit="fraction", threshold=0.8,
    direction=">=",
    paper_figure="kurtosis is monotone along fine-tuning (Sec. 4); spec's Adam pilot 83-87 of "
                 "100 edges",
)
def kurtosis_monotone(ev: TreeEvidence) -> float:
    return ev.kurtosis_monotone


@claim(
    "mother.lora_rank_undirected", experiment=lora_zoo,
    sentence="For LoRA-merged models the rank distance sum_l rank(W_i - W_j) recovers every "
             "undirected edge (a child differs from its parent by rank r, others by more).",
    metric="undirected edge accuracy (rank distance)", unit="fraction", threshold=1.0,
    direction=">=",
    paper_figure="near-perfect LoRA-V/LoRA-F recovery (Table 1; not verified offline)",
)
def lora_rank_undirected(ev: LoraEvidence) -> float:
    return ev.undirected
