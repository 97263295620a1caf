"""V3 fit streamed from a map-style Dataset of sequences (issue 71 item 2): the arrays'
model bit for bit, bad items refused naming X, a table read chunk by chunk, the CLI."""

import numpy as np
import pytest
import torch
from _rows import Rows

from iclr25.datasets.views import digit_sequences
from iclr25.v3 import V3

X = digit_sequences(21, seed=0)[0]      # (21, 10, 3, 8, 8)



def _v3(**kw):
    return V3(**{"epochs": 3, "batch_size": 8, "hidden": 32, "d_content": 8, "d_style": 8,
                 "seed": 0, **kw})


def _same(a, b):
    assert a.history_ == b.history_ and a.fragment_shape_ == b.fragment_shape_
    for (k, u), v in zip(a.model_.state_dict().items(), b.model_.state_dict().values(),
                         strict=True):
        assert torch.equal(u, v), k


def test_a_dataset_trains_the_arrays_model_bit_for_bit(one_thread):
    # 21 sequences in batches of 8: the last batch of 5; the k-means start on the first
    _same(_v3().fit(X), _v3().fit(Rows(X)))
    assert torch.equal(X, digit_sequences(21, seed=0)[0])                     # untouched


@pytest.mark.parametrize(("bad", "err", "match"), [
    ({6: X[6, :9]}, ValueError, r"X item 6 has shape \(9, 3, 8, 8\), item 0 \(10, 3, 8, 8\)"),
    ({4: (X[4], 1)}, ValueError, r"X item 4 is a tuple: its items must be sequences"),
    ({9: torch.zeros(10, 3, 8, 8, dtype=torch.long)}, TypeError,
     r"X item 9 must be floating point"),
    ({12: torch.full((10, 3, 8, 8), float("nan"))}, ValueError, r"X item 12 holds NaN"),
    ({0: X[0, 0, 0, 0]}, ValueError, r"X items must be sequences \(N, \*fragment\) with N >= 2"),
])
def test_a_bad_item_is_one_error_naming_x_before_training(bad, err, match):
    m = _v3()
    with pytest.raises(err, match=match):
        m.fit(Rows(X, bad))
    assert not hasattr(m, "model_")


def test_too_few_sequences_are_refused_naming_x():
    with pytest.raises(ValueError, match="X needs B >= 2 sequences, got 1"):
        _v3().fit(Rows(X[:1]))


def _table(path, seqs, group=4):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"seq": pa.array(seqs.numpy().tolist())}), path,
                   row_group_size=group)
    return path


def test_a_table_is_streamed_chunk_by_chunk_never_read_whole(one_thread, tmp_path,
                                                             monkeypatch):
    from iclr25.datasets.files import TableRows

    path = _table(tmp_path / "s.parquet", X)                     # 6 chunks of <= 4
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    per_seq = 10 * 3 * 8 * 8 * 4
    table = TableRows(path, cache_mb=2 * 4 * per_seq / 2**20)    # a 2-chunk cache
    decoded = []
    real = table._decode
    table._decode = lambda c: decoded.append(c) or real(c)
    m = _v3(epochs=2).fit(table)
    # the check of every item in row order (chunk 0 cached when the table was opened),
    # then each epoch decodes a chunk at most once (a uniform permutation would decode
    # about one chunk per sequence)
    assert decoded[:5] == [1, 2, 3, 4, 5] and len(decoded) <= 5 + 2 * 6, decoded
    assert set(decoded[5:]) == set(range(6)), decoded
    assert m.fragment_shape_ == (3, 8, 8) and len(m.history_) == 2
    assert all(torch.isfinite(torch.tensor(list(h.values()))).all() for h in m.history_)


def test_cli_fit_streams_a_table_as_the_api_does(one_thread, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets.files import TableRows

    path = _table(tmp_path / "s.parquet", X)
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    res = CliRunner().invoke(app, ["v3", "fit", str(path), "--codes", "4", "--epochs", "2",
                                   "--batch-size", "8", "--out",
                                   str(tmp_path / "m.safetensors")])
    assert res.exit_code == 0, res.output
    assert "codebook usage on SEQS" in res.output
    api = V3(n_codes=4, epochs=2, batch_size=8, seed=0).fit(TableRows(path))
    cli = V3.load(tmp_path / "m.safetensors")
    for u, v in zip(api.model_.state_dict().values(), cli.model_.state_dict().values(),
                    strict=True):
        assert torch.equal(u, v)


# -- reading: predict, transform and `v3 encode` on a Dataset --------------------------------


def test_predict_and_transform_on_a_dataset_equal_the_arrays_bit_for_bit(one_thread,
                                                                         monkeypatch):
    from iclr25.datasets import rows

    m = _v3(epochs=1).fit(X)
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 10 * 3 * 8 * 8 * 5)      # windows of 5
    Xl = torch.cat([X] * 4)     # 84 sequences: 16 windows of 5 and a last of 4
    assert (m.predict(Rows(Xl)) == m.predict(Xl).numpy()).all()
    for a, b in zip(m.transform(Rows(Xl)), m.transform(Xl), strict=True):
        assert (a == b.numpy()).all()
    assert (m.predict(Rows(X[:1])) == m.predict(X[:1]).numpy()).all()     # one is fine
    with pytest.raises(ValueError, match=r"X item 13 holds NaN"):
        m.predict(Rows(X, {13: torch.full((10, 3, 8, 8), float("nan"))}))
    with pytest.raises(ValueError, match=r"X fragments must have shape \(3, 8, 8\), got "
                                         r"\(3, 8, 4\)"):
        m.transform(Rows(X[..., :4]))


@pytest.mark.parametrize("style", [False, True])
def test_cli_encode_streams_a_table_as_the_api_encodes_the_arrays(one_thread, tmp_path,
                                                                  monkeypatch, style):
    from typer.testing import CliRunner

    from iclr25._io import write_array
    from iclr25.cli import app
    from iclr25.datasets import rows
    from iclr25.datasets.files import TableRows

    path = _table(tmp_path / "s.parquet", X)                             # 6 chunks
    _v3(epochs=1).fit(X).save(tmp_path / "m.safetensors")
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    decoded, real = [], TableRows._decode
    monkeypatch.setattr(TableRows, "_decode", lambda self, c: decoded.append(c) or real(self, c))
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 10 * 3 * 8 * 8 * 4)      # windows of 4
    res = CliRunner().invoke(app, ["v3", "encode", str(tmp_path / "m.safetensors"), str(path),
                                   "--codes-out", str(tmp_path / "c.csv"),
                                   *(["--style-out", str(tmp_path / "s.npy")] * style)])
    assert res.exit_code == 0, res.output
    assert decoded == list(range(6)), decoded                  # each chunk once, in order
    api = V3.load(tmp_path / "m.safetensors")
    write_array(tmp_path / "api.csv", api.predict(X).numpy(), [f"n{j}" for j in range(10)])
    assert (tmp_path / "c.csv").read_bytes() == (tmp_path / "api.csv").read_bytes()
    if style:
        np.save(tmp_path / "api.npy", api.transform(X)[1].numpy())
        assert (tmp_path / "s.npy").read_bytes() == (tmp_path / "api.npy").read_bytes()


def test_cli_encode_refuses_a_bad_table_in_one_line_writing_nothing(tmp_path):
    from typer.testing import CliRunner

    from iclr25.cli import app

    _v3(epochs=1).fit(X).save(tmp_path / "m.safetensors")
    Xb = X.clone()
    Xb[17, 2] = float("inf")
    for seqs, msg in ((Xb, "SEQS item 17 holds NaN or inf"),
                      (X[..., :4], "SEQS fragments must have shape (3, 8, 8), got (3, 8, 4)")):
        path = _table(tmp_path / "s.parquet", seqs)
        res = CliRunner().invoke(app, ["v3", "encode", str(tmp_path / "m.safetensors"),
                                       str(path), "--codes-out", str(tmp_path / "c.npy"),
                                       "--style-out", str(tmp_path / "s.npy")])
        assert res.exit_code == 2 and res.output.strip() == f"error: {msg}", res.output
        assert sorted(p.name for p in tmp_path.iterdir()) == ["m.safetensors", "s.parquet"]


def test_cli_encode_reads_a_npy_memory_mapped_with_the_old_output(one_thread, tmp_path,
                                                                  monkeypatch):
    """Issue 71: a .npy is opened memory-mapped and encoded window by window (windows of 4),
    the files the whole array's encoding wrote before, byte for byte; NaN: one line."""
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets import rows

    np.save(tmp_path / "x.npy", X.double().numpy())                   # float64, as users save
    _v3(epochs=1).fit(X).save(tmp_path / "m.safetensors")
    api, Xa = V3.load(tmp_path / "m.safetensors"), torch.from_numpy(X.double().numpy()).float()
    np.save(tmp_path / "c_old.npy", api.predict(Xa).numpy())
    np.save(tmp_path / "s_old.npy", api.transform(Xa)[1].numpy())
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 10 * 3 * 8 * 8 * 4)      # windows of 4
    loads, real = [], np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: loads.append(k) or real(*a, **k))
    args = ["v3", "encode", str(tmp_path / "m.safetensors"), str(tmp_path / "x.npy"),
            "--codes-out", str(tmp_path / "c.npy"), "--style-out", str(tmp_path / "s.npy")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert loads and all(k.get("mmap_mode") == "r" for k in loads)
    for name in "cs":
        assert (tmp_path / f"{name}.npy").read_bytes() == \
            (tmp_path / f"{name}_old.npy").read_bytes()
        (tmp_path / f"{name}.npy").unlink()
    Xb = X.double().numpy()
    Xb[17, 2] = np.nan
    np.save(tmp_path / "x.npy", Xb)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and res.output.strip() == "error: SEQS item 17 holds NaN or inf"
    assert not (tmp_path / "c.npy").exists() and not (tmp_path / "s.npy").exists()
