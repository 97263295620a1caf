import pytest
import torch
from safetensors.torch import save_file

from iclr25.mother import build_forest, kurtosis_scores, pairwise_distances, recover_tree


def _m(n=4, seed=0):
    return {"w": torch.randn(n, n, generator=torch.Generator().manual_seed(seed))}


def test_fewer_than_two_models():
    with pytest.raises(ValueError, match="at least 2"):
        pairwise_distances([_m()])
    with pytest.raises(ValueError, match="at least 2"):
        recover_tree({"only": _m()})
    with pytest.raises(TypeError, match="single state dict"):
        recover_tree(_m())


def test_mismatched_shapes_name_the_model():
    with pytest.raises(ValueError, match=r"'odd'.*shape.*architectures do not match"):
        pairwise_distances({"a": _m(4), "b": _m(4, 1), "odd": _m(5)})
    with pytest.raises(ValueError, match=r"'other' has no tensor 'w'"):
        pairwise_distances({"a": _m(), "other": {"v": torch.zeros(4, 4)}})


def test_nan_weights_name_the_model():
    bad = _m(seed=1)
    bad["w"][1, 2] = float("nan")
    with pytest.raises(ValueError, match=r"'broken'.*'w'.*NaN"):
        recover_tree({"a": _m(), "broken": bad, "c": _m(seed=2)})


def test_constant_layer_names_model_for_kurtosis_only():
    models = {"a": _m(), "flat": {"w": torch.ones(4, 4)}, "c": _m(seed=2)}
    with pytest.raises(ValueError, match=r"'flat'.*'w' is constant"):
        kurtosis_scores(models)
    with pytest.raises(ValueError, match=r"'flat'.*'w' is constant"):
        recover_tree(models)
    # distances alone are well defined, and so is a tree without the kurtosis direction
    assert torch.isfinite(pairwise_distances(models)).all()
    assert recover_tree(models, direction="none").roots


def test_unreadable_file_names_the_model(tmp_path):
    save_file(_m(), str(tmp_path / "good.safetensors"))
    save_file(_m(seed=1), str(tmp_path / "fine.safetensors"))
    (tmp_path / "corrupt.safetensors").write_bytes(b"not a safetensors file at all")
    with pytest.raises(ValueError, match=r"'corrupt'.*cannot read"):
        recover_tree(tmp_path)
    (tmp_path / "corrupt.safetensors").unlink()
    (tmp_path / "junk.pt").write_bytes(b"\x00garbage")
    with pytest.raises(ValueError, match=r"'junk'.*cannot read"):
        kurtosis_scores(tmp_path)


def test_bad_paths_and_types(tmp_path):
    with pytest.raises(ValueError, match="not a directory"):
        recover_tree(tmp_path / "missing")
    with pytest.raises(ValueError, match="no .safetensors"):
        recover_tree(tmp_path)
    with pytest.raises(ValueError, match=r"'ghost'.*does not exist"):
        recover_tree([tmp_path / "ghost.safetensors", tmp_path / "g2.safetensors"])
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(ValueError, match="unsupported file type"):
        recover_tree([tmp_path / "x.txt", tmp_path / "x.txt"], names=["p", "q"])
    with pytest.raises(TypeError, match="'model_1'"):
        recover_tree([_m(), 42])
    with pytest.raises(ValueError, match="duplicate"):
        recover_tree([_m(), _m(seed=1)], names=["a", "a"])


def test_bad_options_fail_before_reading(tmp_path):
    models = {"a": _m(), "b": _m(seed=1), "c": _m(seed=2)}
    with pytest.raises(ValueError, match="direction"):
        recover_tree(models, direction="sideways")
    with pytest.raises(ValueError, match="lam"):
        recover_tree(models, lam=-1)
    with pytest.raises(ValueError, match="n_trees"):
        recover_tree(models, n_trees=4)
    with pytest.raises(TypeError, match="n_trees"):
        recover_tree(models, n_trees=1.5)
    with pytest.raises(ValueError, match="metric"):
        pairwise_distances(models, metric="cosine")
    with pytest.raises(ValueError, match="selects no square"):
        pairwise_distances(models, layers="attention")


def test_bad_forest_inputs_are_named():
    D = pairwise_distances({"a": _m(), "b": _m(seed=1), "c": _m(seed=2)})
    ku = kurtosis_scores({"a": _m(), "b": _m(seed=1), "c": _m(seed=2)})
    with pytest.raises(ValueError, match="cluster_distances must be of shape"):
        build_forest(D, ku, n_trees=2, cluster_distances=torch.rand(5, 5))
    with pytest.raises(ValueError, match="lam"):
        build_forest(D, ku, lam=float("inf"))


# --- regression tests for the robustness campaign (issue 9) -----------------------------------

def _D(n=3):
    return torch.tensor([[0.0, 1.0, 2.0], [1.0, 0.0, 1.5], [2.0, 1.5, 0.0]])[:n, :n]


def test_build_forest_refuses_duplicate_names():
    with pytest.raises(ValueError, match=r"names must be unique; repeated: \['a'\]"):
        build_forest(_D(), torch.zeros(3), ["a", "b", "a"], direction="none")


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_build_forest_accepts_any_float_precision(dtype):
    f = build_forest(_D().to(dtype), torch.tensor([0.0, 1.0, 2.0], dtype=dtype),
                     direction="pretrain", lam=0.3)
    assert f.parents == {"model_0": None, "model_1": "model_0", "model_2": "model_1"}


def test_edge_costs_and_cluster_trees_validate():
    from iclr25.mother import cluster_trees, edge_costs

    with pytest.raises(ValueError, match="D must be square"):
        edge_costs(torch.zeros(2, 3), torch.zeros(2))
    with pytest.raises(ValueError, match="ku has 2 entries"):
        edge_costs(_D(), torch.zeros(2))
    with pytest.raises(ValueError, match="D contains 1 NaN"):
        cluster_trees(torch.tensor([[0.0, float("nan")], [1.0, 0.0]]), 2)
    with pytest.raises(ValueError, match="D must be non-negative"):
        cluster_trees(-_D(), 2)
    with pytest.raises(TypeError, match="ku must be .*floating-point"):
        edge_costs(_D(), torch.zeros(3, dtype=torch.complex64))


@pytest.mark.parametrize("lam", [None, float("inf"), float("nan"), -0.1, "0.3"])
def test_recover_tree_refuses_bad_lam_before_reading(lam, tmp_path):
    # the directory does not exist: an error about lam shows lam was checked first
    with pytest.raises((TypeError, ValueError), match="lam"):
        recover_tree(tmp_path / "missing", lam=lam)


def test_clustering_accuracy_refuses_columns_and_compares_by_value():
    import numpy as np

    from iclr25.mother import clustering_accuracy

    with pytest.raises(ValueError, match="pred must be a 1-D"):
        clustering_accuracy(np.zeros((3, 1)), [0, 0, 1])
    with pytest.raises(TypeError, match="truth labels must be scalars"):
        clustering_accuracy([0, 0, 1], [[0], [0], [1]])
    assert clustering_accuracy([0, 0.0, 1], [0, 0, 1]) == 1.0
    assert clustering_accuracy(torch.tensor([1, 1, 0]), [0, 0, 1]) == 1.0


def test_directory_with_broken_link_or_upper_case_suffix(tmp_path):
    save_file(_m(), str(tmp_path / "a.safetensors"))
    torch.save(_m(seed=1), tmp_path / "b.PT")
    from iclr25.mother import as_sources

    assert [s.name for s in as_sources(tmp_path)] == ["a", "b"]  # *.PT is a model too
    (tmp_path / "c.safetensors").symlink_to(tmp_path / "gone.safetensors")
    with pytest.raises(ValueError, match="'c'.*broken or looping symbolic link"):
        as_sources(tmp_path)
    (tmp_path / "c.safetensors").unlink()
    (tmp_path / "loop.safetensors").symlink_to(tmp_path / "loop.safetensors")
    with pytest.raises(ValueError, match="'loop'.*broken or looping"):
        as_sources(tmp_path)


def test_names_refused_where_models_name_themselves(tmp_path):
    from iclr25.mother import as_sources

    with pytest.raises(ValueError, match="names is only used with a sequence"):
        as_sources({"a": _m(), "b": _m(seed=1)}, names=["x", "y"])
    with pytest.raises(ValueError, match="names is only used with a sequence"):
        as_sources(tmp_path, names=["x"])


@pytest.mark.skipif(__import__("os").geteuid() == 0, reason="root reads any file")
def test_unreadable_checkpoint_says_so(tmp_path):
    from iclr25.mother import as_sources

    p = tmp_path / "a.safetensors"
    save_file(_m(), str(p))
    p.chmod(0o000)
    try:
        with pytest.raises(ValueError, match="not readable"):
            as_sources([p, p])
    finally:
        p.chmod(0o600)


@pytest.mark.parametrize("rtol", [float("nan"), float("inf"), -1e-3])
def test_rank_tolerance_must_be_finite_and_non_negative(rtol, tmp_path):
    models = {"a": _m(), "b": _m(seed=1)}
    with pytest.raises(ValueError, match="rtol"):
        pairwise_distances(models, metric="rank", rtol=rtol)
    with pytest.raises(ValueError, match="rtol"):  # checked before the directory is read
        recover_tree(tmp_path / "missing", metric="rank", rtol=rtol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_models_of_any_float_precision_give_the_float32_answer(four_tree, dtype):
    models, parents = four_tree
    cast = {n: {k: v.to(dtype) for k, v in sd.items()} for n, sd in models.items()}
    assert recover_tree(cast, direction="pretrain").parents == parents
    torch.testing.assert_close(pairwise_distances(cast), pairwise_distances(models))


def test_complex_weights_are_refused_not_truncated():
    models = {n: {"w": torch.randn(4, 4, dtype=torch.complex64,
                                   generator=torch.Generator().manual_seed(i))}
              for i, n in enumerate("abc")}
    with pytest.raises(ValueError, match="selects no square"):
        recover_tree(models)


def test_make_zoo_validates_and_leaves_the_global_rng_alone():
    from iclr25.mother.testbed import make_lora_zoo, make_zoo

    with pytest.raises(ValueError, match="n_trees"):
        make_zoo(0)
    with pytest.raises(TypeError, match="n_children"):
        make_zoo(1, 1.5)
    with pytest.raises(ValueError, match="subset"):
        make_zoo(1, subset=float("nan"))
    with pytest.raises(ValueError, match="ranks"):
        make_lora_zoo(dim=8, ranks=(4, 16))
    state = torch.get_rng_state()
    a = make_lora_zoo(1, 2, 0, dim=8, ranks=(2,), seed=torch.Generator().manual_seed(3))
    b = make_lora_zoo(1, 2, 0, dim=8, ranks=(2,), seed=3)
    assert torch.equal(torch.get_rng_state(), state)
    assert all(torch.equal(a.models[n][k], b.models[n][k]) for n in a.models
               for k in a.models[n])
