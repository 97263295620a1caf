import json

import networkx as nx
import pytest
import torch
from safetensors.torch import save_file

from iclr25.mother import (
    ModelForest,
    build_forest,
    cluster_trees,
    clustering_accuracy,
    direction_penalty,
    edge_accuracy,
    edge_costs,
    recover_tree,
)
from iclr25.mother.testbed import load_truth, make_zoo


def test_four_tree_recovered_exactly_in_the_pretrain_regime(four_tree):
    models, parents = four_tree
    forest = recover_tree(models, direction="pretrain", lam=0.3)
    assert forest.parents == parents and forest.roots == ["R"]
    assert edge_accuracy(forest, parents) == 1.0


def test_four_tree_finetune_regime_roots_at_the_highest_kurtosis(four_tree):
    # Worked by hand (see conftest, u = unit distance): mean(D) = 0.945u, penalty 0.2835u.
    # Rooting at G costs 3u + one penalty (R -> B raises kurtosis); every other spanning
    # arborescence costs more, so the answer is G -> A -> R -> B.
    models, _ = four_tree
    forest = recover_tree(models, direction="finetune", lam=0.3)
    assert forest.parents == {"R": "A", "A": "G", "B": "R", "G": None}
    assert edge_accuracy(forest, four_tree[1], directed=False) == 1.0
    assert edge_accuracy(forest, four_tree[1], directed=True) == pytest.approx(1 / 3)


def test_four_tree_from_safetensors_directory(four_tree, tmp_path):
    models, parents = four_tree
    for name, sd in models.items():
        save_file(sd, str(tmp_path / f"{name}.safetensors"))
    forest = recover_tree(tmp_path, direction="increasing", lam=0.3)
    assert forest.parents == {n: parents[n] for n in ["A", "B", "G", "R"]}


def test_edge_costs_and_penalty_semantics():
    ku = torch.tensor([0.0, 1.0, 3.0], dtype=torch.float64)
    T = direction_penalty(ku, "finetune")  # kurtosis should drop parent -> child
    assert T[0, 1] == 1 and T[1, 0] == 0 and T[2, 0] == 0 and T[0, 2] == 1
    assert torch.equal(direction_penalty(ku, "pretrain"), T.T)
    assert torch.equal(direction_penalty(ku, "none"), torch.zeros(3, 3, dtype=torch.float64))
    M = direction_penalty(ku, "pretrain", penalty="margin")
    assert M[2, 0] == 1.0 and M[1, 0] == pytest.approx(1 / 3) and M[0, 2] == 0
    D = torch.ones(3, 3, dtype=torch.float64).fill_diagonal_(0)
    C = edge_costs(D, ku, lam=0.5, direction="finetune")
    assert torch.isinf(C.diagonal()).all()
    assert C[0, 1] == pytest.approx(1 + 0.5 * 6 / 9) and C[1, 0] == 1  # mean(D) with diagonal


def test_build_forest_matches_networkx_on_random_costs():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(7, 3, generator=g, dtype=torch.float64)
    D = torch.cdist(X, X)
    ku = torch.randn(7, generator=g, dtype=torch.float64)
    forest = build_forest(D, ku, lam=0.3, direction="pretrain")
    C = edge_costs(D, ku, 0.3, "pretrain")
    G = nx.DiGraph()
    G.add_weighted_edges_from((i, j, float(C[i, j])) for i in range(7) for j in range(7) if i != j)
    best = nx.minimum_spanning_arborescence(G).size(weight="weight")
    idx = {n: i for i, n in enumerate(forest.names)}
    got = sum(float(C[idx[p], idx[c]]) for p, c in forest.edges)
    assert got == pytest.approx(best) and len(forest.roots) == 1


def test_ward_clustering_separates_far_groups_and_labels_by_first_appearance():
    g = torch.Generator().manual_seed(0)
    X = torch.cat([torch.randn(4, 2, generator=g) + 20, torch.randn(3, 2, generator=g)])
    X = X[torch.tensor([4, 0, 5, 1, 6, 2, 3])]
    labels = cluster_trees(torch.cdist(X, X), 2)
    assert labels.tolist() == [0, 1, 0, 1, 0, 1, 1]
    with pytest.raises(ValueError, match="n_trees"):
        cluster_trees(torch.cdist(X, X), 8)


def test_edge_and_clustering_accuracy_known_values():
    truth = {"r": None, "a": "r", "b": "r", "c": "a"}
    pred = {"a": None, "r": "a", "b": "r", "c": "a"}  # r-a flipped
    assert edge_accuracy(pred, truth) == pytest.approx(2 / 3)
    assert edge_accuracy(pred, truth, directed=False) == 1.0
    assert edge_accuracy([("r", "a")], truth) == pytest.approx(1 / 3)
    g = nx.DiGraph([("r", "a"), ("r", "b"), ("a", "c")])
    assert edge_accuracy(g, ModelForest.from_parents(truth)) == 1.0
    assert clustering_accuracy([1, 1, 0, 0], [0, 0, 1, 1]) == 1.0
    assert clustering_accuracy([0, 0, 0, 1], [0, 0, 1, 1]) == 0.75
    # mappings are matched by model name, not by order
    assert clustering_accuracy({"x": 5, "y": 5, "z": 7}, {"z": 0, "x": 1, "y": 1}) == 1.0
    assert clustering_accuracy({"x": 5, "y": 5, "z": 7}, {"z": 1, "x": 1, "y": 0}) == 2 / 3


def test_model_forest_exports(four_tree, tmp_path):
    models, parents = four_tree
    forest = recover_tree(models, direction="pretrain", n_trees=1)
    G = forest.graph
    assert set(G.edges) == {("R", "A"), ("R", "B"), ("A", "G")}
    assert all("kurtosis" in G.nodes[n] for n in G)
    dot = forest.to_dot()
    assert '"R" -> "A";' in dot and dot.startswith("digraph")
    assert json.loads(forest.to_json())["parents"] == parents
    for suffix in (".dot", ".json", ".png"):
        assert forest.save(tmp_path / f"t{suffix}").stat().st_size > 0
    with pytest.raises(ValueError, match="cycle"):
        ModelForest.from_parents({"a": "b", "b": "a"})


def test_zoo_is_seeded_and_has_the_promised_layout(tmp_path):
    kw = dict(width=16, depth=2, root_steps=5, finetune_steps=3)
    a = make_zoo(2, 2, 1, seed=3, **kw)
    b = make_zoo(2, 2, 1, seed=3, **kw)
    c = make_zoo(2, 2, 1, seed=4, **kw)
    assert a.names == b.names and len(a.names) == 2 * (1 + 2 + 2)
    assert all(torch.equal(a.models[n][k], b.models[n][k]) for n in a.names for k in a.models[n])
    assert not torch.equal(a.models["0-X-X"]["fc2.weight"], c.models["0-X-X"]["fc2.weight"])
    assert a.parents["0-1-0"] == "0-1-X" and a.parents["1-0-X"] == "1-X-X"
    assert a.truth.n_trees == 2
    a.save(tmp_path)

    assert load_truth(tmp_path).parents == a.parents
    assert len(list(tmp_path.glob("*.safetensors"))) == 10


def test_zoo_with_fans_grows_one_generation_per_entry():
    kw = dict(width=16, depth=2, root_steps=3, finetune_steps=2, seed=1)
    z = make_zoo(2, fans=(1, 2, 0), **kw)
    # per tree 1 + 1 + 2 models; a zero fan ends the tree
    assert z.names == ["0-X-X-X", "1-X-X-X", "0-0-X-X", "1-0-X-X",
                       "0-0-0-X", "0-0-1-X", "1-0-0-X", "1-0-1-X"]
    assert z.parents["0-0-1-X"] == "0-0-X-X" and z.parents["1-0-X-X"] == "1-X-X-X"
    # fans=(n_children, n_grandchildren) is the default layout, draw for draw
    a, b = make_zoo(1, 2, 1, **kw), make_zoo(1, fans=(2, 1), **kw)
    assert a.names == b.names
    assert all(torch.equal(a.models[n][k], b.models[n][k]) for n in a.names for k in a.models[n])
    with pytest.raises(ValueError, match="either fans"):
        make_zoo(1, 2, fans=(1,))
    with pytest.raises(TypeError, match="fans"):
        make_zoo(1, fans=3)
    with pytest.raises(ValueError, match="fans"):
        make_zoo(1, fans=(1, -1))


@pytest.mark.parametrize("fans, expected", [
    ((4, 4), 1 - (36 / 21) / 20),     # VTHR: 4 children at depth 1, 16 at depth 2
    ((1, 1, 1), 0.5),                 # a chain: a random root reverses half the edges
    ((3,), 0.75),                     # a star: only rooting at a leaf reverses its edge
    ((1, 1, 2, 1, 2), 1 - (37 / 11) / 10),
])
def test_random_root_accuracy_is_exact(fans, expected):
    from iclr25.mother.claim import _random_root_accuracy, random_root_accuracy
    from iclr25.mother.testbed import _names

    assert random_root_accuracy(fans) == pytest.approx(expected, abs=1e-12)
    # the same expectation from the true forest's graph (what the experiment reports)
    truth = ModelForest.from_parents(dict(_names(3, fans)))
    assert _random_root_accuracy(truth) == pytest.approx(expected, abs=1e-12)
    # and by brute force over the roots of one tree
    one = ModelForest.from_parents(dict(_names(1, fans)))
    und = one.graph.to_undirected()
    accs = []
    for r in und.nodes:
        parents = {r: None} | {c: p for p, c in nx.bfs_edges(und, r)}
        accs.append(edge_accuracy(ModelForest.from_parents(parents), one))
    assert sum(accs) / len(accs) == pytest.approx(expected, abs=1e-12)
