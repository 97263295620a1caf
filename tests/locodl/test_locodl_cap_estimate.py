"""The cap's message says how many iterations the fit needs (issue 68 walk 6: a 3000 x 25 file
at the CLI's alpha 1e-3 stopped at the 100,000-iteration cap; the hint named only the
compressor's k, and rand-12 stopped at the cap too, while 570,000 iterations converged)."""

import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from iclr25.locodl import LoCoDLClassifier
from iclr25.locodl.estimator import cap_message, iterations_to_tol


def test_iterations_to_tol_known_answer():
    t = np.arange(1.0, 101.0)
    change = 1e-2 * np.exp(-0.05 * t)  # reaches 1e-10 at t = ln(1e8) / 0.05
    h = np.c_[t, t, change]
    assert iterations_to_tol(h, 1e-10) == pytest.approx(np.log(1e8) / 0.05)
    assert iterations_to_tol(np.c_[t, t, np.full(100, 1e-3)], 1e-10) == float("inf")
    assert iterations_to_tol(h[:3], 1e-10) == float("inf")           # too few to fit
    assert iterations_to_tol(np.c_[t, t, np.r_[np.inf, change[1:]]], 1e-10) < np.inf


def test_cap_message_gives_the_estimate_only_past_the_cap():
    est = cap_message(30, "rand-3", 100, 2, 1e-10, 0.5, cli=True, needed=470_000.0)
    assert "near iteration 4.7e+05: raise --max-iter to about 570000" in est, est
    assert "--compressor rand-12" in est
    assert "near iteration" not in cap_message(30, "rand-3", 100, 2, 1e-10, 0.5, needed=50.0)


def test_the_suggested_max_iter_converges():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 8))
    y = (X @ rng.normal(size=8) + rng.normal(size=200) > 0).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LoCoDLClassifier(alpha=1e-3, n_clients=4, seed=0, max_iter=3000).fit(X, y)
    msg = next(str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning))
    n = int(re.search(r"raise max_iter to about (\d+)", msg).group(1))
    assert 3000 < n < 100_000, msg
    clf = LoCoDLClassifier(alpha=1e-3, n_clients=4, seed=0, max_iter=n).fit(X, y)
    assert clf.converged_ and clf.n_iter_ > 3000
