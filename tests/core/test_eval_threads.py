"""``--threads`` on every verb that runs a fitted model over the user's data without training
(issue 68, walk 10): `matern reconstruct` (a kernel grid split across torch's threads), the
networks' `dcpt restore|classify`, `lowlight enhance`, `toss predict`, `comm embed`, `urlost
embed`, `v3 encode` and `cox predict`, beside `lsdt evaluate` and `gsd evaluate`.
A user on a shared 2-core machine asked `matern reconstruct --threads 1` as README says the
training verbs take it, and got "No such option"."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch
import typer.main
from typer.testing import CliRunner

runner = CliRunner()

#: Verbs that evaluate a model (no training) and take --threads (iclr25._cli.threads_verb).
EVAL_VERBS = (("matern", "reconstruct"), ("dcpt", "restore"), ("dcpt", "classify"),
              ("lowlight", "enhance"), ("toss", "predict"), ("comm", "embed"),
              ("urlost", "embed"), ("v3", "encode"), ("cox", "predict"), ("lsdt", "evaluate"),
              ("gsd", "evaluate"))


@pytest.mark.parametrize(("group", "verb"), EVAL_VERBS)
def test_every_evaluating_verb_takes_threads(group, verb):
    cmd = typer.main.get_command(importlib.import_module(f"iclr25.{group}.cli").app
                                 ).commands[verb]
    assert "--threads" in {o for p in cmd.params for o in p.opts}


def test_matern_reconstruct_runs_at_the_threads_given_then_restores_them(tmp_path,
                                                                         monkeypatch):
    from iclr25.matern import surface
    from iclr25.matern.cli import app

    g = np.random.default_rng(0)
    n = g.normal(size=(60, 3))
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    cloud = tmp_path / "ball.xyz"
    np.savetxt(cloud, np.hstack([0.3 * n, n]))                    # a sphere, outward normals
    seen, real = [], surface.KernelSurface.extract_mesh

    def extract_mesh(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(surface.KernelSurface, "extract_mesh", extract_mesh)
    before = torch.get_num_threads()
    base = ["reconstruct", str(cloud), "--resolution", "16"]
    r = runner.invoke(app, [*base, "--out", str(tmp_path / "a.ply"), "--threads",
                            str(before + 1)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, [*base, "--out", str(tmp_path / "b.ply")])
    assert r.exit_code == 0, r.output
    assert seen == [before + 1, before] and torch.get_num_threads() == before
    assert (tmp_path / "a.ply").read_bytes() == (tmp_path / "b.ply").read_bytes()
    r = runner.invoke(app, [*base, "--out", str(tmp_path / "c.ply"), "--threads", "0"])
    assert r.exit_code == 2 and r.output == "error: --threads must be >= 1, got 0\n", r.output
    assert len(seen) == 2 and not (tmp_path / "c.ply").exists()
