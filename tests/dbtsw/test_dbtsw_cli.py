"""``iclr25 dbtsw distance``: files the test writes, one number or a matrix, exit 2 on bad files."""

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from iclr25._io import read_matrix
from iclr25.cli import app
from iclr25.dbtsw import db_tsw
from iclr25.dbtsw.cli import CLOUD_SUFFIXES

runner = CliRunner()


@pytest.fixture
def clouds(tmp_path):
    rng = np.random.default_rng(0)
    A, B, C = rng.normal(size=(30, 3)), rng.normal(size=(20, 3)) + 1, rng.normal(size=(25, 3))
    np.save(tmp_path / "a.npy", A)
    np.savetxt(tmp_path / "b.csv", B, delimiter=",")
    np.savetxt(tmp_path / "c.xyz", C)
    return tmp_path, (A, B, C)


def _printed(output: str) -> float:
    """The number of ``Db-TSW  VALUE  (A to B)``."""
    return float(output.split()[1])


def test_two_files_print_one_labelled_number(clouds):
    # issue 68 walk 5: the number was printed bare; it is labelled and names the clouds
    d, (A, B, _) = clouds
    r = runner.invoke(app, ["dbtsw", "distance", str(d / "a.npy"), str(d / "b.csv"),
                            "--trees", "50", "--seed", "3"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("Db-TSW  ") and r.output.rstrip().endswith("(a.npy to b.csv)")
    want = float(db_tsw(torch.from_numpy(A), torch.from_numpy(B), n_trees=50, seed=3))
    assert _printed(r.output) == pytest.approx(want, rel=1e-9)


def test_three_files_give_a_symmetric_matrix(clouds):
    d, _ = clouds
    out = d / "D.csv"
    r = runner.invoke(app, ["dbtsw", "distance", str(d / "a.npy"), str(d / "b.csv"),
                            str(d / "c.xyz"), "--delta", "0", "--p", "2", "--out", str(out)])
    assert r.exit_code == 0, r.output
    D = np.loadtxt(out, delimiter=",", skiprows=1)
    assert D.shape == (3, 3)
    np.testing.assert_allclose(D, D.T)
    assert np.all(np.diag(D) == 0) and np.all(D[~np.eye(3, dtype=bool)] > 0)


@pytest.mark.parametrize("content, match", [
    ("1 2 3\n4 5\n", "line 2: 2 cells, expected 3"),
    ("", "non-empty"),
    ("1 nan 3\n", "NaN"),
])
def test_bad_files_exit_2_with_the_message(clouds, content, match):
    d, _ = clouds
    bad = d / "bad.txt"
    bad.write_text(content)
    r = runner.invoke(app, ["dbtsw", "distance", str(d / "a.npy"), str(bad)])
    assert r.exit_code == 2
    assert match in r.output


@pytest.mark.parametrize("args, match", [
    (["missing.npy"], "does not exist"),
    (["--trees", "0"], "--trees"),
    (["--delta", "-1"], "--delta"),
    (["--out", "x.txt"], "--out"),
])
def test_bad_arguments_exit_2(clouds, args, match):
    d, _ = clouds
    extra = [str(d / a) if a.endswith(".npy") else a for a in args]
    r = runner.invoke(app, ["dbtsw", "distance", str(d / "a.npy"), str(d / "b.csv"), *extra])
    assert r.exit_code == 2
    assert match in r.output


def test_mismatched_dimensions_and_a_single_file(clouds, tmp_path):
    d, _ = clouds
    np.save(tmp_path / "e.npy", np.ones((4, 2)))
    r = runner.invoke(app, ["dbtsw", "distance", str(d / "a.npy"), str(tmp_path / "e.npy")])
    assert r.exit_code == 2 and "same dimension" in r.output
    r = runner.invoke(app, ["dbtsw", "distance", str(d / "a.npy")])
    assert r.exit_code == 2 and "at least two" in r.output


def test_cloud_reader_reads_one_row_and_refuses_unknown_suffix(tmp_path):
    (tmp_path / "one.txt").write_text("1 2 3\n")
    assert read_matrix(tmp_path / "one.txt", suffixes=CLOUD_SUFFIXES).shape == (1, 3)
    (tmp_path / "x.json").write_text("[]")
    with pytest.raises(ValueError, match="must end in"):
        read_matrix(tmp_path / "x.json", suffixes=CLOUD_SUFFIXES)


def test_cli_and_api_share_the_default_seed(clouds):
    d, (A, B, _) = clouds
    r = runner.invoke(app, ["dbtsw", "distance", str(d / "a.npy"), str(d / "b.csv"),
                            "--trees", "40"])
    assert r.exit_code == 0, r.output
    assert _printed(r.output) == pytest.approx(db_tsw(A, B, n_trees=40), rel=1e-9)


def test_numpy_in_float_out_tensor_in_tensor_out(clouds):
    _, (A, B, _) = clouds
    d_np = db_tsw(A, B, n_trees=30)
    assert type(d_np) is float  # as POT returns for NumPy input
    d_t = db_tsw(torch.from_numpy(A), torch.from_numpy(B), n_trees=30)
    assert isinstance(d_t, torch.Tensor) and d_t.ndim == 0
    assert d_np == pytest.approx(float(d_t), rel=1e-12)
    assert db_tsw(A, B, n_trees=30) == d_np  # the default seed is fixed: same call, same number
    batched = db_tsw(np.stack([A, A]), np.stack([B[:20], B[:20] + 1]), n_trees=30)
    assert isinstance(batched, np.ndarray) and batched.shape == (2,)


def test_the_printed_matrix_has_a_header_naming_the_columns(clouds):
    # issue 68: the matrix printed its rows' names but no column header
    d, _ = clouds
    out = d / "D.csv"
    r = runner.invoke(app, ["dbtsw", "distance", str(d / "a.npy"), str(d / "b.csv"),
                            str(d / "c.xyz"), "--trees", "20", "--out", str(out)])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split() == ["a.npy", "b.csv", "c.xyz"]
    rows = [ln.split() for ln in lines[1:4]]
    assert [row[0] for row in rows] == ["a.npy", "b.csv", "c.xyz"]
    D = np.loadtxt(out, delimiter=",", skiprows=1)
    np.testing.assert_allclose([[float(v) for v in row[1:]] for row in rows], D, rtol=1e-5)
    assert len({len(ln) for ln in lines[:4]}) == 1  # the columns line up under their names
