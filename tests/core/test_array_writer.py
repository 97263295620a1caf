"""A reading verb's output written window by window (``_io.ArrayWriter``) and the windows a
streamed transform reads (``datasets.rows.windows``): the whole-array files byte for byte,
nothing left behind on an error."""

import numpy as np
import pytest

from iclr25._io import ArrayWriter, write_array
from iclr25.datasets import rows


@pytest.mark.parametrize("suffix", [".npy", ".csv", ".txt"])
@pytest.mark.parametrize("A", [np.random.default_rng(0).normal(size=(10, 3)).astype(np.float32),
                               np.arange(10, dtype=np.int64),
                               np.arange(40, dtype=np.int64).reshape(10, 2, 2)])
def test_windows_write_the_bytes_of_the_whole_array(tmp_path, suffix, A):
    write_array(tmp_path / f"whole{suffix}", A, ["a", "b", "c", "d"][:A[0].size])
    with ArrayWriter(tmp_path / f"parts{suffix}", len(A), ["a", "b", "c", "d"][:A[0].size]
                     ) as out:
        for s in (0, 3, 4, 9):
            out.write(A[s:{0: 3, 3: 4, 4: 9, 9: 10}[s]])
    assert (tmp_path / f"parts{suffix}").read_bytes() == (tmp_path / f"whole{suffix}"
                                                          ).read_bytes()
    if suffix == ".npy":       # and the same bytes as np.save
        np.save(tmp_path / "saved.npy", A)
        assert (tmp_path / "saved.npy").read_bytes() == (tmp_path / "parts.npy").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))  == []


def test_np_savetxt_formats_are_written_as_np_savetxt_writes_them(tmp_path):
    A = np.random.default_rng(1).normal(size=(7, 3))
    np.savetxt(tmp_path / "a.csv", A, delimiter=",", header="x,y,z", comments="", fmt="%.8g")
    with ArrayWriter(tmp_path / "b.csv", 7, ["x", "y", "z"], fmt="%.8g") as out:
        out.write(A[:2])
        out.write(A[2:])
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
def test_an_error_midway_leaves_the_old_file_and_no_partial_one(tmp_path, suffix):
    p = tmp_path / f"z{suffix}"
    p.write_text("old")
    with pytest.raises(ValueError, match="bad row"), ArrayWriter(p, 4, ["a"]) as out:
        out.write(np.zeros((2, 1)))
        raise ValueError("bad row")
    assert p.read_text() == "old" and [q.name for q in tmp_path.iterdir()] == [p.name]
    with pytest.raises(ValueError, match="3 rows written, 4 expected"), \
            ArrayWriter(p, 4, ["a"]) as out:
        out.write(np.zeros((3, 1)))
    assert p.read_text() == "old" and [q.name for q in tmp_path.iterdir()] == [p.name]


def test_windows_of_another_dtype_or_shape_are_refused(tmp_path):
    with pytest.raises(ValueError, match="rows of int64 \\(2,\\) after rows of float32"), \
            ArrayWriter(tmp_path / "z.npy", 4, None) as out:
        out.write(np.zeros((2, 2), np.float32))
        out.write(np.zeros((2, 2), np.int64))
    assert list(tmp_path.iterdir()) == []


def test_windows_cover_the_rows_in_multiples_with_no_tiny_last_window(monkeypatch):
    monkeypatch.setattr(rows, "WINDOW_BYTES", 4 * 1000)          # 1,000 rows of 4 bytes
    cover = rows.windows(2530, 4, multiple=64)                     # 960-row windows
    assert [(r.start, r.stop) for r in cover] == [(0, 960), (960, 1920), (1920, 2530)]
    # a remainder of fewer than 64 rows joins the window before it
    assert [(r.start, r.stop) for r in rows.windows(2030, 4)] == [(0, 1000), (1000, 2030)]
    assert [len(r) for r in rows.windows(2070, 4)] == [1000, 1000, 70]
    assert [len(r) for r in rows.windows(5, 4000, multiple=3)] == [5]      # wide rows: >= 3
    assert rows.windows(30, 4) == [range(0, 30)]
