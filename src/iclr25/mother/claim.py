"""Reproduction of MoTHer's central claim on a generated zoo of model trees.

Setting (fixed before measuring, from the spec's proposed pass criteria and issue 40):
- zoo: ``make_zoo`` trees of MLPs on sklearn digits, children fine-tuned with Adam. Tree
  shape (issue 40): a chain that branches twice, ``fans=(1, 1, 2, 1, 2)`` (per generation
  1, 1, 1, 2, 2, 4 models: 11 models, 10 edges, depth 5). Rooting the true undirected tree
  at a uniformly random node scores exactly 1 - (37/11)/10 = 0.664 directed accuracy on it,
  against 0.914 on the paper's VTHR shape 1 + 4 + 16, where the directed claim could not
  fail. Three more trees of the same kind are generated and HELD OUT (issue 53: on one
  held-out tree every lam > 0 tied at 1.0, so the choice was the tie-break's).
- direction: fixed a priori to ``"pretrain"`` (kurtosis increases parent -> child), because
  the generator's regime is Adam fine-tuning of small MLPs, where the spec's pilot found
  kurtosis to increase on 83-87% of edges. ``mother.kurtosis_monotone`` reports how often it
  does here, and the per-tree table gives each tree's sign. The same pipeline with the
  direction reversed (``"finetune"``, its own lam from the held-out tree) is reported as a
  control: if kurtosis carries the direction, reversing it must hurt.
- lam: chosen on the held-out trees from ``LAM_CHOICES`` by :func:`choose_lam` (best directed,
  then undirected accuracy there; among exact ties, the closest to the paper's 0.3 in log
  scale, so that where lam does not matter the paper's value is used, not the smallest).
  ``lam_spread`` reports how much lam matters there (best minus worst directed accuracy over
  the choices; 0: it does not). The evaluated trees never see it. lam = 0 is swept and
  reported but never chosen: it ignores the kurtosis, and the root is then networkx's
  tie-break (it follows the node order), which is not the method.
- distance: the ICLR ``l_FT`` (mean layer-wise RMS difference) over the square layers,
  read layer by layer from safetensors files; Ward clustering into the known number of trees.
- thresholds: undirected >= 0.95, clustering >= 0.95, directed >= 0.85 (control: the shape's
  expected random-root accuracy <= 0.70), directed - random root >= +0.10, LoRA
  rank-distance undirected >= 1.0, kurtosis monotone >= 0.8 (the spec's Adam pilot).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import networkx as nx
import numpy as np
import torch

from iclr25.claims import (
    Comparison,
    Context,
    Evidence,
    Setting,
    Table,
    claim,
    experiment,
    scalar,
)
from iclr25.mother.distances import stream_statistics
from iclr25.mother.metrics import clustering_accuracy, edge_accuracy
from iclr25.mother.sources import as_sources
from iclr25.mother.testbed import Zoo, make_lora_zoo, make_zoo
from iclr25.mother.tree import Direction, ModelForest, build_forest, recover_tree

DIRECTION = "pretrain"
REVERSED = "finetune"
RANDOM_ROOT_MAX = 0.70  # issue 40: above this the directed claim cannot fail
LAM_GRID = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3)
# lam is chosen among the positive values: lam = 0 ignores the kurtosis, and the root is
# then whatever networkx's tie-breaking returns (it follows the node order), not the method
LAM_CHOICES = LAM_GRID[1:]
PAPER_LAM = 0.3  # the paper's fixed lam
SWEEP = (0.0, 0.1, 0.3)  # the sweep; always inside LAM_GRID


@dataclass(frozen=True)
class TreeZoo(Setting):
    # budget: the zoo's training; recovery is closed-form
    budget_fields: ClassVar[tuple[str, ...]] = ("root_steps", "finetune_steps")
    n_trees: int          # evaluated trees
    fans: tuple[int, ...]  # children per node, generation by generation (``make_zoo``)
    root_steps: int       # Adam steps training each root on digits
    finetune_steps: int   # Adam steps fine-tuning each child on a new task
    n_held: int = 3       # more trees of the same kind, held out to choose lam


def random_root_accuracy(fans: tuple[int, ...]) -> float:
    """Exact expected directed accuracy of a tree of shape ``fans`` rooted at a uniform node.

    Rooting at a node of depth k reverses the k edges above it, so the expectation is
    1 - mean depth / edges.
    """
    counts = [1]
    for f in fans:
        counts.append(counts[-1] * f)
    n = sum(counts)
    if n < 2:
        raise ValueError(f"fans {fans!r} give a tree without edges")
    return 1 - sum(k * c for k, c in enumerate(counts)) / n / (n - 1)


@dataclass
class TreeEvidence(Evidence):
    undirected: float = scalar("fraction of edges")
    directed: float = scalar("fraction of edges")
    random_root_directed: float = scalar(
        "fraction of edges", "exact expectation: true undirected trees, uniform random root")
    reversed_directed: float = scalar(
        "fraction of edges", "control arm: the same pipeline with the direction reversed")
    beats_random_root: float = scalar("fraction of edges")
    clustering: float = scalar("fraction of models")
    clustering_official_l1: float = scalar("fraction of models")
    kurtosis_monotone: float = scalar("fraction of edges")
    root_accuracy: float = scalar("fraction of trees")
    lam: float = scalar("", "chosen on the held-out trees")
    lam_spread: float = scalar("fraction of edges", "held-out directed accuracy, best minus "
                                                    "worst lam of LAM_CHOICES (0: lam does "
                                                    "not matter there)")
    lam_reversed: float = scalar("", "chosen on the held-out trees, direction reversed")
    n_models: int = scalar("models")
    held_out: Table | None = None
    sweep: Table | None = None
    per_tree: Table | None = None
    cli: Table | None = None


def _cli_commands(setting: TreeZoo, seed: int, lam: float) -> Table:
    """The ``iclr25 mother`` commands that rebuild this run's zoo and forest figure."""
    fans = ",".join(map(str, setting.fans))
    return Table("the same zoo and forest from the command line",
                 ("step", "command"),
                 [("zoo (+ held-out trees)",
                   f"iclr25 mother make-zoo zoo --trees {setting.n_trees} --fans {fans} "
                   f"--root-steps {setting.root_steps} --finetune-steps "
                   f"{setting.finetune_steps} --hold-out {setting.n_held} --seed {seed}"),
                  ("λ on the held-out trees", f"iclr25 mother recover zoo/held-out --trees "
                   f"{setting.n_held} --lam L, "
                   f"for L in {', '.join(map(str, LAM_CHOICES))}"),
                  ("forest figure",
                   f"iclr25 mother recover zoo --trees {setting.n_trees} --direction "
                   f"{DIRECTION} --lam {lam:g} --out forest.png")])


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


_SHAPE = (1, 1, 2, 1, 2)
_SHAPE_DEVIATION = (
    f"tree shape fans={_SHAPE} (1, 1, 1, 2, 2, 4 models per generation, depth 5) instead of "
    f"the paper's VTHR 1 + 4 + 16: a uniformly random root scores exactly "
    f"{random_root_accuracy(_SHAPE):.3f} here and {random_root_accuracy((4, 4)):.3f} on VTHR "
    f"(issue 40: the baseline must be weak)")
_ZOO_DEVIATIONS = (
    "MLPs 64-64-64-64-k on sklearn digits (square 64x64 layers) instead of ViT-B models: "
    "offline CPU budget",
    "lam chosen on three held-out generated trees from a grid of positive values (ties: the "
    "paper's 0.3), not fixed at 0.3: the penalty scales with mean(D), which differs between "
    "model families",
)
_STEPS_DEVIATION = (
    "roots train 1,500 and children 500 Adam steps, against the spec's 3,000 / 1,500: CPU "
    "budget, every tree alike (issue 53: at the spec's steps the verdicts were the same)")


def _regime(setting: TreeZoo) -> str:
    return (f"Adam; root lr 3e-3 x {setting.root_steps} steps from random init; each child "
            f"lr 1e-3 x {setting.finetune_steps} steps from its parent (new task and head)")


def choose_lam(scores: dict[float, tuple[float, float]]) -> float:
    """The lam of ``LAM_CHOICES`` with the best (directed, undirected) held-out accuracy;
    among exact ties the closest to the paper's 0.3 in log scale (so where lam does not
    matter, the paper's value)."""
    best = max(scores[lam] for lam in LAM_CHOICES)
    tied = [lam for lam in LAM_CHOICES if scores[lam] == best]
    return min(tied, key=lambda lam: abs(np.log(lam / PAPER_LAM)))


def _held_out_scores(d_h: torch.Tensor, ku_h: torch.Tensor, names: list[str],
                     truth: ModelForest, direction: Direction) -> dict[float, tuple[float, float]]:
    """(directed, undirected) accuracy on the held-out trees at every lam of ``LAM_GRID``."""
    scores = {}
    for lam in LAM_GRID:
        f = build_forest(d_h, ku_h, names, direction=direction, lam=lam,
                         n_trees=len(truth.roots))
        scores[lam] = (edge_accuracy(f, truth), edge_accuracy(f, truth, False))
    return scores


def _held_out_lams(dir_h: Path, truth_h: ModelForest,
                   device: torch.device) -> tuple[float, dict, float]:
    """lam chosen on the held-out trees for DIRECTION, the scores of the grid there, and lam
    chosen for REVERSED."""
    src_h = as_sources(dir_h)
    d_h, ku_h = stream_statistics(src_h, metrics=("rms",), kurtosis_layers=None,
                                  device=device)
    names_h = [s.name for s in src_h]
    held_scores = _held_out_scores(d_h["rms"], ku_h, names_h, truth_h, DIRECTION)
    rev_scores = _held_out_scores(d_h["rms"], ku_h, names_h, truth_h, REVERSED)
    return choose_lam(held_scores), held_scores, choose_lam(rev_scores)


@experiment(
    quick=TreeZoo(n_trees=3, fans=_SHAPE, root_steps=200, finetune_steps=100,
                  deviations=(_SHAPE_DEVIATION, *_ZOO_DEVIATIONS,
                              "3 evaluated trees and 200/100 Adam steps: smoke test")),
    full=TreeZoo(n_trees=5, fans=_SHAPE, root_steps=1500, finetune_steps=500,
                 deviations=(_SHAPE_DEVIATION, *_ZOO_DEVIATIONS, _STEPS_DEVIATION)),
    cost=(2.8, 15),
)
def tree_zoo(setting: TreeZoo, ctx: Context) -> TreeEvidence:
    K = setting.n_trees
    zoo = make_zoo(K + setting.n_held, fans=setting.fans, root_steps=setting.root_steps,
                   finetune_steps=setting.finetune_steps, seed=ctx.seed, device=ctx.device)
    held = [n for n in zoo.names if int(n.split("-")[0]) >= K]
    zoo_h, zoo_e = _subzoo(zoo, held), _subzoo(zoo, [n for n in zoo.names if n not in held])
    truth_h, truth = zoo_h.truth, zoo_e.truth
    with tempfile.TemporaryDirectory() as tmp:
        dir_h, dir_e = zoo_h.save(Path(tmp) / "held"), zoo_e.save(Path(tmp) / "eval")
        lam_star, held_scores, lam_rev = _held_out_lams(dir_h, truth_h, ctx.device)
        # the method as a user runs it: a directory of safetensors in, a forest out
        forest = recover_tree(dir_e, direction=DIRECTION, lam=lam_star, n_trees=K,
                              device=ctx.device)
        src_e = as_sources(dir_e)
        d_e, ku_e = stream_statistics(src_e, metrics=("rms", "l1"), kurtosis_layers=None,
                                      device=ctx.device)
    names = [s.name for s in src_e]
    rev = build_forest(d_e["rms"], ku_e, names, direction=REVERSED, lam=lam_rev, n_trees=K)
    sweep = {(penalty, lam): _scores(build_forest(d_e["rms"], ku_e, names, direction=DIRECTION,
                                                  lam=lam, n_trees=K, penalty=penalty), truth)
             for penalty in ("binary", "margin") for lam in LAM_GRID}
    idx = {n: i for i, n in enumerate(names)}
    ku = ku_e.cpu().tolist()
    change = {e: ku[idx[e[1]]] - ku[idx[e[0]]] for e in truth.edges}
    regime = _regime(setting)
    per_tree = []
    for t, edges in enumerate(_tree_edges(truth)):
        rises = float(np.mean([change[e] > 0 for e in edges]))
        sign = "rises" if rises >= 0.8 else "falls" if rises <= 0.2 else "mixed"
        per_tree.append((t, len(edges), edge_accuracy(forest, edges), edge_accuracy(rev, edges),
                         rises, float(np.mean([change[e] for e in edges])), sign,
                         ku[idx[truth.roots[t]]], regime))
    f_l1 = build_forest(d_e["rms"], ku_e, names, direction=DIRECTION, lam=lam_star, n_trees=K,
                        cluster_distances=d_e["l1"])
    undirected, directed, clustering = _scores(forest, truth)
    random_root = _random_root_accuracy(truth)
    forest.plot(ax=ctx.figure("forest", figsize=(max(4.0, 0.45 * len(names)), 3.5)).subplots())
    _sweep_figure(ctx.figure("lambda_sweep", figsize=(9, 3.4)), sweep, lam_star, random_root,
                  [(truth.labels[e[1]], c) for e, c in change.items()], K, len(names))
    return TreeEvidence(
        undirected=undirected, directed=directed, random_root_directed=random_root,
        reversed_directed=edge_accuracy(rev, truth), beats_random_root=directed - random_root,
        clustering=clustering, clustering_official_l1=clustering_accuracy(f_l1, truth),
        kurtosis_monotone=float(np.mean([c > 0 for c in change.values()])),
        root_accuracy=float(np.mean([forest.parents[r] is None for r in truth.roots])),
        lam=lam_star, lam_reversed=lam_rev, n_models=len(names),
        lam_spread=(max(held_scores[lam][0] for lam in LAM_CHOICES)
                    - min(held_scores[lam][0] for lam in LAM_CHOICES)),
        held_out=Table(f"{setting.n_held} held-out trees: accuracy by lambda",
                       ("lambda", "directed", "undirected"),
                       [(lam, *held_scores[lam]) for lam in LAM_GRID]),
        sweep=Table("evaluated trees: accuracy by penalty and lambda",
                    ("penalty", "lambda", "undirected", "directed", "clustering"),
                    [(p, lam, *v) for (p, lam), v in sweep.items()]),
        per_tree=Table(f"per tree: directed accuracy ({DIRECTION!r} and reversed), kurtosis "
                       f"sign along the true edges, and the regime that trained the tree",
                       ("tree", "edges", "directed", "reversed", "kurtosis rises",
                        "mean kurtosis change", "sign", "root kurtosis", "training regime"),
                       per_tree),
        cli=_cli_commands(setting, ctx.seed, lam_star),
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
    # budget: nothing trains: the LoRA updates are drawn, not learned
    budget_fields: ClassVar[tuple[str, ...]] = ()
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
    undirected_rms: float = scalar("fraction of edges", "the same pipeline with the plain RMS "
                                                        "weight distance instead of the rank")


_LORA_DEVIATION = ("merged random rank-r updates (r in 4, 8, 16) of two 64x64 'value' "
                   "matrices instead of LoRA-fine-tuned ViTs: offline CPU budget")


@experiment(quick=LoraZoo(2, 3, 2, dim=64, deviations=(_LORA_DEVIATION,
                                                      "2 trees of 1 + 3 + 6: smoke test")),
            full=LoraZoo(5, 4, 4, dim=64, deviations=(_LORA_DEVIATION,)),
            cost=(0.1, 3))
def lora_zoo(setting: LoraZoo, ctx: Context) -> LoraEvidence:
    zoo = make_lora_zoo(setting.n_trees, setting.n_children, setting.n_grandchildren,
                        dim=setting.dim, seed=ctx.seed)
    forest = recover_tree(zoo.models, direction="none", lam=0.0, n_trees=setting.n_trees,
                          metric="rank", device=ctx.device)
    rms = recover_tree(zoo.models, direction="none", lam=0.0, n_trees=setting.n_trees,
                       metric="rms", device=ctx.device)
    D = forest.distances
    idx = {n: i for i, n in enumerate(forest.names)}
    edge_ranks = [float(D[idx[p], idx[c]]) for p, c in zoo.truth.edges]
    return LoraEvidence(
        undirected=edge_accuracy(forest, zoo.truth, directed=False),
        undirected_rms=edge_accuracy(rms, zoo.truth, directed=False),
        clustering=clustering_accuracy(forest, zoo.truth), n_models=len(zoo.models),
        mean_rank_true_edges=float(np.mean(edge_ranks)),
        mean_rank_all_pairs=float(D[torch.triu_indices(len(D), len(D), 1,
                                                       device=D.device).unbind()].mean()))


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
    baseline="random root (true undirected trees, uniform root)",
    control=lambda ev: ev.random_root_directed <= RANDOM_ROOT_MAX,
    control_doc=f"the tree shape's exact expected random-root accuracy is <= "
                f"{RANDOM_ROOT_MAX}, so that 0.85 is out of chance's reach",
    trivial=lambda ev: ev.reversed_directed,
    trivial_doc="the same pipeline with the kurtosis direction reversed (its own lambda)",
)
def directed(ev: TreeEvidence) -> Comparison:
    return Comparison(ours=ev.directed, baseline=ev.random_root_directed, value=ev.directed)


@claim(
    "mother.directed_beats_random_root", experiment=tree_zoo,
    sentence="The kurtosis direction carries information: MoTHer's directed accuracy exceeds "
             "that of the true undirected trees each rooted at a uniformly random node.",
    metric="directed accuracy minus expected random-root directed accuracy", unit="fraction",
    threshold=0.10, direction=">=",
    paper_figure="kurtosis monotonicity along fine-tuning (Sec. 4; no number)",
    baseline="random root (true undirected trees, uniform root)",
    # the baseline is an exact expectation, not trained: what can make the comparison
    # uninformative is the tree shape, as for mother.directed_accuracy
    control=lambda ev: ev.random_root_directed <= RANDOM_ROOT_MAX,
    control_doc=f"the tree shape's exact expected random-root accuracy is <= "
                f"{RANDOM_ROOT_MAX}, so that the random root leaves room above it",
    trivial=lambda ev: ev.reversed_directed - ev.random_root_directed,
    trivial_doc="the same pipeline with the kurtosis direction reversed (its own lambda)",
)
def directed_beats_random_root(ev: TreeEvidence) -> Comparison:
    return Comparison(ours=ev.directed, baseline=ev.random_root_directed,
                      value=ev.beats_random_root)


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
    # exact by construction for the rank distance (a merged rank-r update): the claim says
    # something only if a distance that ignores the rank does not also recover every edge
    trivial=lambda ev: ev.undirected_rms,
    trivial_doc="the plain RMS weight distance (MoTHer's default l_FT) in place of the rank",
)
def lora_rank_undirected(ev: LoraEvidence) -> float:
    return ev.undirected
