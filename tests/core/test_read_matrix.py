"""The one reader of numeric tables that every command line uses."""

import numpy as np
import pytest

from iclr25._io import read_matrix


def test_npy_csv_and_whitespace_tables_read_alike(tmp_path):
    X = np.arange(6.0).reshape(3, 2)
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "x.csv").write_text("a, b\n0,1\n2, 3\n\n4,5\n")  # header, spaces, blank line
    (tmp_path / "x.txt").write_text("0 1\n2\t3\n4 5\n")
    for f in ("x.npy", "x.csv", "x.txt"):
        got = read_matrix(tmp_path / f, suffixes=(".npy", ".csv", ".txt"))
        assert got.dtype == np.float64 and np.array_equal(got, X)


def test_a_vector_is_a_column(tmp_path):
    np.save(tmp_path / "v.npy", np.array([1, 2, 3], dtype=np.int32))
    (tmp_path / "v.csv").write_text("1\n2\n3\n")
    for f in ("v.npy", "v.csv"):
        assert read_matrix(tmp_path / f).tolist() == [[1.0], [2.0], [3.0]]


@pytest.mark.parametrize(("name", "content", "match"), [
    ("x.json", "[]", "--data must end in .npy or .csv, got x.json"),
    ("x.csv", None, "does not exist"),
    ("x.npy", "not numpy", "not a readable .npy array"),
    ("x.csv", "1,2\n3,x\n", "line 2: non-numeric cell 'x'"),
    ("x.csv", "1,2\n3\n", "line 2: 1 cells, expected 2"),
    ("x.csv", "a,b\n", "non-empty"),
    ("x.csv", "1,2\n3,nan\n4,inf\n", r"NaN or inf in rows \[1, 2\]"),
])
def test_errors_name_the_argument_and_the_line(tmp_path, name, content, match):
    f = tmp_path / name
    if content is not None:
        f.write_text(content)
    with pytest.raises(ValueError, match=match) as info:
        read_matrix(f, "--data")
    assert "--data" in str(info.value)


def test_text_arrays_are_refused(tmp_path):
    np.save(tmp_path / "s.npy", np.array(["a", "b"]))
    with pytest.raises(ValueError, match="real numbers"):
        read_matrix(tmp_path / "s.npy")


def test_read_table_gives_the_header_and_the_same_checks(tmp_path):
    from iclr25._io import read_table

    p = tmp_path / "t.csv"
    p.write_text("a, b\n1,2\n3,4\n")
    header, X = read_table(p, "DATA")
    assert header == ["a", "b"]
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    for text, match in (("1,2\n3,4\n", "header"), ("a,b\n1,2,3\n", "header names 2"),
                        ("a,b\n1,x\n", "non-numeric")):
        p.write_text(text)
        with pytest.raises(ValueError, match=match):
            read_table(p, "DATA")
