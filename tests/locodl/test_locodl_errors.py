"""Bad input: ValueError/TypeError naming the argument, before any work; CLI exit code 2."""

import numpy as np
import pytest
import scipy.sparse
import torch
from typer.testing import CliRunner

from iclr25.cli import app
from iclr25.locodl import (
    ClientLogistic,
    ClientRidge,
    DistributedComm,
    LoCoDLClassifier,
    RandK,
    diana,
    gd,
    locodl,
)
from iclr25.locodl.objectives import check_magnitude

g = np.random.default_rng(0)
X = g.normal(size=(40, 3))
y = (X[:, 0] > 0).astype(np.int64)
C = np.arange(40) % 4


@pytest.mark.parametrize("Xb, yb, cb, a, match", [
    (np.zeros(5), y, C, 0.1, "X must be 2-D"),
    (np.where(np.eye(40, 3) > 0, np.nan, X), y, C, 0.1, "X contains"),
    (np.zeros((0, 3)), y, C, 0.1, "X is empty"),
    (X, np.zeros(40), C, 0.1, "y must hold exactly two classes"),
    (X, y[:30], C, 0.1, "y must have one label"),
    (X, y, C[:30], 0.1, "client_ids must have one entry"),
    (X, y, np.zeros(40), 0.1, "client_ids must name at least 2"),
    (X, y, C, 0.0, "alpha"),
])
def test_bad_objective(Xb, yb, cb, a, match):
    Xc = Xb.copy() if isinstance(Xb, np.ndarray) else Xb
    with pytest.raises(ValueError, match=match):
        ClientLogistic(Xb, yb, cb, a)
    if isinstance(Xb, np.ndarray):
        assert np.array_equal(Xb, Xc, equal_nan=True)


def test_bad_algorithm_arguments():
    f = ClientLogistic(X, y, C, 0.1)
    with pytest.raises(ValueError, match="k must lie"):
        locodl(f, RandK(4))
    with pytest.raises(ValueError, match="k must lie"):
        RandK(0)
    with pytest.raises(ValueError, match="compressor must be"):
        locodl(f, "top-3")
    with pytest.raises(ValueError, match="p must lie"):
        locodl(f, p=1.5)
    with pytest.raises(ValueError, match="gamma must lie"):
        locodl(f, gamma=2 / f.L)
    with pytest.raises(ValueError, match="process group"):
        DistributedComm()


def test_classifier_errors_and_empty_client():
    with pytest.raises(ValueError, match="n_proc"):
        LoCoDLClassifier(n_clients=4, n_proc=5, engine="gloo").fit(X, y)
    with pytest.raises(ValueError, match="n_proc"):
        LoCoDLClassifier(n_proc=0).fit(X, y)
    with pytest.raises(ValueError, match="engine"):
        LoCoDLClassifier(engine="mpi").fit(X, y)
    with pytest.raises(ValueError, match="client_ids must name at least 2"):
        LoCoDLClassifier().fit(X, y, client_ids=np.zeros(40))


def test_cli_fit_csv_npz_and_errors(tmp_path):
    runner = CliRunner()
    csv = tmp_path / "d.csv"
    np.savetxt(csv, np.column_stack([X, y, C]), delimiter=",", header="a,b,c,lab,cl",
               comments="")
    out = tmp_path / "coef.npy"
    r = runner.invoke(app, ["locodl", "fit", str(csv), "--label", "lab", "--client-column",
                            "cl", "--alpha", "0.1", "--compressor", "rand-2", "--rescale", "none",
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    f = ClientLogistic(X, y, C, 0.1)
    assert np.allclose(np.load(out), f.solve().numpy(), atol=1e-6)
    npz = tmp_path / "d.npz"
    np.savez(npz, X=X, y=y)
    r = runner.invoke(app, ["locodl", "fit", str(npz), "--clients", "4", "--alpha", "0.1"])
    assert r.exit_code == 0 and "rounds" in r.output
    bad = tmp_path / "bad.npz"
    np.savez(bad, X=X)
    for args, msg in (([str(csv), "--label", "nope"], "--label"),
                      ([str(bad)], "missing y"),
                      ([str(npz), "--compressor", "top-1"], "compressor"),
                      ([str(npz), "--nproc", "20", "--engine", "gloo"], "--nproc")):
        r = runner.invoke(app, ["locodl", "fit", *args])
        assert r.exit_code == 2 and msg in r.output, (args, r.output)
    txt = tmp_path / "t.csv"
    txt.write_text("a,lab\n1,x\n")
    r = runner.invoke(app, ["locodl", "fit", str(txt), "--label", "lab"])
    assert r.exit_code == 2 and "non-numeric" in r.output
    assert torch.get_num_threads() >= 1


@pytest.mark.parametrize(("args", "said"), [
    (["--alpha", "0"], "error: --alpha must lie in (0, inf)"),
    (["--max-iter", "0"], "error: --max-iter must lie in [1, inf]"),
    (["--tol", "-1"], "error: --tol must lie in [0, inf)"),
    (["--clients", "0"], "error: --clients must lie in [2, inf]"),
])
def test_cli_refusals_name_the_option_as_typed(tmp_path, args, said):
    # issue 68's walk: --alpha 0 answered "alpha must lie in (0, inf)", --clients 0 "n_clients"
    csv = tmp_path / "d.csv"
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="a,b,c,lab", comments="")
    r = CliRunner().invoke(app, ["locodl", "fit", str(csv), "--label", "lab", *args])
    assert r.exit_code == 2 and said in r.output, r.output


@pytest.mark.parametrize("scale, dtype, match", [
    # finite values whose squares overflow: torch's eigh raised LinAlgError (float64) and a
    # float32 step size underflowed ("gamma must lie in (0, 4.06e-40), got 4.06e-40")
    (1e160, np.float64, "X's values reach [0-9.]+e\\+[0-9]+: .*overflow float64"),
    (1e20, np.float32, "X's values reach [0-9.]+e\\+[0-9]+: .*overflow float32"),
    # L/mu ~ 1e19: 2/(L + mu) rounded to 2/L ("gamma must lie in (0, 4.06e-16), got 4.06e-16")
    (1e8, np.float64, "condition number L/mu = .*e\\+1[6-9].*rescale the data"),
])
def test_values_too_large_for_the_dtype_are_refused_by_name(scale, dtype, match):
    Xs = (X * scale).astype(dtype)
    Xc = Xs.copy()
    with pytest.raises(ValueError, match=match):
        LoCoDLClassifier(n_clients=4, max_iter=10).fit(Xs, y)
    np.testing.assert_array_equal(Xs, Xc)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 5 rounds
@pytest.mark.parametrize("algorithm", [locodl, gd, diana])
def test_condition_number_beyond_float64_is_refused(algorithm):
    f = ClientLogistic(X * 1e8, y, C, 0.1)
    assert 2 / (f.L + f.mu) == 2 / f.L   # the defaults' step sizes would sit on their bound
    with pytest.raises(ValueError, match="condition number"):
        algorithm(f, "none" if algorithm is gd else RandK(1), max_iter=5)
    ok = ClientLogistic(X * 1e5, y, C, 0.1)   # L/mu ~ 1e11: still runs
    run = algorithm(ok, "none" if algorithm is gd else RandK(1), max_iter=5, tol=1e300)
    assert run.x.shape == (3,)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 10 iterations
def test_magnitude_is_judged_in_the_dtype_the_sums_are_taken_in():
    # L's eigendecomposition takes float16's and integers' sums in float64: main refused a
    # float16 X whose squared sums pass float16's max ("overflow float16"), and raised
    # numpy's/torch's own errors on integer X ("data type ... not inexact")
    Xh = torch.as_tensor(X * 200, dtype=torch.float16)
    assert float(Xh.float().abs().max()) ** 2 * Xh.numel() > torch.finfo(torch.float16).max
    clf = LoCoDLClassifier(n_clients=4, max_iter=10, seed=0).fit(Xh, y)
    assert np.isfinite(clf.coef_).all()
    for Xi in (torch.as_tensor(X * 1e3).long(), (X * 1e3).astype(np.int32),
               scipy.sparse.csr_array((X * 1e3).astype(np.int64))):
        check_magnitude(Xi)   # integers cannot overflow float64's squared sums here
    with pytest.raises(ValueError, match="overflow float32"):
        check_magnitude(torch.as_tensor(X * 1e20, dtype=torch.float32))


def test_condition_number_with_mu_underflowing_to_zero_is_refused_by_name():
    f = ClientLogistic(X, y, C, 5e-324)   # the smallest float: α/2 rounds to 0
    assert f.mu == 0
    with pytest.raises(ValueError, match="L/mu = inf is beyond"):   # was ZeroDivisionError
        locodl(f, RandK(1), max_iter=5)


@pytest.mark.parametrize("engine", ["simulated", "gloo"])
def test_cli_condition_number_refusal_names_the_options(tmp_path, engine):
    # the library's remedy names the API ("the objective's data_scale", "raise alpha");
    # the command line's names its options, before any process starts
    csv = tmp_path / "big.csv"
    np.savetxt(csv, np.column_stack([X * 1e8, y]), delimiter=",", header="a,b,c,lab",
               comments="")
    r = CliRunner().invoke(app, ["locodl", "fit", str(csv), "--label", "lab",
                                 "--rescale", "none", "--engine", engine])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    said = "raise --alpha or, with --rescale none, drop it (the default divides DATA by c)"
    assert "condition number L/mu" in r.output and said in r.output, r.output
    assert "data_scale" not in r.output, r.output


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("objective", [ClientLogistic, ClientRidge])
def test_objectives_refuse_overflowing_values_by_name(objective, sparse):
    # the estimator and the command line checked; the objectives themselves, the API's
    # first step, raised torch's LinAlgError from L's eigendecomposition (linalg.eigh)
    Xb = X * 1e160
    Xc = Xb.copy()
    with pytest.raises(ValueError, match="X's values reach .*overflow float64"):
        objective(scipy.sparse.csr_array(Xb) if sparse else Xb,
                  y if objective is ClientLogistic else X[:, 0], C, 0.1)
    np.testing.assert_array_equal(Xb, Xc)


def test_gloo_engine_refuses_the_condition_number_before_spawning():
    # main's processes raised it: torch's ProcessRaisedException around a traceback
    with pytest.raises(ValueError, match="condition number L/mu = .* rescale the data"):
        LoCoDLClassifier(n_clients=4, max_iter=10, engine="gloo", n_proc=2).fit(X * 1e8, y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 200 iterations
def test_bfloat16_x_fits_as_float32_does():
    # main ran the whole fit, then raised numpy's "Got unsupported ScalarType BFloat16"
    # turning the coefficients into coef_
    Xt = torch.as_tensor(X, dtype=torch.float32)
    fits = [LoCoDLClassifier(n_clients=4, max_iter=200, seed=0).fit(Xt.to(dt), y)
            for dt in (torch.bfloat16, torch.float32)]
    assert [f.coef_.dtype for f in fits] == [np.float64] * 2
    np.testing.assert_allclose(fits[0].coef_, fits[1].coef_, rtol=0.1)
    assert fits[0].score(Xt.to(torch.bfloat16), y) == fits[1].score(Xt, y)
