"""COX fit streamed from map-style Datasets (issue 71 item 2): the arrays' fit on small data
bit for bit, the whole-data steps on bounded samples, bad items refused naming the argument,
tables read chunk by chunk, the CLI, DDP and resume on a Dataset."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from _engine_checks import check_ddp, check_resume, tensors
from _rows import Rows, save_to_disk_layout

import iclr25.cox.rows as cox_rows
from iclr25.cox import COX
from iclr25.cox.model import _Data

pytest.importorskip("lightning_fabric")


def _data(n=90):
    g = torch.Generator().manual_seed(0)
    y = torch.arange(n) % 3
    c = F.normalize(torch.randn(3, 8, generator=g), dim=1)
    Z = F.normalize(c[y] + 0.2 * torch.randn(n, 8, generator=g), dim=1)
    X = torch.tanh(Z @ torch.randn(8, 6, generator=g)) + 0.05 * torch.randn(n, 6, generator=g)
    return X, {"a": Z, "b": Z.flip(1)}, {"a": y, "b": y}, torch.stack([torch.arange(15)] * 2, 1)


def _model(**kw):
    return COX(3, **{"bottleneck": 4, "hidden": 16, "steps": 21, "batch_size": 16, "lr": 1e-2,
                     "min_confidence": 0.5, "min_pairs": 3, "floor": "off", **kw})


def _result(m):
    """Everything a fit sets that the arrays' path sets too."""
    return ([m.loss_.tolist(), m.correspondences_.tolist(), [p.tolist() for p in m.history_],
             m.refused_rounds_, m.class_names_.tolist(), m.naming_agreement_,
             m.floor_accuracy_, m.head_accuracy_, m.floor_used_], tensors(m.net_))


def _same(a, b):
    assert str(a[0]) == str(b[0])          # every figure exactly (NaN == NaN as text)
    assert all(torch.equal(u, v) for u, v in zip(a[1], b[1], strict=True))


def _fit(model, X, im, lab, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # 21 steps: the plateau warning may come
        return model.fit(X, im, lab, **kw)


@pytest.mark.parametrize("path", ["pairs", "labels", "none"])
def test_a_dataset_fit_equals_the_arrays_bit_for_bit(one_thread, path):
    # 90 rows <= SAMPLE_ROWS: every whole-data step reads every row, in order
    if path == "none":
        pytest.importorskip("ot")
    X, im, lab, P = _data()
    kw = {"pairs": P} if path == "pairs" else {}
    if path == "labels":
        kw["y_oom"] = torch.where(torch.arange(90) < 15, lab["a"], -1)
    ref = _result(_fit(_model(), X, im, lab, **kw))
    kw_ds = dict(kw)
    if "y_oom" in kw:
        kw_ds["y_oom"] = Rows(kw["y_oom"])      # labels as a Dataset too
    got = _result(_fit(_model(), Rows(X), {m: Rows(z) for m, z in im.items()},
                       {m: Rows(v) for m, v in lab.items()}, **kw_ds))
    _same(got, ref)
    assert torch.equal(X, _data()[0])                                       # untouched


def test_the_floor_check_on_a_dataset_equals_the_arrays(one_thread):
    X, im, lab, P = _data()
    ref = _result(_fit(_model(floor="select", steps=8), X, im, lab, pairs=P))
    got = _result(_fit(_model(floor="select", steps=8), Rows(X), {"a": Rows(im["a"]),
                                                                  "b": im["b"]}, lab, pairs=P))
    assert ref[0][6] == ref[0][6]                      # the check ran (not NaN)
    _same(got, ref)


def test_rematching_reads_seeded_samples_and_every_oom_row(one_thread, monkeypatch):
    # SAMPLE_ROWS = 40 of 90: the IM candidates and the OOM standardisation come from
    # seeded samples, every OOM row is matched (read again, block by block): the same as a
    # dense transcription of that rule
    pytest.importorskip("ot")
    X, im, lab, _ = _data()
    monkeypatch.setattr(cox_rows, "SAMPLE_ROWS", 40)
    m = _fit(_model(steps=10), Rows(X), {"a": Rows(im["a"])}, {"a": lab["a"]})
    data = _Data(*m._validate(Rows(X), {"a": Rows(im["a"])}, {"a": lab["a"]}, None, None),
                 seed=0)
    got = m._rematch(data)
    si = torch.randperm(90, generator=torch.Generator().manual_seed(1))[:40].sort().values
    so = torch.randperm(90, generator=torch.Generator().manual_seed(2))[:40].sort().values
    net = m.net_.eval()
    with torch.no_grad():
        pred = net.vibs["a"](im["a"][si])[0]
        a = F.normalize((pred - pred.mean(0)) / pred.std(0), dim=1)
        hs = net.encoder(X[so])
        h = net.encoder(X)
        b = F.normalize((h - hs.mean(0)) / hs.std(0), dim=1)
        best, arg = (b @ a.T).max(1)
        agree = lab["a"][si[arg]] == net.head(h).argmax(1)
    keep = torch.nonzero((best >= best.median()) & agree).flatten()
    assert len(keep) > 10
    assert torch.equal(got, torch.stack([si[arg[keep]], keep], 1))


@pytest.mark.parametrize(("where", "bad", "match"), [
    ("X", {7: torch.zeros(5)}, r"X_oom row 7 has 5 values, row 0 has 6"),
    ("X", {11: torch.full((6,), float("nan"))}, r"X_oom holds NaN or inf \(row 11\)"),
    ("X", {5: (torch.zeros(6), 1)}, r"X_oom item 5 is a tuple"),
    ("im", {3: torch.tensor(1.0)}, r"im\['a'\] row 3 must be a numeric row"),
    ("lab", {4: torch.tensor(0.5)}, r"im_labels\['a'\] row 4 must be one integer label"),
])
def test_a_bad_item_is_one_error_naming_the_argument_before_training(where, bad, match):
    X, im, lab, P = _data()
    Xd, Zd, Yd = Rows(X), {"a": Rows(im["a"])}, {"a": lab["a"]}
    if where == "X":
        Xd = Rows(X, bad)
    elif where == "im":
        Zd = {"a": Rows(im["a"], bad)}
    else:
        Yd = {"a": Rows(lab["a"], bad)}
    m = _model()
    with pytest.raises(ValueError, match=match):
        m.fit(Xd, Zd, Yd, pairs=P)
    assert not hasattr(m, "net_")


def _table(path, A, group):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    A = np.asarray(A)
    cols = {"y": A} if A.ndim == 1 else {f"c{j}": A[:, j] for j in range(A.shape[1])}
    pq.write_table(pa.table(cols), path, row_group_size=group)
    return path


def _hf_folder(path, A, shards=3):
    """The layout ``datasets.Dataset.save_to_disk`` writes (one list column ``x``)."""
    pa = pytest.importorskip("pyarrow")
    A = np.asarray(A)
    return save_to_disk_layout(path, pa.table({"x": pa.array(list(A), pa.list_(pa.float32()))}),
                               shards)


def test_tables_are_streamed_chunk_by_chunk_never_read_whole(one_thread, tmp_path,
                                                             monkeypatch):
    from iclr25.datasets.files import TableRows

    X, im, lab, P = _data(n=96)
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    tx = TableRows(_table(tmp_path / "x.parquet", X, 8), cache_mb=2 * 8 * 6 * 4 / 2**20)
    tz = TableRows(_table(tmp_path / "z.parquet", im["a"], 8))
    ty = TableRows(_table(tmp_path / "y.parquet", lab["a"], 8))
    decoded = []
    real = tx._decode
    tx._decode = lambda c: decoded.append(c) or real(c)
    got = _result(_fit(_model(), tx, {"a": tz}, {"a": ty}, pairs=P))
    # the check pass decodes X's 12 chunks in order (chunk 0 cached when opened)
    assert decoded[:11] == list(range(1, 12)), decoded
    ref = _result(_fit(_model(), X, {"a": im["a"]}, {"a": lab["a"]}, pairs=P))
    _same(got, ref)


@pytest.mark.parametrize("oom", ["parquet", "hf"])
def test_cli_fit_streams_tables_as_the_api_does(one_thread, tmp_path, monkeypatch, oom):
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets.files import TableRows

    X, im, lab, P = _data()
    paths = [_table(tmp_path / f"{n}.parquet", a, 16)
             for n, a in (("x", X), ("z", im["a"]), ("y", lab["a"]))]
    if oom == "hf":                         # the OOM rows as a save_to_disk folder
        paths[0] = _hf_folder(tmp_path / "x_hf", X)
    np.savetxt(tmp_path / "p.csv", P.numpy(), fmt="%d", delimiter=",")
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = CliRunner().invoke(app, ["cox", "fit", "--oom", str(paths[0]), "--im",
                                       str(paths[1]), "--im-labels", str(paths[2]), "--pairs",
                                       str(tmp_path / "p.csv"), "--steps", "12",
                                       "--out", str(tmp_path / "m.safetensors")])
        assert res.exit_code == 0, res.output
        api = COX(3, steps=12, seed=0).fit(TableRows(paths[0]), {"im0": TableRows(paths[1])},
                                           {"im0": TableRows(paths[2])}, pairs=P)
    cli = COX.load(tmp_path / "m.safetensors")
    assert torch.equal(api.predict_proba(X), cli.predict_proba(X))
    assert all(torch.equal(u, v) for u, v in zip(tensors(api.net_), tensors(cli.net_),
                                                 strict=True))


def test_cli_names_a_bad_table_in_one_line(tmp_path):
    from typer.testing import CliRunner

    from iclr25.cli import app

    X, im, lab, P = _data()
    x = _table(tmp_path / "x.parquet", X, 16)
    z = _table(tmp_path / "z.parquet", im["a"], 16)
    y = _table(tmp_path / "y.parquet", lab["a"].double() + 0.5, 16)
    res = CliRunner().invoke(app, ["cox", "fit", "--oom", str(x), "--im", str(z),
                                   "--im-labels", str(y), "--n-classes", "3",
                                   "--out", str(tmp_path / "m.safetensors")])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "--im-labels row 0 must be one integer label" in res.output


def _trainer(paired=True):
    """The engine tests' setting (tests/cox/test_cox_engine.py) on Datasets."""
    X, im, lab, P = _data()

    def train(**engine):
        m = _model(steps=21 if paired else 20)
        _fit(m, Rows(X), {k: Rows(v) for k, v in im.items()}, lab,
             pairs=P if paired else None, **engine)
        hist = m.loss_.tolist() + ([] if paired else [p.tolist() for p in m.history_])
        return hist, tensors(m.net_)
    return train


def test_ddp_on_a_dataset_equals_one_process(one_thread):
    check_ddp(_trainer())


@pytest.mark.parametrize("k", [6, 8])       # mid-round, a round's end (then a re-match)
def test_resumed_dataset_training_equals_uninterrupted(one_thread, tmp_path, k):
    pytest.importorskip("ot")
    check_resume(_trainer(paired=False), k, tmp_path)


@pytest.fixture
def fitted(one_thread, tmp_path):
    X, im, lab, P = _data(n=150)
    m = _fit(_model(steps=5), X, im, lab, pairs=P)
    m.save(tmp_path / "m.safetensors")
    return X, m, tmp_path


def _predict(tmp_path, X, out):
    from typer.testing import CliRunner

    from iclr25.cli import app

    return CliRunner().invoke(app, ["cox", "predict", str(tmp_path / "m.safetensors"), str(X),
                                    "--out", str(out)])


def _expected(tmp_path, y):
    """The files the whole-array ``cox predict`` wrote (np.save, np.savetxt with a header)."""
    np.save(tmp_path / "ref.npy", y)
    np.savetxt(tmp_path / "ref.csv", y, fmt="%d", delimiter=",", header="label", comments="")
    return (tmp_path / "ref.npy").read_bytes(), (tmp_path / "ref.csv").read_bytes()


def test_predict_streams_tables_window_by_window_as_the_arrays(fitted, monkeypatch):
    from iclr25.datasets import rows
    from iclr25.datasets.files import TableRows

    X, m, t = fitted
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 6 * 50)       # windows of 50, 100 rows
    table = TableRows(_table(t / "x.parquet", X.numpy(), 16))
    assert [len(w) for w in m._windows(table, "X")] == [50, 100]
    # a Dataset in, numpy out (scikit-learn's habit), equal to the arrays' bit for bit
    assert np.array_equal(m.predict(table), m.predict(X).numpy())
    assert np.array_equal(m.predict_proba(table), m.predict_proba(X).numpy())
    assert np.array_equal(m.transform(table), m.transform(X).numpy())
    assert isinstance(m.predict(table), np.ndarray)
    npy, csv = _expected(t, m.predict(X).numpy())
    for suffix, want in ((".npy", npy), (".csv", csv)):
        res = _predict(t, t / "x.parquet", t / f"y{suffix}")
        assert res.exit_code == 0, res.output
        assert (t / f"y{suffix}").read_bytes() == want


def test_predict_reads_a_npy_memory_mapped_with_the_old_output(fitted, monkeypatch):
    import iclr25._io as io
    from iclr25.datasets import rows

    X, m, t = fitted
    np.save(t / "x.npy", X.double().numpy())                    # float64, as users save
    old = m.predict(torch.from_numpy(X.double().numpy().astype(np.float32))).numpy()
    npy, csv = _expected(t, old)
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 6 * 50)
    monkeypatch.setattr(io, "read_matrix", lambda *a, **k: pytest.fail("read whole"))
    loads = []
    real = np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: loads.append(k) or real(*a, **k))
    for suffix, want in ((".npy", npy), (".csv", csv)):
        res = _predict(t, t / "x.npy", t / f"y{suffix}")
        assert res.exit_code == 0, res.output
        assert (t / f"y{suffix}").read_bytes() == want
    assert loads and all(k.get("mmap_mode") == "r" for k in loads)


@pytest.mark.parametrize("bad", ["width", "nan"])
def test_predict_bad_input_is_one_line_and_writes_nothing(fitted, bad):
    X, m, t = fitted
    A = X.numpy()[:, :5] if bad == "width" else X.numpy().copy()
    if bad == "nan":
        A[120, 2] = np.nan
    for path in (_table(t / "bad.parquet", A, 16), t / "bad.npy"):
        np.save(t / "bad.npy", A)
        res = _predict(t, path, t / "y.npy")
        assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
        assert ("row" in res.output and "X" in res.output), res.output
        assert not (t / "y.npy").exists() and not list(t.glob(".y.npy*partial"))
