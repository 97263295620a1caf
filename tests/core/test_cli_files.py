"""The shared checks of the files a command line reads and writes (``iclr25._cli``)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from iclr25._cli import fail, input_file, output_path
from iclr25._io import read_npy
from iclr25.cli import app as root

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def run(src: str, out: str = typer.Option(None, "--out")) -> None:
        p = input_file(src, "FILE", suffixes=(".npy",))
        q = output_path(out, suffixes=(".csv",))
        try:
            X = read_npy(p, "FILE")
        except ValueError as exc:
            fail(exc)
        if q is not None:
            np.savetxt(q, X, delimiter=",")

    return app


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.fixture
def npy(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.eye(2))
    return p


def test_missing_output_folder_is_created(npy, tmp_path):
    out = tmp_path / "a" / "b" / "y.csv"
    res = runner.invoke(_app(), [str(npy), "--out", str(out)])
    assert res.exit_code == 0, res.output
    np.testing.assert_array_equal(np.loadtxt(out, delimiter=","), np.eye(2))


@pytest.mark.parametrize(("make", "match"), [
    (lambda t: t / "missing.npy", "does not exist"),
    (lambda t: t, "is a directory"),
    (lambda t: _write(t / "e.npy", b""), "is empty"),
    (lambda t: _write(t / "x.txt", b"1"), r"must end in \.npy"),
    (lambda t: _write(t / "c.npy", b"\x93NUMPY garbage"), r"not a readable \.npy array"),
])
def test_bad_input_file_exits_2_naming_it(tmp_path, make, match):
    path = make(tmp_path)
    res = runner.invoke(_app(), [str(path)])
    assert res.exit_code == 2
    assert "FILE" in res.output and re.search(match, res.output), res.output
    assert res.output.count("\n") == 1 and "Traceback" not in res.output


@pytest.mark.parametrize(("out", "match"), [("y.txt", "must end in .csv"), (".", "is a directory")])
def test_bad_output_exits_2_before_work(npy, tmp_path, out, match):
    res = runner.invoke(_app(), [str(npy), "--out", str(tmp_path / out)])
    assert res.exit_code == 2 and "--out" in res.output and match in res.output


def test_a_library_refusal_is_one_line_not_a_traceback(tmp_path):
    # kmeans.stream validates --k only inside the library: the root turns it into exit 2
    X = tmp_path / "X.csv"
    np.savetxt(X, np.random.default_rng(0).normal(size=(20, 2)), delimiter=",")
    res = runner.invoke(root, ["kmeans", "stream", str(X), "--k", "0"])
    assert res.exit_code == 2, res.output
    assert res.output.startswith("error: ") and "Traceback" not in res.output


def test_verbs_create_a_missing_output_folder(tmp_path):
    # comm embed on a model file that does not exist: the folder of --out is made first,
    # then the missing model is refused, before any work
    out = tmp_path / "new" / "Z.npy"
    A = tmp_path / "A.npy"
    np.save(A, np.zeros((4, 2)))
    res = runner.invoke(root, ["comm", "embed", str(tmp_path / "m.safetensors"), str(A),
                               "--out", str(out)])
    assert res.exit_code == 2 and "MODEL" in res.output and out.parent.is_dir()


@pytest.mark.parametrize("argv", [
    ["locodl", "fit", "{bad}.npz"],
    ["oft", "solve", "{bad}.npz"],
    ["schull", "graph", "{bad}.npy"],
    ["v3", "fit", "{bad}.npy", "--out", "{dir}/m.safetensors"],
    ["toss", "fit", "{bad}.npz"],
])
def test_a_corrupt_array_file_is_named_without_numpys_pickle_advice(tmp_path, argv):
    bad = tmp_path / "bad"
    for suffix in (".npz", ".npy"):
        bad.with_suffix(suffix).write_bytes(b"\x93NUMPY not really")
    args = [a.format(bad=bad, dir=tmp_path) for a in argv]
    res = runner.invoke(root, args)
    assert res.exit_code == 2, res.output
    assert "bad.np" in res.output and "allow_pickle" not in res.output, res.output
    assert "Traceback" not in res.output


def test_image_jobs_reference_says_whether_a_name_is_missing_or_a_size_differs(tmp_path, capsys):
    # issue 68's walk: a --reference folder without cat2.png said "no image of the same size"
    from PIL import Image

    from iclr25._cli import image_jobs

    for d, n, side in (("in", "cat2.png", 16), ("ref", "other.png", 16), ("small", "cat2.png", 8)):
        (tmp_path / d).mkdir()
        Image.fromarray(np.zeros((side, side, 3), np.uint8)).save(tmp_path / d / n)
    for ref, said in (("ref", "--reference has no image named cat2.png"),
                      ("small", "--reference's cat2.png is 8×8, the input's 16×16")):
        with pytest.raises(typer.Exit):
            image_jobs(tmp_path / "in", tmp_path / "out", tmp_path / ref)
        assert said in capsys.readouterr().err
