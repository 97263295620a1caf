"""Bad input: ValueError/TypeError naming the argument, before any work; CLI exit code 2;
the CLI round trip on files the test writes."""

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError
from typer.testing import CliRunner

from iclr25._io import read_matrix
from iclr25.cli import app
from iclr25.urlost import (
    URLOST,
    URLOSTMAE,
    GroupLinear,
    SelfOrganizingClusters,
    density_adjusted_laplacian,
    dependence,
    foveate,
    knn_affinity,
    spectral_clusters,
)

X = torch.randn(40, 12, generator=torch.Generator().manual_seed(0))
W = knn_affinity(dependence(X), 3)


@pytest.mark.parametrize("bad, exc, match", [
    (torch.zeros(5), ValueError, "X must be 2-D"),
    (torch.zeros(1, 4), ValueError, "X needs at least 2 samples"),
    (torch.tensor([[0.0, float("nan")], [1.0, 2.0]]), ValueError, "X contains 1 NaN"),
    (torch.zeros(3, 2, dtype=torch.complex64), TypeError, "X must be real"),
])
def test_bad_X(bad, exc, match):
    with pytest.raises(exc, match=match):
        dependence(bad)
    with pytest.raises(exc, match=match):
        SelfOrganizingClusters(2, n_neighbors=1).fit(bad)


def test_bad_dependence_args():
    with pytest.raises(ValueError, match="bins"):
        dependence(X, "mi", bins=1)
    with pytest.raises(ValueError, match="method"):
        dependence(X, "spearman")


@pytest.mark.parametrize("k", [0, 12])
def test_bad_k(k):
    with pytest.raises(ValueError, match="k must lie"):
        knn_affinity(dependence(X), k)


def test_bad_S():
    with pytest.raises(ValueError, match="S must be square"):
        knn_affinity(torch.rand(3, 4), 1)
    with pytest.raises(ValueError, match="S must be non-negative"):
        knn_affinity(-torch.rand(3, 3), 1)


@pytest.mark.parametrize("bad, match", [
    (torch.rand(3, 4), "W must be square"),
    (torch.tensor([[0.0, 1.0], [2.0, 0.0]]), "W must be symmetric"),
    (torch.tensor([[0.0, -1.0], [-1.0, 0.0]]), "W must be non-negative"),
    (torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), "1 isolated node"),
])
def test_bad_W(bad, match):
    with pytest.raises(ValueError, match=match):
        density_adjusted_laplacian(bad)
    with pytest.raises(ValueError, match=match):
        spectral_clusters(bad, 2)


def test_bad_q_and_clusters():
    with pytest.raises(ValueError, match="q must be positive"):
        density_adjusted_laplacian(W, torch.zeros(12))
    with pytest.raises(ValueError, match="q must have one density weight"):
        spectral_clusters(W, 2, q=torch.ones(5))
    for n in (1, 13):
        with pytest.raises(ValueError, match="n_clusters"):
            spectral_clusters(W, n)
    with pytest.raises(TypeError, match="n_clusters"):
        spectral_clusters(W, 2.0)
    with pytest.raises(ValueError, match="w must"):
        density_adjusted_laplacian(W, w=-1)


def test_estimator_errors_before_work():
    with pytest.raises(ValueError, match="n_clusters"):
        SelfOrganizingClusters(n_clusters=20).fit(X)
    with pytest.raises(ValueError, match="n_neighbors"):
        SelfOrganizingClusters(4, n_neighbors=12).fit(X)
    with pytest.raises(ValueError, match="density"):
        SelfOrganizingClusters(2, n_neighbors=3, density=torch.ones(3)).fit(X)
    with pytest.raises(NotFittedError):
        SelfOrganizingClusters().transform(X)
    soc = SelfOrganizingClusters(3, n_neighbors=3).fit(X)
    with pytest.raises(ValueError, match="X has 11 features"):
        soc.transform(X[:, :11])
    with pytest.raises(ValueError, match="mask_ratio"):
        URLOST(n_clusters=3, n_neighbors=3, mask_ratio=1.0).fit(X)
    with pytest.raises(ValueError, match="epochs"):
        URLOST(n_clusters=3, n_neighbors=3, epochs=0).fit(X)
    with pytest.raises(NotFittedError):
        URLOST().transform(X)
    with pytest.raises(ValueError, match="path"):
        URLOST.load("/nonexistent/model.pt")


def test_module_errors():
    with pytest.raises(ValueError, match="groups must not repeat"):
        GroupLinear(torch.tensor([[0, 1], [1, 2]]), 3)
    with pytest.raises(TypeError, match="groups"):
        GroupLinear(torch.tensor([[0.0, 1.0]]), 3)
    with pytest.raises(ValueError, match="dim=6 must be divisible by heads=4"):
        URLOSTMAE(torch.tensor([[0, 1], [2, 3]]), dim=6)
    with pytest.raises(ValueError, match="coords must lie inside"):
        foveate(torch.rand(1, 8, 8), torch.tensor([[9, 0]]), torch.tensor([1.0]))


def test_unreadable_model_file(tmp_path):
    p = tmp_path / "junk.pt"
    p.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="cannot load a fitted urlost.URLOST"):
        URLOST.load(p)


runner = CliRunner()


def test_cli_round_trip(tmp_path):
    g = torch.Generator().manual_seed(0)
    z = torch.randn(80, 4, generator=g)
    data = (z.repeat_interleave(4, 1) + 0.5 * torch.randn(80, 16, generator=g)).numpy()
    np.save(tmp_path / "X.npy", data)
    np.savetxt(tmp_path / "X.csv", data, delimiter=",", header=",".join(
        f"c{i}" for i in range(16)), comments="")
    r = runner.invoke(app, ["urlost", "cluster", str(tmp_path / "X.csv"), "--clusters", "4",
                            "--neighbors", "3", "--out", str(tmp_path / "l.npy")])
    assert r.exit_code == 0, r.output
    assert np.load(tmp_path / "l.npy").shape == (16,)
    r = runner.invoke(app, ["urlost", "fit", str(tmp_path / "X.npy"), "--clusters", "4",
                            "--neighbors", "3", "--epochs", "1", "--dim", "8",
                            "--out", str(tmp_path / "m.safetensors")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["urlost", "embed", str(tmp_path / "m.safetensors"),
                            str(tmp_path / "X.npy"), "--out", str(tmp_path / "Z.npy")])
    assert r.exit_code == 0, r.output
    assert np.load(tmp_path / "Z.npy").shape == (80, 8)
    # issue 68: --out took only .npy; a table names the columns (FILE's header) and tokens
    for suffix, sep in ((".csv", ","), (".txt", " ")):
        r = runner.invoke(app, ["urlost", "cluster", str(tmp_path / "X.csv"), "--clusters",
                                "4", "--neighbors", "3", "--out", str(tmp_path / f"l{suffix}")])
        assert r.exit_code == 0, r.output
        lines = (tmp_path / f"l{suffix}").read_text().splitlines()
        assert lines[0] == f"column{sep}token"
        assert [ln.split(sep) for ln in lines[1:]] == [
            [f"c{i}", str(t)] for i, t in enumerate(np.load(tmp_path / "l.npy"))]
        r = runner.invoke(app, ["urlost", "embed", str(tmp_path / "m.safetensors"),
                                str(tmp_path / "X.npy"), "--out", str(tmp_path / f"Z{suffix}")])
        assert r.exit_code == 0, r.output
        assert (tmp_path / f"Z{suffix}").read_text().startswith(sep.join(["z0", "z1", "z2"]))
        np.testing.assert_allclose(read_matrix(tmp_path / f"Z{suffix}", suffixes=(suffix,)),
                                   np.load(tmp_path / "Z.npy"), rtol=1e-9)
    # issue 68, walk 11: a small .csv (read whole) of another width was refused as "X has 4
    # features, ..." (a .npy, read window by window, says "FILE row 0 has ...")
    np.savetxt(tmp_path / "narrow.csv", data[:, :5], delimiter=",")
    r = runner.invoke(app, ["urlost", "embed", str(tmp_path / "m.safetensors"),
                            str(tmp_path / "narrow.csv"), "--out", str(tmp_path / "Zn.npy")])
    assert r.exit_code == 2
    assert r.output.startswith("error: FILE has 5 features, but URLOST was fitted with 16")
    assert not (tmp_path / "Zn.npy").exists()


@pytest.mark.parametrize("args, match", [
    (["cluster", "missing.npy", "--out", "l.npy"], "does not exist"),
    (["cluster", "X.txt", "--out", "l.npy"], "must end in .npy or .csv"),
    (["cluster", "X.npy", "--clusters", "1", "--out", "l.npy"], "--clusters must"),
    (["cluster", "X.npy", "--out", "l.json"], "--out must end in .npy or .csv or .txt"),
    (["fit", "X.npy", "--clusters", "3", "--neighbors", "2", "--epochs", "0", "--out",
      "m.safetensors"], "epochs"),
    (["embed", "X.npy", "X.npy", "--out", "Z.npy"], "cannot load a fitted urlost.URLOST"),
    # issue 68: a 1-D array said "--clusters must lie in [2, 1]"
    (["cluster", "x1.npy", "--out", "l.npy"], "FILE x1.npy has 1 column"),
])
def test_cli_bad_arguments(tmp_path, monkeypatch, args, match):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "X.npy", np.random.default_rng(0).normal(size=(20, 6)))
    (tmp_path / "X.txt").write_text("1,2\n")
    np.save(tmp_path / "x1.npy", np.arange(20.0))
    r = runner.invoke(app, ["urlost", *args])
    assert r.exit_code == 2
    assert match in r.output


def test_one_column_is_refused_naming_columns():
    with pytest.raises(ValueError, match="X has 1 column; URLOST groups the columns"):
        SelfOrganizingClusters(2).fit(torch.randn(30, 1))


def test_dependence_refuses_constant_columns():
    with pytest.raises(ValueError, match="X has 1 constant column"):
        dependence(torch.tensor([[0.0, 1.0], [0.0, 2.0]]))


def test_embed_help_names_the_file_fit_writes():
    # issue 68 walk 8: embed's help asked for a .pt model; fit writes (and takes only) .safetensors
    fit = runner.invoke(app, ["urlost", "fit", "--help"], terminal_width=200).output
    fit = " ".join(fit.split())
    r = runner.invoke(app, ["urlost", "embed", "--help"], terminal_width=200)
    assert r.exit_code == 0
    assert "Model file (.safetensors)" in fit
    assert "written by `urlost fit` (.safetensors)" in " ".join(r.output.split())
