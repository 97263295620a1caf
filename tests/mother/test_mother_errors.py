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
    with pytest.raises(ValueError, match="cluster_distances must have the shape"):
        build_forest(D, ku, n_trees=2, cluster_distances=torch.rand(5, 5))
    with pytest.raises(ValueError, match="lam"):
        build_forest(D, ku, lam=float("inf"))
