"""CoMM fit streamed from a map-style Dataset (issue 71 item 2): the same training as the
arrays, bad items refused naming the argument, on-disk tables read chunk by chunk."""

import numpy as np
import pytest
import torch
from _rows import Rows
from torch.utils.data import Dataset

from iclr25.comm import CoMMEmbedder
from iclr25.comm.augment import Compose, GaussianNoise, RandomDrop
from iclr25.comm.training import pretrain


def _data(n=50, seed=0):
    g = np.random.default_rng(seed)
    z = g.normal(size=(n, 2))
    return [np.c_[z, g.normal(size=(n, 3))].astype(np.float32),
            np.c_[z[:, :1], g.normal(size=(n, 2))].astype(np.float32)]


class Pairs(Dataset):
    """Row-aligned modalities read row by row (as from disk); ``bad``: {row: item} served
    instead of the row."""

    def __init__(self, Xs, bad=None):
        self.Xs, self.bad = Xs, bad or {}

    def __len__(self):
        return len(self.Xs[0])

    def __getitem__(self, i):
        return self.bad.get(i, tuple(X[i] for X in self.Xs))


def _small(**kw):
    return CoMMEmbedder(dim=8, epochs=2, batch_size=16, n_tokens=3, hidden=16, **kw)


def test_pretraining_on_a_dataset_equals_the_tensors_bit_for_bit(one_thread):
    xs = [torch.from_numpy(X) for X in _data()]

    def run(data):
        model = _small()._build([5, 3])
        aug = [Compose(GaussianNoise(0.1), RandomDrop(0.5)) for _ in range(2)]
        return pretrain(model, data, augment=aug, epochs=3, batch_size=16, seed=4), model

    (h1, m1), (h2, m2) = run(xs), run(Pairs(xs))
    assert h1 == h2     # same batches (50 rows: a last batch of 2 is kept), same views
    for (k, a), b in zip(m1.state_dict().items(), m2.state_dict().values(), strict=True):
        assert torch.equal(a, b), k


def test_embedder_fit_on_a_dataset_matches_the_arrays(one_thread):
    Xs = _data()
    a, b = _small().fit(Xs), _small().fit(Pairs(Xs))
    c = _small().fit([Pairs(Xs).Xs[0], Rows(Xs[1])])       # a list mixing array, Dataset
    # one streaming float64 pass vs float32 reductions over the whole array: float32 rounding
    for m in (b, c):
        assert m.widths_ == a.widths_ == [5, 3]
        for u, v in zip(a.mean_ + a.scale_, m.mean_ + m.scale_, strict=True):
            torch.testing.assert_close(u, v, rtol=1e-6, atol=1e-6)
        # the same batches and views: the losses differ only by the statistics' rounding
        np.testing.assert_allclose(a.history_, m.history_, rtol=1e-5)
    assert np.array_equal(b.transform(Xs), c.transform(Xs))
    assert all(np.array_equal(X, Y) for X, Y in zip(Xs, _data(), strict=True))  # untouched



@pytest.mark.parametrize(("bad", "match"), [
    ({7: (np.zeros(5), np.zeros(4))}, r"Xs\[1\] row 7 has 4 values, row 0 has 3"),
    ({9: (np.zeros(5),)}, r"Xs item 9 must be a tuple of 2 modality rows"),
    ({3: (np.float32(1.0), np.zeros(3))}, r"Xs\[0\] row 3 must be a numeric row"),
    ({0: np.zeros(5)}, r"Xs items must be tuples of at least 2 modality rows"),
    ({11: (np.full(5, np.nan), np.zeros(3))}, r"Xs\[0\] holds NaN or inf \(row 11\)"),
])
def test_a_bad_item_is_one_error_naming_xs_before_training(bad, match):
    emb = _small()
    with pytest.raises(ValueError, match=match):
        emb.fit(Pairs(_data(), bad))
    assert not hasattr(emb, "model_")


def test_bad_datasets_are_refused_naming_the_argument():
    Xs = _data()
    with pytest.raises(ValueError, match="different numbers of rows"):
        _small().fit([Rows(Xs[0]), Rows(Xs[1][:10])])
    with pytest.raises(ValueError, match="at least 2 rows"):
        _small().fit(Pairs([X[:1] for X in Xs]))
    with pytest.raises(ValueError, match=r"xs must hold 3 modalities, got 2"):
        model = CoMMEmbedder(dim=8, n_tokens=3, hidden=16)._build([5, 3, 2])
        pretrain(model, Pairs(Xs), augment=[lambda x, seed: x] * 3, epochs=1)


def test_tables_are_streamed_chunk_by_chunk_never_read_whole(one_thread, tmp_path,
                                                             monkeypatch):
    from iclr25.datasets.files import TableRows

    Xs = _data(n=96)
    paths = _tables(tmp_path, Xs)                            # row groups of 8: 12 chunks
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    # caches of 2 chunks each: the stats pass and each epoch decode every chunk once (a
    # uniform permutation would decode about one chunk per row)
    tables = [TableRows(p, cache_mb=2 * 8 * X.shape[1] * 4 / 2**20)
              for p, X in zip(paths, Xs, strict=True)]
    decoded = {k: [] for k in range(2)}
    for k, t in enumerate(tables):
        real = t._decode
        t._decode = lambda c, real=real, k=k: decoded[k].append(c) or real(c)
    emb = _small().fit(tables)
    for d in decoded.values():      # chunk 0 was decoded when the table was opened
        assert d[:11] == list(range(1, 12)), d                       # the statistics' pass
        assert sorted(d[11:23]) == sorted(d[23:]) == list(range(12)), d   # each epoch
    assert decoded[0] == decoded[1]     # the tables are read in one order
    assert all(len(t._cache) <= 2 for t in tables)
    ref = _small().fit(Xs)
    for u, v in zip(ref.mean_ + ref.scale_, emb.mean_ + emb.scale_, strict=True):
        torch.testing.assert_close(u, v, rtol=1e-6, atol=1e-6)
    assert np.isfinite(emb.history_).all() and emb.transform(Xs).shape == (96, 8)


def _tables(tmp_path, Xs):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    paths = []
    for k, X in enumerate(Xs):
        paths.append(tmp_path / f"m{k}.parquet")
        pq.write_table(pa.table({f"c{j}": X[:, j] for j in range(X.shape[1])}), paths[-1],
                       row_group_size=8)
    return paths


def test_cli_fit_streams_tables_as_the_api_does(one_thread, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets.files import TableRows

    paths = _tables(tmp_path, _data())
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    res = CliRunner().invoke(app, ["comm", "fit", *map(str, paths), "--out",
                                   str(tmp_path / "m.safetensors"), "--epochs", "2", "--dim",
                                   "8", "--batch-size", "16"])
    assert res.exit_code == 0, res.output
    api = CoMMEmbedder(dim=8, epochs=2, batch_size=16).fit([TableRows(p) for p in paths])
    cli = CoMMEmbedder.load(tmp_path / "m.safetensors")
    for a, b in zip(api.model_.state_dict().values(), cli.model_.state_dict().values(),
                    strict=True):
        assert torch.equal(a, b)


def test_cli_images_of_two_sizes_are_one_line_naming_files(tmp_path):
    pytest.importorskip("PIL")
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets.images import save_image

    (tmp_path / "img").mkdir()
    for i in range(6):
        save_image(torch.rand(3, 4, 4 + (i == 3)), tmp_path / "img" / f"{i}.png")
    np.save(tmp_path / "b.npy", np.zeros((6, 2), np.float32))
    res = CliRunner().invoke(app, ["comm", "fit", str(tmp_path / "img"),
                                   str(tmp_path / "b.npy"), "--out", str(tmp_path / "m.pt")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "FILES[0] row 3 has 60 values, row 0 has 48" in res.output, res.output
    assert not (tmp_path / "m.pt").exists()


# -- reading: transform and `comm embed` on Datasets -----------------------------------------


def test_transform_on_datasets_equals_the_arrays_bit_for_bit(one_thread, monkeypatch):
    from iclr25.datasets import rows

    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 8 * 5000)     # rows of 8 float32 values
    Xs = _data(n=4200)          # windows of 4,096 rows and 104: the arrays' own blocks
    emb = _small().fit([X[:64] for X in Xs])
    ref = emb.transform(Xs)
    assert np.array_equal(emb.transform(Pairs(Xs)), ref)                  # tuples
    assert np.array_equal(emb.transform([Rows(Xs[0]), Xs[1]]), ref)       # mixed
    assert np.array_equal(emb.transform([None, Rows(Xs[1])]), emb.transform([None, Xs[1]]))
    # a tensor beside a Dataset: numpy, as for any Dataset (each window embedded and moved
    # to the host, so a tensor on an accelerator does not leave its windows there)
    mixed = emb.transform([torch.as_tensor(Xs[0]), Rows(Xs[1])])
    assert isinstance(mixed, np.ndarray) and mixed.dtype == np.float32
    assert np.array_equal(mixed, ref)


@pytest.mark.parametrize(("Xs", "match"), [
    (lambda Xs: [Rows(Xs[0], {40: np.zeros(4)}), Xs[1]],
     r"Xs\[0\] row 40 has 4 values, the model was fitted on 5"),
    (lambda Xs: [Xs[0], Rows(Xs[1], {41: np.full(3, np.inf)})],
     r"Xs\[1\] holds NaN or inf \(row 41\)"),
    (lambda Xs: Pairs(Xs, {9: (np.zeros(5),)}), r"Xs item 9 must be a tuple of 2 modality"),
    (lambda Xs: [Rows(Xs[0]), Xs[1][:10]], "different numbers of rows"),
    (lambda Xs: [Rows(Xs[0])], r"Xs must hold 2 modalities \(as in fit\), got 1"),
    (lambda Xs: [None, None], "every modality is absent"),
])
def test_transform_refuses_bad_datasets_naming_xs(Xs, match):
    emb = _small().fit(_data())
    with pytest.raises(ValueError, match=match):
        emb.transform(Xs(_data()))


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
def test_cli_embed_streams_tables_as_the_api_embeds_the_arrays(one_thread, tmp_path,
                                                               monkeypatch, suffix):
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets.files import TableRows

    Xs = _data(n=96)
    paths = _tables(tmp_path, Xs)                                      # 12 chunks each
    _small().fit(Xs).save(tmp_path / "m.safetensors")
    monkeypatch.setattr(TableRows, "numpy", lambda self: pytest.fail("whole table read"))
    decoded, real = [], TableRows._decode
    monkeypatch.setattr(TableRows, "_decode", lambda self, c: decoded.append(c) or real(self, c))
    out = tmp_path / f"z{suffix}"
    for files, arrays in (([paths[0], paths[1]], Xs), ([paths[0], "-"], [Xs[0], None])):
        decoded.clear()
        res = CliRunner().invoke(app, ["comm", "embed", str(tmp_path / "m.safetensors"),
                                       *map(str, files), "--out", str(out)])
        assert res.exit_code == 0, res.output
        assert sorted(decoded) == sorted(list(range(12)) * (len(decoded) // 12)), decoded
        Z = CoMMEmbedder.load(tmp_path / "m.safetensors").transform(arrays)
        if suffix == ".npy":
            np.save(tmp_path / "api.npy", Z)
        else:
            np.savetxt(tmp_path / "api.csv", Z, delimiter=",", comments="",
                       header=",".join(f"z{j}" for j in range(Z.shape[1])))
        assert out.read_bytes() == (tmp_path / f"api{suffix}").read_bytes()


def test_cli_embed_refuses_a_bad_table_in_one_line_writing_nothing(tmp_path):
    from typer.testing import CliRunner

    from iclr25.cli import app

    Xs = _data(n=96)
    _small().fit(Xs).save(tmp_path / "m.safetensors")
    Xs[1][50, 2] = np.nan
    paths = _tables(tmp_path, Xs)
    res = CliRunner().invoke(app, ["comm", "embed", str(tmp_path / "m.safetensors"),
                                   *map(str, paths), "--out", str(tmp_path / "z.npy")])
    assert res.exit_code == 2 and res.output.strip() == \
        "error: FILES[1] holds NaN or inf (row 50)", res.output
    assert not (tmp_path / "z.npy").exists() and not list(tmp_path.glob(".*partial"))


def test_cli_embed_streams_an_image_folder_as_the_api_embeds_its_rows(one_thread, tmp_path):
    pytest.importorskip("PIL")
    from typer.testing import CliRunner

    from iclr25.cli import app
    from iclr25.datasets.files import ImageFolder
    from iclr25.datasets.images import save_image

    (tmp_path / "img").mkdir()
    for i in range(6):
        save_image(torch.rand(3, 4, 4, generator=torch.Generator().manual_seed(i)),
                   tmp_path / "img" / f"{i}.png")
    A = ImageFolder(tmp_path / "img").numpy()[0]                          # (6, 48)
    B = np.random.default_rng(0).normal(size=(6, 2)).astype(np.float32)
    np.save(tmp_path / "b.npy", B)
    emb = CoMMEmbedder(dim=8, epochs=1, batch_size=4, n_tokens=3, hidden=16).fit([A, B])
    emb.save(tmp_path / "m.safetensors")
    res = CliRunner().invoke(app, ["comm", "embed", str(tmp_path / "m.safetensors"),
                                   str(tmp_path / "img"), str(tmp_path / "b.npy"), "--out",
                                   str(tmp_path / "z.npy")])
    assert res.exit_code == 0, res.output
    assert np.array_equal(np.load(tmp_path / "z.npy"), emb.transform([A, B]))


def test_cli_embed_reads_npy_memory_mapped_with_the_old_output(one_thread, tmp_path,
                                                               monkeypatch):
    """Issue 71: each .npy modality is opened memory-mapped and embedded window by window
    (two windows of 4,096 + 104 rows here, a missing modality too), the file the whole
    arrays' embedding wrote before, byte for byte."""
    from typer.testing import CliRunner

    import iclr25._io as io
    from iclr25.cli import app
    from iclr25.comm import cli as comm_cli
    from iclr25.datasets import rows

    base = _data(n=100)
    _small().fit(base).save(tmp_path / "m.safetensors")
    paths = [tmp_path / "a.npy", tmp_path / "b.npy"]
    for p, X in zip(paths, base, strict=True):                        # 4,200 rows, float64
        np.save(p, np.concatenate([X] * 42).astype(np.float64))
    emb = CoMMEmbedder.load(tmp_path / "m.safetensors")
    whole = [io.read_matrix(p).astype(np.float32) for p in paths]          # the old reading
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 8 * 4096)        # windows of 4,096 rows
    for mod in (io, comm_cli):
        monkeypatch.setattr(mod, "read_matrix", lambda *a, **k: pytest.fail("read whole"))
    seen, transform = [], CoMMEmbedder.transform
    monkeypatch.setattr(CoMMEmbedder, "transform",
                        lambda self, xs: seen.append(len(xs[0])) or transform(self, xs))
    loads, real = [], np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: loads.append(k) or real(*a, **k))
    for files, arrays in ((paths, whole), ([paths[0], "-"], [whole[0], None])):
        np.save(tmp_path / "old.npy", emb.transform(arrays))
        loads.clear()
        seen.clear()
        res = CliRunner().invoke(app, ["comm", "embed", str(tmp_path / "m.safetensors"),
                                       *map(str, files), "--out", str(tmp_path / "z.npy")])
        assert res.exit_code == 0, res.output
        assert seen == [4096, 104]
        assert len(loads) == len([f for f in files if f != "-"])
        assert all(k.get("mmap_mode") == "r" for k in loads), loads
        assert (tmp_path / "z.npy").read_bytes() == (tmp_path / "old.npy").read_bytes()


def test_cli_embed_refuses_a_nan_in_a_npy_in_one_line_writing_nothing(tmp_path):
    from typer.testing import CliRunner

    from iclr25.cli import app

    Xs = _data(n=96)
    _small().fit(Xs).save(tmp_path / "m.safetensors")
    Xs[1][50, 2] = np.nan
    for name, X in zip("ab", Xs, strict=True):
        np.save(tmp_path / f"{name}.npy", X)
    res = CliRunner().invoke(app, ["comm", "embed", str(tmp_path / "m.safetensors"),
                                   str(tmp_path / "a.npy"), str(tmp_path / "b.npy"),
                                   "--out", str(tmp_path / "z.npy")])
    assert res.exit_code == 2 and res.output.strip() == \
        "error: FILES[1] holds NaN or inf (row 50)", res.output
    assert not (tmp_path / "z.npy").exists() and not list(tmp_path.glob(".*partial"))
