"""LoCoDL against the paper's Algorithm 1 solved by hand (fixture ``locodl``; no official
code, see MANIFEST.toml and tools/fidelity/locodl.py for the derivation)."""

import numpy as np
import pytest
import torch

from iclr25.locodl import locodl
from iclr25.locodl.objectives import ClientRidge


@pytest.fixture
def problem(golden):
    g = golden("locodl")
    f = ClientRidge(torch.tensor(g["A"]), torch.tensor(g["b"]), torch.tensor([0, 1]),
                    alpha=float(g["alpha"]))
    return g, f


def _state(f, g, iters):
    run = locodl(f, "none", gamma=float(g["gamma"]), p=1.0, rho=1.0, chi=1.0,
                 max_iter=iters, seed=0)
    return {k: v.numpy().ravel() for k, v in run.state.items()}


def test_constants(problem):
    g, f = problem
    assert f.L == pytest.approx(float(g["L"]), abs=1e-14) and f.mu == float(g["mu"])


@pytest.mark.parametrize("t", [1, 2])
def test_first_two_iterations(problem, t):
    g, f = problem
    s = _state(f, g, t)
    for k in ("X", "U", "y", "v"):
        np.testing.assert_allclose(s[k], np.ravel(g[f"{k}{t}"]), rtol=0, atol=1e-15, err_msg=k)
    assert abs(s["U"].mean() + s["v"][0]) < 1e-15


def test_fixed_point(problem):
    g, f = problem
    s = _state(f, g, 400)
    np.testing.assert_allclose(s["y"], [g["x_star"]], rtol=0, atol=1e-14)
    np.testing.assert_allclose(s["U"], g["U_star"], rtol=0, atol=1e-14)
    np.testing.assert_allclose(s["v"], [g["v_star"]], rtol=0, atol=1e-14)
