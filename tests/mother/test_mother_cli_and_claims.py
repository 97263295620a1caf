import json
import math

import pytest
from safetensors.torch import save_file
from typer.testing import CliRunner

from iclr25 import claims
from iclr25.claims import Scale
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


@pytest.mark.parametrize("cid", ["mother.undirected_accuracy", "mother.directed_accuracy",
                                 "mother.directed_beats_random_root",
                                 "mother.clustering_accuracy", "mother.lora_rank_undirected"])
def test_quick_claims_run(cid, tmp_path):
    c = claims.discover()[cid]
    r = claims.run(c, Scale.quick, 0, tmp_path)
    assert r.status != "error", r.error
    assert math.isfinite(r.measured)
    assert all((tmp_path / f).exists() for f in r.figures)  # absolute paths under tmp_path
