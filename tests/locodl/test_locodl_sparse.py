"""scipy.sparse input and LibSVM files: the same numbers as dense input, without densifying."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from sklearn.datasets import dump_svmlight_file
from typer.testing import CliRunner

from iclr25.cli import app
from iclr25.locodl import LoCoDLClassifier
from iclr25.locodl.cli import versus
from iclr25.locodl.objectives import ClientLogistic, ClientRidge


def _data(n=120, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr")
    y = (X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("cls", [ClientLogistic, ClientRidge])
def test_sparse_objective_equals_dense(cls):
    X, y = _data()
    cid = np.arange(120) % 4
    fs, fd = cls(X, y, cid, 0.05), cls(X.toarray(), y, cid, 0.05)
    Xc = torch.randn(4, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert torch.allclose(fs.grad(Xc), fd.grad(Xc), rtol=0, atol=1e-13)
    assert fs.L == pytest.approx(fd.L, rel=1e-12)
    assert fs.value(Xc[0]) == pytest.approx(fd.value(Xc[0]), rel=1e-13)
    assert torch.allclose(fs.solve(), fd.solve(), rtol=0, atol=1e-9)
    sub_s, sub_d = fs.subset(1, 3), fd.subset(1, 3)  # a process's block of clients
    assert torch.allclose(sub_s.grad(Xc[:2]), sub_d.grad(Xc[:2]), rtol=0, atol=1e-13)
    # stays sparse: no (clients, rows, d) block, nothing larger than the stored entries
    assert not hasattr(fs, "Ab")
    assert max(v.numel() for v in vars(fs).values() if isinstance(v, torch.Tensor)) <= X.nnz


def test_classifier_on_sparse_matches_dense_to_1e_6():
    X, y = _data()
    kw = dict(alpha=0.1, n_clients=4, max_iter=3000, tol=1e-12, seed=0)
    a = LoCoDLClassifier(**kw).fit(X, y)
    b = LoCoDLClassifier(**kw).fit(X.toarray(), y)
    assert np.abs(a.coef_ - b.coef_).max() <= 1e-6 and a.n_rounds_ == b.n_rounds_
    assert np.array_equal(a.predict(X), b.predict(X.toarray()))
    assert np.allclose(a.decision_function(sp.csc_matrix(X)), b.decision_function(X.toarray()))
    t = torch.sparse_coo_tensor(*map(torch.as_tensor, (np.vstack(X.nonzero()), X.data)),
                                size=X.shape, check_invariants=True)
    assert np.abs(LoCoDLClassifier(**kw).fit(t, y).coef_ - b.coef_).max() <= 1e-6


def test_tensor_in_tensor_out_for_dense_and_sparse_tensors():
    # issue 68: tensors in, tensors out (same values as numpy's); score reads them too
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y = (X @ rng.standard_normal(5) > 0).astype(int)
    clf = LoCoDLClassifier(alpha=0.05, n_clients=3, seed=0).fit(X, y)
    for Xt in (torch.as_tensor(X), torch.as_tensor(X).to_sparse()):
        for method in ("predict", "predict_proba", "decision_function"):
            out = getattr(clf, method)(Xt)
            assert isinstance(out, torch.Tensor) and out.device == Xt.device, method
            np.testing.assert_allclose(out.numpy(), getattr(clf, method)(X), rtol=1e-12)
    assert clf.score(torch.as_tensor(X), torch.as_tensor(y)) == clf.score(X, y)
    assert isinstance(clf.predict(sp.csr_matrix(X)), np.ndarray)     # scipy: numpy


def test_sparse_of_the_wrong_shape_is_refused():
    X, y = _data()
    with pytest.raises(ValueError, match=r"y must have one label per row of X \(120\)"):
        LoCoDLClassifier(n_clients=4).fit(X, y[:100])
    clf = LoCoDLClassifier(alpha=0.1, n_clients=4, max_iter=50, seed=0).fit(X, y)
    with pytest.raises(ValueError, match="X has 5 features, expected 8"):
        clf.predict(sp.random(3, 5, density=0.5, format="csr"))
    with pytest.raises(ValueError, match="X must be 2-D"):
        LoCoDLClassifier().fit(sp.coo_array(np.ones(4)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="X contains 1 NaN"):
        LoCoDLClassifier(n_clients=4).fit(sp.csr_matrix(_nan_one()), y)
    with pytest.raises(ValueError, match="engine='gloo' needs a dense X"):
        LoCoDLClassifier(n_clients=4, engine="gloo").fit(X, y)


def _nan_one():
    a = np.zeros((120, 8))
    a[3, 2] = np.nan
    return a


def test_cli_reads_libsvm_and_prints_the_baseline_bits(tmp_path):
    X, y = _data()
    f = tmp_path / "toy"  # LIBSVM's files have no suffix (a9a, rcv1_train.binary)
    dump_svmlight_file(X, 2 * y - 1, str(f))
    np.savez(tmp_path / "toy.npz", X=X.toarray(), y=y)
    args = ["--clients", "4", "--alpha", "0.1", "--max-iter", "3000"]
    r = CliRunner().invoke(app, ["locodl", "fit", str(f), *args, "--out",
                                 str(tmp_path / "a.npy")])
    assert r.exit_code == 0, r.output
    assert "GD (uncompressed) to the same |x - x*|" in r.output and "x LoCoDL's" in r.output
    r = CliRunner().invoke(app, ["locodl", "fit", str(tmp_path / "toy.npz"), *args,
                                 "--baseline", "diana", "--out", str(tmp_path / "b.npy")])
    assert r.exit_code == 0 and "DIANA (rand-1)" in r.output, r.output
    assert np.abs(np.load(tmp_path / "a.npy") - np.load(tmp_path / "b.npy")).max() <= 1e-6


@pytest.mark.parametrize(("labels", "extra", "message"), [
    ([1, 2, 3], [], "LibSVM labels must be two classes (binary logistic regression), found 3"),
    ([0, 1], ["--label", "y"], "--label is for a .csv DATA"),
    ([0, 1], ["--baseline", "sgd"], "--baseline must be one of gd, diana, none; got 'sgd'"),
    ([0, 1], ["--engine", "gloo"], "--engine gloo needs dense DATA"),
])
def test_cli_bad_libsvm_input_exits_2_in_one_line(tmp_path, labels, extra, message):
    X, _ = _data(30, 4)
    f = tmp_path / "bad.svm"
    dump_svmlight_file(X, np.resize(labels, 30), str(f))
    r = CliRunner().invoke(app, ["locodl", "fit", str(f), "--clients", "3", *extra])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and message in r.output, r.output
    if "found 3" in message:
        assert r.output.startswith(f"error: DATA {f}")
    (tmp_path / "junk.txt").write_text("hello world\n")
    r = CliRunner().invoke(app, ["locodl", "fit", str(tmp_path / "junk.txt")])
    assert r.exit_code == 2 and "nor a readable LibSVM file" in r.output


def test_cli_label_that_is_not_two_classes_names_the_column(tmp_path):
    # issue 68: a continuous --label column said "y must hold exactly two classes, got 2000"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    f = tmp_path / "reg.csv"
    np.savetxt(f, np.c_[X, X @ [1.0, 2.0, 3.0]], delimiter=",", header="a,b,c,target",
               comments="")
    r = CliRunner().invoke(app, ["locodl", "fit", str(f), "--label", "target"])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith("error: --label 'target': the column's values must be two "
                               "classes (binary logistic regression), found 50 distinct")


def test_cli_baseline_line_has_no_ratio_to_zero_bits(tmp_path):
    # issue 68: LoCoDL stopped before its first round printed "9.6e+302x LoCoDL's"
    X, y = _data(40, 4)
    np.savez(tmp_path / "d.npz", X=X.toarray(), y=y)
    r = CliRunner().invoke(app, ["locodl", "fit", str(tmp_path / "d.npz"), "--clients", "4",
                                 "--max-iter", "1"])
    assert r.exit_code == 0, r.output
    assert "rounds: 0" in r.output and "e+30" not in r.output
    assert "no ratio: LoCoDL sent no bits" in r.output
    assert versus(960.0, 0.0).startswith("no ratio") and versus(960.0, 480.0) == "2x LoCoDL's"
