"""A .csv streamed row by row (issue 71): :class:`CsvRows` reads what the whole read reads,
with its messages, and the reading and training verbs of comm, urlost, cox and toss stream
a .csv over ``READ_WHOLE_BYTES`` (patched to 0 here, with the whole-file reader patched to
fail): a reading verb writes the file the whole read wrote, byte for byte; a fit is the
API's fit on a Dataset of the same rows; a bad cell is the whole read's one line."""

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from _rows import Rows
from typer.testing import CliRunner

import iclr25._io as io
from iclr25.cli import app
from iclr25.datasets import rows
from iclr25.datasets.files import CsvRows, is_streamed_path, open_dataset


@pytest.fixture
def streamed(monkeypatch):
    """Every .csv (and a fit's .npy) streamed; the whole-file readers fail if called."""
    monkeypatch.setattr(rows, "READ_WHOLE_BYTES", 0)
    monkeypatch.setattr(io, "_text_rows", lambda *a, **k: pytest.fail("csv read whole"))
    monkeypatch.setattr(io, "read_matrix", lambda *a, **k: pytest.fail("read whole"))


def _csv(path, X, header=None):
    np.savetxt(path, np.asarray(X, dtype=np.float64), delimiter=",", fmt="%.9g",
               header=",".join(header) if header else "", comments="")
    return path


def _run(*args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # short fits: the plateau warnings may come
        return CliRunner().invoke(app, [str(a) for a in args])


# -- CsvRows ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "a, b,c\n1,2,3\n\n4 , 5.5,1e3\r\n-1_0,7,2\n",       # header, blank, CRLF, float()'s '_'
    "1,2,3\r4,5,6\r7,8,9",                             # lone CR line ends, no final newline
    '"a","b","c"\n0.1,-2,3\n',                          # a quoted header
])
def test_rows_are_the_whole_reads_as_float32(tmp_path, text):
    p = tmp_path / "t.csv"
    p.write_bytes(text.encode())
    ds = CsvRows(p)
    got = np.stack([ds[i].numpy() for i in range(len(ds))])
    assert got.dtype == np.float32
    assert np.array_equal(got, io.read_matrix(p).astype(np.float32))
    assert np.array_equal(pickle.loads(pickle.dumps(ds))[-1], ds[len(ds) - 1])
    if ds.header:
        assert ds.header == ["a", "b", "c"]
        assert ds.select(["c", "a"])[0].tolist() == got[0, [2, 0]].tolist()


@pytest.mark.parametrize("content", [
    b"1,2\n3,x\n", b"a,b\n1,2\n3,q\n", b"1,2\n3\n", b"a,b\n", b"1,2\n3,nan\n4,inf\n",
    b"1,2\n3,\xff\n", b"1,2\n,\n4,5,6\n", b"1,2\r3,y\r",
    # past the text decoder's 8 KiB chunk the whole read named byte 3618 of 20002 (h68mends8)
    b"1,2\n" * 5000 + b"\xe9,1\n", b"a\n" + "\u00e9\n".encode() * 7000 + b"\xc3",
])
def test_errors_are_the_whole_reads_word_for_word(tmp_path, content):
    p = tmp_path / "t.csv"
    p.write_bytes(content)
    with pytest.raises(ValueError) as whole:
        io.read_matrix(p, "FILES")
    with pytest.raises(ValueError) as rows_:
        CsvRows(p, name="FILES")
    assert str(rows_.value) == str(whole.value)


def test_a_bad_cell_is_named_by_line_and_column(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,b\n1,2\n3,q\n")
    with pytest.raises(ValueError, match=r"line 3: non-numeric cell 'q' in column 2 \('b'\)"):
        CsvRows(p, name="FILES")
    p.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['z'\]"):
        CsvRows(p, ["z"])


def test_which_files_stream(tmp_path, monkeypatch):
    small = _csv(tmp_path / "s.csv", np.ones((3, 2)))
    np.save(tmp_path / "s.npy", np.ones((3, 2)))
    assert not is_streamed_path(small) and not is_streamed_path(tmp_path / "s.npy", npy=True)
    monkeypatch.setattr(rows, "READ_WHOLE_BYTES", small.stat().st_size - 1)
    assert is_streamed_path(small) and not is_streamed_path(tmp_path / "s.npy")
    assert isinstance(open_dataset(small, "X"), CsvRows)


# -- the verbs --------------------------------------------------------------------------------


def _comm_data(n=50):
    g = np.random.default_rng(0)
    z = g.normal(size=(n, 2))
    return [np.c_[z, g.normal(size=(n, 3))].astype(np.float32),
            np.c_[z[:, :1], g.normal(size=(n, 2))].astype(np.float32)]


def test_comm_embed_and_fit_stream_a_csv(one_thread, tmp_path, monkeypatch):
    from iclr25.comm import CoMMEmbedder

    Xs = _comm_data()
    files = [_csv(tmp_path / f"m{j}.csv", X) for j, X in enumerate(Xs)]
    model = tmp_path / "m.safetensors"
    CoMMEmbedder(dim=8, epochs=1, batch_size=16, n_tokens=3, hidden=16).fit(Xs).save(model)
    for out in ("whole.npy", "whole.csv"):
        assert _run("comm", "embed", model, files[0], "-", "--out", tmp_path / out
                    ).exit_code == 0
    with monkeypatch.context() as mp:
        mp.setattr(rows, "READ_WHOLE_BYTES", 0)
        mp.setattr(io, "_text_rows", lambda *a, **k: pytest.fail("csv read whole"))
        mp.setattr(rows, "WINDOW_BYTES", 4 * 8 * 32)               # windows of 32 + 18 rows
        for out in ("z.npy", "z.csv"):
            res = _run("comm", "embed", model, files[0], "-", "--out", tmp_path / out)
            assert res.exit_code == 0, res.output
            assert (tmp_path / out).read_bytes() == (tmp_path / f"whole{out[1:]}").read_bytes()
        np.save(tmp_path / "m1.npy", Xs[1])                         # a fit's .npy: mapped
        mp.setattr(io, "read_matrix", lambda *a, **k: pytest.fail("read whole"))
        res = _run("comm", "fit", files[0], tmp_path / "m1.npy", "--dim", "8", "--epochs", "2",
                   "--batch-size", "16", "--out", tmp_path / "cli.safetensors")
        assert res.exit_code == 0, res.output
    api = CoMMEmbedder(dim=8, epochs=2, batch_size=16).fit([Rows(X) for X in Xs])
    cli = CoMMEmbedder.load(tmp_path / "cli.safetensors")
    assert api.history_ == cli.history_
    assert np.array_equal(api.transform(Xs), cli.transform(Xs))


def test_urlost_cluster_embed_and_fit_stream_a_csv(one_thread, tmp_path, monkeypatch):
    from iclr25.urlost import URLOST

    g = torch.Generator().manual_seed(0)
    X = torch.randn(90, 8, generator=g)
    X[:, 4:] += X[:, :4]
    path = _csv(tmp_path / "x.csv", X.numpy(), [f"c{j}" for j in range(8)])
    model = tmp_path / "m.safetensors"
    URLOST(n_clusters=3, n_neighbors=3, epochs=1, dim=8).fit(X).save(model)
    verbs = {"z.npy": ("urlost", "embed", model, path, "--out"),
             "z.csv": ("urlost", "embed", model, path, "--out"),
             "l.csv": ("urlost", "cluster", path, "--clusters", "3", "--neighbors", "3",
                       "--out")}
    for out, args in verbs.items():
        assert _run(*args, tmp_path / f"whole{out}").exit_code == 0
    with monkeypatch.context() as mp:
        mp.setattr(rows, "READ_WHOLE_BYTES", 0)
        mp.setattr(io, "read_matrix", lambda *a, **k: pytest.fail("read whole"))
        for out, args in verbs.items():
            res = _run(*args, tmp_path / out)
            assert res.exit_code == 0, res.output
            assert (tmp_path / out).read_bytes() == (tmp_path / f"whole{out}").read_bytes()
        res = _run("urlost", "fit", path, "--clusters", "3", "--neighbors", "3", "--epochs",
                   "2", "--dim", "8", "--out", tmp_path / "cli.safetensors")
        assert res.exit_code == 0, res.output
    api = URLOST(n_clusters=3, n_neighbors=3, epochs=2, dim=8).fit(Rows(X))
    cli = URLOST.load(tmp_path / "cli.safetensors")
    assert torch.equal(api.groups_, cli.groups_) and api.loss_curve_ == cli.loss_curve_
    assert torch.equal(api.transform(X), cli.transform(X))


def test_cox_fit_and_predict_stream_a_csv_as_they_read_it_whole(one_thread, tmp_path,
                                                                 monkeypatch):
    from iclr25.cox import COX

    g = torch.Generator().manual_seed(0)
    y = torch.arange(90) % 3
    Z = torch.nn.functional.normalize(torch.randn(3, 8, generator=g)[y]
                                      + 0.2 * torch.randn(90, 8, generator=g), dim=1)
    X = torch.tanh(Z @ torch.randn(8, 6, generator=g))
    files = {"x": _csv(tmp_path / "x.csv", X), "z": _csv(tmp_path / "z.csv", Z),
             "y": _csv(tmp_path / "y.csv", y[:, None]),
             "p": _csv(tmp_path / "p.csv", torch.stack([torch.arange(15)] * 2, 1))}

    def fit(out):
        return _run("cox", "fit", "--oom", files["x"], "--im", files["z"], "--im-labels",
                    files["y"], "--pairs", files["p"], "--steps", "12", "--out", out)

    assert fit(tmp_path / "whole.safetensors").exit_code == 0
    for out in ("whole.csv", "whole.npy"):
        assert _run("cox", "predict", tmp_path / "whole.safetensors", files["x"], "--out",
                    tmp_path / out).exit_code == 0
    with monkeypatch.context() as mp:
        mp.setattr(rows, "READ_WHOLE_BYTES", 0)     # x and z streamed; labels, pairs: 8 B a row
        mp.setattr(CsvRows, "numpy", lambda self: pytest.fail("whole table read"))
        opened, real = [], CsvRows._index
        mp.setattr(CsvRows, "_index", lambda self: opened.append(self.path.name) or real(self))
        res = fit(tmp_path / "m.safetensors")
        assert res.exit_code == 0, res.output
        assert opened == ["x.csv", "z.csv"]
        mp.setattr(io, "read_matrix", lambda *a, **k: pytest.fail("read whole"))
        for out in ("l.csv", "l.npy"):
            res = _run("cox", "predict", tmp_path / "whole.safetensors", files["x"], "--out",
                       tmp_path / out)
            assert res.exit_code == 0, res.output
            assert (tmp_path / out).read_bytes() == (tmp_path / f"whole{out[1:]}").read_bytes()
    a, b = COX.load(tmp_path / "whole.safetensors"), COX.load(tmp_path / "m.safetensors")
    assert torch.equal(a.predict_proba(X), b.predict_proba(X))   # a Dataset: the arrays' fit


def test_toss_fit_and_predict_stream_a_csv(one_thread, tmp_path, monkeypatch, streamed):
    from iclr25.toss import HeteroscedasticRegressor

    g = torch.Generator().manual_seed(0)
    X = torch.randn(120, 2, generator=g)
    Y = X[:, :1] * torch.randn(120, 2, generator=g)
    data = _csv(tmp_path / "d.csv", torch.cat([Y[:, :1], X, Y[:, 1:]], 1),
                ["y0", "x0", "x1", "y1"])
    res = _run("toss", "fit", data, "--targets", "y0,y1", "--epochs", "2", "--n-neighbors",
               "8", "--out", tmp_path / "m.safetensors")
    assert res.exit_code == 0, res.output
    api = HeteroscedasticRegressor(epochs=2, n_neighbors=8, seed=0).fit(Rows(X), Rows(Y))
    cli = HeteroscedasticRegressor.load(tmp_path / "m.safetensors")
    assert cli.feature_names_ == ["x0", "x1"] and cli.target_names_ == ["y0", "y1"]
    assert api.history_ == cli.history_
    assert torch.equal(api.predict_cov(X), cli.predict_cov(X))
    res = _run("toss", "predict", tmp_path / "m.safetensors", data, "--out", tmp_path / "s.csv")
    assert res.exit_code == 0, res.output
    monkeypatch.undo()                                             # the whole read, as before
    res = _run("toss", "predict", tmp_path / "m.safetensors", data, "--out", tmp_path / "w.csv")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "s.csv").read_bytes() == (tmp_path / "w.csv").read_bytes()


@pytest.mark.parametrize("verb", ["comm", "urlost", "cox", "toss"])
def test_a_bad_cell_is_the_whole_reads_one_line_and_nothing_is_written(tmp_path, monkeypatch,
                                                                       verb):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,c\n" + "1,2,3\n" * 5 + "4,x,6\n")
    out = tmp_path / "out.safetensors"
    args = {"comm": ("comm", "fit", bad, bad, "--out", out),
            "urlost": ("urlost", "fit", bad, "--out", out),
            "cox": ("cox", "fit", "--oom", bad, "--im", bad, "--im-labels", bad, "--out", out),
            "toss": ("toss", "fit", bad, "--targets", "c", "--out", out)}[verb]
    whole = _run(*args)
    monkeypatch.setattr(rows, "READ_WHOLE_BYTES", 0)
    monkeypatch.setattr(io, "_text_rows", lambda *a, **k: pytest.fail("csv read whole"))
    res = _run(*args)
    assert res.exit_code == whole.exit_code == 2 and "Traceback" not in res.output
    assert res.output == whole.output and len(res.output.strip().splitlines()) == 1
    assert "line 7: non-numeric cell 'x' in column 2 ('b')" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


@pytest.mark.parametrize("text", ["1,2,3\n4,5,6\n", "a,b\n1,2,3\n4,5,6\n"])
def test_toss_refuses_a_csv_without_its_header_as_the_whole_read(tmp_path, monkeypatch, text):
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    args = ("toss", "fit", bad, "--targets", "b", "--out", tmp_path / "m.safetensors")
    whole = _run(*args)
    monkeypatch.setattr(rows, "READ_WHOLE_BYTES", 0)
    monkeypatch.setattr(io, "_text_rows", lambda *a, **k: pytest.fail("csv read whole"))
    res = _run(*args)
    assert res.exit_code == whole.exit_code == 2 and res.output == whole.output
    assert "header" in res.output and len(res.output.strip().splitlines()) == 1


def test_cox_and_urlost_fits_memory_map_a_large_npy(one_thread, tmp_path, monkeypatch):
    """A fit's .npy over READ_WHOLE_BYTES is memory-mapped and streamed (ArrayRows): COX's
    fit equals its whole read's bit for bit, URLOST's the API's on a Dataset."""
    from iclr25.cox import COX
    from iclr25.urlost import URLOST

    g = torch.Generator().manual_seed(0)
    y = torch.arange(90) % 3
    Z = torch.nn.functional.normalize(torch.randn(3, 8, generator=g)[y]
                                      + 0.2 * torch.randn(90, 8, generator=g), dim=1)
    X = torch.tanh(Z @ torch.randn(8, 6, generator=g)).double()   # float64 on disk
    np.save(tmp_path / "x.npy", X.numpy())
    np.save(tmp_path / "z.npy", Z.numpy())
    _csv(tmp_path / "y.csv", y[:, None])
    _csv(tmp_path / "p.csv", torch.stack([torch.arange(15)] * 2, 1))

    def cox(out):
        return _run("cox", "fit", "--oom", tmp_path / "x.npy", "--im", tmp_path / "z.npy",
                    "--im-labels", tmp_path / "y.csv", "--pairs", tmp_path / "p.csv",
                    "--steps", "12", "--out", tmp_path / out)

    assert cox("whole.safetensors").exit_code == 0
    loads, real = [], np.load
    monkeypatch.setattr(rows, "READ_WHOLE_BYTES", 0)
    monkeypatch.setattr(np, "load", lambda f, *a, **k: loads.append(
        (Path(f).name, k.get("mmap_mode"))) or real(f, *a, **k))
    res = cox("m.safetensors")
    assert res.exit_code == 0, res.output
    assert {m for f, m in loads if f.endswith(".npy")} == {"r"}
    a, b = COX.load(tmp_path / "whole.safetensors"), COX.load(tmp_path / "m.safetensors")
    assert torch.equal(a.predict_proba(X.float()), b.predict_proba(X.float()))
    res = _run("urlost", "fit", tmp_path / "x.npy", "--clusters", "2", "--neighbors", "3",
               "--epochs", "2", "--dim", "8", "--out", tmp_path / "u.safetensors")
    assert res.exit_code == 0, res.output
    assert {m for f, m in loads if f == "x.npy"} == {"r"}
    api = URLOST(n_clusters=2, n_neighbors=3, epochs=2, dim=8).fit(Rows(X.float()))
    cli = URLOST.load(tmp_path / "u.safetensors")
    assert api.loss_curve_ == cli.loss_curve_
    assert torch.equal(api.transform(X.float()), cli.transform(X.float()))
