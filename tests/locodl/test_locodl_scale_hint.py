"""The cap's message says to standardise when the columns' scales differ widely (issue 68
walk: raw breast-cancer columns, 1e4-fold apart, ran 15 rounds in 1e5 iterations and the
hint named only the compressor's k)."""

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25._checks import SPREAD_HINT, column_spread
from iclr25.locodl.estimator import cap_message


def test_column_spread_known_answer_dense_and_sparse():
    X = np.array([[1.0, 200.0, 0.0], [-1.0, -200.0, 0.0]])  # rms 1 and 200; zero column out
    assert column_spread(X) == pytest.approx(200.0)
    assert column_spread(sp.csr_matrix(X)) == pytest.approx(200.0)
    assert column_spread(np.zeros((3, 2))) == 1.0


@pytest.mark.parametrize("cli, name", [(True, "--max-iter"), (False, "max_iter")])
def test_cap_message_names_scaling_only_above_the_spread(cli, name):
    wide = cap_message(30, "rand-3", 100, 2, 1e-10, 0.5, cli=cli, spread=10 * SPREAD_HINT)
    assert "standardise" in wide and name in wide
    narrow = cap_message(30, "rand-3", 100, 2, 1e-10, 0.5, cli=cli, spread=SPREAD_HINT / 2)
    assert "standardise" not in narrow


def test_fit_warning_says_standardise_on_raw_columns():
    from sklearn.exceptions import ConvergenceWarning

    from iclr25.locodl import LoCoDLClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)) * np.array([1.0, 1e3, 1.0, 1.0])
    y = (X[:, 0] > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match="standardise"):
        LoCoDLClassifier(max_iter=50, n_clients=2, seed=0).fit(X, y)
