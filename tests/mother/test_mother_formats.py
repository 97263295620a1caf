"""Hugging Face model folders (single file and sharded, safetensors and torch) and flat files."""

import inspect
import json

import pytest
import torch
from safetensors.torch import save_file
from typer.testing import CliRunner

from iclr25.cli import app
from iclr25.mother import claim as mother_claim
from iclr25.mother import cli as mother_cli
from iclr25.mother.sources import ShardedSource, as_sources
from iclr25.mother.tree import recover_tree


def _shards(sd, folder, kind):
    """Write ``sd`` as two shards plus the index transformers writes."""
    keys = sorted(sd)
    halves = (keys[: len(keys) // 2], keys[len(keys) // 2:])
    stem, suffix = ("model", "safetensors") if kind == "safetensors" else ("pytorch_model",
                                                                            "bin")
    weight_map = {}
    for i, part in enumerate(halves, 1):
        name = f"{stem}-{i:05d}-of-00002.{suffix}"
        shard = {k: sd[k].contiguous() for k in part}
        if kind == "safetensors":
            save_file(shard, str(folder / name))
        else:
            torch.save(shard, folder / name)
        weight_map.update(dict.fromkeys(part, name))
    (folder / f"{stem}.{suffix}.index.json").write_text(
        json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}))


def _hf_zoo(four_tree, root):
    """R: model.safetensors, A: pytorch_model.bin, B: sharded safetensors, G: sharded .bin;
    each folder with a config.json, as the Hub lays them out."""
    models, _ = four_tree
    layout = {"R": "single-safetensors", "A": "single-bin", "B": "safetensors", "G": "bin"}
    for name, kind in layout.items():
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps({"model_type": "toy"}))
        if kind == "single-safetensors":
            save_file(models[name], str(folder / "model.safetensors"))
        elif kind == "single-bin":
            torch.save(models[name], folder / "pytorch_model.bin")
        else:
            _shards(models[name], folder, kind)
    return root


def test_hf_folders_give_the_flat_files_answer(four_tree, tmp_path):
    models, parents = four_tree
    root = _hf_zoo(four_tree, tmp_path / "hub")
    srcs = as_sources(root)
    assert [s.name for s in srcs] == ["A", "B", "G", "R"]
    assert isinstance(srcs[1], ShardedSource) and isinstance(srcs[2], ShardedSource)
    for s in srcs:  # every tensor comes back exactly, whatever the layout
        assert s.shapes == {k: tuple(v.shape) for k, v in models[s.name].items()}
        for k, v in models[s.name].items():
            assert torch.equal(s.get(k), v)
    flat = tmp_path / "flat"
    flat.mkdir()
    for name, sd in models.items():
        save_file(sd, str(flat / f"{name}.safetensors"))
    hub = recover_tree(root, direction="pretrain")
    ref = recover_tree(flat, direction="pretrain")
    assert hub.parents == ref.parents == parents
    assert torch.allclose(hub.distances, ref.distances, rtol=0, atol=0)
    # a flat file beside the folders, and folders passed one by one, are models too
    save_file(models["R"], str(root / "R2.safetensors"))
    assert [s.name for s in as_sources(root)] == ["A", "B", "G", "R", "R2"]
    assert [s.name for s in as_sources([root / "A", root / "G"])] == ["A", "G"]


def test_cli_recovers_hf_folders(four_tree, tmp_path):
    root = _hf_zoo(four_tree, tmp_path / "hub")
    r = CliRunner().invoke(app, ["mother", "recover", str(root)])
    assert r.exit_code == 0, r.output
    assert "G  <-  A" in r.output and "R  <-  (root)" in r.output


def test_hf_folder_errors_name_the_model(four_tree, tmp_path):
    root = _hf_zoo(four_tree, tmp_path / "hub")
    with pytest.raises(ValueError, match="one Hugging Face model folder"):
        as_sources(root / "R")
    (root / "G" / "pytorch_model-00002-of-00002.bin").unlink()
    with pytest.raises(ValueError, match="model 'G/pytorch_model-00002-of-00002.bin'.*does "
                                         "not exist"):
        as_sources(root)
    (root / "B" / "model.safetensors.index.json").write_text("{not json")
    with pytest.raises(ValueError, match="model 'B': shard index .* is not valid JSON"):
        as_sources(root)


def test_mixed_architectures_are_refused_before_any_work(four_tree, tmp_path):
    models, _ = four_tree
    root = tmp_path / "mixed"
    root.mkdir()
    save_file(models["R"], str(root / "a.safetensors"))
    save_file(models["A"], str(root / "b.safetensors"))
    other = {"layer.weight": torch.ones(4, 4), "head.weight": torch.ones(3, 4)}
    (root / "c").mkdir()
    save_file(other, str(root / "c" / "model.safetensors"))
    with pytest.raises(ValueError, match=r"models mixes 2 architectures.*'layer.weight' is "
                                         r"\(8, 8\) in 'a' and \(4, 4\) in 'c'"):
        recover_tree(root)
    calls = []
    with pytest.raises(ValueError, match="models mixes"):
        recover_tree(root, progress=lambda *a: calls.append(a))
    assert calls == []  # refused before the first layer was read
    r = CliRunner().invoke(app, ["mother", "recover", str(root)])
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert r.output.startswith("error: DIRECTORY mixes 2 architectures")
    # other heads (fine-tunes for other label sets) are one architecture
    save_file({**models["G"], "head.weight": torch.ones(5, 8)}, str(root / "c" /
                                                                    "model.safetensors"))
    assert recover_tree(root, direction="pretrain").parents["c"] is not None


def test_cli_defaults_are_what_the_reproduction_validated():
    params = inspect.signature(mother_cli.recover).parameters
    assert params["direction"].default.default == mother_claim.DIRECTION
    assert params["lam"].default.default in mother_claim.LAM_CHOICES
    r = CliRunner().invoke(app, ["mother", "recover", "--help"], terminal_width=200)
    assert "make-zoo zoo --trees 5 --fans 1,1,2,1,2" in " ".join(r.output.split())


def test_make_zoo_hold_out_and_fans(tmp_path):
    out = tmp_path / "zoo"
    r = CliRunner().invoke(app, ["mother", "make-zoo", str(out), "--trees", "1", "--fans",
                                 "1,2", "--root-steps", "2", "--finetune-steps", "2",
                                 "--hold-out", "1"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.glob("*.safetensors")) == [
        "0-0-0.safetensors", "0-0-1.safetensors", "0-0-X.safetensors", "0-X-X.safetensors"]
    held = sorted(p.name for p in (out / "held-out").glob("*.safetensors"))
    assert held[0] == "1-0-0.safetensors"
    assert json.loads((out / "tree.json").read_text())["parents"]["0-0-1"] == "0-0-X"
    for bad, msg in ((["--fans", "1,x"], "--fans must be comma-separated"),
                     (["--fans", "1,-1"], "--fans must be integers >= 0"),
                     (["--root-steps", "0"], "--root-steps must be >= 1"),
                     (["--hold-out", "-1"], "--hold-out must be >= 0")):
        r = CliRunner().invoke(app, ["mother", "make-zoo", str(tmp_path / "z2"), *bad])
        assert r.exit_code == 2 and msg in r.output and not (tmp_path / "z2").exists()
