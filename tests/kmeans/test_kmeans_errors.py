"""Bad input: ValueError/TypeError naming the argument, before any work; CLI exit code 2."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from typer.testing import CliRunner

from iclr25.cli import app
from iclr25.kmeans import ConsistentKMeans

X = np.random.default_rng(0).normal(size=(30, 3))


@pytest.mark.parametrize("bad, exc, match", [
    (np.zeros(5), ValueError, "X must be 2-D"),
    (np.zeros((0, 3)), ValueError, "X is empty"),
    (np.array([[0.0, np.nan]]), ValueError, "X contains 1 NaN"),
    (np.array([[0.0, np.inf]]), ValueError, "X contains 1 NaN or inf"),
    (np.array([["a", "b"]], dtype=object), TypeError, "X must be numeric"),
    (np.array([[1 + 1j]]), ValueError, "X must be real"),
])
def test_bad_X(bad, exc, match):
    with pytest.raises(exc, match=match):
        ConsistentKMeans(2).fit(bad)


@pytest.mark.parametrize("w, match", [
    ([-1.0] + [1.0] * 29, "non-negative"), ([np.nan] + [1.0] * 29, "NaN"),
    ([0.0] * 30, "all zero"), ([1.0] * 29, "one weight per row"),
])
def test_bad_sample_weight(w, match):
    with pytest.raises(ValueError, match=f"sample_weight.*{match}|{match}"):
        ConsistentKMeans(2).fit(X, sample_weight=w)


@pytest.mark.parametrize("params, exc, match", [
    ({"n_clusters": 0}, ValueError, "n_clusters"), ({"n_clusters": 2.5}, TypeError, "n_clusters"),
    ({"eps": 0.0}, ValueError, "eps"), ({"eps": -1}, ValueError, "eps"),
    ({"z": 0}, ValueError, "z"), ({"offline": "lloyd"}, ValueError, "offline"),
    ({"n_init": 0}, ValueError, "n_init"), ({"seed": -1}, ValueError, "seed"),
])
def test_bad_params(params, exc, match):
    with pytest.raises(exc, match=match):
        ConsistentKMeans(**params).fit(X)


def test_callable_with_wrong_shape():
    km = ConsistentKMeans(3, offline=lambda P, w, k, g: P[: k - 1], seed=0)
    with pytest.raises(ValueError, match="offline returned shape"):
        km.fit(X)


def test_feature_count_must_not_change():
    km = ConsistentKMeans(2, seed=0).partial_fit(X)
    with pytest.raises(ValueError, match="X has 2 features"):
        km.partial_fit(X[:, :2])
    with pytest.raises(ValueError, match="X has 2 features"):
        km.predict(X[:, :2])
    assert km.n_samples_seen_ == 30


def test_predict_before_fit():
    with pytest.raises(NotFittedError):
        ConsistentKMeans(2).predict(X)


def test_cli_stream_csv_and_npy(tmp_path):
    pts = np.random.default_rng(1).normal(size=(60, 2)) + np.repeat([[0, 0], [9, 9]], 30, 0)
    csv = tmp_path / "p.csv"
    csv.write_text("a,b\n" + "\n".join(f"{x},{y}" for x, y in pts) + "\n")
    npy = tmp_path / "p.npy"
    np.save(npy, pts)
    out, log = tmp_path / "c.csv", tmp_path / "log.csv"
    runner = CliRunner()
    r = runner.invoke(app, ["kmeans", "stream", str(csv), "--k", "2", "--out", str(out),
                            "--log", str(log), "--compare", "--shuffle", "3"])
    assert r.exit_code == 0, r.output
    assert "changes:" in r.output and "KMeans re-run each step" in r.output
    # issue 68: the centres had no header; now the slot (as in the log) and FILE's names
    assert out.read_text().splitlines()[0] == "slot,a,b"
    C = np.loadtxt(out, delimiter=",", skiprows=1)
    assert C.shape == (2, 3) and C[:, 0].tolist() == [0, 1]
    assert log.read_text().splitlines()[0] == "t,slot,kind"
    r2 = runner.invoke(app, ["kmeans", "stream", str(npy), "--k", "2", "--out", str(out)])
    assert r2.exit_code == 0, r2.output
    assert out.read_text().splitlines()[0] == "slot,x0,x1"
    km = ConsistentKMeans(2, seed=0).fit(pts)
    assert f"changes: {km.n_center_changes_} " in r2.output
    n = len(pts)  # the number beside its reference, k ln n
    assert f"(k ln n = 2 x ln {n} = {2 * np.log(n):.1f};" in r2.output


@pytest.mark.parametrize("content, args, match", [
    ("1,2\n3,x\n", [], "line 2: non-numeric cell 'x'"),
    ("1,2\n3\n", [], "line 2: 1 cells"),
    ("1,2\n3,4\n", ["--k", "0"], "--k"),
    ("1,2\n3,4\n", ["--eps", "0"], "eps"),
    ("1,2\n3,4\n", ["--out", "c.txt"], "--out must end in .csv"),
])
def test_cli_errors_exit_2(tmp_path, content, args, match):
    f = tmp_path / "p.csv"
    f.write_text(content)
    r = CliRunner().invoke(app, ["kmeans", "stream", str(f), *args])
    assert r.exit_code == 2
    assert match in r.output


def test_cli_unknown_suffix(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("1,2\n")
    r = CliRunner().invoke(app, ["kmeans", "stream", str(f)])
    assert r.exit_code == 2 and "FILE must end in .csv or .npy" in r.output
