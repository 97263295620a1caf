"""Reproduction of MoTHer's central claim on a generated zoo of model trees.

Setting (fixed before measuring, from the spec's proposed pass criteria):
- zoo: ``make_zoo`` trees of MLPs on sklearn digits, children fine-tuned with Adam.
  quick: 4 trees x 9 models (1 + 2 + 6); full: 5 trees x 21 models (1 + 4 + 16, the paper's
  VTHR layout). One more tree of the same kind is generated and HELD OUT.
- direction: fixed a priori to ``"pretrain"`` (kurtosis increases parent -> child), because
  the generator's regime is Adam fine-tuning of small MLPs, where the spec's pilot found
  kurtosis to increase on 83-87% of edges. The measured fraction is reported.
- lam: chosen on the held-out tree from ``LAM_GRID`` (best directed accuracy there; ties ->
  better undirected accuracy, then the smaller lam). The evaluated trees never see it.
- distance: the ICLR ``l_FT`` (mean layer-wise RMS difference) over the square layers,
  read layer by layer from safetensors files; Ward clustering into the known number of trees.
- thresholds: undirected >= 0.95, clustering >= 0.95, directed >= 0.85, LoRA rank-distance
  undirected >= 1.0.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import torch

from iclr25.claims import Context, Measurement, Scale, claim
from iclr25.mother.distances import stream_statistics
from iclr25.mother.metrics import clustering_accuracy, edge_accuracy
from iclr25.mother.sources import as_sources
from iclr25.mother.tree import ModelForest, build_forest, recover_tree
from iclr25.mother.zoo import Zoo, make_lora_zoo, make_zoo

PAPER = "Unsupervised Model Tree Heritage Recovery"
DIRECTION = "pretrain"
LAM_GRID = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3)
SWEEP = (0.0, 0.1, 0.3)  # the sweep; always inside LAM_GRID

_SETTINGS = {
    Scale.quick: dict(n_trees=4, n_children=2, n_grandchildren=3, root_steps=300,
                      finetune_steps=150),
    Scale.full: dict(n_trees=5, n_children=4, n_grandchildren=4, root_steps=1500,
                     finetune_steps=500),
}


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


def _scores(forest: ModelForest, truth: ModelForest) -> dict[str, Any]:
    per_tree = []
    for root in truth.roots:
        members = {n for n, lab in truth.labels.items() if lab == truth.labels[root]}
        t_edges = [e for e in truth.edges if e[1] in members]
        if t_edges:
            per_tree.append(edge_accuracy(forest, t_edges))
    return {"undirected": edge_accuracy(forest, truth, directed=False),
            "directed": edge_accuracy(forest, truth),
            "clustering": clustering_accuracy(forest, truth),
            "directed_per_tree": per_tree}


@functools.lru_cache(maxsize=4)
def _experiment(scale: Scale, seed: int) -> dict[str, Any]:
    cfg = dict(_SETTINGS[scale])
    K = cfg["n_trees"]
    zoo = make_zoo(**{**cfg, "n_trees": K + 1}, seed=seed)
    held = [n for n in zoo.names if n.startswith(f"{K}-")]
    evald = [n for n in zoo.names if not n.startswith(f"{K}-")]
    zoo_h, zoo_e = _subzoo(zoo, held), _subzoo(zoo, evald)
    truth_h, truth_e = zoo_h.truth, zoo_e.truth
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
    sweep = {}
    for penalty in ("binary", "margin"):
        for lam in LAM_GRID:
            f = build_forest(d_e["rms"], ku_e, names, direction=DIRECTION, lam=lam,
                             n_trees=K, penalty=penalty)
            sweep[f"{penalty}:{lam:g}"] = _scores(f, truth_e)
    idx = {n: i for i, n in enumerate(names)}
    change = [float(ku_e[idx[c]] - ku_e[idx[p]]) for p, c in truth_e.edges]
    # the sign is shared within a tree but may differ between trees (it depends on the root)
    sign_per_tree = [float(np.mean([bool(ku_e[idx[c]] > ku_e[idx[p]])
                                    for p, c in truth_e.edges
                                    if truth_e.labels[c] == truth_e.labels[r]]))
                     for r in truth_e.roots]
    f_l1 = build_forest(d_e["rms"], ku_e, names, direction=DIRECTION, lam=lam_star, n_trees=K,
                        cluster_distances=d_e["l1"])
    return {
        "forest": forest, "truth": truth_e, "scores": _scores(forest, truth_e),
        "lam": lam_star, "held_out": {f"{k:g}": list(v) for k, v in held_scores.items()},
        "sweep": sweep, "kurtosis_change": change,
        "kurtosis_change_tree": [truth_e.labels[c] for _, c in truth_e.edges],
        "frac_kurtosis_increases": float(np.mean(np.array(change) > 0)),
        "frac_kurtosis_increases_per_tree": sign_per_tree,
        "root_accuracy": float(np.mean([forest.parents[r] is None for r in truth_e.roots])),
        "clustering_l1": clustering_accuracy(f_l1, truth_e),
        "random_root_directed": _random_root_accuracy(truth_e),
        "n_models": len(names), "n_trees": K, "zoo": cfg,
    }


def _details(exp: dict[str, Any]) -> dict[str, Any]:
    s = exp["scores"]
    return {
        "lam_chosen_on_held_out_tree": exp["lam"], "direction": DIRECTION,
        "held_out_directed_undirected_by_lam": exp["held_out"],
        "undirected": s["undirected"], "directed": s["directed"], "clustering": s["clustering"],
        "directed_per_tree": s["directed_per_tree"],
        "clustering_official_l1_distance": exp["clustering_l1"],
        "frac_edges_kurtosis_increases": exp["frac_kurtosis_increases"],
        "frac_edges_kurtosis_increases_per_tree": exp["frac_kurtosis_increases_per_tree"],
        "root_accuracy": exp["root_accuracy"],
        "baseline_random_root_directed": exp["random_root_directed"],
        "lam_sweep": {k: {m: v[m] for m in ("undirected", "directed", "clustering")}
                      for k, v in exp["sweep"].items()},
        "n_models": exp["n_models"], "n_trees": exp["n_trees"], "zoo": exp["zoo"],
    }


def _sweep_figure(exp: dict[str, Any]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9, 3.4))
    for penalty, ls in (("binary", "-"), ("margin", "--")):
        for metric, color in (("undirected", "C0"), ("directed", "C3")):
            ys = [exp["sweep"][f"{penalty}:{lam:g}"][metric] for lam in LAM_GRID]
            ax.plot(LAM_GRID, ys, ls, color=color, marker="o", ms=3,
                    label=f"{metric} ({penalty})")
    for lam in SWEEP:
        ax.axvline(lam, color="0.85", lw=0.8, zorder=0)
    ax.axvline(exp["lam"], color="k", lw=1, ls=":", label=f"chosen lam={exp['lam']:g}")
    ax.axhline(exp["random_root_directed"], color="C3", lw=0.8, ls=":",
               label="directed, random root")
    ax.set_xlabel("lambda (direction penalty / mean distance)")
    ax.set_ylabel("edge accuracy")
    ax.set_title(f"direction={DIRECTION!r}, {exp['n_trees']} trees, {exp['n_models']} models")
    ax.legend(fontsize=6, loc="lower left")
    ax.set_ylim(0, 1.03)
    ch = np.array(exp["kurtosis_change"])
    tr = np.array(exp["kurtosis_change_tree"])
    jitter = np.random.default_rng(0).uniform(-0.2, 0.2, len(ch))
    ax2.scatter(tr + jitter, ch, s=10, c=[f"C{t % 10}" for t in tr])
    ax2.axhline(0, color="k", lw=0.8)
    ax2.set_xlabel("tree")
    ax2.set_ylabel("kurtosis(child) - kurtosis(parent)")
    ax2.set_xticks(range(exp["n_trees"]))
    ax2.set_title(f"true edges: {100 * exp['frac_kurtosis_increases']:.0f}% increase")
    fig.tight_layout()
    return fig


@claim(
    "mother.undirected_accuracy", paper=PAPER,
    sentence="The weight-distance minimum directed spanning tree recovers the (undirected) "
             "fine-tuning edges of each model tree.",
    metric="undirected edge accuracy", threshold=0.95, direction=">=",
    paper_figure="not in our notes (paper reports near-perfect recovery on VTHR; Table 1 not "
                 "read)",
)
def _undirected(ctx: Context) -> Measurement:
    import matplotlib

    matplotlib.use("Agg")
    exp = _experiment(ctx.scale, ctx.seed)
    fig = exp["forest"].plot()
    return Measurement(value=exp["scores"]["undirected"], details=_details(exp),
                       figures=[ctx.savefig(fig, "forest")])


@claim(
    "mother.directed_accuracy", paper=PAPER,
    sentence="Kurtosis of the weights orients the edges: MoTHer recovers who was fine-tuned "
             "from whom (directed edges), at a lambda chosen on a held-out tree.",
    metric="directed edge accuracy", threshold=0.85, direction=">=",
    paper_figure="not in our notes (paper reports high directed accuracy on VTHR FT/LoRA; "
                 "Table 1 not read)",
)
def _directed(ctx: Context) -> Measurement:
    exp = _experiment(ctx.scale, ctx.seed)
    return Measurement(value=exp["scores"]["directed"], details=_details(exp),
                       figures=[ctx.savefig(_sweep_figure(exp), "lambda_sweep")])


@claim(
    "mother.directed_beats_random_root", paper=PAPER,
    sentence="The kurtosis direction carries information: MoTHer's directed accuracy exceeds "
             "that of the true undirected trees each rooted at a uniformly random node.",
    metric="directed accuracy minus expected random-root directed accuracy",
    threshold=0.0, direction=">=",
    paper_figure="not in our notes (the paper's kurtosis-monotonicity finding, Sec. 4)",
)
def _directed_vs_chance(ctx: Context) -> Measurement:
    # With 1 + 4 + 16 nodes per tree a random root already orients ~0.91 of the edges, so the
    # absolute directed-accuracy threshold alone says little about the direction signal.
    exp = _experiment(ctx.scale, ctx.seed)
    return Measurement(value=exp["scores"]["directed"] - exp["random_root_directed"],
                       details=_details(exp))


@claim(
    "mother.clustering_accuracy", paper=PAPER,
    sentence="Ward clustering of the pairwise weight distances splits a Model Graph into its "
             "separate trees.",
    metric="tree clustering accuracy", threshold=0.95, direction=">=",
    paper_figure="not in our notes (paper reports near-perfect clustering of VTHR's 5 trees)",
)
def _clustering(ctx: Context) -> Measurement:
    exp = _experiment(ctx.scale, ctx.seed)
    return Measurement(value=exp["scores"]["clustering"], details=_details(exp),
                       figures=[ctx.savefig(_sweep_figure(exp), "lambda_sweep")])


@claim(
    "mother.lora_rank_undirected", paper=PAPER,
    sentence="For LoRA-merged models the rank distance sum_l rank(W_i - W_j) recovers every "
             "undirected edge (a child differs from its parent by rank r, others by more).",
    metric="undirected edge accuracy (rank distance)", threshold=1.0, direction=">=",
    paper_figure="not in our notes (paper reports near-perfect LoRA-V/LoRA-F recovery)",
)
def _lora(ctx: Context) -> Measurement:
    shape = (2, 3, 2) if ctx.quick else (5, 4, 4)
    # dim 64 > 2 * max rank: two stacked rank-16 updates must not saturate the rank
    zoo = make_lora_zoo(*shape, dim=64, seed=ctx.seed)
    forest = recover_tree(zoo.models, direction="none", lam=0.0, n_trees=shape[0],
                          metric="rank")
    D = forest.distances
    assert D is not None
    idx = {n: i for i, n in enumerate(forest.names)}
    edge_ranks = [float(D[idx[p], idx[c]]) for p, c in zoo.truth.edges]
    return Measurement(
        value=edge_accuracy(forest, zoo.truth, directed=False),
        details={"clustering": clustering_accuracy(forest, zoo.truth),
                 "n_models": len(zoo.models), "n_trees": shape[0],
                 "mean_rank_distance_true_edges": float(np.mean(edge_ranks)),
                 "mean_rank_distance_all_pairs": float(D[torch.triu_indices(
                     len(D), len(D), 1).unbind()].mean())},
    )
