"""Issue 56 at the command lines: seeds outside [0, 2**32) and unreadable files exit 2 with
one line naming the option or the file, never a traceback or "does not exist"."""

from __future__ import annotations

import importlib
import os
import re

import click
import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from iclr25.cli import METHOD_COMMANDS
from iclr25.cli import app as root

runner = CliRunner()


def _seed_options():
    for name in METHOD_COMMANDS:
        cmd = typer.main.get_command(importlib.import_module(f"iclr25.{name}.cli").app)
        verbs = getattr(cmd, "commands", {"": cmd})
        for verb, sub in verbs.items():
            for p in sub.params:
                if "--seed" in getattr(p, "opts", ()):
                    yield f"{name} {verb}".strip(), sub, p


SEEDS = list(_seed_options())


@pytest.mark.parametrize(("verb", "cmd", "param"), SEEDS, ids=[v for v, _, _ in SEEDS])
def test_every_seed_option_refuses_2_to_the_32(verb, cmd, param):
    ctx = click.Context(cmd)
    assert param.process_value(ctx, 2**32 - 1) == 2**32 - 1
    for bad in (2**32, -1):
        with pytest.raises(typer.Exit) as exc:
            param.process_value(ctx, bad)
        assert exc.value.exit_code == 2


def test_the_seed_options_are_found():
    assert len(SEEDS) >= 15


@pytest.mark.parametrize("seed", [str(2**32), str(2**64), "-1"])
def test_a_seed_outside_32_bits_exits_2(tmp_path, seed):
    res = runner.invoke(root, ["mother", "make-zoo", str(tmp_path / "zoo"), "--seed", seed])
    assert res.exit_code == 2, res.output
    assert "--seed" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "zoo").exists()


def test_reproduce_refuses_a_seed_of_2_to_the_32():
    res = runner.invoke(root, ["reproduce", "mother", "--seed", str(2**32)])
    assert res.exit_code == 2 and "--seed" in res.output


def _deny(monkeypatch, path):
    real = os.access

    def access(p, mode, *a, **k):
        if os.fspath(p) == os.fspath(path) and mode & os.R_OK:
            return False
        return real(p, mode, *a, **k)

    monkeypatch.setattr(os, "access", access)


def test_an_unreadable_input_file_is_permission_denied_naming_it(tmp_path, monkeypatch):
    X = tmp_path / "points.csv"
    np.savetxt(X, np.random.default_rng(0).normal(size=(20, 2)), delimiter=",")
    _deny(monkeypatch, X)  # the tests may run as root, for whom chmod 000 reads fine
    res = runner.invoke(root, ["kmeans", "stream", str(X), "--k", "2"])
    # click's own check of a typer Path argument says "is not readable"; our readers say
    # "permission denied"; either names the file and exits 2
    assert res.exit_code == 2
    assert re.search("not readable|permission denied", res.output) and "points.csv" in res.output
    assert "does not exist" not in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("reader", ["read_matrix", "read_npy", "read_npz", "read_table"])
def test_the_shared_readers_say_permission_denied(tmp_path, monkeypatch, reader):
    from iclr25 import _io

    p = tmp_path / ("x.csv" if reader in ("read_matrix", "read_table") else f"x.{reader[5:]}")
    p.write_text("a,b\n1,2\n")
    _deny(monkeypatch, p)
    with pytest.raises(ValueError, match=f"DATA {p} is not readable \\(permission denied\\)"):
        getattr(_io, reader)(p, "DATA")


def test_a_permission_error_deep_in_a_verb_exits_2_naming_the_file(tmp_path, monkeypatch):
    X = tmp_path / "points.csv"
    np.savetxt(X, np.eye(3), delimiter=",")

    def denied(path, *a, **k):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("iclr25.kmeans.cli.read_matrix", denied)
    res = runner.invoke(root, ["kmeans", "stream", str(X), "--k", "2"])
    assert res.exit_code == 2, res.output
    assert "permission denied" in res.output and "points.csv" in res.output
    assert "Traceback" not in res.output


def _csv(tmp_path, n=8):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    p = tmp_path / "d.csv"
    np.savetxt(p, np.c_[X, (X[:, 0] > 0).astype(int)], delimiter=",", header="a,b,c,label",
               comments="")
    return p


def test_locodl_refuses_more_clients_than_rows(tmp_path):
    res = runner.invoke(root, ["locodl", "fit", str(_csv(tmp_path)), "--label", "label",
                               "--clients", "20", "--max-iter", "5"])
    assert res.exit_code == 2 and "--clients" in res.output and "8 rows" in res.output


def test_kmeans_warns_when_k_exceeds_the_rows(tmp_path):
    res = runner.invoke(root, ["kmeans", "stream", str(_csv(tmp_path)), "--k", "20"])
    assert res.exit_code == 0
    assert res.output.count("warning:") == 1 and "--k 20" in res.output


def test_a_seed_beyond_torch_is_a_value_error_naming_it():
    from iclr25._checks import resolve_seed

    with pytest.raises(ValueError, match="seed"):
        resolve_seed(2**64)
