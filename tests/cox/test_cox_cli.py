"""``iclr25 cox fit/predict`` on test-written files, and its bad-argument exits."""

import numpy as np
import pytest
from typer.testing import CliRunner

from iclr25.cox.cli import app

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    Z = rng.normal(size=(40, 8)) + 2.0 * y[:, None]
    X = np.tanh(Z @ rng.normal(size=(8, 5)))
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "A.npy", Z)
    np.savetxt(tmp_path / "ya.csv", y, fmt="%d")
    np.savetxt(tmp_path / "p.csv", np.stack([np.arange(8), np.arange(8)], 1), fmt="%d",
               delimiter=",")
    np.savetxt(tmp_path / "y.csv", np.where(np.arange(40) < 8, y, -1), fmt="%d")
    return tmp_path


def test_fit_then_predict(files):
    t = files
    r = runner.invoke(app, ["fit", "--oom", str(t / "X.npy"), "--im", str(t / "A.npy"),
                            "--im-labels", str(t / "ya.csv"), "--pairs", str(t / "p.csv"),
                            "--labels", str(t / "y.csv"), "--out", str(t / "m.pt"),
                            "--steps", "5"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["predict", str(t / "m.pt"), str(t / "X.npy"), "--out",
                            str(t / "yhat.csv")])
    assert r.exit_code == 0, r.output
    yhat = np.loadtxt(t / "yhat.csv", dtype=np.int64)
    assert yhat.shape == (40,) and set(yhat.tolist()) <= {0, 1}


def test_fit_pairs_without_labels_then_predict(files):
    t = files  # issue 55: --pairs alone, the OOM rows' labels come from the IM side
    r = runner.invoke(app, ["fit", "--oom", str(t / "X.npy"), "--im", str(t / "A.npy"),
                            "--im-labels", str(t / "ya.csv"), "--pairs", str(t / "p.csv"),
                            "--out", str(t / "m.pt"), "--steps", "5"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["predict", str(t / "m.pt"), str(t / "X.npy")])
    assert r.exit_code == 0, r.output
    assert len(r.output.split()) == 40 and set(r.output.split()) <= {"0", "1"}


@pytest.mark.parametrize(("args", "msg"), [
    (["--oom", "missing.npy"], "--oom"),
    (["--pairs", "bad.csv"], "--pairs"),
    (["--labels", "oob.csv"], "y_oom"),
])
def test_fit_bad_arguments(files, args, msg):
    t = files
    (t / "bad.csv").write_text("a,b\n")
    np.savetxt(t / "oob.csv", np.full(40, 7), fmt="%d")
    base = {"--oom": str(t / "X.npy"), "--im": str(t / "A.npy"),
            "--im-labels": str(t / "ya.csv"), "--pairs": str(t / "p.csv"),
            "--labels": str(t / "y.csv"), "--out": str(t / "m.pt"), "--steps": "2"}
    base.update({args[0]: str(t / args[1])})
    if args[0] == "--labels":
        base["--n-classes"] = "2"
    cmd = ["fit"] + [x for kv in base.items() for x in kv]
    r = runner.invoke(app, cmd)
    assert r.exit_code == 2
    assert msg in r.output


def test_predict_unreadable_model(files):
    (files / "m.pt").write_text("nope")
    r = runner.invoke(app, ["predict", str(files / "m.pt"), str(files / "X.npy")])
    assert r.exit_code == 2 and "path" in r.output

