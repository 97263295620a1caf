import json

import pytest
from safetensors.torch import save_file
from typer.testing import CliRunner

from iclr25.cli import app


def test_cli_recover_writes_each_format(four_tree, tmp_path):
    models, parents = four_tree
    d = tmp_path / "zoo"
    d.mkdir()
    for name, sd in models.items():
        save_file(sd, str(d / f"{name}.safetensors"))
    runner = CliRunner()
    r = runner.invoke(app, ["mother", "recover", str(d), "--direction", "pretrain",
                            "--out", str(tmp_path / "t.json")])
    assert r.exit_code == 0, r.output
    assert "G  <-  A" in r.output and "R  <-  (root)" in r.output
    assert json.loads((tmp_path / "t.json").read_text())["parents"]["G"] == "A"
    for suffix in (".dot", ".png"):
        r = runner.invoke(app, ["mother", "recover", str(d), "--out", str(tmp_path / f"t{suffix}")])
        assert r.exit_code == 0 and (tmp_path / f"t{suffix}").stat().st_size > 0
    r = runner.invoke(app, ["mother", "recover", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "not a directory" in r.output


@pytest.mark.parametrize(("args", "message"), [
    (["--trees", "0"], "--trees must be >= 1"),
    (["--children", "-1"], "--children must be >= 0"),
    (["--seed", "-1"], "--seed must be >= 0"),
])
def test_make_zoo_bad_arguments_exit_2_before_work(tmp_path, args, message):
    r = CliRunner().invoke(app, ["mother", "make-zoo", str(tmp_path / "z"), *args])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
    assert not (tmp_path / "z").exists()


def test_make_zoo_out_that_is_a_file_exits_2(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    r = CliRunner().invoke(app, ["mother", "make-zoo", str(f)])
    assert r.exit_code == 2 and "must be a directory" in r.output


def test_recover_bad_out_suffix_exits_2(four_tree, tmp_path):
    r = CliRunner().invoke(app, ["mother", "recover", str(tmp_path), "--out",
                                 str(tmp_path / "t.txt")])
    assert r.exit_code == 2 and "--out must end in" in r.output


def _zoo_dir(four_tree, tmp_path):
    d = tmp_path / "zoo"
    d.mkdir()
    for name, sd in four_tree[0].items():
        save_file(sd, str(d / f"{name}.safetensors"))
    return d


@pytest.mark.parametrize(("where", "message"), [
    ("zoo", "is a directory"),
])
def test_recover_unwritable_out_exits_2_before_work(four_tree, tmp_path, where, message):
    d = _zoo_dir(four_tree, tmp_path)
    out = tmp_path / where
    if where == "zoo":
        out = tmp_path / "outdir.json"
        out.mkdir()
    r = CliRunner().invoke(app, ["mother", "recover", str(d), "--out", str(out)])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
    assert "tree 0" not in r.output  # refused before the pass over the weights


def test_make_zoo_creates_a_missing_directory(tmp_path):
    out = tmp_path / "a" / "b"
    r = CliRunner().invoke(app, ["mother", "make-zoo", str(out), "--trees", "1",
                                 "--children", "1", "--grandchildren", "0"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == ["0-0-X.safetensors", "0-X-X.safetensors",
                                                     "tree.json"]


@pytest.mark.skipif(__import__("os").geteuid() == 0, reason="root writes anywhere")
def test_make_zoo_read_only_directory_exits_2(tmp_path):
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o500)
    try:
        r = CliRunner().invoke(app, ["mother", "make-zoo", str(out)])
        assert r.exit_code == 2 and "not writable" in r.output
    finally:
        out.chmod(0o700)


def test_api_defaults_are_the_cli_validated_ones():
    # issue 55: the API defaulted to "finetune", which roots the generated zoos at leaves
    import inspect

    from iclr25.mother import build_forest, claim, cli, direction_penalty, edge_costs, recover_tree

    assert cli.DEFAULT_DIRECTION == claim.DIRECTION == "pretrain"
    assert cli.DEFAULT_LAM in claim.LAM_GRID
    for fn in (recover_tree, build_forest, edge_costs, direction_penalty):
        params = inspect.signature(fn).parameters
        assert params["direction"].default == cli.DEFAULT_DIRECTION, fn.__name__
        if "lam" in params:
            assert params["lam"].default == cli.DEFAULT_LAM, fn.__name__


@pytest.mark.parametrize("args, spelled", [([], "the default (square matrices only)"),
                                           (["--layers", "a"], "--layers 'a'")])
def test_recover_no_square_layer_says_it_in_cli_words(tmp_path, args, spelled):
    """An MLP whose widths all differ has no square matrix: one line, in the CLI's words,
    naming the API's way out (issue 68 walk: it printed ``layers=None``)."""
    import torch
    for i in range(3):
        save_file({"a.weight": torch.randn(4, 3)}, str(tmp_path / f"m{i}.safetensors"))
    r = CliRunner().invoke(app, ["mother", "recover", str(tmp_path), *args])
    assert r.exit_code == 2
    err = r.output.strip()
    assert err.count("\n") == 0 and spelled in err and "layers=None" not in err
    assert "--any-shape reads 2-D matrices of any shape" in err


def test_recover_any_shape_reads_non_square_layers(four_tree, tmp_path):
    """Issue 68: the CLI could not name non-square layers. The four-tree's 8x8 layers stored
    as 4x16 (same entries, so the same distances and kurtosis): --any-shape recovers the
    known tree; --layers still filters by name."""
    models, parents = four_tree
    for name, sd in models.items():
        save_file({"layer.weight": sd["layer.weight"].reshape(4, 16).contiguous(),
                   "layer.bias": sd["layer.bias"]}, str(tmp_path / f"{name}.safetensors"))
    runner = CliRunner()
    assert runner.invoke(app, ["mother", "recover", str(tmp_path)]).exit_code == 2
    for extra in ([], ["--layers", "layer"]):
        r = runner.invoke(app, ["mother", "recover", str(tmp_path), "--any-shape", *extra])
        assert r.exit_code == 0, r.output
        for child, parent in parents.items():
            assert f"{child}  <-  {parent or '(root)'}" in r.output
    r = runner.invoke(app, ["mother", "recover", str(tmp_path), "--any-shape", "--layers", "x"])
    assert r.exit_code == 2 and r.output.startswith("error: --any-shape: no 2-D matrix whose")


@pytest.mark.parametrize(("args", "spelled"), [
    (["--trees", "0"], "error: --trees must lie in [1, 4]"),
    (["--trees", "9"], "error: --trees must lie in [1, 4]"),
    (["--lam", "-1"], "error: --lam must lie in [0, inf)"),
])
def test_recover_refusals_name_the_option_as_typed(four_tree, tmp_path, args, spelled):
    # issue 68's walk: "n_trees must lie in [1, 10]" answered --trees 0
    for name, sd in four_tree[0].items():
        save_file(sd, str(tmp_path / f"{name}.safetensors"))
    r = CliRunner().invoke(app, ["mother", "recover", str(tmp_path), *args])
    assert r.exit_code == 2 and spelled in r.output, r.output
    assert "n_trees" not in r.output and "lam must" not in r.output.replace("--lam", "")
