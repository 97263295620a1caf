"""Training data from disk (iclr25.datasets.files, OfflineDataset.load of Minari folders):
known rows, the streaming order, the formats refused in one line, resuming on other data."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from _rows import save_to_disk_layout  # noqa: E402

from iclr25.datasets.files import FORMATS, ImageFolder, TableRows, open_dataset  # noqa: E402

X = np.arange(60, dtype=np.float32).reshape(20, 3)
Y = np.arange(20) % 3


def _parquet(path, row_group_size=6):
    pq.write_table(pa.table({"a": X[:, 0], "v": pa.array(list(X[:, 1:]), pa.list_(pa.float32())),
                             "y": Y}), path, row_group_size=row_group_size)
    return path


def _hf_folder(path, shards=3):
    """The layout ``datasets.Dataset.save_to_disk`` writes."""
    table = pa.table({"x": pa.array(list(X), pa.list_(pa.float32())), "y": Y})
    return save_to_disk_layout(path, table, shards)


def test_parquet_rows_are_the_table_rows_across_row_groups(tmp_path):
    ds = open_dataset(_parquet(tmp_path / "t.parquet"), target="y")
    assert isinstance(ds, TableRows) and len(ds) == 20 and ds.src.rows == [6, 6, 6, 2]
    for i in (0, 5, 6, 13, 19, -1):
        x, y = ds[i]
        assert torch.equal(x, torch.from_numpy(X[i])) and int(y) == Y[i]
        assert y.dtype == torch.int64
    assert np.array_equal(ds.numpy()[0], X) and np.array_equal(ds.numpy()[1], Y)
    with pytest.raises(IndexError):
        ds[20]


def test_a_folder_of_parquet_files_and_a_save_to_disk_folder_read_alike(tmp_path):
    (tmp_path / "pq").mkdir()
    pq.write_table(pa.table({"x": pa.array(list(X[:8]), pa.list_(pa.float32())), "y": Y[:8]}),
                   tmp_path / "pq" / "a.parquet")
    pq.write_table(pa.table({"x": pa.array(list(X[8:]), pa.list_(pa.float32())), "y": Y[8:]}),
                   tmp_path / "pq" / "b.parquet")
    a = open_dataset(tmp_path / "pq", target="y")
    b = open_dataset(_hf_folder(tmp_path / "hf"), target="y")
    assert a.src.kind == "parquet" and b.src.kind == "hf" and len(b.src.files) == 3
    assert all(torch.equal(a[i][0], b[i][0]) and a[i][1] == b[i][1] for i in range(20))
    assert a.item_shape == (3,) and a.fingerprint != b.fingerprint


def test_the_real_save_to_disk_layout_reads(tmp_path):
    datasets = pytest.importorskip("datasets")
    d = datasets.Dataset.from_dict({"x": X.tolist(), "y": Y.tolist()})
    datasets.DatasetDict({"train": d, "test": d.select(range(5))}).save_to_disk(tmp_path / "dd")
    assert len(open_dataset(tmp_path / "dd")) == 20
    test = open_dataset(tmp_path / "dd", split="test", target="y")
    assert len(test) == 5 and torch.equal(test[4][0], torch.from_numpy(X[4]))


@pytest.mark.parametrize("chunks", [1, 2])
def test_the_streaming_order_is_a_seeded_permutation_decoding_each_chunk_once(tmp_path, chunks):
    # a cache of `chunks` chunks of inputs alone: their targets do not fit beside them, so
    # the window must be smaller than that (the 2.1 GB run re-read its file 40 times before)
    ds = TableRows(_parquet(tmp_path / "t.parquet", row_group_size=4), target="y",
                   cache_mb=chunks * 4 * 3 * 4 / 2**20)
    order = ds.batches(3, seed=1)
    first = order(0)
    assert sorted(torch.cat(first).tolist()) == list(range(20))
    assert all(torch.equal(a, b) for a, b in zip(first, order(0), strict=True))
    assert not torch.equal(torch.cat(first), torch.cat(order(1)))
    flat = torch.cat(first).tolist()
    if chunks == 1:   # a window of one chunk: each chunk's 4 rows come together
        assert [c // 4 for c in flat[::4]] == [c // 4 for c in flat[3::4]]
    decoded = []
    real = ds._decode
    ds._decode = lambda c: decoded.append(c) or real(c)
    ds._cache.clear()
    for i in flat:
        ds[i]
    assert sorted(decoded) == list(range(5))


def test_images_are_read_when_asked_for(tmp_path):
    pytest.importorskip("PIL")
    from iclr25.datasets.images import save_image

    imgs = torch.rand(3, 3, 8, 6, generator=torch.Generator().manual_seed(0))
    for i, x in enumerate(imgs):
        save_image(x, tmp_path / f"{i}.png")
    ds = open_dataset(tmp_path)
    assert isinstance(ds, ImageFolder) and ds.names == ["0.png", "1.png", "2.png"]
    assert torch.allclose(ds[1], imgs[1], atol=1 / 255)
    X_, _ = ds.numpy()
    assert X_.shape == (3, 3 * 8 * 6)


def test_a_path_of_no_known_format_is_one_line_naming_the_formats(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    for path in (tmp_path, tmp_path / "notes.txt"):
        with pytest.raises(ValueError) as err:
            open_dataset(path, name="DATA")
        msg = str(err.value)
        assert "\n" not in msg and msg.startswith("DATA ") and all(f in msg for f in FORMATS)
    with pytest.raises(ValueError, match="does not exist"):
        open_dataset(tmp_path / "missing.parquet")


def test_bad_tables_are_refused_naming_the_column(tmp_path):
    pq.write_table(pa.table({"a": [1.0, 2.0], "s": ["x", "y"]}), tmp_path / "s.parquet")
    with pytest.raises(TypeError, match="column 's'"):
        TableRows(tmp_path / "s.parquet")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['z'\]"):
        TableRows(tmp_path / "s.parquet", columns=["a"], target="z")
    pq.write_table(pa.table({"v": [[1.0], [1.0, 2.0]]}), tmp_path / "r.parquet")
    with pytest.raises(ValueError, match="different lengths"):
        TableRows(tmp_path / "r.parquet")


def _fit(ds, ckpt, **kw):
    from iclr25._train import fit_minibatch

    torch.manual_seed(0)
    model = torch.nn.Linear(3, 3)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    return fit_minibatch(model, torch.nn.functional.cross_entropy, ds, None, epochs=1,
                         batch_size=4, optimizer=opt, checkpoint=ckpt, checkpoint_every=2, **kw)


def test_resuming_on_another_dataset_of_the_same_length_is_refused_naming_it(tmp_path):
    ds = open_dataset(_parquet(tmp_path / "t.parquet"), target="y")
    _fit(ds, tmp_path / "c.ckpt")
    torch.save(torch.load(tmp_path / "c.ckpt", weights_only=True), tmp_path / "keep.ckpt")
    other = open_dataset(_hf_folder(tmp_path / "hf"), target="y")   # 20 rows too
    with pytest.raises(ValueError, match=r"resume: the checkpoint was trained with dataset"):
        _fit(other, tmp_path / "c2.ckpt", resume=tmp_path / "keep.ckpt")
    _fit(ds, tmp_path / "c3.ckpt", resume=tmp_path / "keep.ckpt")      # the same data resumes


def test_a_minari_folder_loads_as_the_d4rl_layout(tmp_path, monkeypatch):
    minari = pytest.importorskip("minari")
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("h5py")
    from minari.data_collector import EpisodeBuffer

    from iclr25.datasets.control import OfflineDataset

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    rng = np.random.default_rng(0)
    eps = [EpisodeBuffer(id=i, observations=rng.normal(size=(t + 1, 3)).astype(np.float32),
                         actions=rng.normal(size=(t, 1)).astype(np.float32),
                         rewards=rng.normal(size=t).tolist(), terminations=[False] * t,
                         truncations=[False] * (t - 1) + [True], infos={})
           for i, t in enumerate((4, 6))]
    with pytest.warns(UserWarning):
        minari.create_dataset_from_buffers("test/pend-v0", eps, env=gym.make("Pendulum-v1"),
                                           algorithm_name="random", data_format="hdf5")
    d = OfflineDataset.load(tmp_path / "test" / "pend-v0")
    assert len(d) == 10 and d.n_episodes == 2 and int(d.timeouts.sum()) == 2
    assert torch.allclose(d.observations[4:], torch.from_numpy(eps[1].observations[:-1]))
    with pytest.raises(ValueError, match="not a Minari dataset"):
        OfflineDataset.load(tmp_path / "test")


def test_resuming_on_other_tensors_of_the_same_shape_is_refused(tmp_path):
    from iclr25._train import fit_minibatch

    def fit(X, y, **kw):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 3)
        return fit_minibatch(model, torch.nn.functional.cross_entropy, X, y, epochs=1,
                             batch_size=4, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                             checkpoint=tmp_path / "c.ckpt", checkpoint_every=2, **kw)

    X_, y = torch.from_numpy(X.copy()), torch.from_numpy(Y)
    fit(X_, y)
    torch.save(torch.load(tmp_path / "c.ckpt", weights_only=True), tmp_path / "keep.ckpt")
    fit(X_.clone(), y.clone(), resume=tmp_path / "keep.ckpt")    # equal values: the same data
    with pytest.raises(ValueError, match="trained with dataset"):
        fit(X_ + 1, y, resume=tmp_path / "keep.ckpt")
    with pytest.raises(ValueError, match="trained with dataset"):
        fit(X_, y.flip(0), resume=tmp_path / "keep.ckpt")
