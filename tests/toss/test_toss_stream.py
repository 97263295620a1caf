"""ToSS fit streamed from a map-style Dataset (issue 71 item 2): the arrays' labels and
training, the pseudo-labels against a bounded seeded sample, bad items refused naming X or Y
before training, tables read chunk by chunk, CLI = API on Parquet."""

import numpy as np
import pytest
import torch
from _rows import Rows

import iclr25.toss.model as model
from iclr25.toss import HeteroscedasticRegressor, pseudo_covariance


def _data(n=120, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 2, generator=g)
    Y = torch.cat([X[:, :1], X[:, 1:] - X[:, :1]], 1) * (1 + X[:, :1].abs()) \
        * torch.randn(n, 2, generator=g)
    return X, Y


def _small(**kw):
    return HeteroscedasticRegressor(**{"hidden": (8,), "epochs": 2, "n_neighbors": 8,
                                       "batch_size": 16, "seed": 0, **kw})


def test_dataset_fit_matches_the_arrays(one_thread):
    X, Y = _data()
    a, b = _small().fit(X, Y), _small().fit(Rows(X), Rows(Y))
    assert torch.equal(a.pseudo_cov_, b.pseudo_cov_)    # 120 rows <= PSEUDO_ROWS: all of them
    # one streaming float64 pass vs float32 reductions over the arrays: float32 rounding
    for u, v in [(a.x_mean_, b.x_mean_), (a.x_scale_, b.x_scale_), (a.y_mean_, b.y_mean_),
                 (a.y_scale_, b.y_scale_)]:
        torch.testing.assert_close(u, v, rtol=1e-6, atol=1e-6)
    # the same batches in the same order: the losses differ only by the statistics' rounding
    np.testing.assert_allclose(a.history_, b.history_, rtol=1e-5)
    torch.testing.assert_close(a.predict_cov(X), b.predict_cov(X), rtol=1e-4, atol=1e-5)
    # a Dataset of (x, y) items is the same fit as two Datasets, bit for bit
    c = _small().fit(Rows(list(zip(X, Y, strict=True))), None)
    assert c.history_ == b.history_ and torch.equal(c.pseudo_cov_, b.pseudo_cov_)
    assert torch.equal(X, _data()[0]) and torch.equal(Y, _data()[1])         # untouched


def test_the_nll_loss_streams_without_labels(one_thread):
    X, Y = _data()
    a, b = _small(loss="nll").fit(X, Y), _small(loss="nll").fit(Rows(X), Rows(Y))
    assert b.pseudo_cov_ is None
    np.testing.assert_allclose(a.history_, b.history_, rtol=1e-5)


def test_the_labels_read_a_seeded_sample_of_pseudo_rows(one_thread, monkeypatch):
    # Algorithm 1 with the observations 𝒳 = a seeded sample of 50 of the 120 rows,
    # transcribed densely: Mahalanobis metric of the sample, bottom-8 over the sample
    X, Y = _data()
    monkeypatch.setattr(model, "PSEUDO_ROWS", 50)
    m = _small(epochs=1, center="mean").fit(Rows(X), Rows(Y))
    pick = torch.randperm(120, generator=torch.Generator().manual_seed(1))[:50].sort().values
    xs, ys = X[pick].double(), Y[pick].double()
    prec = torch.linalg.inv(torch.cov(xs.T))
    diff = X.double()[:, None] - xs[None]
    d2 = torch.einsum("nmi,ij,nmj->nm", diff, prec, diff)
    near = d2.topk(8, largest=False)
    w = torch.softmax(-near.values, 1)
    yn = ys[near.indices]
    r = yn - (w[..., None] * yn).sum(1, keepdim=True)
    ref = (r * w[..., None]).mT @ r + 1e-4 * torch.eye(2, dtype=torch.float64)
    torch.testing.assert_close(m.pseudo_cov_, ref, rtol=1e-9, atol=1e-12)
    # a sampled row finds itself: its label is the sample's own
    own = pseudo_covariance(X[pick], Y[pick].double(), n_neighbors=8)
    torch.testing.assert_close(m.pseudo_cov_[pick], own, rtol=1e-9, atol=1e-12)
    again = _small(epochs=1, center="mean").fit(Rows(X), Rows(Y))
    assert torch.equal(again.pseudo_cov_, m.pseudo_cov_)


@pytest.mark.parametrize(("bad", "match"), [
    ({"X": {7: torch.zeros(3)}}, r"X row 7 has 3 values, row 0 has 2"),
    ({"Y": {9: torch.zeros(1)}}, r"Y row 9 has 1 values, row 0 has 2"),
    ({"X": {3: torch.tensor(1.0)}}, r"X row 3 must be a numeric row"),
    ({"X": {110: torch.full((2,), float("nan"))}}, r"X holds NaN or inf \(row 110\)"),
    ({"Y": {111: torch.full((2,), float("inf"))}}, r"Y holds NaN or inf \(row 111\)"),
])
def test_a_bad_item_is_one_error_naming_x_or_y_before_training(bad, match, monkeypatch):
    monkeypatch.setattr(model, "PSEUDO_ROWS", 50)          # the NaN rows: outside the sample
    X, Y = _data()
    m = _small()
    with pytest.raises(ValueError, match=match):
        m.fit(Rows(X, bad.get("X")), Rows(Y, bad.get("Y")))
    assert not hasattr(m, "model_")


def test_bad_datasets_are_refused_naming_the_argument():
    X, Y = _data()
    with pytest.raises(ValueError, match=r"X item 4 must be a pair \(x, y\)"):
        _small().fit(Rows(list(zip(X, Y, strict=True)), {4: X[4]}), None)
    with pytest.raises(ValueError, match="X and Y must have the same number of rows"):
        _small().fit(Rows(X), Rows(Y[:100]))
    with pytest.raises(ValueError, match="X needs at least 2 rows"):
        _small().fit(Rows(X[:1]), Rows(Y[:1]))
    with pytest.raises(ValueError, match="n_neighbors must be < the number of samples"):
        _small(n_neighbors=200).fit(Rows(X), Rows(Y))
    X[:, 1] = 3.0
    with pytest.raises(ValueError, match="X column 1 is constant"):
        _small().fit(Rows(X), Rows(Y))


def _table(tmp_path, n=96, rows=8):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    X, Y = _data(n)
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"x0": X[:, 0].numpy(), "x1": X[:, 1].numpy(),
                             "y0": Y[:, 0].numpy(), "y1": Y[:, 1].numpy()}), path,
                   row_group_size=rows)
    return path, X, Y


def test_a_table_is_streamed_chunk_by_chunk_never_read_whole(one_thread, tmp_path,
                                                             monkeypatch):
    from iclr25.datasets.files import TableRows

    path, X, Y = _table(tmp_path)
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    mb = 2 * 8 * 2 * 4 / 2**20                               # 12 chunks, a 2-chunk cache
    tx, ty = TableRows(path, ["x0", "x1"], cache_mb=mb), TableRows(path, ["y0", "y1"],
                                                                   cache_mb=mb)
    decoded = []
    real = tx._decode
    tx._decode = lambda c: decoded.append(c) or real(c)
    m = _small().fit(tx, ty)
    # the statistics' pass (chunk 0 cached when opened), the labels' rows (all 96, in
    # order), then each epoch decodes every chunk once (a uniform permutation would decode
    # about one chunk per row)
    assert decoded[:11] == list(range(1, 12)) and decoded[11:23] == list(range(12)), decoded
    assert sorted(decoded[23:35]) == sorted(decoded[35:]) == list(range(12)), decoded
    ref = _small().fit(X, Y)
    assert torch.equal(m.pseudo_cov_, ref.pseudo_cov_)
    torch.testing.assert_close(m.x_mean_, ref.x_mean_, rtol=1e-6, atol=1e-6)
    assert np.isfinite(m.history_).all() and m.predict_cov(X).shape == (96, 2, 2)


def test_cli_fit_streams_a_table_as_the_api_does(one_thread, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets.files import TableRows

    path, _, _ = _table(tmp_path, rows=16)
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    res = CliRunner().invoke(app, ["toss", "fit", str(path), "--targets", "y0,y1",
                                   "--epochs", "2", "--n-neighbors", "8",
                                   "--out", str(tmp_path / "m.safetensors")])
    assert res.exit_code == 0, res.output
    api = HeteroscedasticRegressor(epochs=2, n_neighbors=8, seed=0).fit(
        TableRows(path, ["x0", "x1"]), TableRows(path, ["y0", "y1"]))
    cli = HeteroscedasticRegressor.load(tmp_path / "m.safetensors")
    assert cli.feature_names_ == ["x0", "x1"] and cli.target_names_ == ["y0", "y1"]
    for u, v in zip(api.model_.state_dict().values(), cli.model_.state_dict().values(),
                    strict=True):
        assert torch.equal(u, v)


def test_a_streamed_dataset_under_ddp_and_resumed_equals_one_process(one_thread, tmp_path):
    pytest.importorskip("lightning_fabric")
    from _engine_checks import check_ddp, check_resume, tensors

    X, Y = _data(n=64)

    def train(**engine):
        m = _small(epochs=3).fit(Rows(X), Rows(Y), **engine)      # 4 steps an epoch
        return m.history_, tensors(m.model_)

    check_ddp(train)
    check_resume(train, 5, tmp_path)


# -- reading: predict and `toss predict` on a Dataset ----------------------------------------


def test_predict_on_a_dataset_equals_the_arrays_bit_for_bit(one_thread, monkeypatch):
    from iclr25.datasets import rows

    X, Y = _data()
    m = _small().fit(X, Y)
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 2 * 50)       # windows of 50, 70 rows
    # a Dataset in, numpy out (scikit-learn's habit), equal to the arrays'
    assert np.array_equal(m.predict(Rows(X)), m.predict(X).numpy())
    assert np.array_equal(m.predict_cov(Rows(X)), m.predict_cov(X).numpy())
    assert isinstance(m.predict(Rows(X)), np.ndarray)
    with pytest.raises(ValueError, match=r"X holds NaN or inf \(row 90\)"):
        m.predict(Rows(X, {90: torch.tensor([0.0, float("nan")])}))
    with pytest.raises(ValueError, match=r"X row 3 has 3 values, the model was fitted on 2"):
        m.predict_cov(Rows(X, {3: torch.zeros(3)}))


def test_cli_predict_streams_a_table_as_it_predicts_the_csv(one_thread, tmp_path,
                                                             monkeypatch):
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets import rows
    from iclr25.datasets.files import TableRows

    path, X, Y = _table(tmp_path)                                   # 12 chunks
    m = _small().fit(X, Y)
    m.feature_names_, m.target_names_ = ["x0", "x1"], ["y0", "y1"]
    m.save(tmp_path / "m.safetensors")
    csv = tmp_path / "d.csv"       # the same rows as a CSV (columns reordered): read whole
    np.savetxt(csv, torch.cat([Y[:, :1], X, Y[:, 1:]], 1).numpy().astype(np.float64),
               delimiter=",", header="y0,x0,x1,y1", comments="", fmt="%.9g")
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    decoded, real = [], TableRows._decode
    monkeypatch.setattr(TableRows, "_decode", lambda self, c: decoded.append(c) or real(self, c))
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 2 * 40)          # windows of 40, 56 rows
    for data, out in ((path, "t.csv"), (csv, "c.csv")):
        res = CliRunner().invoke(app, ["toss", "predict", str(tmp_path / "m.safetensors"),
                                       str(data), "--out", str(tmp_path / out)])
        assert res.exit_code == 0, res.output
    assert decoded[1:] == list(range(12)), decoded    # chunk 0 read opening the columns
    assert (tmp_path / "t.csv").read_bytes() == (tmp_path / "c.csv").read_bytes()
    table = np.loadtxt(tmp_path / "t.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(table[:, :2], m.predict(X).numpy(), rtol=1e-7)


def test_cli_predict_refuses_a_bad_table_in_one_line_writing_nothing(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from iclr25.cli import app

    X, Y = _data(96)
    m = _small(epochs=1).fit(X, Y)
    m.feature_names_, m.target_names_ = ["x0", "x1"], ["y0", "y1"]
    m.save(tmp_path / "m.safetensors")
    x1 = X[:, 1].numpy().copy()
    x1[60] = np.nan
    for cols, msg in (({"x0": X[:, 0].numpy(), "x1": x1}, "DATA holds NaN or inf (row 60)"),
                      ({"x0": X[:, 0].numpy()}, "lacks the feature column(s) x1")):
        pq.write_table(pa.table(cols), tmp_path / "d.parquet", row_group_size=8)
        res = CliRunner().invoke(app, ["toss", "predict", str(tmp_path / "m.safetensors"),
                                       str(tmp_path / "d.parquet"), "--out",
                                       str(tmp_path / "p.csv")])
        assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
        assert msg in res.output and "Traceback" not in res.output
        assert sorted(p.name for p in tmp_path.iterdir()) == ["d.parquet", "m.safetensors"]
