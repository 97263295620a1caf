"""URLOST fit streamed from a map-style Dataset (issue 71 item 2): the arrays' training, the
clustering on a bounded sample, bad items refused naming X, tables read chunk by chunk."""

import numpy as np
import pytest
import torch
from _rows import Rows

import iclr25.urlost.mae as mae
from iclr25.urlost import URLOST, SelfOrganizingClusters


def _data(n=90, d=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g)
    X[:, d // 2:] += X[:, :d // 2]          # column pairs that depend on each other
    return X


def _small(**kw):
    return URLOST(**{"n_clusters": 3, "n_neighbors": 3, "epochs": 2, "dim": 8,
                     "batch_size": 32, **kw})


def test_dataset_fit_matches_the_arrays(one_thread):
    X = _data()
    a, b = _small().fit(X), _small().fit(Rows(X))
    assert torch.equal(a.groups_, b.groups_)      # 90 rows <= CLUSTER_ROWS: all of them
    # one streaming float64 pass vs float32 reductions over the array: float32 rounding
    torch.testing.assert_close(a.mean_, b.mean_, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(a.scale_, b.scale_, rtol=1e-6, atol=1e-6)
    # the same batches and masks: the losses differ only by the statistics' rounding
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-5)
    assert torch.equal(X, _data())                                          # untouched


def test_given_groups_and_the_same_statistics_train_bit_for_bit(one_thread):
    # rows whose float32 and float64 statistics are exact (each column: 32 ones, 32 minus
    # ones and a zero in its own order: mean 0, std 1): the same statistics, so the
    # Dataset's training is the arrays' bit for bit (the same batches, masks, steps)
    g = torch.Generator().manual_seed(1)
    col = torch.cat([torch.ones(32), -torch.ones(32), torch.zeros(1)])
    X = torch.stack([col[torch.randperm(65, generator=g)] for _ in range(8)], 1)
    groups = torch.arange(8).reshape(4, 2)
    a, b = _small(groups=groups).fit(X), _small(groups=groups).fit(Rows(X))
    assert torch.equal(a.mean_, b.mean_) and torch.equal(a.scale_, b.scale_)
    assert a.loss_curve_ == b.loss_curve_
    for u, v in zip(a.model_.state_dict().values(), b.model_.state_dict().values(),
                    strict=True):
        assert torch.equal(u, v)


def test_the_clustering_reads_a_seeded_sample_of_cluster_rows(one_thread, monkeypatch):
    X = _data(n=120)
    monkeypatch.setattr(mae, "CLUSTER_ROWS", 50)
    m = _small(epochs=1).fit(Rows(X))
    pick = torch.randperm(120, generator=torch.Generator().manual_seed(1))[:50].sort().values
    ref = SelfOrganizingClusters(3, n_neighbors=3, seed=0).fit(X[pick])
    assert torch.equal(m.groups_, ref.groups_)
    assert torch.equal(_small(epochs=1).fit(Rows(X)).groups_, m.groups_)       # seeded


@pytest.mark.parametrize(("bad", "match"), [
    ({7: torch.zeros(11)}, r"X row 7 has 11 values, row 0 has 12"),
    ({5: (torch.zeros(12), 1)}, r"X item 5 is a tuple: its items must be rows"),
    ({3: torch.tensor(1.0)}, r"X row 3 must be a numeric row"),
    ({11: torch.full((12,), float("nan"))}, r"X holds NaN or inf \(row 11\)"),
])
def test_a_bad_item_is_one_error_naming_x_before_training(bad, match):
    m = _small()
    with pytest.raises(ValueError, match=match):
        m.fit(Rows(_data(), bad))
    assert not hasattr(m, "model_")


def test_bad_datasets_are_refused_naming_x():
    with pytest.raises(ValueError, match="X needs at least 2 samples"):
        _small().fit(Rows(_data()[:1]))
    with pytest.raises(ValueError, match="X rows have 1 value"):
        _small().fit(Rows(_data()[:, :1]))
    with pytest.raises(ValueError, match="n_clusters"):
        URLOST(n_clusters=40).fit(Rows(_data()))


def test_a_table_is_streamed_chunk_by_chunk_never_read_whole(one_thread, tmp_path,
                                                             monkeypatch):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from iclr25.datasets.files import TableRows

    X = _data(n=96).numpy()
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({f"c{j}": X[:, j] for j in range(12)}), path, row_group_size=8)
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    table = TableRows(path, cache_mb=2 * 8 * 12 * 4 / 2**20)    # 12 chunks, a 2-chunk cache
    decoded = []
    real = table._decode
    table._decode = lambda c: decoded.append(c) or real(c)
    m = _small().fit(table)
    # the clustering's sample (all 96 rows, in order; chunk 0 cached when opened), the
    # statistics' pass, then each epoch decode every chunk once (a uniform permutation
    # would decode about one chunk per row)
    assert decoded[:11] == list(range(1, 12)) and decoded[11:23] == list(range(12)), decoded
    assert sorted(decoded[23:35]) == sorted(decoded[35:]) == list(range(12)), decoded
    ref = _small().fit(X)
    assert torch.equal(m.groups_, ref.groups_)
    torch.testing.assert_close(m.mean_, ref.mean_, rtol=1e-6, atol=1e-6)
    assert np.isfinite(m.loss_curve_).all() and m.transform(X).shape == (96, 8)


def test_cli_fit_streams_a_table_as_the_api_does(one_thread, tmp_path, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets.files import TableRows

    X = _data().numpy()
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({f"c{j}": X[:, j] for j in range(12)}), path, row_group_size=16)
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    res = CliRunner().invoke(app, ["urlost", "fit", str(path), "--clusters", "3",
                                   "--neighbors", "3", "--epochs", "2", "--dim", "8",
                                   "--out", str(tmp_path / "m.safetensors")])
    assert res.exit_code == 0, res.output
    api = URLOST(n_clusters=3, n_neighbors=3, epochs=2, dim=8).fit(TableRows(path))
    cli = URLOST.load(tmp_path / "m.safetensors")
    assert torch.equal(api.groups_, cli.groups_)
    for u, v in zip(api.model_.state_dict().values(), cli.model_.state_dict().values(),
                    strict=True):
        assert torch.equal(u, v)


# -- reading: transform, `urlost embed` and `urlost cluster` on a Dataset -------------------


def test_transform_on_a_dataset_equals_the_arrays_bit_for_bit(one_thread, monkeypatch):
    from iclr25.datasets import rows

    X = _data()
    m = _small().fit(X)
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 12 * 40)   # windows of 32 rows: 3 of them
    # a Dataset in, numpy out (scikit-learn's habit), equal to the arrays' bit for bit
    assert np.array_equal(m.transform(Rows(X), batch_size=16),
                          m.transform(X, batch_size=16).numpy())
    assert np.array_equal(m.transform(Rows(X[:1])), m.transform(X[:1]).numpy())  # one row


@pytest.mark.parametrize(("bad", "match"), [
    ({70: torch.zeros(11)}, r"X row 70 has 11 values, the model was fitted on 12"),
    ({5: (torch.zeros(12), 1)}, r"X item 5 is a tuple: its items must be rows"),
    ({71: torch.full((12,), float("nan"))}, r"X holds NaN or inf \(row 71\)"),
])
def test_transform_refuses_a_bad_row_naming_x(bad, match):
    m = _small(epochs=1).fit(_data())
    with pytest.raises(ValueError, match=match):
        m.transform(Rows(_data(), bad))


def _parquet(path, X, group=8):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({f"c{j}": X[:, j] for j in range(X.shape[1])}), path,
                   row_group_size=group)
    return path


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
def test_cli_embed_streams_a_table_as_the_api_embeds_the_arrays(one_thread, tmp_path,
                                                                monkeypatch, suffix):
    from typer.testing import CliRunner

    from iclr25._io import write_array
    from iclr25.cli import app
    from iclr25.datasets import rows
    from iclr25.datasets.files import TableRows

    X = _data(n=200)
    path = _parquet(tmp_path / "x.parquet", X.numpy())                  # 25 chunks
    _small(epochs=1).fit(X).save(tmp_path / "m.safetensors")
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    decoded, real = [], TableRows._decode
    monkeypatch.setattr(TableRows, "_decode", lambda self, c: decoded.append(c) or real(self, c))
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 12 * 1100)   # two windows: 1,024 + rest
    big = torch.cat([X] * 6)                                    # 1,200 rows
    big_path = _parquet(tmp_path / "big.parquet", big.numpy(), group=100)
    out = tmp_path / f"z{suffix}"
    for p, data in ((path, X), (big_path, big)):
        decoded.clear()
        res = CliRunner().invoke(app, ["urlost", "embed", str(tmp_path / "m.safetensors"),
                                       str(p), "--out", str(out)])
        assert res.exit_code == 0, res.output
        assert decoded == list(range(len(decoded))), decoded      # each chunk once, in order
        write_array(tmp_path / f"api{suffix}",
                    URLOST.load(tmp_path / "m.safetensors").transform(data).numpy(),
                    [f"z{j}" for j in range(8)])
        assert out.read_bytes() == (tmp_path / f"api{suffix}").read_bytes()


def test_cli_embed_refuses_a_bad_table_in_one_line_writing_nothing(tmp_path):
    from typer.testing import CliRunner

    from iclr25.cli import app

    X = _data().numpy()
    _small(epochs=1).fit(X).save(tmp_path / "m.safetensors")
    X[77, 3] = np.nan
    for bad, msg in ((_parquet(tmp_path / "nan.parquet", X), "FILE holds NaN or inf (row 77)"),
                     (_parquet(tmp_path / "w.parquet", X[:, :5]),
                      "FILE row 0 has 5 values, the model was fitted on 12")):
        res = CliRunner().invoke(app, ["urlost", "embed", str(tmp_path / "m.safetensors"),
                                       str(bad), "--out", str(tmp_path / "z.npy")])
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert res.output.strip() == f"error: {msg}"
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("z")) == []
        assert not list(tmp_path.glob(".*partial"))


def test_cli_cluster_clusters_the_rows_urlost_fit_would(one_thread, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets.files import TableRows

    X = _data(n=120)
    path = _parquet(tmp_path / "x.parquet", X.numpy())
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    args = ["urlost", "cluster", str(path), "--clusters", "3", "--neighbors", "3", "--seed",
            "2", "--out", str(tmp_path / "l.npy")]
    assert CliRunner().invoke(app, args).exit_code == 0
    ref = SelfOrganizingClusters(3, n_neighbors=3, seed=2).fit(X)          # every row
    assert np.array_equal(np.load(tmp_path / "l.npy"), ref.labels_)
    monkeypatch.setattr(mae, "CLUSTER_ROWS", 50)     # a bounded sample, as fit draws it
    assert CliRunner().invoke(app, args).exit_code == 0
    pick = torch.randperm(120, generator=torch.Generator().manual_seed(3))[:50].sort().values
    ref = SelfOrganizingClusters(3, n_neighbors=3, seed=2).fit(X[pick])
    assert np.array_equal(np.load(tmp_path / "l.npy"), ref.labels_)


def test_cli_embed_reads_a_npy_memory_mapped_with_the_old_output(one_thread, tmp_path,
                                                                 monkeypatch):
    """Issue 71: a .npy is opened memory-mapped and embedded window by window (two windows
    here), the file the whole array's embedding wrote before, byte for byte."""
    from typer.testing import CliRunner

    import iclr25._io as io
    from iclr25.cli import app
    from iclr25.datasets import rows

    X = torch.cat([_data(n=200)] * 6).double().numpy()                 # 1,200 rows, float64
    np.save(tmp_path / "x.npy", X)
    _small(epochs=1).fit(torch.from_numpy(X).float()).save(tmp_path / "m.safetensors")
    old = URLOST.load(tmp_path / "m.safetensors").transform(
        torch.from_numpy(io.read_matrix(tmp_path / "x.npy").astype(np.float32))).numpy()
    np.save(tmp_path / "old.npy", old)
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 12 * 1100)   # two windows: 1,024 + rest
    monkeypatch.setattr(io, "read_matrix", lambda *a, **k: pytest.fail("read whole"))
    loads, real = [], np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: loads.append(k) or real(*a, **k))
    res = CliRunner().invoke(app, ["urlost", "embed", str(tmp_path / "m.safetensors"),
                                   str(tmp_path / "x.npy"), "--out", str(tmp_path / "z.npy")])
    assert res.exit_code == 0, res.output
    assert loads and all(k.get("mmap_mode") == "r" for k in loads)
    assert (tmp_path / "z.npy").read_bytes() == (tmp_path / "old.npy").read_bytes()
