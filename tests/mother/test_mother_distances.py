import math
import weakref

import numpy as np
import pytest
import scipy.stats
import torch
from safetensors.torch import save_file

from iclr25.mother import (
    as_sources,
    kurtosis_scores,
    pairwise_distances,
    recover_tree,
    select_layers,
)
from iclr25.mother.distances import stream_statistics
from iclr25.mother.sources import ModelSource, StateDictSource
from iclr25.mother.testbed import make_lora_zoo


def test_four_tree_distances_and_kurtosis_are_the_hand_values(four_tree):
    models, _ = four_tree
    D = pairwise_distances(models)
    u = math.sqrt(8 / 64)
    want = u * torch.tensor([[0, 1, 1, 2**0.5],      # R A B G
                             [1, 0, 2**0.5, 1],
                             [1, 2**0.5, 0, 3**0.5],
                             [2**0.5, 1, 3**0.5, 0]], dtype=torch.float64)
    torch.testing.assert_close(D, want)
    ku = kurtosis_scores(models)
    torch.testing.assert_close(ku, torch.tensor([-2, -13 / 7, -13 / 7, -5 / 3],
                                                dtype=torch.float64))


def _random_models(n_models=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [{"a.weight": torch.randn(6, 6, generator=g), "b.weight": torch.randn(4, 4, generator=g),
             "c.weight": torch.randn(3, 5, generator=g), "c.bias": torch.randn(3, generator=g)}
            for _ in range(n_models)]


def test_rms_and_l1_match_a_direct_double_loop():
    models = _random_models()
    square = ["a.weight", "b.weight"]
    want_rms = torch.tensor([[np.mean([float((m1[k] - m2[k]).pow(2).mean().sqrt()) for k in square])
                              for m2 in models] for m1 in models], dtype=torch.float64)
    want_l1 = torch.tensor([[sum(float((m1[k] - m2[k]).abs().mean()) for k in square)
                             for m2 in models] for m1 in models], dtype=torch.float64)
    torch.testing.assert_close(pairwise_distances(models), want_rms, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(pairwise_distances(models, metric="l1"), want_l1, rtol=1e-6,
                               atol=1e-7)


def test_rms_keeps_precision_for_nearly_identical_large_weights():
    g = torch.Generator().manual_seed(1)
    base = 100 + torch.randn(64, 64, generator=g)
    models = [{"w": base + 1e-3 * torch.randn(64, 64, generator=g)} for _ in range(4)]
    direct = torch.tensor([[float((a["w"].double() - b["w"].double()).pow(2).mean().sqrt())
                            for b in models] for a in models], dtype=torch.float64)
    torch.testing.assert_close(pairwise_distances(models), direct, rtol=1e-4, atol=1e-9)


def test_kurtosis_matches_scipy_sum_over_layers():
    models = _random_models()
    want = [sum(scipy.stats.kurtosis(m[k].double().numpy().ravel())
                for k in ("a.weight", "b.weight")) for m in models]
    torch.testing.assert_close(kurtosis_scores(models), torch.tensor(want, dtype=torch.float64))
    only_a = [scipy.stats.kurtosis(m["a.weight"].double().numpy().ravel()) for m in models]
    torch.testing.assert_close(kurtosis_scores(models, layers="a."),
                               torch.tensor(only_a, dtype=torch.float64))


def test_layer_selection():
    srcs = as_sources(_random_models(2))
    assert select_layers(srcs) == ["a.weight", "b.weight"]  # square 2-D only
    assert select_layers(srcs, "b.") == ["b.weight"]
    assert select_layers(srcs, ["c.weight"]) == ["c.weight"]  # explicit names: any 2-D
    assert select_layers(srcs, lambda k: k.startswith("a")) == ["a.weight"]


def test_inputs_are_not_modified():
    models = _random_models()
    before = [{k: v.clone() for k, v in m.items()} for m in models]
    recover_tree(models, direction="pretrain", n_trees=2)
    pairwise_distances(models, metric="rank")
    for m, b in zip(models, before, strict=True):
        assert all(torch.equal(m[k], b[k]) for k in m)


def test_rank_distance_recovers_lora_trees():
    zoo = make_lora_zoo(2, 3, 2, dim=24, ranks=(2, 4, 6), seed=0)
    D = pairwise_distances(zoo.models, metric="rank")
    names = zoo.names
    # a child differs from its parent by exactly its update rank in each of the 2 layers
    for c, p in zoo.parents.items():
        if p is not None:
            r = int(D[names.index(p), names.index(c)]) // 2
            assert r in (2, 4, 6) and int(D[names.index(p), names.index(c)]) == 2 * r
    from iclr25.mother import edge_accuracy

    forest = recover_tree(zoo.models, direction="none", lam=0.0, n_trees=2, metric="rank")
    assert edge_accuracy(forest, zoo.parents, directed=False) == 1.0


def _save_all(models, tmp_path, kind):
    for i, m in enumerate(models):
        if kind == "safetensors":
            save_file(m, str(tmp_path / f"m{i}.safetensors"))
        else:
            torch.save(m, tmp_path / f"m{i}.pt")


@pytest.mark.parametrize("kind", ["safetensors", "pt"])
def test_files_give_the_same_answer_as_memory(tmp_path, kind):
    models = _random_models()
    _save_all(models, tmp_path, kind)
    torch.testing.assert_close(pairwise_distances(tmp_path), pairwise_distances(models))
    torch.testing.assert_close(kurtosis_scores(tmp_path), kurtosis_scores(models))
    paths = sorted(tmp_path.iterdir())
    assert [s.name for s in as_sources(paths)] == [f"m{i}" for i in range(5)]


class _Counting(StateDictSource):
    """Records every read and how many returned tensors are alive at once."""

    log: list = []
    alive = 0
    peak = 0

    def get(self, key):
        t = super().get(key).clone()
        cls = type(self)
        cls.log.append((key, self.name))
        cls.alive += 1
        cls.peak = max(cls.peak, cls.alive)
        weakref.finalize(t, lambda: setattr(cls, "alive", cls.alive - 1))
        return t


def test_streaming_reads_layer_by_layer_one_tensor_at_a_time():
    models = _random_models(6)
    _Counting.log, _Counting.alive, _Counting.peak = [], 0, 0
    srcs: list[ModelSource] = [_Counting(m, f"m{i}") for i, m in enumerate(models)]
    d, ku = stream_statistics(srcs, metrics=("rms", "rank"), kurtosis_layers=None)
    # each (layer, model) read once, layer-major: all models' layer a, then all of layer b
    assert _Counting.log == [(k, f"m{i}") for k in ("a.weight", "b.weight") for i in range(6)]
    assert _Counting.peak == 1  # never two models' tensors held outside the per-layer stack
    torch.testing.assert_close(d["rms"], pairwise_distances(models))


def test_distances_are_permutation_equivariant_and_the_tree_invariant(four_tree):
    models, parents = four_tree
    order = ["G", "B", "R", "A"]
    D = pairwise_distances(models)
    Dp = pairwise_distances({n: models[n] for n in order})
    perm = [list(models).index(n) for n in order]
    torch.testing.assert_close(Dp, D[perm][:, perm])
    forest = recover_tree({n: models[n] for n in order}, direction="pretrain")
    assert forest.parents == {n: parents[n] for n in order}


def test_as_sources_does_not_rename_the_callers_sources():
    models = _random_models(2)
    srcs = [StateDictSource(m, f"s{i}") for i, m in enumerate(models)]
    renamed = as_sources(srcs, names=["a", "b"])
    assert [s.name for s in renamed] == ["a", "b"]
    assert [s.name for s in srcs] == ["s0", "s1"]
    assert [s.name for s in as_sources({"x": srcs[0], "y": srcs[1]})] == ["x", "y"]
