"""CoMMEmbedder (sklearn contract, missing modalities, save/load) and the CLI on files."""

import csv

import numpy as np
import pytest
import torch
from sklearn.base import clone
from typer.testing import CliRunner

from iclr25.cli import app
from iclr25.comm import CoMMEmbedder


def _data(n=48, seed=0):
    g = np.random.default_rng(seed)
    z = g.normal(size=(n, 2))
    return [np.c_[z, g.normal(size=(n, 3))], np.c_[z[:, :1], g.normal(size=(n, 2))]]


def _small(**kw):
    return CoMMEmbedder(dim=8, epochs=2, batch_size=16, n_tokens=3, hidden=16, **kw)


def test_fit_transform_missing_modality_and_clone():
    Xs = _data()
    before = [X.copy() for X in Xs]
    emb = _small().fit(Xs)
    Z = emb.transform(Xs)
    assert Z.shape == (48, 8) and Z.dtype == np.float32 and np.isfinite(Z).all()
    assert all(np.array_equal(a, b) for a, b in zip(Xs, before, strict=True))
    assert emb.transform([Xs[0], None]).shape == (48, 8)
    assert not np.allclose(emb.transform([Xs[0], None]), Z)
    c = clone(emb)
    assert c.get_params() == emb.get_params() and not hasattr(c, "model_")
    assert np.array_equal(_small().fit(Xs).transform(Xs), Z)  # seeded


def test_tensors_in_tensor_out_numpy_or_a_mix_numpy_out():
    # issue 68: tensor in, tensor out (on the given modality's device); a list that mixes
    # kinds has no one kind: numpy, as for numpy
    Xs = _data()
    emb = _small().fit(Xs)
    Z = emb.transform(Xs)
    Zt = emb.transform([torch.as_tensor(X) for X in Xs])
    assert isinstance(Zt, torch.Tensor) and Zt.dtype == torch.float32
    np.testing.assert_array_equal(Zt.numpy(), Z)
    one = emb.transform([torch.as_tensor(Xs[0]), None])
    assert isinstance(one, torch.Tensor)
    np.testing.assert_array_equal(one.numpy(), emb.transform([Xs[0], None]))
    mixed = emb.transform([torch.as_tensor(Xs[0]), Xs[1]])
    assert isinstance(mixed, np.ndarray) and np.array_equal(mixed, Z)


def test_save_load_round_trip(tmp_path):
    Xs = _data()
    emb = _small().fit(Xs)
    emb.save(tmp_path / "m.pt")
    back = CoMMEmbedder.load(tmp_path / "m.pt")
    assert back.get_params() == emb.get_params()
    assert np.allclose(back.transform(Xs), emb.transform(Xs), atol=1e-6)
    (tmp_path / "junk.pt").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="path"):
        CoMMEmbedder.load(tmp_path / "junk.pt")


def test_embedder_errors():
    Xs = _data()
    with pytest.raises(ValueError, match="at least 2 modalities"):
        _small().fit(Xs[:1])
    with pytest.raises(ValueError, match="different numbers of rows"):
        _small().fit([Xs[0], Xs[1][:10]])
    with pytest.raises(ValueError, match="Xs\\[1\\] is None"):
        _small().fit([Xs[0], None])
    bad = Xs[1].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Xs\\[1\\] contains"):
        _small().fit([Xs[0], bad])
    with pytest.raises(TypeError, match="list of"):
        _small().fit(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="epochs"):
        CoMMEmbedder(epochs=0).fit(Xs)
    with pytest.raises(ValueError, match="not fitted"):
        _small().transform(Xs)
    emb = _small().fit(Xs)
    with pytest.raises(ValueError, match="every modality is absent"):
        emb.transform([None, None])
    with pytest.raises(ValueError, match="must have 3 columns"):
        emb.transform([Xs[0], Xs[0]])


def test_cli_fit_and_embed(tmp_path):
    A, B = _data()
    np.save(tmp_path / "A.npy", A)
    np.savetxt(tmp_path / "B.csv", B, delimiter=",")
    r = CliRunner()
    res = r.invoke(app, ["comm", "fit", str(tmp_path / "A.npy"), str(tmp_path / "B.csv"),
                         "--out", str(tmp_path / "m.pt"), "--epochs", "2", "--dim", "8",
                         "--batch-size", "16"])
    assert res.exit_code == 0, res.output
    res = r.invoke(app, ["comm", "embed", str(tmp_path / "m.pt"), str(tmp_path / "A.npy"), "-",
                         "--out", str(tmp_path / "Z.npy")])
    assert res.exit_code == 0, res.output
    Z = np.load(tmp_path / "Z.npy")
    ref = CoMMEmbedder.load(tmp_path / "m.pt").transform([A.astype(np.float32), None])
    assert Z.shape == (48, 8) and np.allclose(Z, ref, atol=1e-6)
    # issue 68: the .csv had no header, so pandas read its first row as one and lost it
    res = r.invoke(app, ["comm", "embed", str(tmp_path / "m.pt"), str(tmp_path / "A.npy"), "-",
                         "--out", str(tmp_path / "Z.csv")])
    assert res.exit_code == 0, res.output
    with open(tmp_path / "Z.csv", newline="") as fh:   # a header row, then every row
        rows = list(csv.reader(fh))
    assert rows[0] == [f"z{j}" for j in range(8)] and len(rows) == 49
    assert np.allclose(np.array(rows[1:], dtype=float), Z, atol=1e-6)
    # .txt as urlost embed and v3 encode take it (was refused): space-separated, headed
    res = r.invoke(app, ["comm", "embed", str(tmp_path / "m.pt"), str(tmp_path / "A.npy"), "-",
                         "--out", str(tmp_path / "Z.txt")])
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "Z.txt").read_text().splitlines()
    assert lines[0] == " ".join(f"z{j}" for j in range(8)) and len(lines) == 49
    assert np.allclose(np.loadtxt(lines[1:]), Z, atol=1e-6)


def test_cli_errors(tmp_path):
    A, B = _data()
    np.save(tmp_path / "A.npy", A)
    np.save(tmp_path / "short.npy", B[:10])
    bad = B.copy()
    bad[2, 0] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    (tmp_path / "junk.npy").write_text("nope")
    r = CliRunner()
    out = str(tmp_path / "m.pt")
    cases = [
        (["comm", "fit", str(tmp_path / "A.npy"), str(tmp_path / "missing.npy"), "--out", out],
         "does not exist"),
        (["comm", "fit", str(tmp_path / "A.npy"), str(tmp_path / "junk.npy"), "--out", out],
         "not a readable"),
        (["comm", "fit", str(tmp_path / "A.npy"), str(tmp_path / "short.npy"), "--out", out],
         "different row counts"),
        (["comm", "fit", str(tmp_path / "A.npy"), str(tmp_path / "nan.npy"), "--out", out],
         "NaN"),
        (["comm", "fit", str(tmp_path / "A.npy"), "--out", out], "at least 2"),
        (["comm", "fit", str(tmp_path / "A.npy"), str(tmp_path / "A.npy"), "--out", out,
          "--epochs", "0"], "--epochs"),
        (["comm", "embed", str(tmp_path / "none.pt"), str(tmp_path / "A.npy"), "--out",
          str(tmp_path / "Z.npy")], "does not exist"),
        (["comm", "embed", str(tmp_path / "A.npy"), str(tmp_path / "A.npy"), "--out",
          str(tmp_path / "Z.json")], "--out must end in .npy or .csv or .txt"),
    ]
    for args, msg in cases:
        res = r.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert msg in res.output
    assert not (tmp_path / "m.pt").exists()


def test_transform_keeps_the_fit_device():
    emb = _small().fit(_data())
    assert emb.mean_[0].device == torch.device("cpu")
