"""Issue 68: a warning met through a public call names the caller's line (this file), not a
line of the library's source or torch's (``iclr25._checks.user_stacklevel``), whatever
wrappers (``@checked``, ``torch.no_grad``) stand between."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch


def _urlost():
    from iclr25.urlost import SelfOrganizingClusters

    X = np.random.default_rng(0).standard_normal((60, 8))
    X[:, 3] = 1.0  # a constant column: dropped, with a warning
    SelfOrganizingClusters(n_clusters=2, n_neighbors=2, seed=0).fit(X)


def _locodl():
    from iclr25.locodl import LoCoDLClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 6))
    y = (X @ rng.standard_normal(6) > 0).astype(int)
    LoCoDLClassifier(alpha=0.05, n_clients=4, seed=0, max_iter=5).fit(X, y)  # stopped at cap


def _oft():
    from iclr25.oft import oft_sinkhorn

    inf = float("inf")
    C = torch.tensor([[0, 1.0, 3.0], [inf, 0, 1.0], [inf, inf, 0]], dtype=torch.float64)
    oft_sinkhorn(torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64), C, 1e-2, numItermax=3)


def _matern():
    from iclr25.matern import KernelSurface, make_shape

    pts, nrm, _ = make_shape("bumpy_sphere", 400, seed=0)
    KernelSurface(length_scale=0.5, n_centers=30, seed=0).fit(pts, nrm)  # too few centres


@pytest.mark.parametrize("call", [_urlost, _locodl, _oft, _matern])
def test_warnings_name_the_callers_file(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    ours = [w for w in caught if issubclass(w.category, (UserWarning, RuntimeWarning))]
    assert ours, f"{call.__name__} gave no warning"
    assert {w.filename for w in ours} == {__file__}, [(w.filename, str(w.message)) for w in ours]
