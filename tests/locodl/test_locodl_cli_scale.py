"""`locodl fit --rescale`: global (the default) fits DATA / c, c the root of
max_i n λ_max(A_iᵀA_i)/N (n clients, N rows), and writes coefficients in DATA's units
(issue 68, walks 6-8: files in their own units stopped at the cap; so scaled they
converged in 15-21k iterations)."""

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file
from sklearn.linear_model import LogisticRegression
from typer.testing import CliRunner

from iclr25.cli import app
from iclr25.locodl import ClientLogistic, LoCoDLClassifier

g = np.random.default_rng(3)
X = g.normal(size=(120, 4)) * np.array([1.0, 30.0, 0.2, 5.0]) + np.array([0, 10.0, 0, 0])
y = (X[:, 0] + X[:, 1] / 30 - X[:, 3] / 5 + g.normal(size=120) > 0).astype(np.int64)
CID = np.arange(120) * 4 // 120
ALPHA = 0.05


def _csv(tmp_path):
    csv = tmp_path / "d.csv"
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="a,b,c,d,lab",
               comments="")
    return csv


def _fit(tmp_path, data, *args):
    out = tmp_path / "w.npy"
    r = CliRunner().invoke(app, ["locodl", "fit", str(data), "--alpha", str(ALPHA),
                                 "--clients", "4", "--baseline", "none", "--out", str(out),
                                 *args])
    assert r.exit_code == 0, r.output
    return np.load(out), r.output


def _sklearn(Xf):  # the same objective: (1/N) sum log(1 + exp(-y a.x)) + (alpha/2)|x|^2
    return LogisticRegression(C=1 / (ALPHA * len(y)), fit_intercept=False, tol=1e-12,
                              max_iter=10_000).fit(Xf, y).coef_.ravel()


def test_data_scale_is_the_root_of_the_largest_client_gram_eigenvalue():
    want = max(np.linalg.eigvalsh(X[CID == i].T @ X[CID == i] / 30)[-1] for i in range(4))
    f = ClientLogistic(X, y, CID, ALPHA)
    assert f.data_scale == pytest.approx(np.sqrt(want))
    # so dividing X by it leaves the logistic smoothness at 1/4 + mu whatever X's units
    assert ClientLogistic(X * 1e3 / (1e3 * f.data_scale), y, CID, ALPHA).L == pytest.approx(
        0.25 + ALPHA / 2)


def test_data_scale_with_unequal_clients_is_the_objectives_n_over_n():
    # its docstring said λ_max(A_iᵀA_i)/N_i; the objective's L (f_i's data term scaled by
    # n·m_i/N) has n·λ_max(A_iᵀA_i)/N, which differs when the clients' sizes do
    cid = np.repeat([0, 1, 2], [10, 30, 80])
    lam = [np.linalg.eigvalsh(X[cid == i].T @ X[cid == i])[-1] for i in range(3)]
    f = ClientLogistic(X, y, cid, ALPHA)
    assert f.data_scale == pytest.approx(np.sqrt(3 * max(lam) / 120))
    assert f.L == pytest.approx(0.25 * f.data_scale ** 2 + ALPHA / 2)

def test_global_default_is_sklearn_on_data_over_c_in_data_units(tmp_path):
    csv = _csv(tmp_path)
    w, said = _fit(tmp_path, csv, "--label", "lab")
    c = ClientLogistic(X, y, CID, ALPHA).data_scale
    np.testing.assert_allclose(w, _sklearn(X / c) / c, rtol=1e-5, atol=1e-8)
    assert f"scale: DATA/{c:.4g}" in said
    acc = np.mean((X @ w > 0) == (y == 1))  # of the written coefficients on DATA as it is
    assert f"train accuracy: {acc:.4f}" in said
    w_none, said = _fit(tmp_path, csv, "--label", "lab", "--rescale", "none")
    np.testing.assert_allclose(w_none, _sklearn(X), rtol=1e-5, atol=1e-8)
    assert "scale: none" in said and not np.allclose(w, w_none, rtol=1e-3)


def test_units_do_not_change_the_fit(tmp_path):
    # DATA in other units (x 1000) gives the same model in those units, same rounds
    w, said = _fit(tmp_path, _csv(tmp_path), "--label", "lab")
    big = tmp_path / "big.csv"
    np.savetxt(big, np.column_stack([X * 1e3, y]), delimiter=",", header="a,b,c,d,lab",
               comments="")
    w_big, said_big = _fit(tmp_path, big, "--label", "lab")
    np.testing.assert_allclose(w_big * 1e3, w, rtol=1e-6)
    assert said.split("rounds: ")[1].split()[0] == said_big.split("rounds: ")[1].split()[0]


def test_baseline_distance_is_said_in_data_units(tmp_path):
    # the GD line measured |x - x*| on DATA/c and printed it so, c times the distance of the
    # coefficients written (in DATA's units) to DATA's optimum (--rescale none: the int test)
    out = tmp_path / "w.npy"
    r = CliRunner().invoke(app, ["locodl", "fit", str(_csv(tmp_path)), "--label", "lab",
                                 "--alpha", str(ALPHA), "--clients", "4", "--out", str(out)])
    assert r.exit_code == 0, r.output
    c = ClientLogistic(X, y, CID, ALPHA).data_scale
    x_star = ClientLogistic(X / c, y, CID, ALPHA).solve().numpy() / c
    said = float(r.output.split("|x - x*| = ")[1].split(":")[0])
    assert c > 10  # far from 1: the two units differ
    assert said == pytest.approx(np.linalg.norm(np.load(out) - x_star), rel=0.01)


@pytest.mark.parametrize("scale", ["global", "none"])
def test_int_data_fits_and_is_measured_in_float64(tmp_path, scale):
    # an int .npz: the fit ran in float64 (as LoCoDLClassifier's) but under --rescale none the
    # baseline's objective, built on DATA as read, in torch's float32, so x* and the printed
    # |x - x*| carried float32's error
    Xi = np.round(2 * (X - X.mean(0)) / X.std(0)).astype(np.int64)  # well conditioned: fast
    np.savez(tmp_path / "i.npz", X=Xi, y=y)
    w, said = _fit(tmp_path, tmp_path / "i.npz", "--rescale", scale, "--baseline", "gd")
    X64 = Xi.astype(np.float64)
    c = ClientLogistic(X64, y, CID, ALPHA).data_scale if scale == "global" else 1.0
    if scale == "none":
        clf = LoCoDLClassifier(alpha=ALPHA, n_clients=4, max_iter=1_000_000, seed=0)
        np.testing.assert_array_equal(w, clf.fit(Xi, y).coef_[0])
    x_star = ClientLogistic(X64 / c, y, CID, ALPHA).solve().numpy() / c
    dist = float(said.split("|x - x*| = ")[1].split(":")[0])
    assert dist == pytest.approx(np.linalg.norm(w - x_star), rel=0.01)

@pytest.mark.parametrize("scale", ["global", "none"])
def test_values_whose_squares_overflow_are_one_line(tmp_path, scale):
    # X x 1e160 is finite but XᵀX is not: torch's eigh failed with a LinAlgError traceback
    np.savez(tmp_path / "h.npz", X=X * 1e160, y=y)
    r = CliRunner().invoke(app, ["locodl", "fit", str(tmp_path / "h.npz"), "--rescale", scale,
                                 "--clients", "4", "--baseline", "none"])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith("error: DATA's values reach") and "power of ten" in r.output

def test_data_without_feature_columns_is_one_line_naming_data(tmp_path):
    # a .csv of the label alone said "error: --d must lie in [1, inf], got 0"
    csv = tmp_path / "lab.csv"
    np.savetxt(csv, y[:, None], delimiter=",", header="lab", comments="")
    np.savez(tmp_path / "e.npz", X=np.zeros((120, 0)), y=y)
    for args in ([str(csv), "--label", "lab"], [str(tmp_path / "e.npz")]):
        r = CliRunner().invoke(app, ["locodl", "fit", *args, "--baseline", "none"])
        assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
        assert r.output.startswith("error: DATA has no feature columns")

def test_global_scales_a_libsvm_file_as_its_csv(tmp_path):
    svm = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(svm))
    w_svm, _ = _fit(tmp_path, svm)
    w_csv, _ = _fit(tmp_path, _csv(tmp_path), "--label", "lab")
    np.testing.assert_allclose(w_svm, w_csv, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("value", ["rms", "GLOBAL"])
def test_bad_scale_is_one_line_naming_the_option(tmp_path, value):
    r = CliRunner().invoke(app, ["locodl", "fit", str(_csv(tmp_path)), "--label", "lab",
                                 "--rescale", value])
    assert r.exit_code == 2 and "--rescale" in r.output and "Traceback" not in r.output


def test_the_cap_names_the_data_scale_where_it_sets_the_iterations(tmp_path):
    from sklearn.exceptions import ConvergenceWarning

    from iclr25.locodl import LoCoDLClassifier
    Xb = np.random.default_rng(1).normal(size=(120, 4)) * 20.0   # alike columns, large units
    with pytest.warns(ConvergenceWarning, match=r"the data's scale .* divide X by it") as big:
        LoCoDLClassifier(alpha=ALPHA, n_clients=4, max_iter=30, seed=0).fit(Xb, y, CID)
    c = ClientLogistic(Xb, y, CID, ALPHA).data_scale
    assert f"{c:.3g}" in str(big[0].message) and c ** 2 >= 10
    with pytest.warns(ConvergenceWarning) as unit:   # Xb / c: nothing to say of its scale
        LoCoDLClassifier(alpha=ALPHA, n_clients=4, max_iter=30, seed=0).fit(Xb / c, y, CID)
    assert "data's scale" not in str(unit[0].message)
    csv = tmp_path / "b.csv"
    np.savetxt(csv, np.column_stack([Xb, y]), delimiter=",", header="a,b,c,d,lab", comments="")
    said = [CliRunner().invoke(app, ["locodl", "fit", str(csv), "--label", "lab", "--clients",
                                     "4", "--max-iter", "30", "--baseline", "none", *more]
                               ).output for more in ([], ["--rescale", "none"])]
    assert "data's scale" not in said[0]
    assert "data's scale" in said[1] and "drop --rescale none" in said[1]


def _table(tmp_path, A, name):
    csv = tmp_path / name
    np.savetxt(csv, np.column_stack([A, y]), delimiter=",", header="a,b,c,d,lab", comments="")
    return csv


def test_global_notes_standardising_when_the_columns_units_differ_widely(tmp_path):
    # issue 68 walk 9: wine's proline (~1e3) beside hue (~1) converged under --rescale global
    # at train accuracy 0.921 (0.994 standardised) with no word on the columns' units
    from iclr25._checks import SPREAD_HINT, column_spread
    std = (X - X.mean(0)) / X.std(0)
    assert column_spread(X) > SPREAD_HINT > column_spread(std)
    _, said = _fit(tmp_path, _table(tmp_path, X, "wide.csv"), "--label", "lab")
    c = ClientLogistic(X, y, CID, ALPHA).data_scale
    assert (f"note: DATA's columns' scales differ {column_spread(X):.3g}-fold" in said
            and f"α·c² = {ALPHA * c * c:.3g} on DATA" in said and "standardise" in said)
    _, said = _fit(tmp_path, _table(tmp_path, X, "wide.csv"), "--label", "lab", "--rescale",
                   "none")  # DATA as it is: no c, no note
    assert "note: DATA's columns" not in said
    _, said = _fit(tmp_path, _table(tmp_path, std, "std.csv"), "--label", "lab")
    assert "note: DATA's columns" not in said


def test_fit_computes_the_client_blocks_eigendecomposition_once_per_scale(tmp_path,
                                                                           monkeypatch):
    # closing note 9: `locodl fit` computed it three times (DATA's objective for c, DATA/c's
    # for the condition check, the estimator's own in its fit); DATA/c's objective is now
    # built once, as the estimator builds it, and shared by the check and the fit. DATA/c's
    # is its own, not DATA's divided by c², which could differ in the last digit
    import torch

    calls, real = [], torch.linalg.eigvalsh

    def counted(A, *args, **kw):
        calls.append(tuple(A.shape))
        return real(A, *args, **kw)

    monkeypatch.setattr(torch.linalg, "eigvalsh", counted)
    path = tmp_path / "d.npz"
    np.savez(path, X=X, y=y)
    for scale, times in (("global", 2), ("none", 1)):    # (4 clients' 4x4 Grams at once)
        calls.clear()
        coef, _ = _fit(tmp_path, path, "--rescale", scale, "--max-iter", "50")
        assert calls == [(4, 4, 4)] * times, scale
        # what the estimator fits on DATA/c by itself, to the last digit (c as printed is
        # rounded: c is DATA's objective's data_scale)
        c = ClientLogistic(X, y, CID, ALPHA).data_scale if scale == "global" else 1.0
        with pytest.warns(Warning):                        # capped at 50 iterations
            clf = LoCoDLClassifier(alpha=ALPHA, n_clients=4, max_iter=50, seed=0).fit(X / c, y)
        np.testing.assert_array_equal(coef, clf.coef_[0] / c)


@pytest.mark.parametrize("scale", ["global", "none"])
def test_fit_checks_data_once(tmp_path, monkeypatch, scale):
    # issue 68 tidy: `locodl fit` checked DATA's magnitude itself, then again in the objective
    # it built on DATA (and under --rescale none a third time, in the fit's own objective);
    # once now, its refusal as before (test_values_whose_squares_overflow_are_one_line)
    from iclr25.locodl import objectives

    seen = []
    real = objectives.check_magnitude
    monkeypatch.setattr(objectives, "check_magnitude",
                        lambda A, name="X": (seen.append(np.asarray(A)), real(A, name))[1])
    np.savez(tmp_path / "d.npz", X=X, y=y)
    _fit(tmp_path, tmp_path / "d.npz", "--rescale", scale, "--max-iter", "10")
    assert sum(a.shape == X.shape and np.array_equal(a, X) for a in seen) == 1, len(seen)
