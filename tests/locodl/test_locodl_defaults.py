"""Issue 55: the default compressor is sized to d, a fit stopped by the cap says so with the
hint, and long runs show progress on a terminal only."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning
from typer.testing import CliRunner

from iclr25.cli import app
from iclr25.locodl import ClientLogistic, LoCoDLClassifier, locodl
from iclr25.locodl.compressors import auto_compressor


def _data(n=200, d=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def test_auto_is_rand_k_with_k_a_tenth_of_the_features():
    assert [auto_compressor(d) for d in (1, 9, 10, 30, 31, 1000)] == [
        "rand-1", "rand-1", "rand-1", "rand-3", "rand-4", "rand-100"]
    assert LoCoDLClassifier().compressor == "auto"
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converges well inside the cap: no warning
        clf = LoCoDLClassifier(alpha=0.05, n_clients=4, seed=0).fit(X, y)
    assert clf.compressor_ == "rand-4" and clf.converged_
    ref = LoCoDLClassifier(alpha=0.05, n_clients=4, seed=0, compressor="rand-4").fit(X, y)
    assert np.array_equal(clf.coef_, ref.coef_) and clf.n_rounds_ == ref.n_rounds_


def test_stopping_at_the_cap_warns_convergence_with_the_hint():
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match=r"stopped at the cap, max_iter 40 iterations "
                      r"\(\d+ rounds\).*raise the compressor's k .*compressor='rand-4'\) or "
                      r"max_iter"):
        clf = LoCoDLClassifier(alpha=0.05, n_clients=4, seed=0, compressor="rand-1",
                               max_iter=40).fit(X, y)
    assert not clf.converged_ and clf.n_iter_ == 40
    with pytest.warns(ConvergenceWarning, match=r"; raise max_iter$"):  # nothing to raise: k = d
        LoCoDLClassifier(alpha=0.05, n_clients=4, seed=0, compressor="none",
                         max_iter=3).fit(X, y)


def test_cli_says_the_cap_in_its_own_words(tmp_path):
    X, y = _data()
    np.savez(tmp_path / "d.npz", X=X, y=y)
    base = ["locodl", "fit", str(tmp_path / "d.npz"), "--clients", "4", "--alpha", "0.05",
            "--baseline", "none"]
    r = CliRunner().invoke(app, [*base, "--compressor", "rand-1", "--max-iter", "40"])
    assert r.exit_code == 0, r.output
    assert "compressor: rand-1" in r.output
    warning = [line for line in r.output.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "--compressor rand-4) or --max-iter" in warning[0]
    r = CliRunner().invoke(app, base)
    assert r.exit_code == 0 and "compressor: rand-4" in r.output and "warning" not in r.output
    r = CliRunner().invoke(app, [*base, "--compressor", "rand-41"])
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert r.output.startswith("error: --compressor 'rand-41' does not fit the 40 features")


def test_progress_shows_when_asked_and_is_silent_off_a_terminal(capsys):
    X, y = _data(80, 6)
    f = ClientLogistic(torch.as_tensor(X), torch.as_tensor(y), torch.arange(80) % 4, 0.05)
    locodl(f, "rand-2", max_iter=300, tol=0.0, verbose=True)
    err = capsys.readouterr().err
    assert "LoCoDL iterations" in err and "rounds" in err and "change" in err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        LoCoDLClassifier(alpha=0.05, n_clients=4, max_iter=300, seed=0).fit(X, y)
    assert capsys.readouterr().err == ""  # pytest's stderr is no terminal


def test_cli_runs_a_slow_file_to_tol_where_the_estimators_cap_stops(tmp_path):
    # issue 68 (walks 6 and 7): at α 1e-3 unscaled columns needed 1.8e5-4.7e5 iterations and
    # the command line's old cap (the estimator's 100,000) stopped them with a warning; its
    # default now runs them to --tol. Here a near-flat column at a small α: about 1.3e5.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2)) * np.array([1, 0.05])
    y = (X[:, 0] + 0.5 * rng.standard_normal(40) > 0).astype(int)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    base = ["locodl", "fit", str(tmp_path / "d.npz"), "--clients", "2", "--alpha", "1.5e-5",
            "--baseline", "none"]
    r = CliRunner().invoke(app, [*base, "--max-iter", str(LoCoDLClassifier().max_iter)])
    assert r.exit_code == 0 and "warning: " in r.output, r.output   # the estimator's cap
    r = CliRunner().invoke(app, base)
    assert r.exit_code == 0 and "warning" not in r.output, r.output
